// Helpers of the scripting commands shared between files.
#pragma once

#include <string>

namespace lockstep::sim {

// Lowercase hex SHA-1, as redis.sha1hex and SCRIPT LOAD return it.
std::string sha1_hex(const std::string& data);

// What a script declares in a "#!lua flags=..." first line (eval.c, script.c). A script
// without one runs in compatibility mode: it may write, and is judged by each command it
// calls rather than up front.
enum ScriptFlag : unsigned {
  kScriptNoWrites = 1,        // read-only: every write it calls is refused; runs under OOM
  kScriptAllowOom = 2,        // may run, and write, when used memory is over maxmemory
  kScriptAllowStale = 4,      // may run on a replica whose link is down (not modelled)
  kScriptNoCluster = 8,       // refused on a cluster node
  kScriptAllowCrossSlot = 16, // may touch undeclared keys of several slots
  kScriptCompat = 32,         // no shebang
};

// evalExtractShebangFlags: the flags of `body`, and how many bytes of its first line to
// skip before compiling it (its line feed stays, so line numbers do not move); false and
// why, as the server words it, when the first line is a shebang Redis refuses.
bool script_shebang(const std::string& body, unsigned& flags, size_t& skip, std::string& why);

}  // namespace lockstep::sim
