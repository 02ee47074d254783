// Lease and wait arguments as the lock scripts and PX take them.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include "lockstep/env.h"

namespace lockstep {

// Whole milliseconds, at least 1: Redis refuses PX 0, and a lease under a millisecond
// must not become "no lease".
inline std::string ms_string(Nanos d) { return std::to_string(std::max<int64_t>(to_ms(d), 1)); }

}  // namespace lockstep
