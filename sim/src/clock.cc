#include "lockstep/sim/clock.h"

#include <cmath>

namespace lockstep::sim {

Clock::Clock(int64_t offset_ns, double drift_ppm) {
  wall_base_ns_ += offset_ns;
  drift_ppb_ = std::llround(drift_ppm * 1000.0);
}

int64_t Clock::elapsed(int64_t true_ns) const {
  const int64_t d = true_ns - true_base_ns_;
  // 128-bit so hours of simulated time at large drift cannot overflow.
  const __int128 skew = static_cast<__int128>(d) * drift_ppb_ / 1000000000;
  return d + static_cast<int64_t>(skew);
}

int64_t Clock::wall_ns(int64_t true_ns) const { return wall_base_ns_ + elapsed(true_ns); }
int64_t Clock::mono_ns(int64_t true_ns) const { return mono_base_ns_ + elapsed(true_ns); }

void Clock::set_drift(int64_t true_ns, double drift_ppm) {
  wall_base_ns_ = wall_ns(true_ns);
  mono_base_ns_ = mono_ns(true_ns);
  true_base_ns_ = true_ns;
  drift_ppb_ = std::llround(drift_ppm * 1000.0);
}

}  // namespace lockstep::sim
