// A simulated process's clocks, as functions of true time. Each process (client or Redis
// node) has an offset, a drift rate and a history of wall-clock jumps:
//   - drift moves both clocks: a process whose crystal runs 100 ppm fast sees both its
//     wall and monotonic time advance 1.0001 s per true second;
//   - a jump (an NTP step, an operator's `date -s`) moves the wall clock only; the
//     monotonic clock never jumps and never goes backwards.
// Redis nodes expire keys by their wall clock, so a jump on a node expires keys early or
// late, exactly the RedLock hazard.
#pragma once

#include <cstdint>

namespace lockstep::sim {

class Clock {
 public:
  // Unix time in ns that true time 0 maps to on an unskewed clock (2026-01-01T00:00Z):
  // keeps wall readings realistic so expiry arithmetic looks like a real server's.
  static constexpr int64_t kEpochNs = 1767225600LL * 1000000000LL;

  Clock() = default;
  Clock(int64_t offset_ns, double drift_ppm);

  int64_t wall_ns(int64_t true_ns) const { return wall_base_ns_ + elapsed(true_ns); }
  int64_t mono_ns(int64_t true_ns) const { return mono_base_ns_ + elapsed(true_ns); }

  // From true time t on, both clocks run at (1 + ppm / 1e6) of true speed.
  void set_drift(int64_t true_ns, double drift_ppm);
  // Steps the wall clock by delta (negative steps it back).
  void jump_wall(int64_t delta_ns) { wall_base_ns_ += delta_ns; }

 private:
  // Clocks are read on every command and timer; most never drift, and those skip the
  // 128-bit division.
  int64_t elapsed(int64_t true_ns) const {
    const int64_t d = true_ns - true_base_ns_;
    return drift_ppb_ == 0 ? d : d + skew(d);
  }
  int64_t skew(int64_t d) const;

  int64_t true_base_ns_ = 0;
  int64_t wall_base_ns_ = kEpochNs;
  int64_t mono_base_ns_ = 0;
  int64_t drift_ppb_ = 0;  // parts per billion, integer so readings are exact
};

}  // namespace lockstep::sim
