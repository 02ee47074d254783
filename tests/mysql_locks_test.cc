// lockstep's MySQL locks against the simulated server: what each gives under the faults
// the seeds warn about (a holder cut off or stalled, an expired row taken over), and what
// the fenced table lock's version buys.
#include <gtest/gtest.h>

#include "../locks/src/mysql/mysql_locks.h"
#include "sim_harness.h"

namespace lockstep::testing {
namespace {

// What one client's hold looked like.
struct Hold {
  AcquireOutcome acquired = AcquireOutcome::Unknown;
  int64_t acquired_ms = -1;
  int64_t token = -1;
  std::optional<ReleaseOutcome> released;
  int64_t released_ms = -1;
};

struct MysqlLocks : SimHarness {
  MysqlLocks() : SimHarness(2, 0, 1) { server = world.add_mysql("mysql", sim::Clock()); }
  explicit MysqlLocks(const sim::WorldOptions& o) : SimHarness(o, 2) { server = world.add_mysql("mysql", sim::Clock()); }
  MysqlLocks(int clients, int64_t latency_ms) : SimHarness(clients, 0, latency_ms) {
    server = world.add_mysql("mysql", sim::Clock());
  }

  static std::unique_ptr<Lock> make(const std::string& name, Env& env, const LockParams& p) {
    for (auto& info : mysql_locks()) {
      if (info.name == name) return info.make(env, p);
    }
    return nullptr;
  }

  // Client i asks for `lock` at t_ms (waiting up to wait_ms), holds it hold_ms, releases.
  std::shared_ptr<std::optional<Hold>> hold(int i, const std::string& lock, LockParams p, int64_t t_ms, int64_t wait_ms,
                                            int64_t hold_ms) {
    auto out = slot<Hold>();
    start<Hold>(i, t_ms, out, [lock, p, wait_ms, hold_ms, this](Env& e) -> Task<Hold> {
      auto l = make(lock, e, p);
      Hold h;
      h.acquired = co_await l->acquire(Millis(wait_ms));
      h.acquired_ms = world.now() / kMs;
      if (h.acquired != AcquireOutcome::Acquired) co_return h;
      h.token = l->fencing_token();
      co_await e.sleep(Millis(hold_ms));
      h.released = co_await l->release();
      h.released_ms = world.now() / kMs;
      co_return h;
    });
    return out;
  }

