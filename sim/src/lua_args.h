// The objects of redis.call's arguments, as script_lua.c keeps them between calls: the
// objects of the first 32 arguments of a call that the command left as they were (not
// stored, not replaced, not held for replication, strings of at most 64 bytes) are
// kept, and a later call reuses the one kept at the same position if its sds can hold
// the new argument, copying the bytes in. An embstr made for a 19-byte argument then
// carries a 0-byte one, and a SET that stores it gives the key a value MEMORY USAGE counts
// at 48 bytes rather than 32.
// The cache lives as long as the server process: a script flush keeps it.
#pragma once

#include <array>

#include "redis_impl.h"

namespace lockstep::sim {

class ArgCache {
 public:
  // The objects of args[0..n) for a call about to run: kept ones taken where they fit,
  // new ones made to size elsewhere. Resets what `out` records of the command.
  void take(const Args& args, size_t n, ScriptArgs& out);
  // After the call: keeps what the command left alone of args[0..n) (ScriptArgs).
  void keep(const Args& args, size_t n, const ScriptArgs& used);
  void clear() { slots_ = {}; }

 private:
  struct Slot {
    bool present = false;
    ArgObject object;
  };
  std::array<Slot, ScriptArgs::kCached> slots_{};
};

}  // namespace lockstep::sim
