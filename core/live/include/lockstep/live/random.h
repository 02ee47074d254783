// The live world's random streams: the same xoshiro256** seeded through splitmix64 from
// (root seed, stream name) that the simulator uses, copied here so that core/live never
// depends on sim/. A client named "client-3" with seed S draws the same stream in both
// worlds, so its lock tokens and retry jitter start out identical; what differs live is
// only the timing the real machine imposes.
#pragma once

#include <cstdint>
#include <string_view>

namespace lockstep::live {

inline uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// FNV-1a: stable across builds, unlike std::hash.
inline uint64_t stable_hash(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

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

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

}  // namespace lockstep::live
