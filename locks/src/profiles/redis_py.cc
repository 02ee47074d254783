// redis-py's Lock (redis/redis-py, redis/lock.py at v5.0.0): one server, no quorum, no
// validity arithmetic, no watchdog.
//
// acquire: SET name token NX, with PX only when `timeout` is set (`if self.timeout`, so
// 0 means none too): by default the key has no TTL, and a holder that dies holds it
// forever. It retries every `sleep` seconds until time.monotonic() plus the next sleep
// would pass blocking_timeout (the workload's wait). release clears the token, then runs
// the compare-and-delete script and raises LockNotOwnedError when it answers 0. extend
// adds `timeout` to the remaining TTL (replace_ttl=False), reacquire resets it; both
// raise LockError without a timeout and LockNotOwnedError when the token is gone.
// Exceptions propagate: no socket timeout is set and v5.0.0 does not retry a command.
#include "common.h"
#include "lockstep/scripts.h"

namespace lockstep::profiles {
namespace {

class RedisPyLock : public ProfileLock {
 public:
  RedisPyLock(const ProfileInfo& info, Env& env, std::string key, const nlohmann::json& options)
      : env_(env), key_(std::move(key)) {
    ProfileOptions o(info, options);
    if (!o.is_null("timeout")) timeout_ms_ = static_cast<int64_t>(o.number("timeout") * 1000);
    sleep_ = Nanos(static_cast<int64_t>(o.number("sleep") * 1e9));
    blocking_ = o.boolean("blocking");
    reacquire_ = o.choice("kind") == "reacquire";
  }

  Task<AcquireOutcome> acquire(Nanos wait) override {
    // uuid.uuid1().hex: 32 hex digits.
    const std::string token = random_hex(env_, 16);
    const Nanos stop_trying_at = env_.now_mono() + wait;
    constexpr int64_t kTriesMax = 100'000'000;  // blocking_timeout bounds it first
    for (int64_t i = 0; i < kTriesMax; ++i) {
      Argv set = timeout_ms_ > 0 ? make_argv("SET", key_, token, "NX", "PX", ms_string(timeout_ms_))
                                 : make_argv("SET", key_, token, "NX");
      Reply r = co_await env_.node(0).call(std::move(set), kNoTimeout);
      if (r.is_ok()) {
        token_ = token;
        co_return AcquireOutcome::Acquired;
      }
      if (r.type == Reply::Type::Timeout) co_return AcquireOutcome::Unknown;
      if (r.type == Reply::Type::IoError || r.is_error()) co_return AcquireOutcome::NotAcquired;  // raised
      if (!blocking_) break;
      if (env_.now_mono() + sleep_ > stop_trying_at) break;
      co_await env_.sleep(sleep_);
    }
    co_return AcquireOutcome::NotAcquired;
  }

  Task<ReleaseOutcome> release() override {
    const std::string expected = std::exchange(token_, "");
    if (expected.empty()) co_return ReleaseOutcome::NotOwner;  // LockError: unlocked lock
    Argv eval = make_argv("EVAL", script("redis_py_release"), "1", key_, expected);
    Reply r = co_await env_.node(0).call(std::move(eval), kNoTimeout);
    if (r.is_integer(1)) co_return ReleaseOutcome::Released;
    co_return r.type == Reply::Type::Integer ? ReleaseOutcome::NotOwner : ReleaseOutcome::Unknown;
  }

  bool can_extend() const override { return true; }

  Task<ExtendOutcome> extend() override {
    if (token_.empty() || timeout_ms_ <= 0) co_return ExtendOutcome::NotExtended;  // LockError
    const std::string ms = ms_string(timeout_ms_);
    Argv eval = reacquire_ ? make_argv("EVAL", script("redis_py_reacquire"), "1", key_, token_, ms)
                           : make_argv("EVAL", script("redis_py_extend"), "1", key_, token_, ms, "0");
    Reply r = co_await env_.node(0).call(std::move(eval), kNoTimeout);
    if (r.is_integer(1)) co_return ExtendOutcome::Extended;
    co_return r.type == Reply::Type::Integer ? ExtendOutcome::NotExtended : ExtendOutcome::Unknown;
  }

  const std::string& token() const override { return token_; }

 private:
  Env& env_;
  std::string key_;
  int64_t timeout_ms_ = 0;  // 0: no TTL
  Nanos sleep_ = 100ms;
  bool blocking_ = true;
  bool reacquire_ = false;
  std::string token_;
};

}  // namespace

std::unique_ptr<ProfileLock> make_redis_py(const ProfileInfo& info, Env& env, const std::string& key,
                                           const nlohmann::json& options) {
  return std::make_unique<RedisPyLock>(info, env, key, options);
}

}  // namespace lockstep::profiles
