// One behavioural suite for every lock algorithm, typed over both worlds: the same test
// runs against the simulator and against real redis-servers it starts on free loopback
// ports. Within a test every algorithm runs at once, each on its own key and with its own
// four client processes (a process has one connection per node, and a WATCH/MULTI unlock
// must not share it with other locks' commands), and each is then judged on what it
// promises: exclusion, the wait budget, who may unlock, reentrancy, renewal past the
// lease, fair order, shared reads.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "lockstep/algorithms.h"
#include "lockstep/lock.h"
#include "two_worlds.h"

namespace lockstep::testing {
namespace {

constexpr int kClientsPerAlgorithm = 4;

// Client `c` (kA..kD) of `algorithm`, as a process of the world.
int client_of(int c, const std::string& algorithm) {
  const auto& names = algorithm_names();
  const auto i = std::find(names.begin(), names.end(), algorithm) - names.begin();
  return static_cast<int>(i) * kClientsPerAlgorithm + c;
}

// The recipes that lock with Redis: the ZooKeeper recipe has its own suite
// (zookeeper_lock_test.cc) on a world with an ensemble.
std::vector<std::string> redis_locks() {
  std::vector<std::string> out;
  for (const auto& a : algorithm_names())
    if (find_lock(a)->service == LockService::Redis) out.push_back(a);
  return out;
}

bool one_of(const std::string& a, std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (a == n) return true;
  return false;
}
// The naive recipes delete whatever the key holds: anyone can unlock.
bool checks_owner(const std::string& a) { return !one_of(a, {"setnx", "setnx-expire", "set-px-del"}); }
bool is_reentrant(const std::string& a) {
  return one_of(a, {"redisson", "redisson-fenced", "redisson-fair", "redisson-rw"});
}
bool renews(const std::string& a) { return is_reentrant(a) || a == "renewal-thread"; }

std::string key_of(const std::string& algorithm) { return "lock:" + algorithm; }

LockParams behaviour_params(const std::string& algorithm, Nanos lease = 10s) {
  LockParams p;
  p.key = key_of(algorithm);
  p.lease = lease;
  p.retry = {1000, 10ms, 10ms};
  p.command_timeout = 500ms;
  p.options["watchdog"] = 1;  // Redisson family: renew while held
  p.options["scan_ms"] = 100;  // renewal-thread: scan often enough for a short lease
  return p;
}

template <typename W>
class LockBehaviour : public LockSteps<Lock> {
 protected:
  void SetUp() override {
    std::string why;
    // Three nodes: RedLock and MultiLock use them all.
    world_ = W::make(kClientsPerAlgorithm * static_cast<int>(algorithm_names().size()), 3, why);
    if (!world_) GTEST_SKIP() << why;
  }

  // Client `c`'s handle on `algorithm`, made on first use with `p`.
  Handle lock(int c, const std::string& algorithm, const LockParams& p) {
    const int client = client_of(c, algorithm);
    auto& slot = locks_[client];
    if (!slot) slot = make_lock(algorithm, world_->env(client), p);
    return {client, slot.get()};
  }
  // Client `c`'s read-write lock and its two sides.
  struct RwHandles {
    Handle read, write;
  };
  RwHandles rw(int c) {
    const int client = client_of(c, "redisson-rw");
    auto& slot = rw_locks_[client];
    if (!slot) slot = make_rw_lock("redisson-rw", world_->env(client), behaviour_params("redisson-rw"));
    return {{client, &slot->read_lock()}, {client, &slot->write_lock()}};
  }

  bool key_exists(const std::string& algorithm) { return world_->inspect(0, {"EXISTS", key_of(algorithm)}).is_integer(1); }

  // Real time needs room for a loaded machine; simulated time is exact.
  Nanos slack() const { return std::string(W::kName) == "live" ? 500ms : 50ms; }

