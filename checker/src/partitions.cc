// Partitions taking turns in rounds, on one thread or several (partitions.h).
#include "partitions.h"

#include <algorithm>
#include <barrier>
#include <cassert>
#include <new>
#include <thread>

namespace lockstep::checker::detail {

size_t failure_position(const Partition& p) { return p.in.ret_pos[static_cast<size_t>(p.out.stuck_op)]; }

namespace {

// Small enough that a history of many easy keys decides most of them in the first round,
// large enough that a round's bookkeeping is a small part of it.
constexpr uint64_t kFirstSliceSteps = 4096;
constexpr uint64_t kLastSliceSteps = uint64_t{1} << 50;

// Runs one partition's slice. Called on any thread; a partition is only ever given to one
// thread per round, and rounds are separated by a barrier.
void run_slice(std::vector<std::unique_ptr<Partition>>& parts, size_t order, uint64_t steps) {
  Partition& p = *parts[order];
  assert(!p.decided && "a decided partition is never given a slice again");
  if (p.cancel.load(std::memory_order_relaxed)) return;
  // The search's own arrays (its list of operations, its stacks) are counted but not
  // asked for in advance; if the system refuses them, the partition is out of memory, and
  // the other threads must not be left waiting at the barrier for this one.
  try {
    if (!p.search) p.search = std::make_unique<PartitionSearch>(p.in, p.budget);
    if (!p.search->advance(steps)) return;
    p.out = p.search->take_output();
  } catch (const std::bad_alloc&) {
    p.out = SearchOutput{};
    p.out.unknown_reason = kMemoryLimit;
  }
  p.search.reset();  // gives its memory back for the partitions still searching
  p.decided = true;
  if (p.out.verdict != Verdict::Invalid) return;
  // A partition whose first ok completion comes after this failure cannot fail earlier,
  // so it cannot be the one reported.
  size_t failed_at = failure_position(p);
  for (auto& q : parts) {
    if (q->first_ok_pos > failed_at) q->cancel.store(true, std::memory_order_relaxed);
  }
}

class Rounds {
 public:
  explicit Rounds(std::vector<std::unique_ptr<Partition>>& parts) : parts_(parts) {
    for (size_t i = 0; i < parts.size(); ++i) pending_.push_back(i);
  }

  // Takes undecided partitions of this round until none are left.
  void work() {
    for (size_t i; (i = next_.fetch_add(1, std::memory_order_relaxed)) < pending_.size();) {
      run_slice(parts_, pending_[i], slice_steps_);
    }
  }

  // Between rounds, on one thread while the others wait: drops the decided partitions and
  // doubles the slice.
  void end_round() noexcept {
    bool invalid = false;
    for (size_t i : pending_) invalid = invalid || (parts_[i]->decided && parts_[i]->out.verdict == Verdict::Invalid);
    std::erase_if(pending_, [&](size_t i) { return parts_[i]->decided; });
    done_ = invalid || pending_.empty();
    slice_steps_ = std::min(slice_steps_ * 2, kLastSliceSteps);
    next_.store(0, std::memory_order_relaxed);
  }

  bool done() const { return done_; }

 private:
  std::vector<std::unique_ptr<Partition>>& parts_;
  std::vector<size_t> pending_;  // undecided partitions, in key order
  uint64_t slice_steps_ = kFirstSliceSteps;
  std::atomic<size_t> next_{0};
  bool done_ = false;
};

}  // namespace

void search_partitions(std::vector<std::unique_ptr<Partition>>& parts, const SearchBudget& base, unsigned threads) {
  for (auto& p : parts) {
    p->budget = base;
    p->budget.cancel = &p->cancel;
    for (size_t op = 0; op < p->in.must.size(); ++op) {
      if (p->in.must[op]) p->first_ok_pos = std::min(p->first_ok_pos, p->in.ret_pos[op]);
    }
  }
  if (parts.empty()) return;
  if (parts.size() == 1) {
    run_slice(parts, 0, UINT64_MAX);
    return;
  }
  Rounds rounds(parts);
  threads = static_cast<unsigned>(std::clamp<size_t>(threads, 1, parts.size()));
  if (threads == 1) {
    while (!rounds.done()) {
      rounds.work();
      rounds.end_round();
    }
    return;
  }
  auto end_round = [&rounds]() noexcept { rounds.end_round(); };
  std::barrier sync(static_cast<std::ptrdiff_t>(threads), end_round);
  auto worker = [&] {
    while (!rounds.done()) {
      rounds.work();
      sync.arrive_and_wait();
    }
  };
  std::vector<std::jthread> helpers;
  for (unsigned t = 1; t < threads; ++t) helpers.emplace_back(worker);
  worker();
}

}  // namespace lockstep::checker::detail
