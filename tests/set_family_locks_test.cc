// Each SET-family algorithm alone in the simulator: it excludes a second client while
// held, respects its wait budget and retry bound, and shows exactly the unlock and
// expiry behaviour its recipe has — flaws included.
#include <gtest/gtest.h>

#include "lockstep/lock.h"
#include "sim_harness.h"

namespace lockstep::testing {
namespace {

LockParams set_params(int64_t lease_ms = 1000) {
  LockParams p;
  p.key = "lock";
  p.lease = Millis(lease_ms);
  p.retry.delay = 10ms;
  p.retry.jitter = 5ms;
  p.retry.count_max = 1000;
  p.command_timeout = 100ms;
  return p;
}

struct Client {
  std::unique_ptr<Lock> lock;
};

class SetFamily : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    for (int i = 0; i < 2; ++i) clients[i].lock = make_lock(GetParam(), h.env(i), set_params(lease_ms()));
  }
  virtual int64_t lease_ms() const { return 1000; }

  auto acquire(int i, int64_t at_ms, Nanos wait) {
    auto out = slot<AcquireOutcome>();
    h.start<AcquireOutcome>(i, at_ms, out, [this, i, wait](Env&) { return clients[i].lock->acquire(wait); });
    return out;
  }
  auto release(int i, int64_t at_ms) {
    auto out = slot<ReleaseOutcome>();
    h.start<ReleaseOutcome>(i, at_ms, out, [this, i](Env&) { return clients[i].lock->release(); });
    return out;
  }
  bool has_expiry() const { return GetParam() != "setnx"; }
  bool checks_owner() const {
    return GetParam() == "set-px-get-del" || GetParam() == "set-px-lua" || GetParam() == "watch-multi" ||
           GetParam() == "renewal-thread";
  }

  SimHarness h;
  Client clients[2];
};

TEST_P(SetFamily, ExcludesASecondClientUntilReleased) {
  auto a1 = acquire(0, 0, 1s);
  auto a2 = acquire(1, 10, 50ms);   // gives up while client-1 holds
  auto r1 = release(0, 100);
  auto a3 = acquire(1, 200, 50ms);  // free again
  h.run_until_ms(400);
  EXPECT_EQ(**a1, AcquireOutcome::Acquired);
  EXPECT_EQ(**a2, AcquireOutcome::NotAcquired);
  EXPECT_EQ(**r1, ReleaseOutcome::Released);
  EXPECT_EQ(**a3, AcquireOutcome::Acquired);
  EXPECT_EQ(h.world.redis(0).writer_of("lock"), 2);
}

TEST_P(SetFamily, WaitBudgetIsRespected) {
  auto a1 = acquire(0, 0, 1s);
  auto done_at = slot<int64_t>();
  h.start<int64_t>(1, 10, done_at, [this](Env&) -> Task<int64_t> {
    co_await clients[1].lock->acquire(300ms);
    co_return h.world.now();
  });
  h.run_until_ms(2000);
  ASSERT_TRUE(done_at->has_value());
  // Never past the budget, and not much before it (one retry delay + jitter + round trip).
  EXPECT_LE(**done_at, (10 + 300) * kMs);
  EXPECT_GE(**done_at, (10 + 300 - 10 - 5 - 2) * kMs);
}

TEST_P(SetFamily, RetryCountIsBounded) {
  clients[1].lock = make_lock(GetParam(), h.env(1), [] {
    auto p = set_params();
    p.retry.count_max = 3;
    return p;
  }());
  auto a1 = acquire(0, 0, 1s);
  auto done_at = slot<int64_t>();
  h.start<int64_t>(1, 10, done_at, [this](Env&) -> Task<int64_t> {
    co_await clients[1].lock->acquire(10s);
    co_return h.world.now();
  });
  h.run_until_ms(5000);
  // 4 attempts with at most 15 ms between them: far below the 10 s budget.
  EXPECT_LE(**done_at, (10 + 4 * 2 + 3 * 15) * kMs);
}

TEST_P(SetFamily, LeaseExpiresOnlyWhereTheRecipeSetsOne) {
  auto a1 = acquire(0, 0, 1s);
  h.run_until_ms(1500);
  EXPECT_EQ(**a1, AcquireOutcome::Acquired);
  EXPECT_EQ(h.world.redis(0).peek_string("lock").has_value(), !has_expiry());
}

TEST_P(SetFamily, UnlockAfterExpiryTouchesTheNewOwnerOnlyInNaiveRecipes) {
  auto a1 = acquire(0, 0, 1s);
  auto a2 = acquire(1, 1100, 1s);  // after client-1's lease ran out
  auto r1 = release(0, 1200);      // client-1 still thinks it holds the lock
  h.run_until_ms(1300);
  EXPECT_EQ(**a1, AcquireOutcome::Acquired);
  if (!has_expiry()) {
    // No lease: client-2 waits for client-1's own unlock, then gets the lock.
    EXPECT_EQ(**r1, ReleaseOutcome::Released);
    EXPECT_EQ(**a2, AcquireOutcome::Acquired);
    EXPECT_EQ(h.world.redis(0).writer_of("lock"), 2);
    return;
  }
  EXPECT_EQ(**a2, AcquireOutcome::Acquired);
  if (checks_owner()) {
    EXPECT_EQ(**r1, ReleaseOutcome::NotOwner);
    EXPECT_EQ(h.world.redis(0).writer_of("lock"), 2);
  } else {
    EXPECT_EQ(**r1, ReleaseOutcome::Released);  // the flaw: client-2's lock is gone
    EXPECT_FALSE(h.world.redis(0).peek_string("lock").has_value());
  }
}

