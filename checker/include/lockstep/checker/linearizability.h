// The linearizability checker: is there a total order of the history's operations, each
// placed between its invocation and completion, that the model accepts?
//
// The search is Wing & Gong's with Lowe's just-in-time linearization (the algorithm of
// Porcupine and Knossos "linear"): operations are tried in invocation order, an operation
// is "lifted" when it is linearized, and each (set of linearized operations, model state)
// configuration is memoized so it is explored once. The history is first split by
// Event::key and each key is checked alone (P-compositionality); the keys take turns in
// rounds of growing step budgets, on several threads, so that an easy invalid key is
// found without waiting for hard valid ones, and the check stops at the first round that
// finds one. Beyond Lowe's algorithm,
// and without changing any verdict: a configuration is skipped when one with the same ok
// operations and state but a subset of its info operations was already explored; info
// operations are tried only after ok ones fail to get further; and of several identical
// info operations only the earliest unlinearized one is tried.
//
// Semantics of the history:
//  - invoke + ok: took effect exactly once, between the two events.
//  - invoke + fail: never took effect; dropped.
//  - invoke + info, or an invoke never completed: may take effect at any point after the
//    invocation, or never; the search succeeds once every ok operation is linearized.
//  - truth events are ignored. Invocations and completions pair by (process, thread).
//  - Real-time order is the order of events in the history (not time_ns, which is only
//    used to describe things to people).
//
// Bounds: the search stops with Unknown when the time limit passes or when the bytes it
// holds (memo caches and stacks of every key at once) would exceed the memory limit; it
// never hangs or exhausts memory.
//
// Determinism: the verdict, the key reported and the explanation are the same for any
// number of threads, unless a time or memory limit was reached (then the verdict is
// unknown, or the key reported may be another invalid one).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "lockstep/checker/history.h"
#include "lockstep/checker/model.h"

namespace lockstep::checker {

enum class Verdict { Valid, Invalid, Unknown };
const char* to_string(Verdict v);

struct Limits {
  double time_limit_s = 10.0;
  size_t memory_limit_bytes = size_t{1024} << 20;
  // Threads that search keys at once; 0 means one per core. A history with one key is
  // always searched on the calling thread.
  unsigned threads = 0;
  // When set, reads what the process holds resident, in bytes: the memory limit then
  // also ends the search before the process would hold more than resident_base_bytes +
  // memory_limit_bytes, whatever the search does not count of itself (the history, blocks
  // a thread's pool keeps, freed memory malloc has not given back). `lockstep check`
  // passes its size at start-up as the base. Read as the search grows, from any of its
  // threads; the outcome at the limit then depends on the allocator, not only the steps.
  std::function<size_t()> resident_bytes = {};
  size_t resident_base_bytes = 0;
};

// What the search explored, summed over keys. The counts depend on how far keys got
// before the check stopped, and so, unlike the verdict, on the number of threads.
struct SearchStats {
  uint64_t states_visited = 0;  // configurations entered (lifts that were not cache hits)
  size_t cache_entries = 0;     // memoized configurations
  size_t peak_bytes = 0;        // most bytes held at once by caches and stacks of all keys
  size_t max_depth = 0;         // most operations linearized at once (deepest linearization)
  size_t keys = 0;              // partitions decided
};

struct LinResult {
  Verdict verdict = Verdict::Unknown;
  size_t ops = 0;            // operations (invocations) in the history
  std::string error;         // malformed history (e.g. a completion with no invocation): then
                             // verdict is Unknown and nothing was checked
  std::string unknown_reason;  // "time limit" or "memory limit" when Unknown for that reason
  SearchStats stats;

  // Set when Invalid. The failing operation is the first whose completion no order of the
  // operations before it can reach.
  std::string explanation_sentence;
  std::string key;                 // the key (partition) that failed: of those found invalid,
                                   // the one that fails first in the history
  size_t failed_event_index = 0;   // that completion's position in History::events
  std::vector<Event> prefix;       // events[0 .. failed_event_index]: smallest invalid prefix
  std::vector<Event> involved;     // invoke and completion events of the failing operation,
                                   // the operations concurrent with it, and the operation
                                   // that last changed the state, in history order
  std::vector<size_t> involved_indices;  // their positions in History::events
  // The linearization that got furthest, one event per operation: its completion, or its
  // invocation when it never completed.
  std::vector<Event> partial_linearization;
  std::string final_state;         // the model state after that linearization, in words
  // The same linearization as positions in History::events, for a picture of it: where
  // each operation was invoked and where it completed (== its invocation when it never
  // did), and the model's state after each, in words.
  std::vector<size_t> partial_invoke_indices;
  std::vector<size_t> partial_complete_indices;
  std::vector<std::string> partial_states;
  size_t failed_invoke_index = 0;  // where the operation that could not be placed was invoked
};

// Gives back to the system the blocks the calling thread keeps for its next searches
// (a search's large arrays come from them, so that a process checking one history after
// another does not fault the same pages in again): for a process that wants the memory
// back between checks, as `lockstep check` does between files.
void release_kept_search_memory();

LinResult check_linearizable(const History& history, const Model& model, const Limits& limits);

// Pairs invocations with completions (by process and thread); fail ops are included with
// outcome Fail. Truth events are skipped. Returns false with `error` on a completion with
// no pending invocation or a second invocation while one is pending.
bool collect_operations(const History& history, std::vector<Operation>& out, std::string& error);

// collect_operations one event at a time, so that it can be done on another thread while
// the history is still being recorded. add() each event of the history in order; after
// the first malformed event, the rest are ignored and error() says where.
class OperationCollector {
 public:
  void add(const Event& e);
  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  std::vector<Operation>& operations() { return out_; }

 private:
  std::vector<Operation> out_;
  // (process, thread) -> its pending op, or none. A slot stays once made: a history has
  // few threads and many operations, and erasing it on each completion cost an allocation
  // per operation.
  std::map<std::pair<int64_t, int64_t>, size_t> open_;
  size_t index_ = 0;  // the next event's position in the history
  std::string error_;
};

// check_linearizable of a history whose operations `collected` has already drawn from
// all of its events.
LinResult check_linearizable(const History& history, OperationCollector&& collected, const Model& model,
                             const Limits& limits);

}  // namespace lockstep::checker
