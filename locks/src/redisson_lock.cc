// redisson / redisson-fenced / redisson-fair: Redisson's RLock — a reentrant hash lock (field
// <client-uuid>:<thread>, value = hold count) taken by Lua, waiters woken by pub/sub, an
// optional watchdog that renews the lease every lease/3.
// Where it breaks: a pause longer than the lease stops the watchdog too, so the key
// expires and a second client enters; tryLock measures its wait on the wall clock, so a
// clock jump shortens or stretches the wait; a failover before replication loses the
// key. redisson-fenced (RedissonFencedLock) takes a fencing token inside the lock script, as
// Redisson does: INCR of redisson_lock_token:{key} in the same script as the grant, returned
// with it. A token taken by a second command after the grant reply would be ordered by when
// the reply arrived, not by when the lock was granted: a client whose grant reply came back
// after its lease ran out would get a newer token than the client that took the lock
// meanwhile, and a store checking tokens would take the stale client's write. Tokens only
// help a store that checks them.
// redisson-rw (RReadWriteLock) keeps a mode and per-thread hold counts in one hash:
// readers share it, a writer has it alone; its lease fails exactly as the plain lock's.
// redisson-fair (RedissonFairLock) queues waiters FIFO in a list + zset of give-up times
// computed from each client's wall clock, and wakes only the first in line: a client whose
// clock is ahead or behind expires others' places or keeps its own too long.
//
// Options: watchdog (0/1, default 0): renew while held; lease_ms is then the watchdog
// timeout (Redisson's lockWatchdogTimeout, 30000 by default there). wait_replicas (N,
// default 0): after taking the lock, WAIT N replicas for wait_timeout_ms (default half the
// command timeout) and give the lock back when fewer confirm. fair_wait_ms (default 5000,
// Redisson's threadWaitTime): how long a queued waiter keeps its place between retries.
//
// Reentrancy: a second acquire() by the same Lock object increments the hold count and
// release() decrements it; release() reports Released both when the count drops and the
// key stays and when the key is deleted (the stock workload acquires once).
#include <algorithm>
#include <memory>
#include <optional>

#include "lockstep/algorithms.h"
#include "lockstep/lock.h"
#include "lockstep/scripts.h"
#include "ms_arg.h"

namespace lockstep {
namespace {

using Argv = std::vector<std::string>;

// Shared between the lock and its watchdog so that either may outlive the other.
struct WatchdogState {
  bool stopped = false;
};

// Renews the lease every lease/3 while the owner still holds the lock. Stops at unlock
// (flag), at a failed or refused renewal, or after a bound no real hold reaches.
Task<void> watchdog(Env& env, std::string key, std::string field, Nanos lease, Nanos timeout,
                    std::shared_ptr<WatchdogState> st) {
  constexpr int kMaxRenewals = 1'000'000;
  for (int i = 0; i < kMaxRenewals; ++i) {
    co_await env.sleep(lease / 3);
    if (st->stopped) co_return;
    Argv renew = make_argv("EVAL", script("reentrant_renew"), "1", key, ms_string(lease), field);
    Reply r = co_await env.node(0).call(std::move(renew), timeout);
    if (st->stopped) co_return;
    if (!r.is_integer(1)) {
      st->stopped = true;
      co_return;
    }
  }
}

// A helper key of the lock `name` in the lock's cluster slot, as Redisson names it: the name
// becomes the hash tag, unless it already holds one (a '{'), which then decides the slot
// for both. Braces around a tagged name would move the helper key to another slot, and
// the lock's scripts would fail with CROSSSLOT on a cluster.
std::string prefix_name(const std::string& prefix, const std::string& name) {
  if (name.find('{') != std::string::npos) return prefix + ":" + name;
  return prefix + ":{" + name + "}";
}

class RedissonLock : public Lock {
 public:
  enum class Kind { Plain, Fenced, Fair, Read, Write };