TEST_P(SetFamily, UnreachableNodeMakesTheOutcomeUnknown) {
  h.world.network().block(h.client[0], h.world.node_process(0), +1);
  auto a1 = acquire(0, 0, 1s);
  h.run_until_ms(2000);
  EXPECT_EQ(**a1, AcquireOutcome::Unknown);
}

INSTANTIATE_TEST_SUITE_P(Algorithms, SetFamily,
                         ::testing::Values("setnx", "setnx-expire", "set-px-del", "set-px-get-del", "set-px-lua",
                                           "watch-multi", "renewal-thread"),
                         [](const auto& info) {
                           std::string n = info.param;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

TEST(SetFamilyTokens, UniqueValueRecipesUseDistinctTokensPerClient) {
  SimHarness h;
  auto a = make_lock("set-px-lua", h.env(0), set_params());
  auto b = make_lock("set-px-lua", h.env(1), set_params());
  EXPECT_NE(a->token(), b->token());
  EXPECT_EQ(a->token().size(), 36u);
  EXPECT_EQ(make_lock("set-px-del", h.env(0), set_params())->token(), "1");
  EXPECT_EQ(make_lock("no-such-lock", h.env(0), set_params()), nullptr);
}

// client-1 is paused after its WATCH and GET saw its own token; its lease runs out and
// client-2 takes the lock before client-1's MULTI/DEL/EXEC. EXEC must do nothing, and the
// second look must find the lock is someone else's.
TEST(WatchMulti, AnAbortedExecDeletesNothingAndLooksAgain) {
  SimHarness h;
  auto a = make_lock("watch-multi", h.env(0), set_params(1000));
  auto b = make_lock("watch-multi", h.env(1), set_params(1000));
  auto a1 = slot<AcquireOutcome>();
  auto r1 = slot<ReleaseOutcome>();
  auto b1 = slot<AcquireOutcome>();
  h.start<AcquireOutcome>(0, 0, a1, [&](Env&) { return a->acquire(1s); });
  h.start<ReleaseOutcome>(0, 100, r1, [&](Env&) { return a->release(); });  // WATCH 100-102, GET 102-104
  h.world.scheduler().at(103 * kMs, [&] { h.world.pause(h.client[0], 1500 * kMs); });
  h.start<AcquireOutcome>(1, 1100, b1, [&](Env&) { return b->acquire(1s); });
  h.run_until_ms(2000);
  EXPECT_EQ(**a1, AcquireOutcome::Acquired);
  EXPECT_EQ(**b1, AcquireOutcome::Acquired);
  EXPECT_EQ(**r1, ReleaseOutcome::NotOwner);
  EXPECT_EQ(h.world.redis(0).peek_string("lock"), b->token()) << "client-2's lock must survive";
}

LockParams renewal_params(int64_t scan_ms, int64_t renew_count_max) {
  LockParams p = set_params(3000);
  p.options["scan_ms"] = scan_ms;
  p.options["renew_count_max"] = renew_count_max;
  return p;
}

// Lease 3 s, scans every second: the last third begins 2 s after each renewal, so it
// renews at 2 s and 4 s (expiry 5 s, then 7 s) and gives up at the next scan after two.
TEST(RenewalThread, ExtendsInTheLastThirdAndGivesUpAfterItsBound) {
  SimHarness h;
  auto a = make_lock("renewal-thread", h.env(0), renewal_params(1000, 2));
  auto a1 = slot<AcquireOutcome>();
  h.start<AcquireOutcome>(0, 0, a1, [&](Env&) { return a->acquire(1s); });
  h.run_until_ms(2500);
  EXPECT_TRUE(h.world.redis(0).peek_string("lock").has_value()) << "first renewal missing";
  h.run_until_ms(6900);
  EXPECT_TRUE(h.world.redis(0).peek_string("lock").has_value()) << "second renewal missing";
  h.run_until_ms(7100);
  EXPECT_FALSE(h.world.redis(0).peek_string("lock").has_value()) << "renewed past its bound";
}

// The renewal decision uses the wall clock: stepped back 10 s, the thread thinks the last
// third has not begun and lets the lease run out under its owner.
TEST(RenewalThread, AWallClockSteppedBackLetsTheLeaseRunOut) {
  SimHarness h;
  auto a = make_lock("renewal-thread", h.env(0), renewal_params(1000, 10));
  auto a1 = slot<AcquireOutcome>();
  h.start<AcquireOutcome>(0, 0, a1, [&](Env&) { return a->acquire(1s); });
  h.world.scheduler().at(1500 * kMs, [&] { h.world.process(h.client[0]).clock.jump_wall(-10'000 * kMs); });
  h.run_until_ms(2900);
  EXPECT_TRUE(h.world.redis(0).peek_string("lock").has_value());
  h.run_until_ms(3100);
  EXPECT_EQ(**a1, AcquireOutcome::Acquired);
  EXPECT_FALSE(h.world.redis(0).peek_string("lock").has_value()) << "renewed although the wall clock said not yet";
}

}  // namespace
}  // namespace lockstep::testing
