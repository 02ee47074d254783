// Redisson's RLock and RFairLock (redisson/redisson: RedissonLock, RedissonBaseLock,
// RedissonFairLock, command/RedisExecutor, and renewal/ in 3.44.0), single-server mode:
// every script is a plain EVAL (no WAIT batch, which only replicated topologies add).
//
// tryLock(waitTime, leaseTime): the lock script (exists or our field: HINCRBY + PEXPIRE,
// else the PTTL); then subscribe to the unlock channel and retry, each time waiting on
// the channel at most min(ttl, what is left of the wait); the wait is counted down with
// System.currentTimeMillis(), the wall clock. leaseTime <= 0 takes lockWatchdogTimeout
// and starts the watchdog, which renews every third of it while the owner field exists.
//
// 2.3.0 and 3.11.x: as 3.23.0, and a leaseTime other than -1 is used as given, so a
// negative one (3.11.0's MultiLock with wait -1, #2172) PEXPIREs the new key away at
// once; 2.3.0's watchdog renews with a plain PEXPIRE of the key.
// 3.23.0: acquire and unlock are resent after a response timeout, and the unlock script
// has no latch, so a resent unlock counts down a reentrant hold twice (#4871).
// 3.43.0: the unlock keeps a latch key per request and neither acquire nor unlock is
// resent (3.37.0). 3.23.0 and 3.43.0: one failed renewal (after its resends) ends the
// watchdog for good (#2515, #3194). 3.44.0: the renewal task logs the error and runs
// again a third of the timeout later (#6303).
// RFairLock (3.43.0, 3.44.0): waiters queue in a list with give-up times from each
// caller's own clock; a caller whose clock runs ahead drops waiters from the queue.
//
// Version::Recipe (lockstep's `redisson*` algorithms) sends every command once, retries a
// refused connection after the scenario's retry delay instead of throwing, bounds tryLock
// by retry.count_max, and adds RFencedLock (the token counted by the lock script, so
// tokens follow the order of the grants), RReadWriteLock's two sides and WAIT for
// replicas after a grant.
#include "redisson.h"

#include "lockstep/scripts.h"

namespace lockstep::profiles::redisson {

Task<Reply> execute(Env& env, int node, Argv argv, const Config& c, bool resend) {
  for (int attempt = 0;; ++attempt) {
    Argv copy = argv;
    Reply r = co_await env.node(node).call(std::move(copy), c.timeout);
    const bool again = r.type == Reply::Type::IoError || (r.type == Reply::Type::Timeout && resend);
    if (!again || attempt >= c.retry_attempts) co_return r;
    co_await env.sleep(c.retry_interval);
  }
}

struct RLock::Watchdog {
  Env& env;
  int node;
  std::string key;
  std::string field;
  Config c;
  int64_t lease_ms;
  std::function<void(const ExtendNote&)> note;
  bool stopped = false;

