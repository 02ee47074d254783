// Invariants are the properties a lock promises, checked directly on a history with
// ground truth — cheaper and more direct than a linearizability search, and each one
// names a way the lock failed the people relying on it:
//
//   mutual-exclusion  two processes' critical sections overlapped in true time (two
//                     read sections of a read-write lock may; a read and a write may not);
//   lost-update       the protected counter ended where the successful decrements
//                     cannot explain it (two holders read the same value), or below zero;
//   foreign-unlock    an unlock removed the lock value another process had set;
//   deadlock          the lock stayed with a crashed or finished process longer than a
//                     bound while others tried to take it;
//   fencing           the resource accepted a write carrying a lower fencing token than
//                     one it had already accepted (a stale holder got through);
//   stale-read        a reader's two reads of the resource under one read lock differ: a
//                     write landed while the read lock was held.
//   stale-cache       a cache-aside run ended with a cache entry holding a value the
//                     database no longer has, which lives on (its TTL) past the staleness
//                     the scenario allows, counted from the database's last write.
//
// Each violation comes with one sentence naming processes and times.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lockstep/checker/history.h"

namespace lockstep::checker {

struct Violation {
  std::string property;
  std::string explanation;
  std::vector<int64_t> processes;
  int64_t at_ns = 0;
  int64_t count = 1;  // how many instances; the explanation describes the first
};

struct InvariantOptions {
  std::string lock_key = "lock";
  std::string resource_key = "stock";
  int64_t deadlock_bound_ns = 5'000'000'000;
};

std::vector<Violation> check_mutual_exclusion(const History& h);
std::vector<Violation> check_lost_update(const History& h, const InvariantOptions& o);
std::vector<Violation> check_foreign_unlock(const History& h, const InvariantOptions& o);
std::vector<Violation> check_deadlock(const History& h, const InvariantOptions& o);
std::vector<Violation> check_fencing(const History& h, const InvariantOptions& o);
std::vector<Violation> check_stale_read(const History& h, const InvariantOptions& o);
std::vector<Violation> check_stale_cache(const History& h);

// All of the above, in that order.
std::vector<Violation> check_invariants(const History& h, const InvariantOptions& o);

// "1.204s" — how times appear in explanations.
std::string format_seconds(int64_t ns);
// "client-3" for process 3.
std::string process_label(int64_t process);

}  // namespace lockstep::checker
