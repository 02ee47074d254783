// Runs a scenario in the simulated world: builds the topology, starts the workload's
// clients, plays the fault timeline, records the history with ground truth, and checks
// the invariants. The same scenario and seed always give a byte-identical history.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "lockstep/checker/history.h"
#include "lockstep/reports/report.h"
#include "lockstep/runner/scenario.h"

namespace lockstep::runner {

struct RunOutcome {
  reports::RunReport report;
  checker::History history;
  std::string history_jsonl;
};

struct RunOptions {
  std::optional<uint64_t> seed;  // overrides the scenario's seed
  std::string replay_path;       // how the scenario file is named in the replay command
};

RunOutcome run_in_sim(const Scenario& scenario, const RunOptions& options = {});

// Tells the C library to keep freed memory for the next run instead of handing it back
// to the system. A process that runs simulation after simulation (a catalogue, a fuzz
// campaign) otherwise faults the same history buffers in afresh every run, which costs
// as much as the simulation on some machines. Process-wide: for programs, not libraries.
void keep_freed_memory_for_reuse();

// "pause client-1 at 50ms for 2000ms" — for the seed=... line and reports.
std::string describe_fault(const FaultSpec& f);

}  // namespace lockstep::runner
