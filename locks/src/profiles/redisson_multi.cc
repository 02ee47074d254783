// Redisson's profile entry point, and RedissonMultiLock / RedissonRedLock
// (RedissonMultiLock.tryLock, RedissonRedLock; the same code in 3.23.0, 3.43.0, 3.44.0;
// 3.11.x tests for "no wait" and "no lease" with == -1 where later versions test <= 0).
//
// The group's locks are taken one after another, one RLock per node. With both a lease
// and a wait, each lock is taken with a lease of 2*waitTime (the fix of #624), and only
// after all are taken does each get PEXPIRE leaseTime: a client that dies while taking
// them leaves its first locks held for twice its wait, whatever lease it asked for.
// Each lock waits at most the wait left (MultiLock) or max(left/N, 1) ms (RedLock); a lock
// whose command timed out is unlocked, one that failed otherwise is not. MultiLock needs
// every lock and starts over after a refusal; RedLock needs N/2+1 and gives up when too
// many failed. What is left of the wait is checked on the wall clock after every lock;
// there is no validity or drift check.
//
// 3.11.0, before #2172: the lease while acquiring is 2 x waitTime whatever the wait, so
// tryLock(-1, leaseTime) takes each lock with a lease of -2 ms and the lock script's
// PEXPIRE deletes the key it has just set; the final PEXPIRE finds nothing. Every caller
// gets the MultiLock at once. 3.11.1 takes leaseTime when the wait is -1 and gives up
// after a refusal instead of starting over.
//
// 2.3.0, before #624 (fixed in 2.2.25 and 2.4.0, commit 7eaf465): tryLock(waitTime,
// leaseTime) sends every lock's tryLockAsync(waitTime, leaseTime) at once and waits for
// all of them; MultiLock needs every lock, RedLock N/2+1, and fewer are unlocked. Each
// lock waits on its own for the whole wait and gets the caller's lease: two callers that
// split the locks between them each wait for the other's, whose lease ends before the
// wait does, so each takes the other's locks after its own first ones have expired, and
// both return true. unlock() sends every unlock at once; MultiLock throws the first
// failure, RedLock none.
#include <algorithm>

#include "redisson.h"

namespace lockstep::profiles {
namespace redisson {
namespace {

class Single : public ProfileLock {
 public:
  Single(Env& env, const std::string& key, std::string owner, Config c, int64_t lease_ms,
         std::optional<int64_t> wait_ms)
      : lock_(env, 0, key, std::move(owner), c), lease_ms_(lease_ms), wait_ms_(wait_ms) {}

  Task<AcquireOutcome> acquire(Nanos wait) override {
    lock_.set_note(on_background_extend);
    co_return co_await lock_.try_lock(wait_ms_ ? *wait_ms_ : to_ms(wait), lease_ms_);
  }
  Task<ReleaseOutcome> release() override { return lock_.unlock(); }
  const std::string& token() const override { return lock_.owner(); }

 private:
  RLock lock_;
  int64_t lease_ms_;
  std::optional<int64_t> wait_ms_;
};

class Multi : public ProfileLock {
 public:
  Multi(Env& env, const std::string& key, const std::string& uuid, Config c, int64_t lease_ms, bool redlock,
        std::optional<int64_t> wait_ms)
      : env_(env), version_(c.version), lease_ms_(lease_ms), redlock_(redlock), token_(uuid), wait_ms_(wait_ms) {
    for (int i = 0; i < env.node_count(); ++i) {
      // One Redisson client per master, each with its own id.
      const std::string owner = (i == 0 ? uuid : random_hex(env, 16)) + ":" + kThreadId;
      locks_.push_back(std::make_unique<RLock>(env, i, key, owner, c));
    }
  }