  // `owner` is <client-uuid>:<thread>; the read and write sides of one read-write lock
  // share it, which is what lets the writer also read.
  RedissonLock(Env& env, LockParams params, Kind kind, std::string owner)
      : env_(env),
        p_(std::move(params)),
        kind_(kind),
        owner_(std::move(owner)),
        field_(kind == Kind::Write ? owner_ + ":write" : owner_),
        channel_(prefix_name(kind == Kind::Read || kind == Kind::Write ? "redisson_rwlock" : "redisson_lock__channel",
                             p_.key)),
        queue_(prefix_name("redisson_lock_queue", p_.key)),
        timeouts_(prefix_name("redisson_lock_timeout", p_.key)),
        token_key_(prefix_name("redisson_lock_token", p_.key)),
        fenced_(kind == Kind::Fenced),
        fair_(kind == Kind::Fair),
        fair_wait_ms_(fair_ ? *option("fair_wait_ms") : 0),
        watchdog_(*option("watchdog") != 0),
        wait_replicas_(*option("wait_replicas")),
        wait_timeout_(Millis(option("wait_timeout_ms").value_or(to_ms(p_.command_timeout) / 2))) {}

  ~RedissonLock() override {
    if (dog_) dog_->stopped = true;
  }

  // tryLock(wait, lease) as Redisson writes it: the remaining wait is re-measured on the
  // wall clock around every step, so a jump of the process clock moves the deadline.
  Task<AcquireOutcome> acquire(Nanos wait) override {
    Nanos remaining = wait;
    Nanos t = env_.now_wall();
    Attempt a = co_await try_acquire();
    if (a.outcome != AcquireOutcome::NotAcquired) co_return co_await finish(a.outcome);
    remaining -= env_.now_wall() - t;
    if (remaining <= Nanos(0)) co_return co_await give_up();

    t = env_.now_wall();
    // The fair lock wakes each waiter on a channel of its own.
    std::string channel = fair_ ? channel_ + ":" + owner_ : channel_;
    std::unique_ptr<Subscription> sub = co_await env_.node(0).subscribe(channel);
    remaining -= env_.now_wall() - t;
    if (remaining <= Nanos(0)) co_return co_await give_up();

    for (int attempt = 0; attempt < p_.retry.count_max; ++attempt) {
      t = env_.now_wall();
      a = co_await try_acquire();
      if (a.outcome != AcquireOutcome::NotAcquired) co_return co_await finish(a.outcome);
      remaining -= env_.now_wall() - t;
      if (remaining <= Nanos(0)) break;
      t = env_.now_wall();
      // A refused connection (ttl unknown) waits a retry delay rather than a full lease.
      Nanos ttl = a.ttl_ms == kIoError ? p_.retry.delay : Millis(a.ttl_ms);
      Nanos nap = (a.ttl_ms >= 0 || a.ttl_ms == kIoError) && ttl < remaining ? ttl : remaining;
      co_await sub->next(std::max(nap, Nanos(1'000'000)));
      remaining -= env_.now_wall() - t;
      if (remaining <= Nanos(0)) break;
    }
    co_return co_await give_up();
  }

  Task<ReleaseOutcome> release() override {
    Reply r = co_await env_.node(0).call(unlock_argv(), p_.command_timeout);
    if (r.is_unknown()) co_return ReleaseOutcome::Unknown;
    if (r.is_integer(0)) {
      --holds_;
      co_return ReleaseOutcome::Released;
    }
    // Freed, or not ours any more (IllegalMonitorStateException): either way no renewal.
    holds_ = 0;
    stop_watchdog();
    co_return r.is_integer(1) ? ReleaseOutcome::Released : ReleaseOutcome::NotOwner;
  }

  const std::string& token() const override { return owner_; }
  int64_t fencing_token() const override { return fence_; }

 private:
  std::optional<int64_t> option(const std::string& name) const {
    switch (kind_) {
      case Kind::Plain: return algorithm_option("redisson", p_, name);
      case Kind::Fenced: return algorithm_option("redisson-fenced", p_, name);
      case Kind::Fair: return algorithm_option("redisson-fair", p_, name);
      default: return algorithm_option("redisson-rw", p_, name);
    }
  }

  static constexpr int64_t kIoError = -100;  // ttl marker: the command did not run

  struct Attempt {
    AcquireOutcome outcome;
    int64_t ttl_ms = -1;  // the holder's PTTL when NotAcquired (-1: no expiry)
  };

