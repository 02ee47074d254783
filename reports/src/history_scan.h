// Facts the timeline and the history excerpt both read off a history the same way: when
// each client believed it held the lock, and which write did the damage a lost-update
// verdict only counts.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lockstep/checker/history.h"

namespace lockstep::reports {

// A client's belief that it held the lock: from its acquire's ok to its release's
// completion, its crash or the end of the history (end_ns = -1: never given back).
struct Hold {
  int64_t process = -1;
  int64_t begin_ns = 0;
  int64_t end_ns = -1;
  bool covers(int64_t t) const { return begin_ns <= t && (end_ns < 0 || t < end_ns); }
};
std::vector<Hold> lock_holds(const checker::History& h);

// Who else believed they held the lock at `t` (the cause of a linearizability failure
// of `process`'s acquire completing at `t`), earliest first.
std::vector<Hold> other_holders(const std::vector<Hold>& holds, int64_t process, int64_t t);

// A write of the resource computed from a read that another process's write had already
// made stale: it overwrote that write, whose update was lost.
struct LostWrite {
  int64_t process = -1;    // who wrote over it
  int64_t at_ns = 0;       // when that write completed
  int64_t read_ns = 0;     // when the read it was computed from completed
  int64_t lost_process = -1;  // whose write it overwrote
  int64_t lost_at_ns = 0;
  std::string sentence;
};
std::vector<LostWrite> lost_writes(const checker::History& h, const std::string& resource_key);

}  // namespace lockstep::reports
