// Internal: the search's large arrays come from a per-thread pool of blocks that outlives
// one search. Without it, a process that checks one history after another (many files in
// one `lockstep check`, a check after every simulated run, a benchmark) hands the search's
// pages back to the system when a search ends — malloc trims a heap whose top grew past its
// threshold — and faults them in again in the next one, which costs more than the search
// on machines where a page fault is slow.
//
// Blocks of 4 KiB and more are rounded up to a power of two, so one class serves every
// size within a factor of two; the rounding costs address space only, as pages never
// touched are never backed. A class keeps what it is given while the pool holds at most
// kKeptBytes. Smaller blocks go to malloc, and so does everything when the fast paths are
// built out (lockstep/fast_paths.h). Under AddressSanitizer a kept block is poisoned, so
// a block used after its search is gone is still reported.
#pragma once

#include <bit>
#include <cstddef>
#include <new>
#include <vector>

#include "lockstep/fast_paths.h"

namespace lockstep::checker::detail {

class BlockPool {
 public:
  static void* allocate(std::size_t bytes) {
    if (kFastPaths && bytes >= kMinBytes) {
      unsigned c = size_class(bytes);
      Lists& l = lists();
      if (!l.free[c].empty()) {
        void* p = l.free[c].back();
        l.free[c].pop_back();
        l.kept -= std::size_t{1} << c;
        pool_hands_out(p, std::size_t{1} << c);
        return p;
      }
      return ::operator new(std::size_t{1} << c);
    }
    return ::operator new(bytes);
  }

  static void release(void* p, std::size_t bytes) noexcept {
    if (kFastPaths && bytes >= kMinBytes) {
      unsigned c = size_class(bytes);
      std::size_t size = std::size_t{1} << c;
      Lists& l = lists();
      if (l.kept + size <= kKeptBytes && l.free[c].size() < l.free[c].capacity()) {
        l.free[c].push_back(p);
        l.kept += size;
        pool_keeps(p, size);
        return;
      }
      ::operator delete(p, size);
      return;
    }
    ::operator delete(p, bytes);
  }

  // Hands every block the calling thread's pool keeps back to the system.
  static void release_kept() noexcept {
    Lists& l = lists();
    for (unsigned c = 0; c < kClasses; ++c) {
      for (void* p : l.free[c]) ::operator delete(p, std::size_t{1} << c);
      l.free[c].clear();
    }
    l.kept = 0;
  }

  // What a block of `bytes` occupies once allocated: its size class from 4 KiB up (the
  // pool rounds to a power of two there, and a reused block's pages have all been
  // touched before), below that what malloc hands out (heap_footprint). The same in every
  // build, so what a search counts does not depend on the allocator it runs on.
  static std::size_t footprint(std::size_t bytes) {
    return bytes >= kMinBytes ? std::size_t{1} << size_class(bytes) : heap_footprint(bytes);
  }

  // What malloc (glibc's) takes for `bytes`: an 8-byte header, rounded up to 16, at least
  // 32; from a page up, whole pages.
  static std::size_t heap_footprint(std::size_t bytes) {
    if (bytes == 0) return 0;
    if (bytes >= kPageBytes) return (bytes + 16 + kPageBytes - 1) / kPageBytes * kPageBytes;
    return bytes + 8 <= 32 ? 32 : (bytes + 8 + 15) / 16 * 16;
  }

 private:
  static constexpr std::size_t kPageBytes = 4096;
  static constexpr std::size_t kMinBytes = 4096;
  static constexpr std::size_t kKeptBytes = std::size_t{16} << 20;
  static constexpr unsigned kClasses = 48;

  static unsigned size_class(std::size_t bytes) { return static_cast<unsigned>(std::bit_width(bytes - 1)); }

  struct Lists {
    // Room for every block reserved up front, so that keeping one never allocates.
    Lists() {
      for (unsigned c = 12; c < kClasses; ++c) free[c].reserve(kKeptBytes >> c);
    }
    ~Lists() {
      for (unsigned c = 0; c < kClasses; ++c) {
        for (void* p : free[c]) ::operator delete(p, std::size_t{1} << c);
      }
    }
    std::vector<void*> free[kClasses];
    std::size_t kept = 0;
  };
  static Lists& lists() {
    thread_local Lists l;
    return l;
  }
};

// A std::vector allocator drawing on BlockPool.
template <class T>
struct PoolAllocator {
  using value_type = T;
  PoolAllocator() = default;
  template <class U>
  PoolAllocator(const PoolAllocator<U>&) noexcept {}
  T* allocate(std::size_t n) { return static_cast<T*>(BlockPool::allocate(n * sizeof(T))); }
  void deallocate(T* p, std::size_t n) noexcept { BlockPool::release(p, n * sizeof(T)); }
  template <class U>
  bool operator==(const PoolAllocator<U>&) const noexcept {
    return true;
  }
};

template <class T>
using PooledVector = std::vector<T, PoolAllocator<T>>;

}  // namespace lockstep::checker::detail
