// Human forms shared by everything that prints: the CLI, the fault plan's sentences and
// the report writers.
#pragma once

#include <cstdint>
#include <string>

namespace lockstep {

// "1.5s", "250ms", "12.5ms": a duration or instant in the shortest honest form.
std::string format_duration(int64_t ns);

}  // namespace lockstep
