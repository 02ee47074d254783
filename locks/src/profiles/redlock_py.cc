// redlock-py 1.0.8 (SPSCommerce/redlock-py, redlock/__init__.py): Redis's RedLock in
// Python, one server after another.
//
// lock(resource, ttl): a 22-character value; per attempt, `SET resource value NX PX ttl`
// on each server in turn (a RedisError is noted, not fatal), then validity = ttl -
// elapsed - (int(ttl*0.01)+2), elapsed measured with time.time() — the wall clock, so an
// NTP step back during a slow attempt makes it look fast. Held when validity > 0 and a
// quorum (N//2+1, PR #6) said yes — but if any server raised, it raises
// MultipleRedlockException instead, without unlocking. Otherwise it runs the unlock
// script everywhere, sleeps retry_delay and tries again, retry_count times (0 means 3).
// unlock swallows every error, so a release always looks done. No socket timeout is
// set, so a stopped server stops the client with it.
//
// 1.0.2, the release before PR #3 ("Fix logic when calculating validity", 1.0.4), computed
// validity = ttl - (elapsed - drift), drift = ttl*0.01 + 2 as a float: the drift was
// added, not subtracted, so an attempt that took up to ttl + drift ms — its first key
// already expired — counted as held. It read datetime.utcnow() (the wall clock too), and
// lock_instance swallowed every exception as a "no" (no MultipleRedlockException yet).
// Its quorum, len(self.servers)//2+1 before PR #6, is the same number: a server was
// added to that list when its client object was built, which never connects.
#include "common.h"
#include "lockstep/scripts.h"

namespace lockstep::profiles {
namespace {

class RedlockPy : public ProfileLock {
 public:
  RedlockPy(const ProfileInfo& info, Env& env, std::string key, const nlohmann::json& options)
      : env_(env), key_(std::move(key)) {
    ProfileOptions o(info, options);
    ttl_ms_ = o.integer("ttl");
    retry_count_ = o.integer("retry_count") != 0 ? o.integer("retry_count") : 3;
    const double delay_s = o.number("retry_delay") != 0 ? o.number("retry_delay") : 0.2;
    retry_delay_ = Nanos(static_cast<int64_t>(delay_s * 1e9));
    drift_factor_ = o.number("clock_drift_factor");
    drift_added_ = info.version == "1.0.2";
  }

  Task<AcquireOutcome> acquire(Nanos) override {
    const std::string value = random_alnum(env_, 22);
    const int64_t drift = static_cast<int64_t>(static_cast<double>(ttl_ms_) * drift_factor_) + 2;
    const int quorum = env_.node_count() / 2 + 1;
    for (int64_t retry = 0; retry < retry_count_; ++retry) {
      int n = 0, errors = 0;
      const Nanos start_wall = env_.now_wall();
      const int64_t start = wall_ms(env_);
      for (int i = 0; i < env_.node_count(); ++i) {
        Argv set = make_argv("SET", key_, value, "NX", "PX", ms_string(ttl_ms_));
        Reply r = co_await env_.node(i).call(std::move(set), kNoTimeout);
        if (r.is_ok()) ++n;
        if (r.is_unknown() || r.is_error()) ++errors;
      }
      const int64_t elapsed = wall_ms(env_) - start;
      const int64_t validity = ttl_ms_ - elapsed - drift;
      if (drift_added_) {
        // timedelta arithmetic in microseconds, the drift on the wrong side.
        const double elapsed_us = static_cast<double>((env_.now_wall() - start_wall).count()) / 1000.0;
        const double drift_f = static_cast<double>(ttl_ms_) * drift_factor_ + 2;
        const double validity_ms = ttl_ms_ - (elapsed_us / 1000.0 - drift_f);
        if (validity_ms > 0 && n >= quorum) {
          value_ = value;
          validity_ = Nanos(static_cast<int64_t>(validity_ms * 1e6));
          co_return AcquireOutcome::Acquired;  // errors were already counted as "no"
        }
      } else if (validity > 0 && n >= quorum) {
        // MultipleRedlockException: the caller cannot tell that a majority holds its value.
        if (errors > 0) co_return AcquireOutcome::Unknown;
        value_ = value;
        validity_ = Millis(validity);
        co_return AcquireOutcome::Acquired;
      }
      for (int i = 0; i < env_.node_count(); ++i) {
        Argv del = make_argv("EVAL", script("unlock_if_owner"), "1", key_, value);
        co_await env_.node(i).call(std::move(del), kNoTimeout);
      }
      co_await env_.sleep(retry_delay_);  // also after the last attempt, as the loop is written
    }
    co_return AcquireOutcome::NotAcquired;
  }

  Task<ReleaseOutcome> release() override {
    for (int i = 0; i < env_.node_count(); ++i) {
      Argv del = make_argv("EVAL", script("unlock_if_owner"), "1", key_, value_);
      co_await env_.node(i).call(std::move(del), kNoTimeout);
    }
    co_return ReleaseOutcome::Released;  // unlock_instance logs and swallows every error
  }

  const std::string& token() const override { return value_; }
  std::optional<Nanos> validity() const override { return validity_; }

 private:
  Env& env_;
  std::string key_;
  int64_t ttl_ms_ = 1000;
  int64_t retry_count_ = 3;
  Nanos retry_delay_ = 200ms;
  double drift_factor_ = 0.01;
  bool drift_added_ = false;  // 1.0.2
  std::string value_;
  std::optional<Nanos> validity_;  // of the last lock() that returned a Lock
};

}  // namespace

std::unique_ptr<ProfileLock> make_redlock_py(const ProfileInfo& info, Env& env, const std::string& key,
                                             const nlohmann::json& options) {
  return std::make_unique<RedlockPy>(info, env, key, options);
}

}  // namespace lockstep::profiles
