// redis-plus-plus (sewenew/redis-plus-plus, src/sw/redis++/patterns/redlock.{h,cpp}),
// the Lua-script version (RedLockMutex over RedLockMutexVessel), at 1.3.15 and the two
// versions around its unlock fixes: 1.3.12 (before #563) and fc67c2e (PR #660, #659's
// fix, untagged). Each difference is a branch below naming its upstream change.
//
// RedLockMutexVessel::lock: startTime = steady_clock::now() once, before the first
// attempt; per attempt `SET resource value PX ttl NX` on each instance in turn; then
// time_remaining = startTime + ttl - now - (ttl*clock_drift_factor + 2 ms), so the
// validity of a lock taken on a later attempt is measured from the first one: a retry
// that lands after the TTL gives up (unlocking), however fresh its keys are. Held when
// time_remaining > 0 and a quorum answered OK; otherwise unlock everywhere and sleep
// U(0, retry_delay) before the next of retry_count attempts. Per-instance errors are not
// caught: a refused or timed-out command throws out of lock() and leaves the keys set so
// far (code obs.). No socket timeout is set by default. RedLockMutexVessel::unlock runs
// the compare-and-delete script on one instance after another, so an error there leaves
// the later instances' keys to expire.
//
// kind "redlock": that lock() per acquire, extend_lock by hand. Its pre-check is built
// from a fresh LockInfo and always passes; a failed extension unlocks everywhere.
// kind "redmutex": RedMutex. lock() tries one attempt every U(0,5) ms until it holds
// the lock; the LockWatcher extends it every ttl/2 and, when an extension fails (false:
// after unlocking; an exception: at once), calls auto_extend_err_callback if one was
// given, and resets the mutex — the holder's work goes on unless the callback stops it,
// which the README says it is for. The user's reaction to the callback comes after the
// reset: an unlock() the user makes waits on the mutex the watcher holds meanwhile.
//
// RedMutex::unlock is normally called by the destructor of std::lock_guard, where an
// exception it throws is std::terminate: the application dies. Two throws were removed:
// - an unlock that met an error reset the mutex and rethrew it up to 1.3.12; 1.3.13
//   swallows it (#563, commit 202b36b). The keys left on the later instances are the same
//   either way: the fix keeps the process alive, it does not unlock more.
// - unlocking a mutex the watcher has reset throws "RedMutex is not locked" up to 1.3.15;
//   fc67c2e returns quietly (#659, PR #660). The holder is then told nothing at all that
//   the watcher lost its lock, unless it passed the callback.
// lockstep reports the exception as the release's outcome (unknown: the error left the
// lock in an unknown state; not-owner: "not locked"); the run goes on where the
// application would have died.
#include "common.h"
#include "lockstep/scripts.h"

namespace lockstep::profiles {
namespace {

class RedisPlusPlus : public ProfileLock {
 public:
  RedisPlusPlus(const ProfileInfo& info, Env& env, std::string key, const nlohmann::json& options)
      : env_(env), key_(std::move(key)) {
    ProfileOptions o(info, options);
    redmutex_ = o.choice("kind") == "redmutex";
    ttl_ms_ = o.integer("ttl");
    retry_count_ = redmutex_ ? 1 : o.integer("retry_count");  // RedLockMutex::try_lock passes 1
    retry_delay_ms_ = o.integer("retry_delay");
    drift_factor_ = o.number("clock_drift_factor");
    callback_ = o.boolean("auto_extend_err_callback");
    // 1.3.12: the drift is int(ttl*factor)+2 whole ms (1.3.13 counts it in double, #591).
    whole_ms_drift_ = info.version == "1.3.12";
    unlock_rethrows_ = info.version == "1.3.12";           // #563, fixed in 1.3.13
    unlock_quiet_when_reset_ = info.version == "fc67c2e";  // #659, fixed by PR #660
  }

  ~RedisPlusPlus() override { stop_watching(); }

