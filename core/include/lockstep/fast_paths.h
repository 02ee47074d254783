// The switch for lockstep's speed work. With the CMake option LOCKSTEP_FAST_PATHS (on by
// default) the pools, the per-thread caches, the simulator's reading of script bytecode
// and the history written on a second thread are built in; off, each takes its plain
// counterpart. The two builds record byte-identical histories (scripts/test checks it),
// so a suspected fast-path bug is one build away from being confirmed or cleared.
//
// Under AddressSanitizer the pools stay on, as in Release, and poison what they keep: a
// block used after it went back to its pool is reported as a use after free would be.
#pragma once

#include <cstddef>

#include "lockstep/build_config.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define LOCKSTEP_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#include <sanitizer/asan_interface.h>
#define LOCKSTEP_ASAN 1
#endif
#endif

namespace lockstep {

inline constexpr bool kFastPaths = LOCKSTEP_FAST_PATHS != 0;

// A pool keeps the `n` bytes at `p` for later: nobody may touch them until it hands them
// out again.
inline void pool_keeps([[maybe_unused]] void* p, [[maybe_unused]] std::size_t n) noexcept {
#if defined(LOCKSTEP_ASAN)
  ASAN_POISON_MEMORY_REGION(p, n);
#endif
}

// A pool hands out (or reads its own link in) the `n` bytes at `p` it kept.
inline void pool_hands_out([[maybe_unused]] void* p, [[maybe_unused]] std::size_t n) noexcept {
#if defined(LOCKSTEP_ASAN)
  ASAN_UNPOISON_MEMORY_REGION(p, n);
#endif
}

}  // namespace lockstep