  Task<AcquireOutcome> acquire(Nanos wait) override {
    for (auto& l : locks_) l->set_note(on_background_extend);
    const int64_t wait_ms = wait_ms_ ? *wait_ms_ : to_ms(wait);
    const int n = static_cast<int>(locks_.size());
    // 3.11.x test for "no wait" and "no lease" with -1 only (`waitTime == -1`).
    const bool v3_11 = version_ == Version::V3_11_0 || version_ == Version::V3_11_1;
    const bool leased = v3_11 ? lease_ms_ != -1 : lease_ms_ > 0;
    const bool no_wait = v3_11 ? wait_ms == -1 : wait_ms <= 0;
    int64_t new_lease = -1;
    if (leased) new_lease = no_wait ? lease_ms_ : wait_ms * 2;
    // 3.11.0 doubles the wait whatever it is: a wait of -1 makes a lease of -2, which
    // PEXPIREs each key away as soon as the script sets it (#2172; 3.11.1 takes leaseTime).
    if (leased && version_ == Version::V3_11_0) new_lease = wait_ms * 2;
    int64_t time = wall_ms(env_);
    int64_t remain = no_wait ? -1 : wait_ms;
    const int64_t lock_wait = redlock_ ? std::max<int64_t>(remain / n, 1) : remain;
    const int failed_limit_start = failed_locks_limit();
    int failed_limit = failed_limit_start;
    std::vector<int> acquired;
    constexpr int kStepsMax = 1'000'000;
    int i = 0;
    for (int step = 0; step < kStepsMax && i < n; ++step, ++i) {
      bool timed_out = false;
      AcquireOutcome o;
      if (no_wait && !leased) {
        o = co_await locks_[i]->try_lock(0, -1, &timed_out);
      } else {
        o = co_await locks_[i]->try_lock(std::min(lock_wait, remain), new_lease, &timed_out);
      }
      if (o == AcquireOutcome::Acquired) {
        acquired.push_back(i);
      } else {
        if (timed_out) co_await locks_[i]->unlock();  // RedisResponseTimeoutException
        if (n - static_cast<int>(acquired.size()) == failed_locks_limit()) break;
        if (failed_limit == 0) {
          co_await unlock_some(acquired);
          // 3.11.0 gives up only when neither a wait nor a lease was given: with a lease and
          // wait -1 it starts over for ever.
          if (version_ == Version::V3_11_0 ? no_wait && !leased : no_wait) co_return AcquireOutcome::NotAcquired;
          failed_limit = failed_limit_start;
          acquired.clear();
          i = -1;  // start over from the first lock
        } else {
          --failed_limit;
        }
      }
      if (v3_11 ? remain != -1 : remain > 0) {
        remain -= wall_ms(env_) - time;
        time = wall_ms(env_);
        if (remain <= 0) {
          co_await unlock_some(acquired);
          co_return AcquireOutcome::NotAcquired;
        }
      }
    }
    if (leased) {
      for (int j : acquired) co_await locks_[j]->expire(lease_ms_);
    }
    co_return AcquireOutcome::Acquired;
  }

  Task<ReleaseOutcome> release() override {
    if (redlock_) {
      // RedissonRedLock.unlock: unlockInner over every lock, errors skipped; the caller
      // hears of none.
      for (auto& l : locks_) co_await l->unlock();
      co_return ReleaseOutcome::Released;
    }
    // RedissonMultiLock.unlock: locks.forEach(Lock::unlock) — the first exception ends it.
    for (auto& l : locks_) {
      const ReleaseOutcome o = co_await l->unlock();
      if (o != ReleaseOutcome::Released) co_return o;
    }
    co_return ReleaseOutcome::Released;
  }

  const std::string& token() const override { return token_; }

 private:
  int failed_locks_limit() const {
    const int n = static_cast<int>(locks_.size());
    return redlock_ ? n - (n / 2 + 1) : 0;
  }

  // unlockInner: unlock each, errors skipped.
  Task<void> unlock_some(const std::vector<int>& which) {
    for (int j : which) co_await locks_[j]->unlock();
  }

  Env& env_;
  Version version_;
  int64_t lease_ms_;
  bool redlock_;
  std::string token_;
  std::optional<int64_t> wait_ms_;
  std::vector<std::unique_ptr<RLock>> locks_;
};

// 2.3.0's RedissonMultiLock/RedissonRedLock: every lock at once (see the top of the file).
class AllAtOnce : public ProfileLock {
 public:
  AllAtOnce(Env& env, const std::string& key, const std::string& uuid, Config c, int64_t lease_ms, bool redlock)
      : lease_ms_(lease_ms), redlock_(redlock), token_(uuid) {
    for (int i = 0; i < env.node_count(); ++i) {
      const std::string owner = (i == 0 ? uuid : random_hex(env, 16)) + ":" + kThreadId;
      locks_.push_back(std::make_unique<RLock>(env, i, key, owner, c));
    }
  }

