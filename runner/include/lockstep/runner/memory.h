// Memory tuning for programs that run simulation after simulation.
#pragma once

namespace lockstep::runner {

// Tells the C library to keep freed memory for the next run instead of handing it back
// to the system. A process that runs simulation after simulation (a catalogue, a fuzz
// campaign) otherwise faults the same history buffers in afresh every run, which costs
// as much as the simulation on some machines. Process-wide: for programs, not libraries.
void keep_freed_memory_for_reuse();

}  // namespace lockstep::runner
