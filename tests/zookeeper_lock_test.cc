#include <gtest/gtest.h>

#include "lockstep/algorithms.h"
#include "lockstep/lock.h"
#include "lockstep/sim/zk_ensemble.h"
#include "sim_harness.h"

namespace lockstep::testing {
namespace {

// Two clients of zookeeper-fenced on a three-server ensemble with a 1 s session.
struct ZkLockHarness : SimHarness {
  ZkLockHarness() : SimHarness(2, 0, 1) {
    sim::ZkOptions o;
    o.tick_ns = 100 * kMs;
    o.session_timeout_ns = 1000 * kMs;
    world.enable_zookeeper(o);
    for (int i = 0; i < 2; ++i) locks.push_back(make_lock("zookeeper-fenced", env(i), LockParams{}));
  }
  std::vector<std::unique_ptr<Lock>> locks;
};

struct Hold {
  AcquireOutcome acquired = AcquireOutcome::Unknown;
  int64_t token = 0;
  int64_t at_ns = 0;
  ReleaseOutcome released = ReleaseOutcome::Unknown;
};

Task<Hold> hold_for(ZkLockHarness& h, int i, Nanos wait, Nanos work) {
  Lock& l = *h.locks[i];
  Hold out;
  out.acquired = co_await l.acquire(wait);
  out.token = l.fencing_token();
  out.at_ns = h.world.now();
  if (out.acquired != AcquireOutcome::Acquired) co_return out;
  co_await h.env(i).sleep(work);
  out.released = co_await l.release();
  co_return out;
}

TEST(ZooKeeperLock, TheRecipeIsRegisteredAsALockThatNeedsAnEnsemble) {
  const LockInfo* plain = find_lock("zookeeper");
  const LockInfo* fenced = find_lock("zookeeper-fenced");
  ASSERT_TRUE(plain && fenced);
  EXPECT_TRUE(plain->service == LockService::ZooKeeper && fenced->service == LockService::ZooKeeper);
  EXPECT_FALSE(plain->fencing_tokens);
  EXPECT_TRUE(fenced->fencing_tokens);
}

// The second contender watches the first one's znode and goes in when it is deleted, with
// a larger token (the later creation zxid).
TEST(ZooKeeperLock, TheNextInLineGoesInWhenTheHolderReleases) {
  ZkLockHarness h;
  auto first = slot<Hold>();
  auto second = slot<Hold>();
  h.start<Hold>(0, 0, first, [&h](Env&) { return hold_for(h, 0, 5s, 300ms); });
  h.start<Hold>(1, 100, second, [&h](Env&) { return hold_for(h, 1, 5s, 10ms); });
  h.run_until_ms(3000);
  ASSERT_TRUE(first->has_value() && second->has_value());
  EXPECT_EQ((*first)->acquired, AcquireOutcome::Acquired);
  EXPECT_EQ((*second)->acquired, AcquireOutcome::Acquired);
  EXPECT_GT((*second)->at_ns, (*first)->at_ns + 300 * kMs);  // not before the release
  EXPECT_LT((*second)->at_ns, (*first)->at_ns + 320 * kMs);  // woken by its watch, not a poll
  EXPECT_GT((*second)->token, (*first)->token);
  EXPECT_EQ((*first)->released, ReleaseOutcome::Released);
  EXPECT_TRUE(h.world.zookeeper()->children("/lockstep/lock").empty());
}

// A contender whose wait runs out takes its znode out of the queue.
TEST(ZooKeeperLock, AWaiterThatGivesUpLeavesTheQueue) {
  ZkLockHarness h;
  auto first = slot<Hold>();
  auto second = slot<Hold>();
  h.start<Hold>(0, 0, first, [&h](Env&) { return hold_for(h, 0, 5s, 2s); });
  h.start<Hold>(1, 100, second, [&h](Env&) { return hold_for(h, 1, 500ms, 10ms); });
  std::vector<std::string> queue_after_give_up;
  h.world.scheduler().at(1000 * kMs, [&] { queue_after_give_up = h.world.zookeeper()->children("/lockstep/lock"); });
  h.run_until_ms(3000);
  ASSERT_TRUE(second->has_value());
  EXPECT_EQ((*second)->acquired, AcquireOutcome::NotAcquired);
  EXPECT_EQ((*second)->token, -1);
  EXPECT_EQ(queue_after_give_up.size(), 1u);
}

// The holder's session expires while it is paused: the other client holds the lock
// meanwhile, and on waking the first one's release finds its znode gone (NotOwner).
TEST(ZooKeeperLock, AHolderPausedPastItsSessionFindsItsLockGone) {
  ZkLockHarness h;
  auto first = slot<Hold>();
  auto second = slot<Hold>();
  h.start<Hold>(0, 0, first, [&h](Env&) { return hold_for(h, 0, 5s, 100ms); });
  h.world.scheduler().at(50 * kMs, [&h] { h.world.pause(h.client[0], 3000 * kMs); });
  h.start<Hold>(1, 100, second, [&h](Env&) { return hold_for(h, 1, 5s, 10ms); });
  h.run_until_ms(8000);
  ASSERT_TRUE(first->has_value() && second->has_value());
  EXPECT_EQ((*first)->acquired, AcquireOutcome::Acquired);
  EXPECT_EQ((*second)->acquired, AcquireOutcome::Acquired);
  EXPECT_LT((*second)->at_ns, 3050 * kMs);  // while client-1 was still paused
  EXPECT_EQ((*first)->released, ReleaseOutcome::NotOwner);
}

// The claim the recipe's assumptions make: a pause shorter than the session timeout minus
// one ping period (1000 ms - 333 ms) cannot expire the session, so the holder keeps its
// znode and the next in line waits for the release.
TEST(ZooKeeperLock, APauseWithinTheSessionKeepsTheLock) {
  ZkLockHarness h;
  auto first = slot<Hold>();
  auto second = slot<Hold>();
  h.start<Hold>(0, 0, first, [&h](Env&) { return hold_for(h, 0, 5s, 100ms); });
  h.world.scheduler().at(50 * kMs, [&h] { h.world.pause(h.client[0], 600 * kMs); });
  h.start<Hold>(1, 100, second, [&h](Env&) { return hold_for(h, 1, 5s, 10ms); });
  h.run_until_ms(8000);
  ASSERT_TRUE(first->has_value() && second->has_value());
  EXPECT_EQ((*first)->acquired, AcquireOutcome::Acquired);
  EXPECT_EQ((*first)->released, ReleaseOutcome::Released);
  EXPECT_EQ((*second)->acquired, AcquireOutcome::Acquired);
  EXPECT_GT((*second)->at_ns, 650 * kMs);  // after client-1's pause and its work
  EXPECT_GT((*second)->token, (*first)->token);
}

// A release whose answer is lost: the delete ran, the retried delete finds the znode gone
// in the same session — only the first delete can have removed it — so the lock was
// released, not lost ("not the owner" would say it had expired under its holder).
TEST(ZooKeeperLock, AReleaseWhoseAnswerIsLostStillReleases) {
  ZkLockHarness h;
  auto cut_answers = [&h](int delta) { cut_from_zookeeper(h.world, h.client[0], delta, ZkCut::Answers); };
  auto first = slot<Hold>();
  auto second = slot<Hold>();
  h.start<Hold>(0, 0, first, [&h, cut_answers](Env&) -> Task<Hold> {
    Lock& l = *h.locks[0];
    Hold out;
    out.acquired = co_await l.acquire(5s);
    co_await h.env(0).sleep(100ms);
    cut_answers(+1);
    h.world.scheduler().at(h.world.now() + 20 * kMs, [cut_answers] { cut_answers(-1); });
    out.released = co_await l.release();
    out.at_ns = h.world.now();
    co_return out;
  });
  h.start<Hold>(1, 50, second, [&h](Env&) { return hold_for(h, 1, 5s, 10ms); });
  h.run_until_ms(8000);
  ASSERT_TRUE(first->has_value() && second->has_value());
  EXPECT_EQ((*first)->acquired, AcquireOutcome::Acquired);
  EXPECT_EQ((*first)->released, ReleaseOutcome::Released);
  EXPECT_EQ((*second)->acquired, AcquireOutcome::Acquired);
  EXPECT_LT((*second)->at_ns, (*first)->at_ns);  // the delete had run: the next in line went in
}

}  // namespace
}  // namespace lockstep::testing