  Task<AcquireOutcome> acquire(Nanos wait) override {
    if (!redmutex_) {
      value_ = random_alnum(env_, 20);
      co_return co_await vessel_lock(value_);
    }
    // RedMutex::lock(): sleep U(0,5) ms, try_lock(), until it holds the lock; it never
    // gives up by itself, so the workload's wait bounds it.
    const Nanos deadline = env_.now_mono() + wait;
    while (env_.now_mono() < deadline) {
      co_await env_.sleep(Millis(random_between(env_, 0, 5)));
      std::string id = random_alnum(env_, 20);
      const AcquireOutcome o = co_await vessel_lock(id);
      if (o == AcquireOutcome::NotAcquired) continue;
      if (o == AcquireOutcome::Acquired) {
        value_ = id;
        aborted_ = false;
        start_watching();
      }
      co_return o;  // an exception leaves lock() too
    }
    co_return AcquireOutcome::NotAcquired;
  }

  Task<ReleaseOutcome> release() override {
    if (redmutex_) {
      co_await stop_watching_and_wait();
      if (value_.empty()) {
        // "RedMutex is not locked" up to 1.3.15; fc67c2e returns (#659).
        co_return unlock_quiet_when_reset_ ? ReleaseOutcome::Released : ReleaseOutcome::NotOwner;
      }
      const bool unlocked = co_await unlock_all(value_);
      value_.clear();  // _reset() either way
      // Up to 1.3.12 the error is rethrown; from 1.3.13 it is swallowed (#563).
      if (!unlocked && unlock_rethrows_) co_return ReleaseOutcome::Unknown;
      co_return ReleaseOutcome::Released;
    }
    const bool unlocked = co_await unlock_all(value_);
    co_return unlocked ? ReleaseOutcome::Released : ReleaseOutcome::Unknown;
  }

  bool can_extend() const override { return !redmutex_; }
  Task<ExtendOutcome> extend() override { co_return co_await extend_lock(value_); }
  bool aborted() const override { return aborted_; }
  bool tells_when_lost() const override { return redmutex_ && callback_; }
  const std::string& token() const override { return value_; }

 private:
  int quorum() const { return env_.node_count() / 2 + 1; }
  Nanos drift() const {
    if (whole_ms_drift_) return Millis(static_cast<int64_t>(static_cast<double>(ttl_ms_) * drift_factor_) + 2);
    return Nanos(static_cast<int64_t>(static_cast<double>(ttl_ms_) * 1e6 * drift_factor_)) + 2ms;
  }
  // duration_cast to milliseconds truncates toward zero.
  static int64_t whole_ms(Nanos d) { return to_ms(d); }

  // RedLockMutexVessel::unlock: the compare-and-delete script on each instance; an error
  // ends it (false: thrown to the caller).
  Task<bool> unlock_all(const std::string& value) {
    for (int i = 0; i < env_.node_count(); ++i) {
      Argv del = make_argv("EVAL", script("unlock_if_owner"), "1", key_, value);
      Reply r = co_await env_.node(i).call(std::move(del), kNoTimeout);
      if (r.is_unknown() || r.is_error()) co_return false;
    }
    co_return true;
  }

  Task<AcquireOutcome> vessel_lock(const std::string& value) {
    const Nanos start = env_.now_mono();
    for (int64_t i = 0; i < retry_count_; ++i) {
      int locked = 0;
      for (int n = 0; n < env_.node_count(); ++n) {
        Argv set = make_argv("SET", key_, value, "PX", ms_string(ttl_ms_), "NX");
        Reply r = co_await env_.node(n).call(std::move(set), kNoTimeout);
        if (r.is_unknown() || r.is_error()) co_return AcquireOutcome::Unknown;  // thrown, not caught
        if (r.is_ok()) ++locked;
      }
      const int64_t remaining = whole_ms(start + Millis(ttl_ms_) - env_.now_mono() - drift());
      if (remaining <= 0) {
        const bool unlocked = co_await unlock_all(value);
        if (!unlocked) co_return AcquireOutcome::Unknown;
        break;  // "should not retry after the TTL expiration"
      }
      if (locked >= quorum()) co_return AcquireOutcome::Acquired;
      const bool unlocked = co_await unlock_all(value);
      if (!unlocked) co_return AcquireOutcome::Unknown;
      if (i != retry_count_ - 1) co_await env_.sleep(Millis(random_between(env_, 0, retry_delay_ms_)));
    }
    co_return AcquireOutcome::NotAcquired;
  }

