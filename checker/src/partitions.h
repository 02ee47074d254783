// Internal: how the partitions (keys) of one history share the search.
//
// Checking keys one after another makes a history with one easy invalid key wait behind
// every hard valid key before it, possibly until the time limit. Instead the partitions
// take turns in rounds: in round r every undecided partition runs up to 4096 << r search
// steps, on as many threads as asked (each partition on one thread at a time), and the
// rounds stop after the first round in which some partition is found invalid. An invalid
// partition is then found after at most about twice the steps it needs, times the number
// of partitions, whatever the others cost.
//
// The outcome does not depend on the number of threads: a search explores the same
// configurations however its steps are sliced, the slices are counted in steps (not time),
// and of the partitions found invalid in the deciding round the one reported is the one
// whose failing completion comes first in the history (the smallest invalid prefix found),
// never the first a thread happened to finish. Once one is found, partitions that cannot
// fail before it (their first ok completion comes later) stop at once; the others finish
// their slice. Only where a time or memory limit intervenes can the threads change what
// is decided.
//
// A history with one partition (the runner's check after every simulated run) is searched
// to its end on the calling thread: no rounds, no threads.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "lockstep/checker/model.h"
#include "search.h"

namespace lockstep::checker::detail {

struct Partition {
  std::string key;
  std::vector<size_t> key_ops;  // by op id: the op's index among the history's operations
  SearchInput in;
  Interner values;              // the model's interned values for this key's ops
  SearchBudget budget;          // set by search_partitions
  std::atomic<bool> cancel{false};
  size_t first_ok_pos = kNever; // the history position of its first ok completion
  std::unique_ptr<PartitionSearch> search;  // while undecided
  bool decided = false;
  SearchOutput out;             // once decided
};

// Where a partition found invalid failed: its failing completion's history position.
size_t failure_position(const Partition& p);

// Searches `parts` (in key order) until every one is decided or one is found invalid.
// `base` holds the deadline and the ledger every partition shares.
void search_partitions(std::vector<std::unique_ptr<Partition>>& parts, const SearchBudget& base, unsigned threads);

}  // namespace lockstep::checker::detail
