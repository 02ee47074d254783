#include "lockstep/sim/network.h"

#include <gtest/gtest.h>

namespace lockstep::sim {
namespace {

constexpr int64_t kMs = 1'000'000;

TEST(Network, ConstantLatency) {
  Network n(1, Latency{Latency::Kind::Constant, 3 * kMs, 0, 0}, 0.0);
  EXPECT_EQ(n.transit(0, 1, 10 * kMs), 13 * kMs);
}

TEST(Network, LinksAreFifo) {
  // A slow message followed by a fast one: the fast one may not overtake.
  Network n(7, Latency{Latency::Kind::Uniform, 1 * kMs, 50 * kMs, 0}, 0.0);
  int64_t last = 0;
  for (int i = 0; i < 1000; ++i) {
    auto t = n.transit(0, 1, i * kMs / 10);
    ASSERT_TRUE(t);
    EXPECT_GE(*t, last);
    last = *t;
  }
}

// Links live in a flat table that widens with the highest process seen, and past a
// bound in a map: a link keeps its FIFO order and its partition through all of it.
TEST(Network, LinksKeepTheirStateInEitherTable) {
  Network n(1, Latency{Latency::Kind::Constant, 3 * kMs, 0, 0}, 0.0);
  n.add_extra_delay(1, 100 * kMs);
  const auto slow = n.transit(0, 1, 0);
  n.add_extra_delay(1, -100 * kMs);
  n.block(2, 0, +1);
  EXPECT_EQ(n.transit(40, 41, 0), 3 * kMs);  // widens the table
  n.add_extra_delay(700, 100 * kMs);
  const auto slow_far = n.transit(1, 700, 0);
  n.add_extra_delay(700, -100 * kMs);
  EXPECT_EQ(n.transit(1, 700, kMs), slow_far);
  EXPECT_EQ(n.transit(0, 1, kMs), slow);  // may not overtake the slow one
  EXPECT_TRUE(n.blocked(2, 0));
  EXPECT_FALSE(n.transit(2, 0, 0));
  EXPECT_FALSE(n.blocked(99, 98));  // never seen: not blocked
  n.block(2, 0, -1);
  EXPECT_EQ(n.transit(2, 0, 0), 3 * kMs);
}

TEST(Network, UniformStaysInRange) {
  Network n(3, Latency{Latency::Kind::Uniform, 2 * kMs, 4 * kMs, 0}, 0.0);
  for (int i = 0; i < 500; ++i) {
    // A fresh directed pair each time so FIFO ordering does not lift the draw.
    auto t = n.transit(i, i + 1000, 0);
    ASSERT_TRUE(t);
    EXPECT_GE(*t, 2 * kMs);
    EXPECT_LE(*t, 4 * kMs);
  }
}

TEST(Network, NormalIsCenteredAndNeverNegative) {
  Network n(5, Latency{Latency::Kind::Normal, 10 * kMs, 2 * kMs, 0}, 0.0);
  double sum = 0;
  for (int i = 0; i < 2000; ++i) {
    auto t = n.transit(i, i + 5000, 0);
    ASSERT_TRUE(t);
    EXPECT_GE(*t, 0);
    sum += static_cast<double>(*t);
  }
  EXPECT_NEAR(sum / 2000 / kMs, 10.0, 0.5);
}

TEST(Network, LongTailHasRareSlowMessages) {
  Network n(9, Latency{Latency::Kind::LongTail, 1 * kMs, 200 * kMs, 0.05}, 0.0);
  int slow = 0;
  for (int i = 0; i < 2000; ++i) {
    auto t = n.transit(i, i + 5000, 0);
    if (*t > 20 * kMs) ++slow;
  }
  EXPECT_GT(slow, 20);   // about 5% are slow...
  EXPECT_LT(slow, 200);  // ...and the rest are not
}

TEST(Network, PartitionDropsOneDirectionUntilHealed) {
  Network n(1, Latency{}, 0.0);
  n.block(0, 1, +1);
  EXPECT_FALSE(n.transit(0, 1, 0));
  EXPECT_TRUE(n.transit(1, 0, 0));
  n.block(0, 1, -1);
  EXPECT_TRUE(n.transit(0, 1, 0));
}

TEST(Network, ExtraDelayAndLoss) {
  Network n(1, Latency{Latency::Kind::Constant, 1 * kMs, 0, 0}, 0.0);
  n.add_extra_delay(1, 40 * kMs);
  EXPECT_EQ(n.transit(0, 1, 0), 41 * kMs);
  n.add_extra_delay(1, -40 * kMs);
  EXPECT_EQ(n.transit(0, 1, 100 * kMs), 101 * kMs);

  Network lossy(1, Latency{}, 0.5);
  int lost = 0;
  for (int i = 0; i < 1000; ++i) lost += lossy.transit(0, 1, i) ? 0 : 1;
  EXPECT_GT(lost, 400);
  EXPECT_LT(lost, 600);
}

TEST(Network, SameSeedSameDraws) {
  Latency l{Latency::Kind::Uniform, 0, 100 * kMs, 0};
  Network a(42, l, 0.1), b(42, l, 0.1);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(a.transit(i, i + 1, 0), b.transit(i, i + 1, 0));
}

}  // namespace
}  // namespace lockstep::sim
