// redsync (go-redsync/redsync, mutex.go and redsync.go), with the go-redis adapter of the
// README's example.
//
// Both versions: a goroutine per pool sends SET key value NX with the expiry (go-redis's
// SetNX writes EX for whole seconds, PX otherwise, and a bare SETNX for 0); the round
// waits for every pool; the lock is held when n >= len(pools)/2+1 and now is before
// until = start + expiry - expiry*driftFactor, both read from Go's monotonic clock.
// Otherwise the value is deleted on every pool and, after the retry delay, tried again,
// `tries` times in all. Unlock and Extend run a script on every pool and need a quorum.
// go-redis's 3 s read timeout bounds every command that sets no deadline of its own, and
// go-redis sends a command again after a broken connection (MaxRetries 3).
//
// 4.0.3: the retry delay is 500 ms; an attempt with no success and any error ends the
// Lock at once; release and touch compare the script's int64 reply with an untyped 0 /
// the string "ERR", which is never equal, so every answered Unlock and Extend counts as
// a success (fixed in 4.0.4, PR #61) — and Extend neither checks validity nor moves
// `until` (fixed in 4.4.0, PR #71).
// 4.3.0: 4.0.3 with the replies compared as int64 (PR #61) and the delay of 4.17.0;
// Extend still counts a quorum of touched keys as success however long the round took,
// and leaves `until` where Lock put it (fixed in 4.4.0, PR #71).
// 4.12.0: 4.17.0's code, except that a touch that fails on one pool deletes the lock on
// every pool before its goroutine returns (fixed in 4.12.1, PR #151), and TryLock's last
// attempt is tested against WithTries instead of its single try (fixed in 4.13.0, PR
// #156: TryLock answers ErrFailed where it should return the Redis error; lockstep's
// workloads call Lock, and either error means "not acquired", so nothing shows it).
// 4.17.0: the delay is rand.Intn(200)+50 ms; each acquire round (and the release after
// a failed one) has a deadline of expiry*timeoutFactor; Unlock answers -1 for a key that
// has gone; Extend needs a quorum and a validity that is still positive; failFast
// decides a round at quorum; setNXOnExtend re-SETs a key that expired.
#include <algorithm>

#include "common.h"
#include "lockstep/scripts.h"

namespace lockstep::profiles {
namespace {

constexpr Nanos kGoRedisReadTimeout = 3s;

class Redsync : public ProfileLock {
 public:
  Redsync(const ProfileInfo& info, Env& env, std::string key, const nlohmann::json& options)
      : env_(env),
        key_(std::move(key)),
        int64_replies_(info.version != "4.0.3"),
        v4_12_(info.version == "4.12.0" || info.version == "4.17.0"),
        touch_error_releases_(info.version == "4.12.0") {
    ProfileOptions o(info, options);
    expiry_ms_ = o.integer("expiry");
    tries_ = o.integer("tries");
    drift_factor_ = o.number("driftFactor");
    retry_delay_ms_ = o.is_null("retryDelay") ? -1 : static_cast<int64_t>(o.number("retryDelay"));
    if (v4_12_) {
      timeout_factor_ = o.number("timeoutFactor");
      fail_fast_ = o.boolean("failFast");
      setnx_on_extend_ = o.boolean("setNXOnExtend");
    }
  }

  Task<AcquireOutcome> acquire(Nanos) override {
    // genValue: 16 random bytes in base64, a new value for every Lock call.
    const std::string value = random_base64(env_, 16);
    for (int64_t i = 0; i < tries_; ++i) {
      if (i != 0) co_await env_.sleep(Millis(delay_ms()));
      const Nanos start = env_.now_mono();
      const Nanos deadline = v4_12_ ? round_deadline() : kGoRedisReadTimeout;
      auto round =
          co_await on_all_nodes(env_, same_for_all(env_, set_argv(value)), deadline, decider(true), goredis_call);
      const Tally t = tally(*round, [](const Reply& r) { return r.is_ok() || r.is_integer(1); });
      const Nanos now = env_.now_mono();
      const Nanos until = start + Millis(expiry_ms_) - drift();
      if (t.ok >= quorum() && now < until) {
        value_ = value;
        co_return AcquireOutcome::Acquired;
      }
      // Up to 4.7.0 the error ends Lock at once when nothing succeeded and some pool failed.
      if (!v4_12_ && t.ok == 0 && t.errors > 0) co_return AcquireOutcome::NotAcquired;
      co_await on_all_nodes(env_, same_for_all(env_, delete_argv(value)), deadline, decider(false), goredis_call);
    }
    co_return AcquireOutcome::NotAcquired;
  }

  Task<ReleaseOutcome> release() override {
    auto round = co_await on_all_nodes(env_, same_for_all(env_, delete_argv(value_)), kGoRedisReadTimeout,
                                       decider(false), goredis_call);
    // 4.0.3's `status != 0` compares an int64 with an int: every reply counts.
    auto deleted = [](const Reply& r) { return r.type == Reply::Type::Integer && r.integer > 0; };
    auto any_integer = [](const Reply& r) { return r.type == Reply::Type::Integer; };
    const Tally t = int64_replies_ ? tally(*round, deleted) : tally(*round, any_integer);
    if (t.ok >= quorum()) co_return ReleaseOutcome::Released;
    co_return t.errors > 0 ? ReleaseOutcome::Unknown : ReleaseOutcome::NotOwner;
  }

  bool can_extend() const override { return true; }

