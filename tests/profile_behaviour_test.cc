// Every library profile held to what its library promises, typed over both worlds (the
// simulator and real redis-servers on free loopback ports, tests/two_worlds.h): a second
// client is kept out until release and then gets in; a client that never took the lock
// cannot delete it (and the libraries that say "released" anyway are named); extension
// by hand, by a watchdog, by using() or by RedMutex's watcher keeps a lock past its
// lease while its holder works; Redisson's hold counts. Each profile runs on its own
// key with its own clients, all at once; retries are set short through the library's
// own options so a refused client gives up well before the holder lets go.
#include <gtest/gtest.h>

#include <map>

#include "lockstep/profiles.h"
#include "two_worlds.h"

namespace lockstep::testing {
namespace {

constexpr int kClientsPerEntry = 2;
constexpr int kLeaseMs = 600;  // short enough that three leases pass in a test

// One profile configuration under test: its name in messages, the profile and options.
struct Entry {
  std::string label;
  std::string profile;
  nlohmann::json options;
};

const std::vector<Entry>& entries() {
  static const std::vector<Entry> kEntries = {
      {"redsync@4.0.3", "redsync@4.0.3", {{"expiry", kLeaseMs}, {"tries", 3}, {"retryDelay", 50}}},
      {"redsync@4.17.0", "redsync@4.17.0", {{"expiry", kLeaseMs}, {"tries", 3}, {"retryDelay", 50}}},
      {"node-redlock@4.2.0", "node-redlock@4.2.0", {{"ttl", kLeaseMs}, {"retryCount", 2}, {"retryDelay", 50}, {"retryJitter", 0}}},
      {"node-redlock@5.0.0-beta.2", "node-redlock@5.0.0-beta.2",
       {{"duration", kLeaseMs}, {"retryCount", 2}, {"retryDelay", 50}, {"retryJitter", 0}}},
      {"node-redlock@5.0.0-beta.2/using", "node-redlock@5.0.0-beta.2",
       {{"kind", "using"}, {"duration", kLeaseMs}, {"retryCount", 2}, {"retryDelay", 50}, {"retryJitter", 0},
        {"automaticExtensionThreshold", 300}}},
      {"node-redlock@afe5cf9/using", "node-redlock@afe5cf9",
       {{"kind", "using"}, {"duration", kLeaseMs}, {"retryCount", 2}, {"retryDelay", 50}, {"retryJitter", 0},
        {"automaticExtensionThreshold", 300}}},
      {"redis-py@5.0.0", "redis-py@5.0.0", {{"timeout", kLeaseMs / 1000.0}, {"sleep", 0.02}}},
      {"redlock-py@1.0.8", "redlock-py@1.0.8", {{"ttl", kLeaseMs}, {"retry_count", 2}, {"retry_delay", 0.05}}},
      {"redis-plus-plus@1.3.15/redlock", "redis-plus-plus@1.3.15",
       {{"kind", "redlock"}, {"ttl", kLeaseMs}, {"retry_count", 2}, {"retry_delay", 50}}},
      {"redis-plus-plus@1.3.15/redmutex", "redis-plus-plus@1.3.15", {{"kind", "redmutex"}, {"ttl", kLeaseMs}}},
      {"redisson@3.23.0", "redisson@3.23.0", {{"lockWatchdogTimeout", kLeaseMs}}},
      {"redisson@3.43.0", "redisson@3.43.0", {{"lockWatchdogTimeout", kLeaseMs}}},
      {"redisson@3.43.0/fair", "redisson@3.43.0", {{"kind", "fair"}, {"lockWatchdogTimeout", kLeaseMs}}},
      {"redisson@3.43.0/redlock", "redisson@3.43.0", {{"kind", "redlock"}, {"lockWatchdogTimeout", kLeaseMs}}},
      {"redisson@3.44.0", "redisson@3.44.0", {{"lockWatchdogTimeout", kLeaseMs}}},
  };
  return kEntries;
}

std::string key_of(const Entry& e) { return "lock:" + e.label; }

bool extends_by_hand(const Entry& e) { return profile_has_extend(*profile_named(e.profile), e.options); }
bool renews_alone(const Entry& e) {
  const std::string kind = e.options.value("kind", "");
  return e.profile.rfind("redisson", 0) == 0 || kind == "using" || kind == "redmutex";
}
// Unlock calls that say "released" whatever happened: redsync 4.0.3's int/int64 compare
// (PR #61), and the unlocks that return nothing: redlock-py's (it swallows every error),
// redis-plus-plus's RedLock::unlock, Redisson's RedLock (unlockInner skips errors).
bool claims_any_release(const Entry& e) {
  return e.profile == "redsync@4.0.3" || e.profile == "redlock-py@1.0.8" ||
         e.label == "redis-plus-plus@1.3.15/redlock" || e.label == "redisson@3.43.0/redlock";
}

template <typename W>
class ProfileBehaviour : public LockSteps<ProfileLock> {
 protected:
  void SetUp() override {
    std::string why;
    world_ = W::make(kClientsPerEntry * static_cast<int>(entries().size()), 3, why);
    if (!world_) GTEST_SKIP() << why;
  }

