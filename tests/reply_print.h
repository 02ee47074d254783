// Failure messages show replies in their wire form (RESP), which is how the reply texts
// in these tests were checked against redis-server.
#pragma once

#include <gtest/gtest.h>

#include <ostream>

#include "lockstep/sim/redis_node.h"

namespace lockstep {
inline void PrintTo(const Reply& r, std::ostream* os) { *os << ::testing::PrintToString(to_resp(r)); }
}  // namespace lockstep
