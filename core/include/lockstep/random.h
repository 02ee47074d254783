// Deterministic random streams, shared by both worlds. A run has one root seed; every
// component (each client, each node, the network, the fault planner) draws from its own
// stream derived from the root seed and the component's name, so adding a client does
// not change what the network draws. A client named "client-3" with seed S draws the same
// stream in the simulator and live, so its lock tokens and retry jitter start out
// identical; what differs live is only the timing the real machine imposes.
#pragma once

#include <cmath>
#include <cstdint>
#include <string_view>

namespace lockstep {

inline uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// FNV-1a: a stable hash of a stream name (std::hash is not stable across builds).
inline uint64_t stable_hash(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

// xoshiro256**: fast, good quality, and fully specified, so streams are identical on
// every platform.
class Rng {
 public:
  Rng() : Rng(0, "") {}
  Rng(uint64_t root_seed, std::string_view stream) {
    uint64_t sm = root_seed ^ stable_hash(stream);
    for (auto& w : s_) w = splitmix64(sm);
  }

  uint64_t next() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  // Uniform in [0, 1).
  double uniform01() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  // Uniform integer in [lo, hi]; the slight modulo bias is irrelevant for simulation.
  int64_t between(int64_t lo, int64_t hi) {
    if (hi <= lo) return lo;
    return lo + static_cast<int64_t>(next() % static_cast<uint64_t>(hi - lo + 1));
  }

  bool chance(double p) { return p > 0 && uniform01() < p; }

  // Standard normal by Box-Muller; libm's log/cos/sqrt are correctly rounded enough on
  // glibc that streams agree across runs on one platform.
  double normal() {
    double u1 = uniform01();
    double u2 = uniform01();
    if (u1 < 1e-300) u1 = 1e-300;
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

}  // namespace lockstep
