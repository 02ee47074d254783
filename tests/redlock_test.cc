// RedLock and MultiLock over three simulated masters: exclusion, the majority rule, the
// validity check that refuses a lock whose acquisition took longer than its TTL, clean-up
// of partial acquisitions, and MultiLock's all-or-nothing.
#include <gtest/gtest.h>

#include "lockstep/lock.h"
#include "sim_harness.h"

namespace lockstep::testing {
namespace {

LockParams redlock_params(int64_t lease_ms = 1000, bool parallel = true) {
  LockParams p;
  p.key = "lock";
  p.lease = Millis(lease_ms);
  p.retry.count_max = 3;
  p.command_timeout = 100ms;
  p.options["parallel"] = parallel ? 1 : 0;
  return p;
}

struct Multi {
  explicit Multi(int64_t latency_ms = 1) : h(2, 3, latency_ms) {}
  void make(const std::string& algorithm, const LockParams& p) {
    for (int i = 0; i < 2; ++i) lock[i] = make_lock(algorithm, h.env(i), p);
  }
  auto acquire(int i, int64_t at_ms, Nanos wait) {
    auto out = slot<AcquireOutcome>();
    h.start<AcquireOutcome>(i, at_ms, out, [this, i, wait](Env&) { return lock[i]->acquire(wait); });
    return out;
  }
  auto release(int i, int64_t at_ms) {
    auto out = slot<ReleaseOutcome>();
    h.start<ReleaseOutcome>(i, at_ms, out, [this, i](Env&) { return lock[i]->release(); });
    return out;
  }
  auto cmd(int node, int64_t at_ms, std::vector<std::string> argv) {
    auto out = slot<Reply>();
    h.start<Reply>(1, at_ms, out, [argv, node](Env& e) { return e.node(node).call(argv, 100ms); });
    return out;
  }
  SimHarness h;
  std::unique_ptr<Lock> lock[2];
};

class RedLockBoth : public ::testing::TestWithParam<bool> {};

TEST_P(RedLockBoth, ExcludesASecondClientUntilReleased) {
  Multi m;
  m.make("redlock", redlock_params(1000, GetParam()));
  auto a1 = m.acquire(0, 0, 1s);
  auto a2 = m.acquire(1, 20, 50ms);
  auto r1 = m.release(0, 100);
  auto a3 = m.acquire(1, 200, 50ms);
  m.h.run_until_ms(400);
  EXPECT_EQ(**a1, AcquireOutcome::Acquired);
  EXPECT_EQ(**a2, AcquireOutcome::NotAcquired);
  EXPECT_EQ(**r1, ReleaseOutcome::Released);
  EXPECT_EQ(**a3, AcquireOutcome::Acquired);
}

TEST_P(RedLockBoth, AMajorityIsEnough) {
  Multi m;
  m.make("redlock", redlock_params(1000, GetParam()));
  m.cmd(0, 0, {"SET", "lock", "someone-else"});
  auto a1 = m.acquire(0, 10, 30ms);
  m.h.run_until_ms(200);
  EXPECT_EQ(**a1, AcquireOutcome::Acquired);
}

TEST_P(RedLockBoth, AMinorityIsGivenBack) {
  Multi m;
  m.make("redlock", redlock_params(1000, GetParam()));
  m.cmd(0, 0, {"SET", "lock", "someone-else"});
  m.cmd(1, 0, {"SET", "lock", "someone-else"});
  auto a1 = m.acquire(0, 10, 100ms);
  auto left = m.cmd(2, 150, {"EXISTS", "lock"});
  m.h.run_until_ms(300);
  EXPECT_EQ(**a1, AcquireOutcome::NotAcquired);
  EXPECT_TRUE((*left)->is_integer(0));
}

INSTANTIATE_TEST_SUITE_P(ParallelAndSequential, RedLockBoth, ::testing::Bool());

TEST(RedLock, AcquisitionSlowerThanTheTtlIsRefused) {
  Multi m(20);  // 40 ms a round trip, 120 ms for three nodes one after another
  auto p = redlock_params(100, false);
  p.options["node_timeout_ms"] = 60;
  m.make("redlock", p);
  auto a1 = m.acquire(0, 0, 100ms);
  m.h.run_until_ms(2000);
  EXPECT_EQ(**a1, AcquireOutcome::NotAcquired);
}

TEST(RedLock, ValidityLeftAfterAFastAcquisitionIsAccepted) {
  Multi m(20);
  auto p = redlock_params(1000, false);
  p.options["node_timeout_ms"] = 60;
  m.make("redlock", p);
  auto a1 = m.acquire(0, 0, 100ms);
  m.h.run_until_ms(2000);
  EXPECT_EQ(**a1, AcquireOutcome::Acquired);
}

TEST(MultiLock, AllOrNothing) {
  Multi m;
  m.make("multilock", redlock_params());
  m.cmd(2, 0, {"SET", "lock", "someone-else"});
  auto a1 = m.acquire(0, 10, 50ms);
  auto n0 = m.cmd(0, 100, {"EXISTS", "lock"});
  auto n1 = m.cmd(1, 100, {"EXISTS", "lock"});
  m.h.run_until_ms(300);
  EXPECT_EQ(**a1, AcquireOutcome::NotAcquired);
  EXPECT_TRUE((*n0)->is_integer(0));
  EXPECT_TRUE((*n1)->is_integer(0));
}

TEST(MultiLock, TakesEveryNodeAndReleasesAll) {
  Multi m;
  m.make("multilock", redlock_params());
  auto a1 = m.acquire(0, 0, 50ms);
  auto a2 = m.acquire(1, 20, 50ms);
  auto r1 = m.release(0, 100);
  auto n2 = m.cmd(2, 120, {"EXISTS", "lock"});
  m.h.run_until_ms(300);
  EXPECT_EQ(**a1, AcquireOutcome::Acquired);
  EXPECT_EQ(**a2, AcquireOutcome::NotAcquired);
  EXPECT_EQ(**r1, ReleaseOutcome::Released);
  EXPECT_TRUE((*n2)->is_integer(0));
}

}  // namespace
}  // namespace lockstep::testing