  void partition(int client_index, int64_t from_ms, int64_t to_ms) {
    const int c = client[client_index];
    world.scheduler().at(from_ms * kMs, [this, c] {
      world.network().block(c, server, 1);
      world.network().block(server, c, 1);
    });
    world.scheduler().at(to_ms * kMs, [this, c] {
      world.network().block(c, server, -1);
      world.network().block(server, c, -1);
    });
  }
  int server = -1;
};

LockParams params(std::map<std::string, int64_t> options, Nanos lease = 10s) {
  LockParams p;
  p.key = "job";
  p.lease = lease;
  p.options = std::move(options);
  p.retry.count_max = 1000;  // the waits below are bounded by time, not by attempts
  return p;
}

TEST(MysqlNamedLockRecipe, ACutOffHolderStillBelievesItHoldsWhileAnotherTakesTheLock) {
  MysqlLocks h;
  // The holder is cut off from the server for 5 s while it works; the server ends its idle
  // session after wait_timeout (2 s) and hands the lock to the waiter.
  auto a = h.hold(0, "mysql-named", params({{"wait_timeout_s", 2}}), 0, 1000, 6000);
  auto b = h.hold(1, "mysql-named", params({}), 100, 30'000, 100);
  h.partition(0, 500, 5500);
  h.run_until_ms(20'000);
  ASSERT_TRUE(*a && *b);
  EXPECT_EQ((*a)->acquired, AcquireOutcome::Acquired);
  EXPECT_EQ((*b)->acquired, AcquireOutcome::Acquired);
  // Both held at once: b from about 2 s, a until it came back at 6 s.
  EXPECT_LT((*b)->acquired_ms, (*a)->released_ms);
  EXPECT_GT((*b)->acquired_ms, 2000);
  EXPECT_EQ((*a)->released, ReleaseOutcome::NotOwner);  // the server had ended its session
}

TEST(MysqlNamedLockRecipe, AWaitTimeoutLongerThanThePartitionKeepsTheHolderAlone) {
  MysqlLocks h;
  // The same partition, under the server's default wait_timeout (8 hours): the session
  // outlives it, and the waiter gets the lock from the holder's release.
  auto a = h.hold(0, "mysql-named", params({}), 0, 1000, 6000);
  auto b = h.hold(1, "mysql-named", params({}), 100, 30'000, 100);
  h.partition(0, 500, 5500);
  h.run_until_ms(20'000);
  ASSERT_TRUE(*a && *b);
  EXPECT_EQ((*a)->released, ReleaseOutcome::Released);
  EXPECT_GE((*b)->acquired_ms, (*a)->released_ms);
}

TEST(MysqlNamedLockRecipe, AnIdleHoldLongerThanWaitTimeoutLosesTheLockWithoutAnyFault) {
  MysqlLocks h;
  auto a = h.hold(0, "mysql-named", params({{"wait_timeout_s", 2}}), 0, 1000, 6000);
  auto b = h.hold(1, "mysql-named", params({}), 100, 30'000, 100);
  h.run_until_ms(20'000);
  ASSERT_TRUE(*a && *b);
  EXPECT_LT((*b)->acquired_ms, (*a)->released_ms);
  EXPECT_EQ((*a)->released, ReleaseOutcome::NotOwner);
}

TEST(MysqlForUpdateRecipe, AWaiterGivesUpAtTheLockWaitTimeoutAndGetsInWhenTheHolderCrashes) {
  MysqlLocks h;
  auto a = h.hold(0, "mysql-for-update", params({}), 0, 1000, 60'000);
  auto b = h.hold(1, "mysql-for-update", params({{"lock_wait_timeout_s", 1}}), 100, 0, 10);
  auto c = h.hold(1, "mysql-for-update", params({{"lock_wait_timeout_s", 5}}), 2000, 0, 10);
  h.world.scheduler().at(3000 * kMs, [&h] { h.world.crash(h.client[0]); });
  h.run_until_ms(20'000);
  ASSERT_TRUE(*b && *c);
  EXPECT_EQ((*b)->acquired, AcquireOutcome::NotAcquired);
  EXPECT_GE((*b)->acquired_ms, 1100);
  EXPECT_EQ((*c)->acquired, AcquireOutcome::Acquired);
  EXPECT_GE((*c)->acquired_ms, 3000);  // the crash rolled the holder's transaction back
  EXPECT_EQ((*c)->released, ReleaseOutcome::Released);
}

TEST(MysqlTableRecipe, AStalledHolderPastItsExpiryIsTakenOverAndCannotDeleteTheNewRow) {
  MysqlLocks h;
  auto a = h.hold(0, "mysql-table", params({}, 1s), 0, 1000, 100);
  h.world.scheduler().at(50 * kMs, [&h] { h.world.pause(h.client[0], 3000 * kMs); });
  auto b = h.hold(1, "mysql-table", params({}, 10s), 200, 5000, 5000);
  h.run_until_ms(20'000);
  ASSERT_TRUE(*a && *b);
  EXPECT_EQ((*a)->acquired, AcquireOutcome::Acquired);
  EXPECT_EQ((*b)->acquired, AcquireOutcome::Acquired);
  EXPECT_LT((*b)->acquired_ms, (*a)->released_ms);  // both held: the expiry race
  EXPECT_EQ((*a)->released, ReleaseOutcome::NotOwner);  // its DELETE matched no row of its own
  EXPECT_EQ((*b)->released, ReleaseOutcome::Released);
}

TEST(MysqlTableRecipe, WithoutTakeOverAnExpiredRowWaitsForItsOwner) {
  MysqlLocks h;
  auto a = h.hold(0, "mysql-table", params({{"take_over", 0}}, 1s), 0, 1000, 100);
  h.world.scheduler().at(50 * kMs, [&h] { h.world.pause(h.client[0], 3000 * kMs); });
  auto b = h.hold(1, "mysql-table", params({{"take_over", 0}}, 10s), 200, 5000, 10);
  h.run_until_ms(20'000);
  ASSERT_TRUE(*a && *b);
  EXPECT_EQ((*a)->released, ReleaseOutcome::Released);
  EXPECT_GE((*b)->acquired_ms, (*a)->released_ms);
}

TEST(MysqlTableRecipe, TheFencedTableHandsOutRisingVersions) {
  MysqlLocks h;
  auto a = h.hold(0, "mysql-table-fenced", params({}, 1s), 0, 1000, 100);
  h.world.scheduler().at(50 * kMs, [&h] { h.world.pause(h.client[0], 3000 * kMs); });
  auto b = h.hold(1, "mysql-table-fenced", params({}, 10s), 200, 5000, 10);
  auto c = h.hold(0, "mysql-table-fenced", params({}, 10s), 8000, 5000, 10);
  h.run_until_ms(20'000);
  ASSERT_TRUE(*a && *b && *c);
  // The same race as above, but the stale holder's token is older than the new one's: a
  // store that keeps the highest token it saw refuses the stale holder's write.
  EXPECT_EQ((*a)->token, 1);
  EXPECT_EQ((*b)->token, 2);
  EXPECT_LT((*b)->acquired_ms, (*a)->released_ms);
  EXPECT_EQ((*c)->token, 3);  // after a release the row stays, its version goes on rising
}

// A holder crashes with its row in place; two waiters poll it back to back (no pause between
// attempts, 100 ms each way), so each one's read lands while the other's write is on the
// wire. Judging the expiry in the client between a SELECT and an UPDATE by name lets both
// take the row over; the same steps in a transaction, the row read FOR UPDATE, let one.
std::pair<Hold, Hold> read_first_race(int64_t transaction) {
  MysqlLocks h(3, 100);
  LockParams p = params({{"read_first", 1}, {"transaction", transaction}}, 1s);
  p.retry.delay = Nanos(0);
  p.retry.jitter = Nanos(0);
  auto a = h.hold(0, "mysql-table", p, 0, 1000, 60'000);
  h.world.scheduler().at(600 * kMs, [&h] { h.world.crash(h.client[0]); });
  auto b = h.hold(1, "mysql-table", p, 100, 10'000, 1000);
  auto c = h.hold(2, "mysql-table", p, 150, 10'000, 1000);
  h.run_until_ms(30'000);
  EXPECT_FALSE(*a) << "client-1 crashed while it held the lock";
  EXPECT_TRUE(*b && *c);
  if (!*b || !*c) return {};
  // Neither got in before client-1's row expired (1 s after it was written).
  EXPECT_GT(std::min((*b)->acquired_ms, (*c)->acquired_ms), 1000);
  return {**b, **c};
}

bool overlap(const Hold& x, const Hold& y) { return x.acquired_ms < y.released_ms && y.acquired_ms < x.released_ms; }

TEST(MysqlTableRecipe, ReadingTheRowBeforeWritingItLetsTwoWaitersTakeItOver) {
  const auto [b, c] = read_first_race(0);
  EXPECT_EQ(b.acquired, AcquireOutcome::Acquired);
  EXPECT_EQ(c.acquired, AcquireOutcome::Acquired);
  EXPECT_TRUE(overlap(b, c)) << "b held [" << b.acquired_ms << ", " << b.released_ms << "], c [" << c.acquired_ms
                             << ", " << c.released_ms << "]";
  // The one whose write landed first lost the row to the other's write, unknowing.
  EXPECT_EQ(b.released == ReleaseOutcome::NotOwner, c.released == ReleaseOutcome::Released);
}

TEST(MysqlTableRecipe, AReadFirstTakeoverInATransactionLetsOneWaiterIn) {
  const auto [b, c] = read_first_race(1);
  EXPECT_EQ(b.acquired, AcquireOutcome::Acquired);
  EXPECT_EQ(c.acquired, AcquireOutcome::Acquired);  // later: after the first one's release
  EXPECT_FALSE(overlap(b, c)) << "b held [" << b.acquired_ms << ", " << b.released_ms << "], c [" << c.acquired_ms
                              << ", " << c.released_ms << "]";
  EXPECT_EQ(b.released, ReleaseOutcome::Released);
  EXPECT_EQ(c.released, ReleaseOutcome::Released);
}

// Two runs of a contended table lock under random latency and a pause: the same seed gives
// the same holds to the nanosecond, another seed other ones.
std::vector<int64_t> contended_run(uint64_t seed) {
  sim::WorldOptions o = SimHarness::options(1);
  o.seed = seed;
  o.latency = sim::Latency{sim::Latency::Kind::Uniform, 1 * kMs, 40 * kMs, 0};
  MysqlLocks h(o);
  auto a = h.hold(0, "mysql-table-fenced", params({}, 500ms), 0, 5000, 200);
  auto b = h.hold(1, "mysql-table-fenced", params({}, 500ms), 0, 5000, 200);
  h.world.scheduler().at(30 * kMs, [&h] { h.world.pause(h.client[0], 1000 * kMs); });
  h.run_until_ms(20'000);
  std::vector<int64_t> out;
  for (const auto& x : {a, b}) {
    if (!*x) return {};
    out.insert(out.end(), {(*x)->acquired_ms, (*x)->token, (*x)->released_ms});
  }
  out.push_back(static_cast<int64_t>(h.world.scheduler().executed()));
  return out;
}

TEST(MysqlLocksDeterminism, TheSameSeedGivesTheSameRun) {
  const auto first = contended_run(7);
  ASSERT_FALSE(first.empty());
  EXPECT_EQ(first, contended_run(7));
  EXPECT_NE(first, contended_run(8));
}

}  // namespace
}  // namespace lockstep::testing