  Nanos lease() const { return p_.lease; }

  std::string wall_ms() { return std::to_string(to_ms(env_.now_wall())); }

  Argv unlock_argv() {
    switch (kind_) {
      case Kind::Fair:
        return make_argv("EVAL", script("fair_unlock"), "4", p_.key, queue_, timeouts_, channel_, "0",
                         ms_string(lease()), owner_, wall_ms());
      case Kind::Read: return make_argv("EVAL", script("rw_read_unlock"), "2", p_.key, channel_, "0", field_);
      case Kind::Write:
        return make_argv("EVAL", script("rw_write_unlock"), "2", p_.key, channel_, "0", ms_string(lease()), field_);
      default:
        return make_argv("EVAL", script("reentrant_unlock"), "2", p_.key, channel_, "0", ms_string(lease()), owner_);
    }
  }

  Argv lock_argv() {
    switch (kind_) {
      case Kind::Fair:
        return make_argv("EVAL", script("fair_lock"), "3", p_.key, queue_, timeouts_, ms_string(lease()), owner_,
                         std::to_string(fair_wait_ms_), wall_ms());
      case Kind::Read:
        return make_argv("EVAL", script("rw_read_lock"), "1", p_.key, ms_string(lease()), field_, owner_ + ":write");
      case Kind::Write: return make_argv("EVAL", script("rw_write_lock"), "1", p_.key, ms_string(lease()), field_);
      case Kind::Fenced:
        return make_argv("EVAL", script("fenced_lock"), "2", p_.key, token_key_, ms_string(lease()), owner_);
      default: return make_argv("EVAL", script("reentrant_lock"), "1", p_.key, ms_string(lease()), owner_);
    }
  }

  // A fair-lock waiter that gives up leaves the line, or those behind it wait its turn.
  Task<AcquireOutcome> give_up() {
    if (!fair_) co_return AcquireOutcome::NotAcquired;
    Argv failed = make_argv("EVAL", script("fair_acquire_failed"), "3", p_.key, queue_, timeouts_, owner_,
                            std::to_string(fair_wait_ms_));
    co_await env_.node(0).call(std::move(failed), p_.command_timeout);
    co_return AcquireOutcome::NotAcquired;
  }

  Task<Attempt> try_acquire() {
    Argv lock = lock_argv();
    Reply r = co_await env_.node(0).call(std::move(lock), p_.command_timeout);
    co_return fenced_ ? fenced_attempt(r) : attempt(r);
  }

  // The lock script's nil (ours now) or the holder's ttl.
  static Attempt attempt(const Reply& r) {
    if (r.is_nil()) return Attempt{AcquireOutcome::Acquired};
    if (r.type == Reply::Type::Integer) return Attempt{AcquireOutcome::NotAcquired, r.integer};
    if (r.type == Reply::Type::IoError) return Attempt{AcquireOutcome::NotAcquired, kIoError};
    return Attempt{AcquireOutcome::Unknown};
  }

  // The fenced script's {-1, token} (ours now, with its token) or {ttl, -1}. Redisson reads
  // the first element only, -1 for a grant; here a holder's key without a TTL (PTTL -1 too)
  // comes with token -1 and is not taken for a grant.
  Attempt fenced_attempt(const Reply& r) {
    const bool pair = r.type == Reply::Type::Array && r.elements.size() == 2 &&
                      r.elements[0].type == Reply::Type::Integer && r.elements[1].type == Reply::Type::Integer;
    if (!pair) return r.type == Reply::Type::Array ? Attempt{AcquireOutcome::Unknown} : attempt(r);
    if (r.elements[0].integer == -1 && r.elements[1].integer >= 0) {
      fence_ = r.elements[1].integer;
      return Attempt{AcquireOutcome::Acquired};
    }
    return Attempt{AcquireOutcome::NotAcquired, r.elements[0].integer};
  }