  Task<AcquireOutcome> acquire(Nanos wait) override {
    const int64_t wait_ms = to_ms(wait);
    std::vector<Task<AcquireOutcome>> tries;
    for (auto& l : locks_) {
      l->set_note(on_background_extend);
      // tryLock() without arguments is one attempt each; otherwise the caller's wait and lease.
      tries.push_back(wait_ms <= 0 && lease_ms_ <= 0 ? l->try_lock(0, -1) : l->try_lock(wait_ms, lease_ms_));
    }
    std::vector<AcquireOutcome> outcomes = co_await when_all(std::move(tries));
    std::vector<int> locked;
    bool failed = false;  // an exception, rethrown when too few were taken
    for (size_t i = 0; i < outcomes.size(); ++i) {
      if (outcomes[i] == AcquireOutcome::Acquired) locked.push_back(static_cast<int>(i));
      failed = failed || outcomes[i] == AcquireOutcome::Unknown;
    }
    const int n = static_cast<int>(locks_.size());
    const int needed = redlock_ ? n / 2 + 1 : n;
    if (static_cast<int>(locked.size()) >= needed) co_return AcquireOutcome::Acquired;
    std::vector<Task<ReleaseOutcome>> unlocks;
    for (int j : locked) unlocks.push_back(locks_[j]->unlock());
    std::vector<ReleaseOutcome> ignored = co_await when_all(std::move(unlocks));
    co_return failed ? AcquireOutcome::Unknown : AcquireOutcome::NotAcquired;
  }

  Task<ReleaseOutcome> release() override {
    std::vector<Task<ReleaseOutcome>> unlocks;
    for (auto& l : locks_) unlocks.push_back(l->unlock());
    std::vector<ReleaseOutcome> outcomes = co_await when_all(std::move(unlocks));
    if (redlock_) co_return ReleaseOutcome::Released;
    for (ReleaseOutcome o : outcomes) {
      if (o != ReleaseOutcome::Released) co_return o;
    }
    co_return ReleaseOutcome::Released;
  }

  const std::string& token() const override { return token_; }

 private:
  int64_t lease_ms_;
  bool redlock_;
  std::string token_;
  std::vector<std::unique_ptr<RLock>> locks_;
};

}  // namespace

std::unique_ptr<ProfileLock> make_multi(Env& env, const std::string& key, const std::string& uuid, Config config,
                                        int64_t lease_ms, bool redlock, std::optional<int64_t> wait_ms) {
  if (config.version == Version::V2_3) return std::make_unique<AllAtOnce>(env, key, uuid, config, lease_ms, redlock);
  return std::make_unique<Multi>(env, key, uuid, config, lease_ms, redlock, wait_ms);
}

}  // namespace redisson

std::unique_ptr<ProfileLock> make_redisson(const ProfileInfo& info, Env& env, const std::string& key,
                                           const nlohmann::json& options) {
  ProfileOptions o(info, options);
  redisson::Config c;
  c.version = info.version == "2.3.0"    ? redisson::Version::V2_3
              : info.version == "3.11.0" ? redisson::Version::V3_11_0
              : info.version == "3.11.1" ? redisson::Version::V3_11_1
              : info.version == "3.23.0" ? redisson::Version::V3_23
              : info.version == "3.43.0" ? redisson::Version::V3_43
                                         : redisson::Version::V3_44;
  c.timeout = Millis(o.integer("timeout"));
  c.retry_attempts = static_cast<int>(o.integer("retryAttempts"));
  c.retry_interval = Millis(o.integer("retryInterval"));
  c.watchdog_ms = o.integer("lockWatchdogTimeout");
  const std::string kind = o.choice("kind");
  c.kind = kind == "fair" ? redisson::Kind::Fair : redisson::Kind::Lock;
  const int64_t lease = o.integer("leaseTime");
  std::optional<int64_t> wait;
  if (find_option(info, "waitTime") && !o.is_null("waitTime")) wait = o.integer("waitTime");
  const std::string uuid = random_uuid(env);
  if (kind == "multilock" || kind == "redlock") {
    return redisson::make_multi(env, key, uuid, c, lease, kind == "redlock", wait);
  }
  return std::make_unique<redisson::Single>(env, key, uuid + ":" + kThreadId, c, lease, wait);
}

}  // namespace lockstep::profiles