  Handle lock(int c, size_t entry) {
    const Entry& e = entries()[entry];
    const int client = static_cast<int>(entry) * kClientsPerEntry + c;
    auto& slot = locks_[client];
    if (!slot) slot = make_profile_lock(e.profile, world_->env(client), key_of(e), e.options);
    return {client, slot.get()};
  }

  // Whether any node holds the entry's key.
  bool held(size_t entry) {
    for (int n = 0; n < 3; ++n)
      if (world_->inspect(n, {"EXISTS", key_of(entries()[entry])}).is_integer(1)) return true;
    return false;
  }

  std::map<int, std::unique_ptr<ProfileLock>> locks_;
};

using Worlds = ::testing::Types<Sim, Live>;
TYPED_TEST_SUITE(ProfileBehaviour, Worlds, WorldName);

template <typename T>
using Slot = std::shared_ptr<std::optional<T>>;

TYPED_TEST(ProfileBehaviour, ExcludesASecondClientUntilReleased) {
  struct Run {
    Slot<AcquireOutcome> first, refused, second;
    Slot<ReleaseOutcome> released;
  };
  std::vector<Run> runs;
  for (size_t i = 0; i < entries().size(); ++i) {
    auto a = this->lock(kA, i), b = this->lock(kB, i);
    Run r;
    r.first = this->acquire(a, 0ms, 300ms);
    r.refused = this->acquire_after(b, r.first, 0ms, 150ms);
    r.released = this->release_after(a, r.refused, 0ms);
    r.second = this->acquire_after(b, r.released, 0ms, 300ms);
    runs.push_back(r);
  }
  this->world_->run_for(2000ms);
  for (size_t i = 0; i < runs.size(); ++i) {
    SCOPED_TRACE(entries()[i].label);
    ASSERT_TRUE(runs[i].first->has_value() && runs[i].refused->has_value() && runs[i].released->has_value() &&
                runs[i].second->has_value());
    EXPECT_EQ(**runs[i].first, AcquireOutcome::Acquired);
    EXPECT_EQ(**runs[i].refused, AcquireOutcome::NotAcquired);
    EXPECT_EQ(**runs[i].released, ReleaseOutcome::Released);
    EXPECT_EQ(**runs[i].second, AcquireOutcome::Acquired);
  }
}

TYPED_TEST(ProfileBehaviour, OnlyTheOwnerDeletesTheLock) {
  std::vector<Slot<ReleaseOutcome>> foreign;
  for (size_t i = 0; i < entries().size(); ++i) {
    auto held = this->acquire(this->lock(kA, i), 0ms, 300ms);
    foreign.push_back(this->release_after(this->lock(kB, i), held, 0ms));
  }
  this->world_->run_for(500ms);  // within the lease, which held() below needs
  for (size_t i = 0; i < entries().size(); ++i) {
    SCOPED_TRACE(entries()[i].label);
    ASSERT_TRUE(foreign[i]->has_value());
    EXPECT_TRUE(this->held(i)) << "a client that never took the lock deleted it";
    if (!claims_any_release(entries()[i])) {
      EXPECT_NE(**foreign[i], ReleaseOutcome::Released);
    } else {
      EXPECT_EQ(**foreign[i], ReleaseOutcome::Released) << "the flaw this library version is known for";
    }
  }
}

// Holding three leases: extension by hand every lease/3, or the library's own renewal.
TYPED_TEST(ProfileBehaviour, RenewalKeepsTheLockPastItsLease) {
  struct Run {
    size_t entry;
    Slot<AcquireOutcome> held, refused;
    Slot<bool> extended;
  };
  std::vector<Run> runs;
  for (size_t i = 0; i < entries().size(); ++i) {
    const Entry& e = entries()[i];
    if (!extends_by_hand(e) && !renews_alone(e)) continue;
    auto a = this->lock(kA, i);
    Run r{i, this->acquire(a, 0ms, 300ms), this->acquire(this->lock(kB, i), 1500ms, 100ms), nullptr};
    if (extends_by_hand(e)) {
      ProfileLock* l = a.lock;
      Env& env = this->world_->env(a.client);
      r.extended = this->world_->template start<bool>(a.client, 0ms, [l, &env]() -> Task<bool> {
        co_await env.sleep(Millis(kLeaseMs / 2));  // after the acquire
        for (int k = 0; k < 6; ++k) {
          const ExtendOutcome o = co_await l->extend();
          if (o != ExtendOutcome::Extended) co_return false;
          co_await env.sleep(Millis(kLeaseMs / 3));
        }
        co_return true;
      });
    }
    runs.push_back(r);
  }
  ASSERT_GE(runs.size(), 10u);
  this->world_->run_for(1800ms);
  for (const auto& r : runs) {
    SCOPED_TRACE(entries()[r.entry].label);
    ASSERT_TRUE(r.held->has_value() && r.refused->has_value());
    EXPECT_EQ(**r.held, AcquireOutcome::Acquired);
    EXPECT_EQ(**r.refused, AcquireOutcome::NotAcquired) << "the lock expired although its holder renewed it";
    EXPECT_TRUE(this->held(r.entry));
    if (r.extended) {
      EXPECT_TRUE(r.extended->value_or(true));
    }
  }
}

TYPED_TEST(ProfileBehaviour, RedissonHoldsCount) {
  struct Run {
    size_t entry;
    Slot<AcquireOutcome> again, refused;
    Slot<ReleaseOutcome> first, second;
  };
  std::vector<Run> runs;
  for (size_t i = 0; i < entries().size(); ++i) {
    if (!profile_named(entries()[i].profile)->reentrant) continue;
    auto a = this->lock(kA, i);
    Run r;
    r.entry = i;
    r.again = this->acquire_after(a, this->acquire(a, 0ms, 300ms), 0ms, 300ms);
    r.first = this->release_after(a, r.again, 0ms);
    r.refused = this->acquire_after(this->lock(kB, i), r.first, 0ms, 100ms);
    r.second = this->release_after(a, r.refused, 0ms);
    runs.push_back(r);
  }
  ASSERT_GE(runs.size(), 4u);
  this->world_->run_for(1500ms);
  for (const auto& r : runs) {
    SCOPED_TRACE(entries()[r.entry].label);
    ASSERT_TRUE(r.again->has_value() && r.first->has_value() && r.refused->has_value() && r.second->has_value());
    EXPECT_EQ(**r.again, AcquireOutcome::Acquired);
    EXPECT_EQ(**r.first, ReleaseOutcome::Released);
    EXPECT_EQ(**r.refused, AcquireOutcome::NotAcquired) << "one release of two holds freed the lock";
    EXPECT_EQ(**r.second, ReleaseOutcome::Released);
    EXPECT_FALSE(this->held(r.entry));
  }
}

}  // namespace
}  // namespace lockstep::testing
