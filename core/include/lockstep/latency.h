// How long a message takes on a link, as a distribution: the scenario's network.latency,
// drawn by the simulator's network for every message and by the live world's fault proxy
// for every message it passes on, so a scenario's latency means the same in both worlds.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "lockstep/random.h"

namespace lockstep {

struct Latency {
  enum class Kind { Constant, Uniform, Normal, LongTail };
  Kind kind = Kind::Constant;
  int64_t a_ns = 1000000;  // constant: delay; uniform: min; normal: mean; long-tail: usual
  int64_t b_ns = 0;        // uniform: max; normal: stddev; long-tail: mean extra when slow
  double tail_probability = 0.0;

  // One message's delay, never negative.
  int64_t draw(Rng& rng) const {
    int64_t d = 0;
    switch (kind) {
      case Kind::Constant: d = a_ns; break;
      case Kind::Uniform: d = rng.between(a_ns, b_ns); break;
      case Kind::Normal: d = a_ns + static_cast<int64_t>(std::llround(rng.normal() * static_cast<double>(b_ns))); break;
      case Kind::LongTail:
        d = a_ns;
        // A slow message waits an exponentially distributed extra time: most messages are
        // quick, a few are very late — the shape that makes timeouts lie.
        if (rng.chance(tail_probability)) {
          d += static_cast<int64_t>(-std::log(1.0 - rng.uniform01()) * static_cast<double>(b_ns));
        }
        break;
    }
    return std::max<int64_t>(d, 0);
  }
};

}  // namespace lockstep
