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
//                     the scenario allows, counted from the database's last write;
//   fairness          (locks that promise arrival order) a client was served while one
//                     that had asked earlier was still waiting.
//
// Each violation comes with one sentence naming processes and times, and a severity class
// (lockstep/checker/properties.h) that classify() settles once every check has run.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lockstep/checker/history.h"
#include "lockstep/checker/properties.h"

namespace lockstep::checker {

struct Violation {
  Property property = Property::MutualExclusion;
  std::string explanation;
  std::vector<int64_t> processes;
  int64_t at_ns = 0;
  int64_t count = 1;  // how many instances; the explanation describes the first
  // What the break did; each check sets its property's class, and classify() settles
  // linearizability's, which depends on what else the run showed.
  Severity severity = Severity::Damage;
};

struct InvariantOptions {
  std::string lock_key = "lock";
  std::string resource_key = "stock";
  int64_t deadlock_bound_ns = 5'000'000'000;
  // The lock promises arrival order (a fair lock): check_fairness runs.
  bool fair = false;
  // Clients that asked within this long of each other asked at the same moment: the
  // network may deliver either request first, and a fair lock serves the one that arrived.
  int64_t fairness_margin_ns = 1'000'000;
  // How many nodes the lock is taken on (a majority of them holds it); 0: unknown, and
  // check_false_extend does not run.
  int lock_nodes = 0;
};

std::vector<Violation> check_mutual_exclusion(const History& h);
std::vector<Violation> check_lost_update(const History& h, const InvariantOptions& o);
std::vector<Violation> check_foreign_unlock(const History& h, const InvariantOptions& o);
std::vector<Violation> check_deadlock(const History& h, const InvariantOptions& o);
std::vector<Violation> check_fencing(const History& h, const InvariantOptions& o);
std::vector<Violation> check_stale_read(const History& h, const InvariantOptions& o);
std::vector<Violation> check_stale_cache(const History& h);
std::vector<Violation> check_fairness(const History& h, const InvariantOptions& o);
// An extension the client asked for (thread 0: not a library's background renewal) and
// was told succeeded although, from before it was asked until
// after it answered (fairness_margin_ns either side), its key was on fewer than a
// majority of the lock's nodes: the library hid a lost lock from its holder.
std::vector<Violation> check_false_extend(const History& h, const InvariantOptions& o);

// All of the above, in that order (fairness only when o.fair).
std::vector<Violation> check_invariants(const History& h, const InvariantOptions& o);

// Settles each violation's severity class once every check of a run has added its own:
// a linearizability violation is two-holders when critical sections overlapped too (or
// the history records none, so nothing shows they did not), and lease-lost otherwise, its
// sentence then saying so. Every other property keeps its table's class.
void classify(std::vector<Violation>& violations, const History& h);

// Why a history cannot show that a lock kept its promises, however clean it looks: the
// clients that were still waiting for the lock or working under it when the run ended
// (neither finished nor crashed), and a run in which no operation completed. One
// sentence each; empty when the workload ran to its end.
std::vector<std::string> unfinished_work(const History& h);

// "1.204s" — how times appear in explanations.
std::string format_seconds(int64_t ns);
// "client-3" for process 3.
std::string process_label(int64_t process);

}  // namespace lockstep::checker
