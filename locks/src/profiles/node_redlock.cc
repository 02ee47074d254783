// node-redlock (mike-marcacci/node-redlock): redlock.js at v4.2.0, src/index.ts at
// v5.0.0-beta.2 and at afe5cf9 (main, unreleased). Every client gets the same Lua script
// at once (no timeout of node-redlock's own, and ioredis sets none); elapsed time is
// Date.now(), the wall clock. ioredis resends a command after reconnecting.
//
// v4.2.0 waits for every server. An attempt succeeds when the script answered 1 on a
// quorum (N/2+1) and expiration = start + ttl - drift (drift = round(driftFactor*ttl)+2,
// start taken at this attempt) is still in the future; otherwise it unlocks everywhere
// and retries after retryDelay +- retryJitter, retryCount times (-1: forever). extend
// refuses a lock whose expiration has passed, then runs the extend script through the
// same attempt loop — including its unlock after a failed attempt, which deletes the
// keys this lock still held.
//
// v5 decides each attempt at a quorum of votes either way (a reply equal to the number
// of resources votes for, anything else against; an even split never decides) and does
// not release between attempts. beta.2 takes `start` before the first attempt and never
// checks that the expiration is still ahead (#169, #296): a lock that needed retries is
// handed out already expired in the client's eyes, and using() then cannot extend it
// (#283). afe5cf9 takes start at the successful attempt (PR #274, #276). Release retries
// until a quorum deleted the value, and fails on a lock that expired (#168). using()
// extends `automaticExtensionThreshold` before expiration, retries at once while the
// lock is unexpired, and otherwise sets the abort signal the routine should check.
#include <cmath>

#include "common.h"
#include "lockstep/scripts.h"

namespace lockstep::profiles {
namespace {

class NodeRedlock : public ProfileLock {
 public:
  NodeRedlock(const ProfileInfo& info, Env& env, std::string key, const nlohmann::json& options)
      : env_(env), key_(std::move(key)), v5_(info.version != "4.2.0"), start_per_attempt_(info.version == "afe5cf9") {
    ProfileOptions o(info, options);
    ttl_ms_ = o.integer(v5_ ? "duration" : "ttl");
    drift_factor_ = o.number("driftFactor");
    retry_count_ = o.integer("retryCount");
    retry_delay_ms_ = o.integer("retryDelay");
    retry_jitter_ms_ = o.integer("retryJitter");
    if (v5_) {
      using_ = o.choice("kind") == "using";
      threshold_ms_ = o.integer("automaticExtensionThreshold");
    }
  }

  ~NodeRedlock() override { stop_extending(); }

  Task<AcquireOutcome> acquire(Nanos) override {
    value_ = random_hex(env_, 16);
    const Attempts a = co_await attempt_loop(script("node_redlock_acquire"), ttl_ms_);
    if (!a.ok) {
      // v5 releases any partial state once (retryCount 0, errors ignored); v4 already
      // unlocked after each attempt.
      if (v5_) co_await attempt_once(release_argv());
      co_return AcquireOutcome::NotAcquired;
    }
    expiration_ms_ = a.start_ms + ttl_ms_ - drift_ms();
    if (using_) start_extending();
    co_return AcquireOutcome::Acquired;
  }

  Task<ReleaseOutcome> release() override {
    if (using_) co_await stop_extending_and_wait();
    expiration_ms_ = 0;  // "immediately invalidate the lock"
    if (!v5_) {
      auto round = co_await on_all_nodes(env_, same_for_all(env_, release_argv()), kNoTimeout, nullptr, ioredis_call);
      const int votes = count_for(*round);
      if (votes >= quorum()) co_return ReleaseOutcome::Released;
      co_return unanswered(*round) ? ReleaseOutcome::Unknown : ReleaseOutcome::NotOwner;
    }
    const Attempts a = co_await attempt_loop_argv(release_argv());
    co_return a.ok ? ReleaseOutcome::Released : ReleaseOutcome::NotOwner;
  }

  bool can_extend() const override { return !using_; }
  Task<ExtendOutcome> extend() override { co_return co_await extend_once(); }
  bool aborted() const override { return aborted_; }
  const std::string& token() const override { return value_; }

 private:
  struct Attempts {
    bool ok = false;
    int64_t start_ms = 0;  // when the decisive (v4, afe5cf9) or first (beta.2) attempt began
  };

  int quorum() const { return env_.node_count() / 2 + 1; }
  int64_t drift_ms() const { return std::llround(drift_factor_ * static_cast<double>(ttl_ms_)) + 2; }
  Argv release_argv() const { return make_argv("EVAL", script("node_redlock_release"), "1", key_, value_); }
  Argv script_argv(const std::string& body, int64_t ttl) const {
    return make_argv("EVAL", body, "1", key_, value_, ms_string(ttl));
  }

  static bool votes_for(const Reply& r) {
    return (r.type == Reply::Type::Integer && r.integer == 1) || (r.type == Reply::Type::Bulk && r.str == "1");
  }
  static int count_for(const Round& round) {
    int n = 0;
    for (const auto& r : round.replies) n += r && votes_for(*r);
    return n;
  }
  static bool unanswered(const Round& round) {
    for (const auto& r : round.replies)
      if (!r || r->is_unknown()) return true;
    return false;
  }

  // Math.max(0, retryDelay + Math.floor((Math.random() * 2 - 1) * retryJitter)).
  int64_t retry_pause_ms() {
    const int64_t jitter = retry_jitter_ms_ > 0 ? random_between(env_, -retry_jitter_ms_, retry_jitter_ms_ - 1) : 0;
    return std::max<int64_t>(0, retry_delay_ms_ + jitter);
  }