  // After the script said yes: replica confirmation, watchdog.
  Task<AcquireOutcome> finish(AcquireOutcome o) {
    if (o != AcquireOutcome::Acquired) co_return o;
    // (The confirmation is named before it is tested: GCC 12 miscompiles a co_await inside
    // the condition of an if that opens a coroutine.)
    bool confirmed = true;
    if (wait_replicas_ > 0) confirmed = co_await replicas_confirm();
    if (!confirmed) {
      co_await env_.node(0).call(unlock_argv(), p_.command_timeout);
      co_return AcquireOutcome::NotAcquired;
    }
    if (++holds_ == 1 && watchdog_) start_watchdog();
    co_return AcquireOutcome::Acquired;
  }

  Task<bool> replicas_confirm() {
    Argv wait = make_argv("WAIT", std::to_string(wait_replicas_),
                          std::to_string(std::max<int64_t>(to_ms(wait_timeout_), 1)));
    Reply r = co_await env_.node(0).call(std::move(wait), p_.command_timeout);
    co_return r.type == Reply::Type::Integer && r.integer >= wait_replicas_;
  }

  void start_watchdog() {
    stop_watchdog();
    dog_ = std::make_shared<WatchdogState>();
    env_.spawn(watchdog(env_, p_.key, field_, lease(), p_.command_timeout, dog_));
  }
  void stop_watchdog() {
    if (dog_) dog_->stopped = true;
    dog_.reset();
  }

  Env& env_;
  LockParams p_;
  Kind kind_;
  std::string owner_;
  std::string field_;  // this side's hash field: the owner, or <owner>:write
  std::string channel_;
  std::string queue_;
  std::string timeouts_;
  std::string token_key_;  // redisson-fenced's token counter, in the lock's slot
  bool fenced_;
  bool fair_;
  int64_t fair_wait_ms_;
  bool watchdog_;
  int64_t wait_replicas_;
  Nanos wait_timeout_;
  int holds_ = 0;
  int64_t fence_ = -1;
  std::shared_ptr<WatchdogState> dog_;
};

class RedissonReadWriteLock : public ReadWriteLock {
 public:
  RedissonReadWriteLock(Env& env, const LockParams& params, const std::string& owner)
      : read_(env, params, RedissonLock::Kind::Read, owner), write_(env, params, RedissonLock::Kind::Write, owner) {}
  Lock& read_lock() override { return read_; }
  Lock& write_lock() override { return write_; }

 private:
  RedissonLock read_;
  RedissonLock write_;
};

// What make_lock("redisson-rw") hands to code that only knows Lock: the write side, a
// plain mutex, with the read side kept alive behind it.
class WriteSide : public Lock {
 public:
  explicit WriteSide(std::unique_ptr<ReadWriteLock> rw) : rw_(std::move(rw)) {}
  Task<AcquireOutcome> acquire(Nanos wait) override { return rw_->write_lock().acquire(wait); }
  Task<ReleaseOutcome> release() override { return rw_->write_lock().release(); }
  const std::string& token() const override { return rw_->write_lock().token(); }
  int64_t fencing_token() const override { return rw_->write_lock().fencing_token(); }

 private:
  std::unique_ptr<ReadWriteLock> rw_;
};

std::string new_owner(Env& env) { return random_uuid(env) + ":1"; }

}  // namespace

std::unique_ptr<Lock> make_redisson_lock(const std::string& algorithm, Env& env, const LockParams& params) {
  using Kind = RedissonLock::Kind;
  if (algorithm == "redisson") return std::make_unique<RedissonLock>(env, params, Kind::Plain, new_owner(env));
  if (algorithm == "redisson-fenced") return std::make_unique<RedissonLock>(env, params, Kind::Fenced, new_owner(env));
  if (algorithm == "redisson-fair") return std::make_unique<RedissonLock>(env, params, Kind::Fair, new_owner(env));
  if (algorithm == "redisson-rw") return std::make_unique<WriteSide>(make_rw_lock(algorithm, env, params));
  return nullptr;
}

std::unique_ptr<ReadWriteLock> make_rw_lock(const std::string& algorithm, Env& env, const LockParams& params) {
  if (algorithm == "redisson-rw") return std::make_unique<RedissonReadWriteLock>(env, params, new_owner(env));
  return nullptr;
}

}  // namespace lockstep
