// Internal: the memory limit of one check, shared by the searches of all its partitions,
// which may run on several threads at once. Each search holds a share and changes it
// through the ledger before it allocates, so the sum of the shares never exceeds the
// limit whatever the threads do; a search whose growth does not fit ends `unknown`
// (memory limit) and gives its share back.
//
// The shares count what the searches hold. What else the process holds — the history and
// its operations, blocks kept for reuse by each thread's pool (block_pool.h), freed memory
// malloc has not given back — only a measurement sees: given a reader of the process's
// resident size, the ledger also refuses growth that would take the process past its base
// size plus the limit. It reads the size at the first growth and then each time the shares
// have grown by another `step` (a 32nd of the limit, from 256 KiB to 4 MiB), or by more at
// once; between two readings the process grows by no more than what was admitted since, so
// a reading that leaves room for the growth asked for plus one more step keeps the process
// within the bound until the next.
#pragma once

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cstddef>
#include <functional>
#include <utility>

namespace lockstep::checker::detail {

class MemoryLedger {
 public:
  explicit MemoryLedger(size_t limit_bytes, std::function<size_t()> resident_bytes = {}, size_t resident_base_bytes = 0)
      : limit_(limit_bytes),
        resident_(std::move(resident_bytes)),
        base_(resident_base_bytes),
        step_(std::clamp<size_t>(limit_bytes / 32, size_t{256} << 10, size_t{4} << 20)) {}
  MemoryLedger(const MemoryLedger&) = delete;
  MemoryLedger& operator=(const MemoryLedger&) = delete;

  // Changes a share from `held` to `want` bytes. Shrinking always succeeds; growing
  // succeeds only if the total stays within the limit (and the process within its bound,
  // see above). On success `held` becomes `want`.
  bool resize(size_t& held, size_t want) {
    if (want > held && !resident_allows(want - held)) return false;
    size_t total = total_.load(std::memory_order_relaxed);
    size_t next = 0;
    for (;;) {
      assert(total >= held && "a share never holds more than the ledger counts");
      next = total - held + want;
      if (want > held && next > limit_) return false;
      if (total_.compare_exchange_weak(total, next, std::memory_order_relaxed)) break;
    }
    held = want;
    size_t peak = peak_.load(std::memory_order_relaxed);
    while (next > peak && !peak_.compare_exchange_weak(peak, next, std::memory_order_relaxed)) {
    }
    return true;
  }

  size_t limit() const { return limit_; }
  // The most bytes the shares summed to at once.
  size_t peak() const { return peak_.load(std::memory_order_relaxed); }

 private:
  // Growth counts whether or not it is later given back: memory freed by one search may
  // stay with the process (a thread's pool, malloc) while another allocates anew.
  bool resident_allows(size_t growth) {
    if (!resident_) return true;
    const size_t grown = grown_.fetch_add(growth, std::memory_order_relaxed) + growth;
    if (grown < next_reading_.load(std::memory_order_relaxed) && growth < step_) return true;
    const size_t resident = resident_();
    const size_t used = resident > base_ ? resident - base_ : 0;
    if (used + growth + step_ > limit_) {
      grown_.fetch_sub(growth, std::memory_order_relaxed);
      return false;
    }
    next_reading_.store(grown + step_, std::memory_order_relaxed);
    return true;
  }

  const size_t limit_;
  std::atomic<size_t> total_{0};
  std::atomic<size_t> peak_{0};
  const std::function<size_t()> resident_;
  const size_t base_;
  const size_t step_;
  std::atomic<size_t> grown_{0};
  std::atomic<size_t> next_reading_{0};
};

}  // namespace lockstep::checker::detail