  Task<ExtendOutcome> extend() override {
    const Nanos start = env_.now_mono();
    const char* name = v4_12_ && setnx_on_extend_ ? "redsync_touch_setnx" : "redsync_touch";
    Argv touch = make_argv("EVAL", script(name), "1", key_, value_, ms_string(expiry_ms_));
    std::shared_ptr<Round> round;
    if (touch_error_releases_) {
      round = co_await touch_releasing_on_error(touch);
    } else {
      round =
          co_await on_all_nodes(env_, same_for_all(env_, touch), kGoRedisReadTimeout, decider(false), goredis_call);
    }
    // 4.0.3's `status != "ERR"` holds for any reply at all.
    auto touched = [](const Reply& r) { return r.type == Reply::Type::Integer && r.integer != 0; };
    auto answered = [](const Reply& r) { return !r.is_error(); };
    const Tally t = int64_replies_ ? tally(*round, touched) : tally(*round, answered);
    if (t.ok < quorum()) co_return t.errors > 0 ? ExtendOutcome::Unknown : ExtendOutcome::NotExtended;
    // Before 4.4.0 a quorum is enough, however long the round took (PR #71).
    if (!v4_12_) co_return ExtendOutcome::Extended;
    const Nanos now = env_.now_mono();
    co_return now < start + Millis(expiry_ms_) - drift() ? ExtendOutcome::Extended : ExtendOutcome::NotExtended;
  }

  const std::string& token() const override { return value_; }

 private:
  struct Tally {
    int ok = 0;
    int errors = 0;  // no reply, or an error reply
  };

  template <typename F>
  static Tally tally(const Round& round, F ok) {
    Tally t;
    for (const auto& r : round.replies) {
      if (!r) continue;
      if (r->is_unknown() || r->is_error()) {
        ++t.errors;
      } else if (ok(*r)) {
        ++t.ok;
      }
    }
    return t;
  }

  // 4.12.0's touch: the goroutine of a pool whose EVAL failed first releases the lock on
  // every pool (deadline expiry*timeoutFactor), then reports its failure, while the other
  // pools' touches count as usual, and a touch that comes after that release finds no
  // key. Without failFast, Extend waits for every goroutine, so it answers once the lock
  // is gone; with failFast it would answer at a quorum of touches and the release would
  // finish after it, which this round does not model (it waits for every pool).
  Task<std::shared_ptr<Round>> touch_releasing_on_error(const Argv& touch) {
    std::vector<Task<Reply>> calls;
    for (int i = 0; i < env_.node_count(); ++i) calls.push_back(touch_one(i, touch));
    std::vector<Reply> replies = co_await when_all(std::move(calls));
    auto round = std::make_shared<Round>();
    for (auto& r : replies) round->replies.emplace_back(std::move(r));
    round->answered = static_cast<int>(round->replies.size());
    co_return round;
  }
  Task<Reply> touch_one(int node, Argv touch) {
    Reply r = co_await goredis_call(env_, node, std::move(touch), kGoRedisReadTimeout);
    if (r.is_unknown() || r.is_error()) {
      auto cleanup = co_await on_all_nodes(env_, same_for_all(env_, delete_argv(value_)), round_deadline(),
                                           decider(false), goredis_call);
      (void)cleanup;
    }
    co_return r;
  }

  int quorum() const { return env_.node_count() / 2 + 1; }
  Nanos drift() const { return Nanos(static_cast<int64_t>(static_cast<double>(expiry_ms_) * 1e6 * drift_factor_)); }
  Nanos round_deadline() const {
    const auto d = Nanos(static_cast<int64_t>(static_cast<double>(expiry_ms_) * 1e6 * timeout_factor_));
    return std::clamp(d, Nanos(1'000'000), kGoRedisReadTimeout);
  }
  int64_t delay_ms() {
    if (retry_delay_ms_ >= 0) return retry_delay_ms_;
    return random_between(env_, 50, 249);  // rand.Intn(250-50)+50
  }

  // failFast ends an acquire round at a quorum either way; otherwise every pool answers.
  std::function<bool(const Round&)> decider(bool acquiring) const {
    if (!fail_fast_) return {};
    const int q = quorum();
    return [q, acquiring](const Round& r) {
      int ok = 0, taken = 0;
      for (const auto& x : r.replies) {
        if (!x) continue;
        if (x->is_ok() || (x->type == Reply::Type::Integer && x->integer > 0)) ++ok;
        else if (acquiring && x->is_nil()) ++taken;
      }
      return ok >= q || taken >= q || r.all_in();
    };
  }

  Argv set_argv(const std::string& value) const {
    if (expiry_ms_ == 0) return make_argv("SETNX", key_, value);
    if (expiry_ms_ % 1000 == 0) return make_argv("SET", key_, value, "EX", std::to_string(expiry_ms_ / 1000), "NX");
    return make_argv("SET", key_, value, "PX", ms_string(expiry_ms_), "NX");
  }
  Argv delete_argv(const std::string& value) const {
    return make_argv("EVAL", script(v4_12_ ? "redsync_delete" : "redsync_delete_v4_0"), "1", key_, value);
  }

  Env& env_;
  std::string key_;
  bool int64_replies_;         // PR #61 (4.0.4)
  bool v4_12_;                 // timeoutFactor, failFast, setNXOnExtend; Extend checks validity
  bool touch_error_releases_;  // 4.12.0 only (PR #151)
  int64_t expiry_ms_ = 8000;
  int64_t tries_ = 32;
  double drift_factor_ = 0.01;
  int64_t retry_delay_ms_ = -1;
  double timeout_factor_ = 0.05;
  bool fail_fast_ = false;
  bool setnx_on_extend_ = false;
  std::string value_;
};

}  // namespace

std::unique_ptr<ProfileLock> make_redsync(const ProfileInfo& info, Env& env, const std::string& key,
                                          const nlohmann::json& options) {
  return std::make_unique<Redsync>(info, env, key, options);
}

}  // namespace lockstep::profiles
