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
//
// 2.10.6, the last 2.x release, differs in three ways (its lock.py):
// - `with lock:` ran its body whatever acquire() returned (#621): __enter__ called
//   acquire(blocking=True), which still gives up after blocking_timeout and returns False,
//   and went on; __exit__'s release() then raised "Cannot release an unlocked lock".
//   3.0.0 raises LockError("Unable to acquire lock within the time specified") instead.
// - redis.lock() returns a LuaLock (SETNX and PEXPIRE in one script) on a server with
//   scripting, but the plain Lock class, built by hand or on a server without EVAL, sent
//   SETNX and then PEXPIRE as two commands (#554, #818): a client that stops between them
//   leaves a key with no TTL. Its release and extend are WATCH/MULTI/EXEC transactions.
//   3.0.0 keeps one class and one `SET NX PX`.
// - blocking_timeout was measured with time.time(), checked after a failed try, before
//   the sleep.
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
    v2_ = info.version == "2.10.6";
    if (v2_) {
      body_without_lock_ = o.choice("usage") == "with";
      two_commands_ = o.choice("class") == "Lock";
    } else {
      reacquire_ = o.choice("kind") == "reacquire";
    }
  }

  Task<AcquireOutcome> acquire(Nanos wait) override {
    // uuid.uuid1().hex: 32 hex digits.
    const std::string token = random_hex(env_, 16);
    if (v2_) {
      const AcquireOutcome got = co_await acquire_v2(token, wall_ms(env_) + to_ms(wait));
      // `with lock:` in 2.10.6: a False from acquire() runs the body all the same.
      if (got == AcquireOutcome::NotAcquired && body_without_lock_) co_return AcquireOutcome::Acquired;
      co_return got;
    }
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
    if (two_commands_) {
      const TxOutcome t = co_await owned_transaction(expected, make_argv("DEL", key_));
      if (t == TxOutcome::Done) co_return ReleaseOutcome::Released;
      co_return t == TxOutcome::NotOwned ? ReleaseOutcome::NotOwner : ReleaseOutcome::Unknown;
    }
    Argv eval = make_argv("EVAL", script("redis_py_release"), "1", key_, expected);
    Reply r = co_await env_.node(0).call(std::move(eval), kNoTimeout);
    if (r.is_integer(1)) co_return ReleaseOutcome::Released;
    co_return r.type == Reply::Type::Integer ? ReleaseOutcome::NotOwner : ReleaseOutcome::Unknown;
  }

  bool can_extend() const override { return true; }

  Task<ExtendOutcome> extend() override {
    if (token_.empty() || timeout_ms_ <= 0) co_return ExtendOutcome::NotExtended;  // LockError
    const std::string ms = ms_string(timeout_ms_);
    if (two_commands_) {
      // Lock.do_extend: PTTL inside the WATCH, then PEXPIRE to what was left plus more.
      const TxOutcome t = co_await owned_transaction(token_, {}, timeout_ms_);
      if (t == TxOutcome::Done) co_return ExtendOutcome::Extended;
      co_return t == TxOutcome::NotOwned ? ExtendOutcome::NotExtended : ExtendOutcome::Unknown;
    }
    Argv eval = reacquire_ ? make_argv("EVAL", script("redis_py_reacquire"), "1", key_, token_, ms)
                           : make_argv("EVAL", script("redis_py_extend"), "1", key_, token_, ms, "0");
    Reply r = co_await env_.node(0).call(std::move(eval), kNoTimeout);
    if (r.is_integer(1)) co_return ExtendOutcome::Extended;
    co_return r.type == Reply::Type::Integer ? ExtendOutcome::NotExtended : ExtendOutcome::Unknown;
  }

  const std::string& token() const override { return token_; }

 private:
  // 2.10.6's acquire(): do_acquire, then give up once time.time() has passed the deadline.
  Task<AcquireOutcome> acquire_v2(const std::string& token, int64_t stop_trying_at_ms) {
    constexpr int64_t kTriesMax = 100'000'000;  // blocking_timeout bounds it first
    for (int64_t i = 0; i < kTriesMax; ++i) {
      Reply r = co_await do_acquire_v2(token);
      if (r.is_integer(1)) {
        token_ = token;
        co_return AcquireOutcome::Acquired;
      }
      if (r.type == Reply::Type::Timeout) co_return AcquireOutcome::Unknown;
      if (r.type == Reply::Type::IoError || r.is_error()) co_return AcquireOutcome::NotAcquired;  // raised
      if (!blocking_ || wall_ms(env_) > stop_trying_at_ms) break;
      co_await env_.sleep(sleep_);
    }
    co_return AcquireOutcome::NotAcquired;
  }

  // 1 when taken, 0 when held by another, or the error that was raised.
  Task<Reply> do_acquire_v2(const std::string& token) {
    const std::string ms = timeout_ms_ > 0 ? ms_string(timeout_ms_) : "";
    if (!two_commands_) {
      Argv eval = make_argv("EVAL", script("redis_py_acquire_v2"), "1", key_, token, ms);
      co_return co_await env_.node(0).call(std::move(eval), kNoTimeout);
    }
    Reply r = co_await env_.node(0).call(make_argv("SETNX", key_, token), kNoTimeout);
    if (!r.is_integer(1) || ms.empty()) co_return r;
    // The window of #554: the key exists, without a TTL, until this command lands.
    Reply e = co_await env_.node(0).call(make_argv("PEXPIRE", key_, ms), kNoTimeout);
    if (e.is_unknown() || e.is_error()) co_return e;
    co_return r;
  }

  enum class TxOutcome { Done, NotOwned, Unknown };

  // Lock.do_release / do_extend: WATCH the key, GET it, and when it still holds `token`
  // run `write` (or, with `extend_ms`, PEXPIRE to PTTL + extend_ms) in MULTI/EXEC. A
  // release goes through redis.transaction(), which starts again when EXEC is aborted by
  // a write to the key; an extend's aborted EXEC is a LockError.
  Task<TxOutcome> owned_transaction(const std::string& token, Argv write, int64_t extend_ms = 0) {
    constexpr int kWatchRetriesMax = 1000;
    for (int i = 0; i < kWatchRetriesMax; ++i) {
      Reply w = co_await env_.node(0).call(make_argv("WATCH", key_), kNoTimeout);
      if (!w.is_ok()) co_return TxOutcome::Unknown;
      Reply g = co_await env_.node(0).call(make_argv("GET", key_), kNoTimeout);
      if (g.is_unknown() || g.is_error()) co_return TxOutcome::Unknown;
      if (g.is_nil() || g.str != token) {
        Reply u = co_await env_.node(0).call(make_argv("UNWATCH"), kNoTimeout);
        co_return u.is_unknown() ? TxOutcome::Unknown : TxOutcome::NotOwned;
      }
      Argv cmd = std::move(write);
      if (extend_ms > 0) {
        Reply t = co_await env_.node(0).call(make_argv("PTTL", key_), kNoTimeout);
        if (t.type != Reply::Type::Integer) co_return TxOutcome::Unknown;
        cmd = make_argv("PEXPIRE", key_, ms_string(std::max<int64_t>(0, t.integer) + extend_ms));
      }
      Reply m = co_await env_.node(0).call(make_argv("MULTI"), kNoTimeout);
      if (!m.is_ok()) co_return TxOutcome::Unknown;
      Reply q = co_await env_.node(0).call(cmd, kNoTimeout);
      if (q.is_unknown()) co_return TxOutcome::Unknown;
      Reply x = co_await env_.node(0).call(make_argv("EXEC"), kNoTimeout);
      if (x.is_unknown() || x.is_error()) co_return TxOutcome::Unknown;
      if (!x.is_nil()) {
        // PEXPIRE answers 0 for a key that is gone.
        const bool applied = x.elements.empty() || !x.elements[0].is_integer(0);
        co_return applied ? TxOutcome::Done : TxOutcome::NotOwned;
      }
      if (extend_ms > 0) co_return TxOutcome::NotOwned;  // WatchError: someone else took it
      write = std::move(cmd);
    }
    co_return TxOutcome::Unknown;
  }

  Env& env_;
  std::string key_;
  int64_t timeout_ms_ = 0;  // 0: no TTL
  Nanos sleep_ = 100ms;
  bool blocking_ = true;
  bool reacquire_ = false;
  bool v2_ = false;
  bool body_without_lock_ = false;  // 2.10.6 used as `with lock:`
  bool two_commands_ = false;       // 2.10.6's Lock class: SETNX, then PEXPIRE
  std::string token_;
};

}  // namespace

std::unique_ptr<ProfileLock> make_redis_py(const ProfileInfo& info, Env& env, const std::string& key,
                                           const nlohmann::json& options) {
  return std::make_unique<RedisPyLock>(info, env, key, options);
}

}  // namespace lockstep::profiles