  void tell(bool begin, ExtendOutcome o = ExtendOutcome::Extended, std::string detail = "") const {
    if (note) note(ExtendNote{begin, o, std::move(detail), node});
  }
};

namespace {

// A helper key of the lock `name` in the lock's cluster slot, as Redisson names it: the
// name becomes the hash tag, unless it already holds one (a '{'), which then decides the
// slot for both. Braces around a tagged name would move the helper key to another slot,
// and the lock's scripts would fail with CROSSSLOT on a cluster.
std::string prefix_name(const std::string& prefix, const std::string& name) {
  if (name.find('{') != std::string::npos) return prefix + ":" + name;
  return prefix + ":{" + name + "}";
}

Task<void> run_watchdog(std::shared_ptr<RLock::Watchdog> d) {
  constexpr int kRenewalsMax = 1'000'000;
  const bool batched = d->c.version == Version::V3_44;
  // 2.3.0's renewal is expireAsync: a plain PEXPIRE of the key, whoever holds it.
  const bool plain = d->c.version == Version::V2_3;
  for (int i = 0; i < kRenewalsMax; ++i) {
    co_await d->env.sleep(Millis(std::max<int64_t>(d->lease_ms / 3, 1)));
    if (d->stopped) co_return;
    d->tell(true);
    const std::string lease = ms_string(d->lease_ms);
    Argv renew = batched ? make_argv("EVAL", script("redisson_renew_batch"), "1", d->key, lease, d->field)
                 : plain ? make_argv("PEXPIRE", d->key, lease)
                         : make_argv("EVAL", script("reentrant_renew"), "1", d->key, lease, d->field);
    Reply r = co_await execute(d->env, d->node, std::move(renew), d->c, true);
    if (d->stopped) {
      d->tell(false, r.is_unknown() ? ExtendOutcome::Unknown : ExtendOutcome::Extended, "unlocked meanwhile");
      co_return;
    }
    if (r.is_unknown() || r.is_error()) {
      if (!batched) {
        d->tell(false, ExtendOutcome::Unknown, "renewal failed: the watchdog stops (until unlock)");
        co_return;
      }
      d->tell(false, ExtendOutcome::Unknown, "renewal failed: logged, rescheduled");
      continue;
    }
    const bool renewed = batched ? (r.type == Reply::Type::Array && !r.elements.empty() && r.elements[0].is_integer(1))
                                 : r.is_integer(1);
    if (!renewed) {
      d->tell(false, ExtendOutcome::NotExtended, "lock gone: renewal cancelled");
      co_return;
    }
    d->tell(false, ExtendOutcome::Extended, "renewed");
  }
}

// The lock command failed: tryLock throws. A response timeout leaves the outcome unknown.
AcquireOutcome thrown(const Reply& r, bool* timed_out) {
  if (timed_out) *timed_out = r.type == Reply::Type::Timeout;
  return r.type == Reply::Type::Timeout ? AcquireOutcome::Unknown : AcquireOutcome::NotAcquired;
}

Task<void> fire_and_forget(Env& env, int node, Argv argv, Nanos timeout) {
  co_await env.node(node).call(std::move(argv), timeout);
}

}  // namespace

RLock::RLock(Env& env, int node, std::string key, std::string owner, Config config)
    : env_(env), node_(node), key_(std::move(key)), owner_(std::move(owner)), c_(config),
      field_(c_.kind == Kind::Write ? owner_ + ":write" : owner_),
      channel_(prefix_name(c_.kind == Kind::Read || c_.kind == Kind::Write ? "redisson_rwlock"
                                                                           : "redisson_lock__channel",
                           key_)),
      queue_(prefix_name("redisson_lock_queue", key_)),
      timeouts_(prefix_name("redisson_lock_timeout", key_)),
      internal_lease_ms_(config.watchdog_ms) {}

RLock::~RLock() {
  if (dog_) dog_->stopped = true;
}

Task<Reply> RLock::try_acquire(int64_t wait_ms, int64_t lease_ms) {
  const std::string lease = ms_string(explicit_lease(c_.version, lease_ms) ? lease_ms : c_.watchdog_ms);
  const bool resend = resends_all(c_.version);
  const bool recipe = c_.version == Version::Recipe;
  Argv a;
  switch (c_.kind) {
    case Kind::Fair:
      a = recipe ? make_argv("EVAL", script("fair_lock"), "3", key_, queue_, timeouts_, lease, owner_,
                             ms_string(c_.fair_wait_ms), ms_string(wall_ms(env_)))
                 : make_argv("EVAL", script("redisson_fair_acquire"), "3", key_, queue_, timeouts_, lease, owner_,
                             ms_string(wait_ms), ms_string(wall_ms(env_)));
      break;
    case Kind::Fenced:
      a = make_argv("EVAL", script("fenced_lock"), "2", key_, prefix_name("redisson_lock_token", key_), lease,
                    owner_);
      break;
    case Kind::Read:
      a = make_argv("EVAL", script("rw_read_lock"), "1", key_, lease, field_, owner_ + ":write");
      break;
    case Kind::Write: a = make_argv("EVAL", script("rw_write_lock"), "1", key_, lease, field_); break;
    case Kind::Lock: a = make_argv("EVAL", script("reentrant_lock"), "1", key_, lease, owner_); break;
  }
  Reply r = co_await execute(env_, node_, std::move(a), c_, resend);
  co_return granted_or_ttl(std::move(r));
}

// The fenced script answers {-1, token} for a grant and {ttl, -1} otherwise; the others
// nil or the holder's ttl. Redisson reads the pair's first element only, -1 for a grant;
// here a holder's key without a TTL (PTTL -1 too) comes with token -1 and is no grant.
// A refused connection the recipe retries reads as its retry delay.
Reply RLock::granted_or_ttl(Reply r) {
  if (c_.refused_delay > Nanos(0) && r.type == Reply::Type::IoError) return Reply::integer_of(to_ms(c_.refused_delay));
  if (c_.kind != Kind::Fenced || r.type != Reply::Type::Array) return r;
  const bool pair = r.elements.size() == 2 && r.elements[0].type == Reply::Type::Integer &&
                    r.elements[1].type == Reply::Type::Integer;
  if (!pair) return Reply::error("ERR unexpected reply of the fenced lock script");
  if (r.elements[0].integer == -1 && r.elements[1].integer >= 0) {
    fence_ = r.elements[1].integer;
    return Reply::nil();
  }
  return Reply::integer_of(r.elements[0].integer);
}

Task<void> RLock::acquire_failed(int64_t wait_ms) {
  if (c_.kind != Kind::Fair) co_return;
  Argv a = c_.version == Version::Recipe
               ? make_argv("EVAL", script("fair_acquire_failed"), "3", key_, queue_, timeouts_, owner_,
                           ms_string(c_.fair_wait_ms))
               : make_argv("EVAL", script("redisson_fair_failed"), "2", queue_, timeouts_, owner_, ms_string(wait_ms));
  co_await execute(env_, node_, std::move(a), c_, false);
}

// After the script said yes: replica confirmation (the recipes' wait_replicas), watchdog.
Task<AcquireOutcome> RLock::granted(int64_t lease_ms) {
  bool confirmed = true;
  if (c_.wait_replicas > 0) {
    Argv wait = make_argv("WAIT", std::to_string(c_.wait_replicas),
                          std::to_string(std::max<int64_t>(to_ms(c_.wait_timeout), 1)));
    Reply r = co_await execute(env_, node_, std::move(wait), c_, false);
    confirmed = r.type == Reply::Type::Integer && r.integer >= c_.wait_replicas;
  }
  if (!confirmed) {
    Reply undone = co_await execute(env_, node_, unlock_argv(), c_, false);
    co_return AcquireOutcome::NotAcquired;
  }
  after_acquire(lease_ms);
  co_return AcquireOutcome::Acquired;
}

void RLock::after_acquire(int64_t lease_ms) {
  if (explicit_lease(c_.version, lease_ms)) {
    if (resends_all(c_.version)) internal_lease_ms_ = lease_ms;  // final from 3.24 on
    return;
  }
  if (renew_holds_++ > 0) return;  // the ExpirationEntry already renews for this thread
  dog_ = std::make_shared<Watchdog>(Watchdog{env_, node_, key_, field_, c_, c_.watchdog_ms, note_});
  env_.spawn(run_watchdog(dog_));
}

Task<AcquireOutcome> RLock::try_lock(int64_t wait_ms, int64_t lease_ms, bool* timed_out) {
  constexpr int kRoundsMax = 1'000'000;  // the wait budget ends it long before
  int64_t time = wait_ms;
  int64_t current = wall_ms(env_);
  Reply r = co_await try_acquire(wait_ms, lease_ms);
  if (r.is_nil()) co_return co_await granted(lease_ms);
  if (r.type != Reply::Type::Integer) co_return thrown(r, timed_out);
  time -= wall_ms(env_) - current;
  if (time <= 0) {
    co_await acquire_failed(wait_ms);
    co_return AcquireOutcome::NotAcquired;
  }
  current = wall_ms(env_);
  // Named first: GCC 12 destroys a temporary of a conditional inside co_await twice.
  std::string wake_channel = c_.kind == Kind::Fair ? channel_ + ":" + owner_ : channel_;
  std::unique_ptr<Subscription> sub = co_await env_.node(node_).subscribe(std::move(wake_channel));
  time -= wall_ms(env_) - current;
  const int rounds_max = std::min(kRoundsMax, c_.rounds_max);
  for (int round = 0; round < rounds_max && time > 0; ++round) {
    current = wall_ms(env_);
    r = co_await try_acquire(wait_ms, lease_ms);
    if (r.is_nil()) co_return co_await granted(lease_ms);
    if (r.type != Reply::Type::Integer) co_return thrown(r, timed_out);
    const int64_t ttl = r.integer;
    time -= wall_ms(env_) - current;
    if (time <= 0) break;
    current = wall_ms(env_);
    co_await sub->next(Millis(ttl >= 0 && ttl < time ? ttl : time));
    time -= wall_ms(env_) - current;
  }
  co_await acquire_failed(wait_ms);
  co_return AcquireOutcome::NotAcquired;
}

Argv RLock::unlock_argv() {
  const std::string lease = ms_string(internal_lease_ms_);
  switch (c_.kind) {
    case Kind::Read: return make_argv("EVAL", script("rw_read_unlock"), "2", key_, channel_, "0", field_);
    case Kind::Write: return make_argv("EVAL", script("rw_write_unlock"), "2", key_, channel_, "0", lease, field_);
    case Kind::Fair:
      if (c_.version != Version::Recipe) break;
      return make_argv("EVAL", script("fair_unlock"), "4", key_, queue_, timeouts_, channel_, "0", lease, owner_,
                       ms_string(wall_ms(env_)));
    default:
      if (c_.version == Version::Recipe || resends_all(c_.version))
        return make_argv("EVAL", script("reentrant_unlock"), "2", key_, channel_, "0", lease, owner_);
  }
  const std::string latch = prefix_name("redisson_unlock_latch", key_) + ":" + random_hex(env_, 16);
  const int64_t latch_ms = std::max<int64_t>(
      (to_ms(c_.timeout) + to_ms(c_.retry_interval)) * c_.retry_attempts, 1);
  if (c_.kind == Kind::Fair) {
    return make_argv("EVAL", script("redisson_fair_unlock"), "5", key_, queue_, timeouts_, channel_, latch, "0",
                     lease, owner_, ms_string(wall_ms(env_)), ms_string(latch_ms));
  }
  return make_argv("EVAL", script("redisson_unlock_latch"), "3", key_, channel_, latch, "0", lease, owner_,
                   ms_string(latch_ms));
}

Task<ReleaseOutcome> RLock::unlock() {
  Argv argv = unlock_argv();
  const bool latched = (c_.version == Version::V3_43 || c_.version == Version::V3_44) &&
                       (c_.kind == Kind::Lock || c_.kind == Kind::Fair);
  const std::string latch = latched ? argv[3 + (c_.kind == Kind::Fair ? 4 : 2)] : "";
  Reply r = co_await execute(env_, node_, std::move(argv), c_, resends_all(c_.version));
  // cancelExpirationRenewal(threadId) runs whatever the outcome.
  if (renew_holds_ > 0 && --renew_holds_ == 0 && dog_) {
    dog_->stopped = true;
    dog_.reset();
  }
  if (r.type == Reply::Type::Integer && !latch.empty()) {
    env_.spawn(fire_and_forget(env_, node_, make_argv("DEL", latch), c_.timeout));
  }
  if (r.is_nil()) co_return ReleaseOutcome::NotOwner;  // IllegalMonitorStateException
  co_return r.type == Reply::Type::Integer ? ReleaseOutcome::Released : ReleaseOutcome::Unknown;
}

Task<Reply> RLock::expire(int64_t ms) {
  co_return co_await execute(env_, node_, make_argv("PEXPIRE", key_, ms_string(ms)), c_, true);
}

}  // namespace lockstep::profiles::redisson
