// Internal: the just-in-time linearization search (Wing & Gong, Lowe) over the operations
// of one key (partition).
//
// Operations are numbered 0..n-1 in invocation order. The entries list holds a call and a
// return node per operation in real-time order; an info or pending operation's return sits
// after every recorded event (at +infinity). Linearizing an operation lifts both its nodes
// out of the list; backtracking puts them back (dancing links, LIFO).
//
// A configuration is (set of linearized ok ops, model state, set of linearized optional
// (info/pending) ops). The ok set is stored canonically and compactly as hi = 1 + the
// largest linearized ok id, plus the ok ids below hi that are not linearized ("holes"):
// these are the ok call nodes still in the list before the first call with id >= hi, so
// building it costs O(holes), not O(n). The optional set is a bitset over optional ops.
// Model states are interned: the search handles a state as the id of its bytes in a table
// of distinct states, and remembers recent (state, op) -> next state transitions, which
// `step` being pure makes exact.
//
// Memoization is by dominance, not only equality: (S, s, O1) explored means (S, s, O2) with
// O1 a subset of O2 need not be, since optional ops may always be left out, so every
// continuation of the second is one of the first. Equal keys are compared exactly.
//
// A search runs in slices of a given number of steps and can be resumed, so that the
// partitions of a history can take turns (partitions.h); the configurations it explores,
// and so its verdict and explanation, do not depend on how the steps are sliced.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "lockstep/checker/linearizability.h"
#include "lockstep/checker/model.h"
#include "memory_ledger.h"

namespace lockstep::checker::detail {

inline constexpr size_t kNever = static_cast<size_t>(-1);

struct SearchInput {
  const Model* model = nullptr;
  std::vector<Step> steps;       // by op id
  std::vector<uint8_t> must;     // 1 when the op completed ok and so must be linearized
  std::vector<size_t> call_pos;  // invocation's position in the history; increasing with the op id
  std::vector<size_t> ret_pos;   // completion's position; kNever for info and pending
};

struct SearchBudget {
  std::chrono::steady_clock::time_point deadline;
  MemoryLedger* memory = nullptr;               // shared by every partition of the check
  const std::atomic<bool>* cancel = nullptr;    // when set, the search pauses soon
};

// Why a search ended Unknown (SearchOutput::unknown_reason, LinResult::unknown_reason).
// PartitionSearch decides by the reason whether another search order is worth running.
inline constexpr const char* kTimeLimit = "time limit";
inline constexpr const char* kMemoryLimit = "memory limit";

struct SearchOutput {
  Verdict verdict = Verdict::Unknown;
  std::string unknown_reason;
  int32_t stuck_op = -1;       // the op whose completion no explored order could pass
  std::vector<int32_t> partial;  // the linearization that got furthest (op ids, in order)
  State partial_state;         // the model state after it
  uint64_t states_visited = 0;
  size_t cache_entries = 0;
  size_t peak_bytes = 0;       // this search's own peak
  size_t max_depth = 0;
};

class Searcher;

// One partition's search, resumable. Holds memory (under the ledger) until destroyed.
class PartitionSearch {
 public:
  // `in` and `budget` must outlive the search.
  PartitionSearch(const SearchInput& in, const SearchBudget& budget);
  ~PartitionSearch();
  PartitionSearch(const PartitionSearch&) = delete;
  PartitionSearch& operator=(const PartitionSearch&) = delete;

  // Runs up to `steps` more steps of the search. Returns true once it is decided (valid,
  // invalid, or unknown at a limit); false when the steps ran out or it was cancelled.
  bool advance(uint64_t steps);
  // The outcome, once decided; the search may then be destroyed to free its memory.
  SearchOutput take_output();

 private:
  const SearchInput& in_;
  const SearchBudget& budget_;
  bool quick_;  // the search in s_ is the quick order's (lift_first)
  std::unique_ptr<Searcher> s_;
  SearchOutput quick_out_;  // the quick order's outcome, when the plain order runs too
  SearchOutput out_;
};

// Runs one search to its end.
SearchOutput search(const SearchInput& in, const SearchBudget& budget);

}  // namespace lockstep::checker::detail