  // RedLockMutex::extend_lock: the pre-check always passes (its LockInfo is fresh); the
  // extend script on each instance; a quorum and a positive remaining time, or unlock.
  Task<ExtendOutcome> extend_lock(const std::string& value) {
    const Nanos start = env_.now_mono();
    int locked = 0;
    for (int n = 0; n < env_.node_count(); ++n) {
      Argv ext = make_argv("EVAL", script("redsync_touch"), "1", key_, value, ms_string(ttl_ms_));
      Reply r = co_await env_.node(n).call(std::move(ext), kNoTimeout);
      if (r.is_unknown() || r.is_error()) co_return ExtendOutcome::Unknown;  // thrown
      if (r.type == Reply::Type::Integer && r.integer != 0) ++locked;
    }
    const int64_t remaining = whole_ms(start + Millis(ttl_ms_) - env_.now_mono() - drift());
    if (locked >= quorum() && remaining > 0) co_return ExtendOutcome::Extended;
    co_await unlock_all(value);
    co_return ExtendOutcome::NotExtended;
  }

  // unlock() and the watcher's extend_lock() take the same std::mutex, so an unlock
  // waits for an extension in flight.
  struct Watch {
    bool stopped = false;
    bool in_flight = false;
    Gate idle;
  };

  void start_watching() {
    stop_watching();
    watch_ = std::make_shared<Watch>();
    env_.spawn(watcher(watch_, value_));
  }
  void stop_watching() {
    if (watch_) watch_->stopped = true;
    watch_.reset();
  }
  Task<void> stop_watching_and_wait() {
    auto w = std::move(watch_);
    if (!w) co_return;
    w->stopped = true;
    if (w->in_flight) co_await w->idle.wait();
  }

  // LockWatcher: the task runs ttl/2 after it was (re)scheduled; a failed extension
  // (false or an exception) calls the callback, resets the mutex and ends the watch.
  Task<void> watcher(std::shared_ptr<Watch> w, std::string value) {
    constexpr int kExtensionsMax = 1'000'000;
    for (int i = 0; i < kExtensionsMax; ++i) {
      co_await env_.sleep(Millis(ttl_ms_ / 2));
      if (w->stopped) co_return;
      note_background(true);
      w->in_flight = true;
      const ExtendOutcome o = co_await extend_lock(value);
      w->in_flight = false;
      if (w->stopped) {
        note_background(false, o, "unlock waited for it");
        w->idle.open();
        co_return;
      }
      if (o == ExtendOutcome::Extended) {
        note_background(false, o, "extended");
        continue;
      }
      note_background(false, o, callback_ ? "watch ended; auto_extend_err_callback called" : "watch ended silently");
      if (callback_) aborted_ = true;
      value_.clear();  // _reset(): the mutex no longer counts as locked
      w->stopped = true;
      if (callback_) tell_lost();  // last: the user's code may run on from here
      co_return;
    }
  }

  Env& env_;
  std::string key_;
  bool redmutex_ = true;
  int64_t ttl_ms_ = 3000;
  int64_t retry_count_ = 3;
  int64_t retry_delay_ms_ = 200;
  double drift_factor_ = 0.01;
  bool callback_ = false;
  bool whole_ms_drift_ = false;
  bool unlock_rethrows_ = false;
  bool unlock_quiet_when_reset_ = false;
  bool aborted_ = false;
  std::string value_;
  std::shared_ptr<Watch> watch_;
};

}  // namespace

std::unique_ptr<ProfileLock> make_redis_plus_plus(const ProfileInfo& info, Env& env, const std::string& key,
                                                  const nlohmann::json& options) {
  return std::make_unique<RedisPlusPlus>(info, env, key, options);
}

}  // namespace lockstep::profiles
