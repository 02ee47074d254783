// Internal: the memory limit of one check, shared by the searches of all its partitions,
// which may run on several threads at once. Each search holds a share and changes it
// through the ledger before it allocates, so the sum of the shares never exceeds the
// limit whatever the threads do; a search whose growth does not fit ends `unknown`
// (memory limit) and gives its share back.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>

namespace lockstep::checker::detail {

class MemoryLedger {
 public:
  explicit MemoryLedger(size_t limit_bytes) : limit_(limit_bytes) {}
  MemoryLedger(const MemoryLedger&) = delete;
  MemoryLedger& operator=(const MemoryLedger&) = delete;

  // Changes a share from `held` to `want` bytes. Shrinking always succeeds; growing
  // succeeds only if the total stays within the limit. On success `held` becomes `want`.
  bool resize(size_t& held, size_t want) {
    size_t total = total_.load(std::memory_order_relaxed);
    size_t next = 0;
    for (;;) {
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
  const size_t limit_;
  std::atomic<size_t> total_{0};
  std::atomic<size_t> peak_{0};
};

}  // namespace lockstep::checker::detail
