#include "lockstep/sim/clock.h"

#include <gtest/gtest.h>

namespace lockstep::sim {
namespace {

constexpr int64_t kSec = 1'000'000'000;

TEST(Clock, UnskewedClockFollowsTrueTime) {
  Clock c;
  EXPECT_EQ(c.wall_ns(5 * kSec) - c.wall_ns(0), 5 * kSec);
  EXPECT_EQ(c.mono_ns(5 * kSec) - c.mono_ns(0), 5 * kSec);
  EXPECT_EQ(c.wall_ns(0), Clock::kEpochNs);
}

TEST(Clock, OffsetShiftsWallOnly) {
  Clock c(250'000'000, 0.0);
  EXPECT_EQ(c.wall_ns(0), Clock::kEpochNs + 250'000'000);
  EXPECT_EQ(c.mono_ns(0), 0);
}

TEST(Clock, JumpMovesWallTimeOnly) {
  Clock c;
  const int64_t mono_before = c.mono_ns(kSec);
  const int64_t wall_before = c.wall_ns(kSec);
  c.jump_wall(30 * kSec);
  EXPECT_EQ(c.wall_ns(kSec), wall_before + 30 * kSec);
  EXPECT_EQ(c.mono_ns(kSec), mono_before);
  c.jump_wall(-60 * kSec);  // a backwards step: wall goes back, monotonic does not
  EXPECT_EQ(c.wall_ns(kSec), wall_before - 30 * kSec);
  EXPECT_EQ(c.mono_ns(2 * kSec), mono_before + kSec);
}

TEST(Clock, DriftMovesBothClocks) {
  Clock c(0, 100.0);  // 100 ppm fast: 100 us per second
  EXPECT_EQ(c.mono_ns(10 * kSec) - c.mono_ns(0), 10 * kSec + 1'000'000);
  EXPECT_EQ(c.wall_ns(10 * kSec) - c.wall_ns(0), 10 * kSec + 1'000'000);
}

TEST(Clock, DriftChangeIsContinuous) {
  Clock c;
  const int64_t wall_at_5 = c.wall_ns(5 * kSec);
  const int64_t mono_at_5 = c.mono_ns(5 * kSec);
  c.set_drift(5 * kSec, -500.0);
  EXPECT_EQ(c.wall_ns(5 * kSec), wall_at_5);
  EXPECT_EQ(c.mono_ns(5 * kSec), mono_at_5);
  EXPECT_EQ(c.mono_ns(7 * kSec) - mono_at_5, 2 * kSec - 1'000'000);
}

TEST(Clock, MonotonicNeverGoesBackwardsUnderSlowDrift) {
  Clock c(0, -999'000.0);  // nearly stopped, but never backwards
  int64_t prev = c.mono_ns(0);
  for (int64_t t = 0; t < 100 * kSec; t += kSec / 7) {
    EXPECT_GE(c.mono_ns(t), prev);
    prev = c.mono_ns(t);
  }
}

}  // namespace
}  // namespace lockstep::sim
