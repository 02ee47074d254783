// The redisson family alone in the simulator: exclusion with pub/sub wake-ups, hold
// counts, owner-only unlock, the watchdog keeping a lock past its lease, the wall-clock
// wait budget, and fencing tokens that rise with every acquisition.
#include <gtest/gtest.h>

#include "lockstep/lock.h"
#include "lockstep/runner/sim_runner.h"
#include "sim_harness.h"

namespace lockstep::testing {
namespace {

LockParams redisson_params(int64_t lease_ms = 1000, bool watchdog = false) {
  LockParams p;
  p.key = "lock";
  p.lease = Millis(lease_ms);
  p.retry.count_max = 1000;
  p.command_timeout = 100ms;
  if (watchdog) p.options["watchdog"] = 1;
  return p;
}

class Redisson : public ::testing::Test {
 protected:
  void make(const std::string& algorithm, const LockParams& p) {
    for (int i = 0; i < 2; ++i) lock[i] = make_lock(algorithm, h.env(i), p);
  }
  auto acquire(int i, int64_t at_ms, Nanos wait) {
    auto out = slot<AcquireOutcome>();
    h.start<AcquireOutcome>(i, at_ms, out, [this, i, wait](Env&) { return lock[i]->acquire(wait); });
    return out;
  }
  // When the acquire finished, in simulated ms.
  auto acquire_done_at(int i, int64_t at_ms, Nanos wait) {
    auto out = slot<int64_t>();
    h.start<int64_t>(i, at_ms, out, [this, i, wait](Env&) -> Task<int64_t> {
      co_await lock[i]->acquire(wait);
      co_return h.world.now() / kMs;
    });
    return out;
  }
  auto release(int i, int64_t at_ms) {
    auto out = slot<ReleaseOutcome>();
    h.start<ReleaseOutcome>(i, at_ms, out, [this, i](Env&) { return lock[i]->release(); });
    return out;
  }
  auto cmd(int i, int64_t at_ms, std::vector<std::string> argv) {
    auto out = slot<Reply>();
    h.start<Reply>(i, at_ms, out, [argv](Env& e) { return e.node(0).call(argv, 100ms); });
    return out;
  }

