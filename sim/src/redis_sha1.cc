#include "lockstep/digest.h"
#include "redis_scripting.h"

namespace lockstep::sim {

std::string sha1_hex(const std::string& data) { return digest_hex("SHA1", data); }

}  // namespace lockstep::sim
