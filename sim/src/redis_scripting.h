// Helpers of the scripting commands shared between files.
#pragma once

#include <string>

namespace lockstep::sim {

// Lowercase hex SHA-1, as redis.sha1hex and SCRIPT LOAD return it.
std::string sha1_hex(const std::string& data);

}  // namespace lockstep::sim
