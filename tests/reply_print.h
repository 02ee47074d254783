// Failure messages show replies in their wire form (RESP), which is how the reply texts
// in these tests were checked against redis-server; and short names for the replies the
// node tests expect.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <ostream>
#include <string>

#include "lockstep/sim/redis_node.h"

namespace lockstep {
inline void PrintTo(const Reply& r, std::ostream* os) { *os << ::testing::PrintToString(to_resp(r)); }

namespace reply_short {
inline Reply err(const std::string& s) { return Reply::error(s); }
inline Reply bulk(const char* s) { return Reply::bulk(s); }
inline Reply num(int64_t v) { return Reply::integer_of(v); }
}  // namespace reply_short

}  // namespace lockstep