  SimHarness h;
  std::unique_ptr<Lock> lock[2];
};

TEST_F(Redisson, ExcludesAndWakesTheWaiterOnUnlock) {
  make("redisson", redisson_params(10000));
  auto a1 = acquire(0, 0, 1s);
  auto a2 = acquire(1, 10, 50ms);
  auto woken = acquire_done_at(1, 100, 5s);
  auto r1 = release(0, 200);
  h.run_until_ms(1000);
  EXPECT_EQ(**a1, AcquireOutcome::Acquired);
  EXPECT_EQ(**a2, AcquireOutcome::NotAcquired);
  EXPECT_EQ(**r1, ReleaseOutcome::Released);
  // Woken by the unlock message within a few round trips, not after the 10 s lease.
  ASSERT_TRUE(woken->has_value());
  EXPECT_LE(**woken, 210);
}

TEST_F(Redisson, ReentrantAcquiresCountAndReleasesUncount) {
  make("redisson", redisson_params());
  auto a1 = acquire(0, 0, 1s);
  auto a2 = acquire(0, 10, 1s);
  auto count = cmd(1, 20, {"HGET", "lock", lock[0]->token()});
  auto r1 = release(0, 30);
  auto still = cmd(1, 40, {"EXISTS", "lock"});
  auto r2 = release(0, 50);
  auto gone = cmd(1, 60, {"EXISTS", "lock"});
  auto r3 = release(0, 70);
  h.run_until_ms(200);
  EXPECT_EQ(**a1, AcquireOutcome::Acquired);
  EXPECT_EQ(**a2, AcquireOutcome::Acquired);
  EXPECT_EQ((*count)->str, "2");
  EXPECT_EQ(**r1, ReleaseOutcome::Released);
  EXPECT_TRUE((*still)->is_integer(1));
  EXPECT_EQ(**r2, ReleaseOutcome::Released);
  EXPECT_TRUE((*gone)->is_integer(0));
  EXPECT_EQ(**r3, ReleaseOutcome::NotOwner);
}

TEST_F(Redisson, OnlyTheOwnerUnlocks) {
  make("redisson", redisson_params());
  auto a1 = acquire(0, 0, 1s);
  auto r2 = release(1, 10);
  auto still = cmd(1, 20, {"EXISTS", "lock"});
  h.run_until_ms(100);
  EXPECT_EQ(**a1, AcquireOutcome::Acquired);
  EXPECT_EQ(**r2, ReleaseOutcome::NotOwner);
  EXPECT_TRUE((*still)->is_integer(1));
}

TEST_F(Redisson, WatchdogKeepsTheLockPastItsLease) {
  make("redisson", redisson_params(300, true));
  auto a1 = acquire(0, 0, 1s);
  auto a2 = acquire(1, 10, 900ms);  // 3x the lease
  auto still = cmd(1, 950, {"EXISTS", "lock"});
  auto r1 = release(0, 960);
  auto gone = cmd(1, 1500, {"EXISTS", "lock"});  // no renewal after unlock
  h.run_until_ms(2000);
  EXPECT_EQ(**a1, AcquireOutcome::Acquired);
  EXPECT_EQ(**a2, AcquireOutcome::NotAcquired);
  EXPECT_TRUE((*still)->is_integer(1));
  EXPECT_EQ(**r1, ReleaseOutcome::Released);
  EXPECT_TRUE((*gone)->is_integer(0));
}

TEST_F(Redisson, WithoutWatchdogTheLeaseEnds) {
  make("redisson", redisson_params(300));
  auto a1 = acquire(0, 0, 1s);
  auto a2 = acquire(1, 10, 900ms);
  h.run_until_ms(2000);
  EXPECT_EQ(**a1, AcquireOutcome::Acquired);
  EXPECT_EQ(**a2, AcquireOutcome::Acquired);
}

TEST_F(Redisson, WaitBudgetIsRespected) {
  make("redisson", redisson_params(10000));
  auto a1 = acquire(0, 0, 1s);
  auto done = acquire_done_at(1, 10, 300ms);
  h.run_until_ms(2000);
  ASSERT_TRUE(done->has_value());
  EXPECT_LE(**done, 10 + 300 + 1);
  EXPECT_GE(**done, 10 + 300 - 5);
}

// Deliberately Redisson's behaviour: tryLock measures its wait with
// System.currentTimeMillis, so a forward step of the waiter's wall clock ends the wait at
// its next wake-up (here within the holder's 300 ms TTL, kept alive by the watchdog).
TEST_F(Redisson, AWallClockJumpEndsTheWaitEarly) {
  make("redisson", redisson_params(300, true));
  auto a1 = acquire(0, 0, 1s);
  auto done = acquire_done_at(1, 10, 2s);
  h.world.scheduler().at(100 * kMs, [this] { h.world.process(h.client[1]).clock.jump_wall(10'000 * kMs); });
  h.run_until_ms(5000);
  ASSERT_TRUE(done->has_value());
  EXPECT_LE(**done, 420);  // not 2010
}

TEST_F(Redisson, FencingTokensRiseWithEveryAcquisition) {
  make("redisson-fenced", redisson_params());
  std::vector<int64_t> tokens;
  for (int k = 0; k < 4; ++k) {
    int i = k % 2;
    acquire(i, k * 100, 1s);
    auto t = slot<int64_t>();
    h.start<int64_t>(i, k * 100 + 20, t, [this, i](Env&) -> Task<int64_t> { co_return lock[i]->fencing_token(); });
    release(i, k * 100 + 30);
    h.run_until_ms(k * 100 + 90);
    tokens.push_back(**t);
  }
  EXPECT_EQ(tokens, (std::vector<int64_t>{1, 2, 3, 4}));
}

// Kleppmann's case: client-1's grant reply reaches it after its lease ran out and client-2
// took the lock. The token was taken by the script that granted client-1 the lock, as
// Redisson's RedissonFencedLock does, so it is below client-2's: a store checking tokens
// refuses client-1. (A token taken after the reply would be client-2's plus one.)
TEST_F(Redisson, FencingTokenIsTakenWithTheGrantNotWithItsReply) {
  make("redisson-fenced", redisson_params(1000));
  auto late = acquire(0, 0, 5s);
  h.world.scheduler().at(1 * kMs, [this] { h.world.pause(h.client[0], 1500 * kMs); });  // the reply waits
  auto next = acquire(1, 1100, 5s);
  auto counter = cmd(1, 1300, {"GET", "redisson_lock_token:{lock}"});
  h.run_until_ms(2000);
  ASSERT_EQ(**late, AcquireOutcome::Acquired);
  ASSERT_EQ(**next, AcquireOutcome::Acquired);
  EXPECT_EQ(lock[0]->fencing_token(), 1);
  EXPECT_EQ(lock[1]->fencing_token(), 2);
  EXPECT_EQ(**counter, Reply::bulk("2"));
}

TEST(RedissonFair, WaitersAreServedInArrivalOrder) {
  SimHarness h(3);
  std::unique_ptr<Lock> lock[3];
  for (int i = 0; i < 3; ++i) lock[i] = make_lock("redisson-fair", h.env(i), redisson_params(10000));
  std::shared_ptr<std::optional<int64_t>> got[3];
  const int64_t start[3] = {0, 20, 10};  // client-3 queues before client-2
  for (int i = 0; i < 3; ++i) {
    got[i] = slot<int64_t>();
    h.start<int64_t>(i, start[i], got[i], [&h, &lock, i](Env&) -> Task<int64_t> {
      AcquireOutcome o = co_await lock[i]->acquire(5s);
      int64_t at = o == AcquireOutcome::Acquired ? h.world.now() / kMs : -1;
      co_await h.env(i).sleep(100ms);
      co_await lock[i]->release();
      co_return at;
    });
  }
  h.run_until_ms(2000);
  ASSERT_TRUE(got[0]->has_value() && got[1]->has_value() && got[2]->has_value());
  EXPECT_LT(**got[0], **got[2]);
  EXPECT_LT(**got[2], **got[1]);
  EXPECT_LE(**got[1], 320);  // woken by messages, not by the 10 s lease
}

TEST(RedissonCatalogue, StockDemoSellsEverythingExactlyOnce) {
  auto r = runner::load_scenario_file(std::string(LOCKSTEP_SOURCE_DIR) + "/scenarios/20-redisson-stock-demo.json");
  ASSERT_TRUE(std::holds_alternative<runner::Scenario>(r));
  runner::RunOutcome out = runner::run_in_sim(std::get<runner::Scenario>(r));
  EXPECT_EQ(out.report.verdict, "safe");
  EXPECT_EQ(out.report.stats["sales"], 90);
  const auto& resource = out.history.events.back();
  ASSERT_EQ(resource.f, "resource");
  EXPECT_EQ(resource.value["final"], 0);
}

}  // namespace
}  // namespace lockstep::testing
