#include "lockstep/sim/clock.h"

#include <cmath>

namespace lockstep::sim {

Clock::Clock(int64_t offset_ns, double drift_ppm) {
  wall_base_ns_ += offset_ns;
  drift_ppb_ = std::llround(drift_ppm * 1000.0);
}

int64_t Clock::skew(int64_t d) const {
  // 128-bit so hours of simulated time at large drift cannot overflow.
  return static_cast<int64_t>(static_cast<__int128>(d) * drift_ppb_ / 1000000000);
}

void Clock::set_drift(int64_t true_ns, double drift_ppm) {
  wall_base_ns_ = wall_ns(true_ns);
  mono_base_ns_ = mono_ns(true_ns);
  true_base_ns_ = true_ns;
  drift_ppb_ = std::llround(drift_ppm * 1000.0);
}

}  // namespace lockstep::sim