  // One v5 attempt: resolved by the first quorum of votes for or against. An even split
  // with every vote in decides nothing, and the promise never resolves (code obs.).
  Task<bool> attempt_once(Argv argv) {
    const int q = quorum();
    auto round = co_await on_all_nodes(env_, same_for_all(env_, argv), kNoTimeout, [q](const Round& r) {
      int yes = 0, no = 0;
      for (const auto& x : r.replies) {
        if (!x) continue;
        (votes_for(*x) ? yes : no) += 1;
      }
      return yes >= q || no >= q;
    }, ioredis_call);
    co_return count_for(*round) >= q;
  }

  Task<Attempts> attempt_loop(const std::string& body, int64_t ttl) {
    return attempt_loop_argv(script_argv(body, ttl));
  }

  // v4: _lock's attempt loop (all replies, validity per attempt, unlock between
  // attempts). v5: _execute (quorum-resolved attempts, no unlock between them).
  Task<Attempts> attempt_loop_argv(Argv argv) {
    constexpr int64_t kAttemptsMax = 10'000'000;  // retryCount -1 is "forever": bounded by the run
    const int64_t first_start = wall_ms(env_);
    for (int64_t attempts = 1; attempts <= kAttemptsMax; ++attempts) {
      const int64_t start = wall_ms(env_);
      bool ok;
      if (v5_) {
        ok = co_await attempt_once(argv);
      } else {
        auto round = co_await on_all_nodes(env_, same_for_all(env_, argv), kNoTimeout, nullptr, ioredis_call);
        ok = count_for(*round) >= quorum() && start + ttl_ms_ - drift_ms() > wall_ms(env_);
        if (!ok) co_await on_all_nodes(env_, same_for_all(env_, release_argv()), kNoTimeout, nullptr, ioredis_call);
      }
      if (ok) co_return Attempts{true, v5_ && !start_per_attempt_ ? first_start : start};
      const bool more = v5_ ? (retry_count_ == -1 || attempts < retry_count_ + 1)
                            : (retry_count_ == -1 || attempts <= retry_count_);
      if (!more) break;
      co_await env_.sleep(Millis(retry_pause_ms()));
    }
    co_return Attempts{};
  }

  Task<ExtendOutcome> extend_once() {
    const int64_t called_ms = wall_ms(env_);
    if (expiration_ms_ < wall_ms(env_)) co_return ExtendOutcome::NotExtended;  // "already expired"
    const Attempts a = co_await attempt_loop(script("node_redlock_extend"), ttl_ms_);
    if (!a.ok) co_return ExtendOutcome::NotExtended;
    // beta.2 measures from the extend call, afe5cf9 from the attempt, v4 from the attempt.
    const int64_t from = v5_ && !start_per_attempt_ ? called_ms : a.start_ms;
    expiration_ms_ = from + ttl_ms_ - drift_ms();
    co_return ExtendOutcome::Extended;
  }

  // using(): the extension timer and its handling of failures, as a background activity.
  struct Extender {
    bool stopped = false;
    bool in_flight = false;
    Gate idle;  // opened when an in-flight extension ends after stop
  };

  void start_extending() {
    stop_extending();
    ext_ = std::make_shared<Extender>();
    env_.spawn(extend_automatically(ext_));
  }
  void stop_extending() {
    if (ext_) ext_->stopped = true;
  }
  Task<void> stop_extending_and_wait() {
    auto ext = ext_;
    if (!ext) co_return;
    ext->stopped = true;
    if (ext->in_flight) co_await ext->idle.wait();
    ext_.reset();
  }

  Task<void> extend_automatically(std::shared_ptr<Extender> ext) {
    constexpr int kExtensionsMax = 1'000'000;
    bool queued = true;  // false: retrying at once after a failure
    for (int i = 0; i < kExtensionsMax && !ext->stopped; ++i) {
      if (queued) co_await env_.sleep(Millis(std::max<int64_t>(0, expiration_ms_ - wall_ms(env_) - threshold_ms_)));
      if (ext->stopped) break;
      ext->in_flight = true;
      note_background(true);
      const ExtendOutcome o = co_await extend_once();
      ext->in_flight = false;
      if (o == ExtendOutcome::Extended) {
        note_background(false, o, "extended");
        queued = true;
      } else if (expiration_ms_ > wall_ms(env_)) {
        note_background(false, o, "retrying at once: the lock has not expired");
        queued = false;
      } else {
        note_background(false, o, "abort signal set");
        aborted_ = true;
        break;
      }
      if (ext->stopped) break;
    }
    if (ext->stopped) ext->idle.open();
  }

  Env& env_;
  std::string key_;
  bool v5_;
  bool start_per_attempt_;
  bool using_ = false;
  int64_t ttl_ms_ = 1000;
  double drift_factor_ = 0.01;
  int64_t retry_count_ = 10;
  int64_t retry_delay_ms_ = 200;
  int64_t retry_jitter_ms_ = 100;
  int64_t threshold_ms_ = 500;
  int64_t expiration_ms_ = 0;
  bool aborted_ = false;
  std::string value_;
  std::shared_ptr<Extender> ext_;
};

}  // namespace

std::unique_ptr<ProfileLock> make_node_redlock(const ProfileInfo& info, Env& env, const std::string& key,
                                               const nlohmann::json& options) {
  return std::make_unique<NodeRedlock>(info, env, key, options);
}

}  // namespace lockstep::profiles