  std::map<int, std::unique_ptr<Lock>> locks_;
  std::map<int, std::unique_ptr<ReadWriteLock>> rw_locks_;
};

using Worlds = ::testing::Types<Sim, Live>;
TYPED_TEST_SUITE(LockBehaviour, Worlds, WorldName);

template <typename T>
using Slot = std::shared_ptr<std::optional<T>>;

TYPED_TEST(LockBehaviour, ExcludesASecondClientUntilReleased) {
  struct Run {
    Slot<AcquireOutcome> first, refused, second;
    Slot<ReleaseOutcome> released;
  };
  std::map<std::string, Run> runs;
  for (const auto& a : redis_locks()) {
    auto la = this->lock(kA, a, behaviour_params(a));
    auto lb = this->lock(kB, a, behaviour_params(a));
    Run& r = runs[a];
    r.first = this->acquire(la, 0ms, 1s);
    r.refused = this->acquire_after(lb, r.first, 0ms, 200ms);
    r.released = this->release_after(la, r.refused, 0ms);
    r.second = this->acquire_after(lb, r.released, 0ms, 1s);
  }
  this->world_->run_for(2500ms);
  for (const auto& [a, r] : runs) {
    SCOPED_TRACE(a);
    ASSERT_TRUE(r.first->has_value() && r.refused->has_value() && r.released->has_value() && r.second->has_value());
    EXPECT_EQ(*r.first, AcquireOutcome::Acquired);
    EXPECT_EQ(*r.refused, AcquireOutcome::NotAcquired);
    EXPECT_EQ(*r.released, ReleaseOutcome::Released);
    EXPECT_EQ(*r.second, AcquireOutcome::Acquired);
  }
}

TYPED_TEST(LockBehaviour, WaitBudgetIsRespected) {
  constexpr Nanos kWait = 300ms;
  std::map<std::string, Slot<std::pair<AcquireOutcome, Nanos>>> waited;
  for (const auto& a : redis_locks()) {
    this->acquire(this->lock(kA, a, behaviour_params(a)), 0ms, 1s);
    auto lb = this->lock(kB, a, behaviour_params(a));
    Env& eb = this->world_->env(lb.client);
    waited[a] = this->world_->template start<std::pair<AcquireOutcome, Nanos>>(
        lb.client, 200ms, [l = lb.lock, &eb]() -> Task<std::pair<AcquireOutcome, Nanos>> {
          const Nanos t0 = eb.now_mono();
          AcquireOutcome o = co_await l->acquire(kWait);
          co_return std::make_pair(o, eb.now_mono() - t0);
        });
  }
  this->world_->run_for(1500ms);
  for (const auto& [a, w] : waited) {
    SCOPED_TRACE(a);
    ASSERT_TRUE(w->has_value());
    EXPECT_EQ((*w)->first, AcquireOutcome::NotAcquired);
    // It kept trying for most of the budget (the last retry delay may not fit) and gave
    // up within it, give or take one round trip.
    EXPECT_GE((*w)->second, kWait / 2);
    EXPECT_LE((*w)->second, kWait + this->slack());
  }
}

TYPED_TEST(LockBehaviour, OnlyTheOwnerUnlocksExceptInTheNaiveRecipes) {
  std::map<std::string, Slot<ReleaseOutcome>> foreign, own;
  for (const auto& a : redis_locks()) {
    this->acquire(this->lock(kA, a, behaviour_params(a)), 0ms, 1s);
    foreign[a] = this->release(this->lock(kB, a, behaviour_params(a)), 200ms);
  }
  this->world_->run_for(400ms);
  std::map<std::string, bool> held_after_foreign;
  for (const auto& a : redis_locks()) {
    held_after_foreign[a] = this->key_exists(a);
    own[a] = this->release(this->lock(kA, a, behaviour_params(a)), 0ms);
  }
  this->world_->run_for(300ms);
  for (const auto& a : redis_locks()) {
    SCOPED_TRACE(a);
    if (checks_owner(a)) {
      EXPECT_EQ(*foreign[a], ReleaseOutcome::NotOwner);
      EXPECT_TRUE(held_after_foreign[a]);
      EXPECT_EQ(*own[a], ReleaseOutcome::Released);
    } else {
      EXPECT_EQ(*foreign[a], ReleaseOutcome::Released);  // the flaw the recipe is known for
      EXPECT_FALSE(held_after_foreign[a]);
    }
    EXPECT_FALSE(this->key_exists(a));
  }
}

TYPED_TEST(LockBehaviour, ReentrantAcquiresCountAndEachReleaseUncounts) {
  struct Run {
    Slot<AcquireOutcome> first, again, refused, other;
    Slot<ReleaseOutcome> r1, r2;
  };
  std::map<std::string, Run> runs;
  for (const auto& a : redis_locks()) {
    if (!is_reentrant(a)) continue;
    auto la = this->lock(kA, a, behaviour_params(a));
    auto lb = this->lock(kB, a, behaviour_params(a));
    Run& r = runs[a];
    r.first = this->acquire(la, 0ms, 1s);
    r.again = this->acquire_after(la, r.first, 0ms, 1s);
    r.r1 = this->release_after(la, r.again, 0ms);
    r.refused = this->acquire_after(lb, r.r1, 0ms, 200ms);
    r.r2 = this->release_after(la, r.refused, 0ms);
    r.other = this->acquire_after(lb, r.r2, 0ms, 1s);
  }
  ASSERT_FALSE(runs.empty());
  this->world_->run_for(3000ms);
  for (const auto& [a, r] : runs) {
    SCOPED_TRACE(a);
    ASSERT_TRUE(r.first->has_value() && r.again->has_value() && r.r1->has_value() && r.refused->has_value() &&
                r.r2->has_value() && r.other->has_value());
    EXPECT_EQ(*r.first, AcquireOutcome::Acquired);
    EXPECT_EQ(*r.again, AcquireOutcome::Acquired);
    EXPECT_EQ(*r.r1, ReleaseOutcome::Released);
    EXPECT_EQ(*r.refused, AcquireOutcome::NotAcquired) << "one release of two holds freed the lock";
    EXPECT_EQ(*r.r2, ReleaseOutcome::Released);
    EXPECT_EQ(*r.other, AcquireOutcome::Acquired);
  }
}

TYPED_TEST(LockBehaviour, RenewalKeepsTheLockPastItsLeaseWhileHeld) {
  constexpr Nanos kLease = 600ms;
  std::map<std::string, Slot<AcquireOutcome>> held, refused, after;
  for (const auto& a : redis_locks()) {
    if (!renews(a)) continue;
    held[a] = this->acquire(this->lock(kA, a, behaviour_params(a, kLease)), 0ms, 1s);
    refused[a] = this->acquire(this->lock(kB, a, behaviour_params(a, kLease)), 1500ms, 200ms);
  }
  this->world_->run_for(1900ms);  // three leases
  std::map<std::string, bool> exists;
  for (const auto& [a, _] : held) {
    exists[a] = this->key_exists(a);
    this->release(this->lock(kA, a, behaviour_params(a, kLease)), 0ms);
    after[a] = this->acquire(this->lock(kB, a, behaviour_params(a, kLease)), 200ms, 1s);
  }
  this->world_->run_for(700ms);
  for (const auto& [a, h] : held) {
    SCOPED_TRACE(a);
    EXPECT_EQ(*h, AcquireOutcome::Acquired);
    EXPECT_EQ(*refused[a], AcquireOutcome::NotAcquired);
    EXPECT_TRUE(exists[a]) << "the lock expired although its holder was alive";
    EXPECT_EQ(*after[a], AcquireOutcome::Acquired);
  }
}

TYPED_TEST(LockBehaviour, FairLockServesWaitersInArrivalOrder) {
  const std::string a = "redisson-fair";
  auto order = std::make_shared<std::vector<int>>();
  // Each waiter notes when it got the lock, holds it a little and lets go.
  auto take = [&](int c, Nanos at) {
    auto h = this->lock(c, a, behaviour_params(a));
    Env& e = this->world_->env(h.client);
    return this->world_->template start<AcquireOutcome>(
        h.client, at, [l = h.lock, &e, order, c]() -> Task<AcquireOutcome> {
          AcquireOutcome o = co_await l->acquire(5s);
          if (o != AcquireOutcome::Acquired) co_return o;
          order->push_back(c);
          co_await e.sleep(100ms);
          co_await l->release();
          co_return o;
        });
  };
  auto la = this->lock(kA, a, behaviour_params(a));
  this->acquire(la, 0ms, 1s);
  take(kB, 100ms);
  take(kC, 200ms);
  take(kD, 300ms);
  this->release(la, 600ms);
  this->world_->run_for(2000ms);
  EXPECT_EQ(*order, (std::vector<int>{kB, kC, kD}));
}

TYPED_TEST(LockBehaviour, ReadersShareWritersExcludeAndTheWriterMayRead) {
  auto a = this->rw(kA);
  auto b = this->rw(kB);
  auto c = this->rw(kC);
  auto d = this->rw(kD);
  auto read_a = this->acquire(a.read, 0ms, 1s);
  auto read_b = this->acquire(b.read, 100ms, 1s);
  auto write_c_refused = this->acquire(c.write, 200ms, 200ms);
  this->release(a.read, 500ms);
  this->release(b.read, 500ms);
  auto write_c = this->acquire(c.write, 650ms, 1s);
  auto read_d_refused = this->acquire(d.read, 850ms, 200ms);
  auto read_c = this->acquire(c.read, 850ms, 1s);
  auto write_released = this->release(c.write, 1200ms);
  // C still holds its read: other readers may come in, writers may not.
  auto read_d = this->acquire(d.read, 1350ms, 1s);
  auto write_a_refused = this->acquire(a.write, 1350ms, 200ms);
  this->world_->run_for(1900ms);
  EXPECT_EQ(*read_a, AcquireOutcome::Acquired);
  EXPECT_EQ(*read_b, AcquireOutcome::Acquired) << "readers share the lock";
  EXPECT_EQ(*write_c_refused, AcquireOutcome::NotAcquired) << "a writer waits for readers";
  EXPECT_EQ(*write_c, AcquireOutcome::Acquired);
  EXPECT_EQ(*read_d_refused, AcquireOutcome::NotAcquired) << "a reader waits for the writer";
  EXPECT_EQ(*read_c, AcquireOutcome::Acquired) << "the writer may also read";
  EXPECT_EQ(*write_released, ReleaseOutcome::Released);
  EXPECT_EQ(*read_d, AcquireOutcome::Acquired);
  EXPECT_EQ(*write_a_refused, AcquireOutcome::NotAcquired);
}

}  // namespace
}  // namespace lockstep::testing
