// redisson / redisson-fenced / redisson-fair / redisson-rw: Redisson's RLock, RFencedLock,
// RFairLock and RReadWriteLock in lockstep's own terms — the one Redisson implementation
// (profiles/redisson_rlock.cc) at version `Recipe`, configured from a scenario's lock
// parameters instead of Redisson's Config.
// Where it breaks: a pause longer than the lease stops the watchdog too, so the key
// expires and a second client enters; tryLock measures its wait on the wall clock, so a
// clock jump shortens or stretches the wait; a failover before replication loses the
// key. redisson-fenced takes its fencing token inside the lock script, as Redisson does:
// a token taken by a second command after the grant reply would be ordered by when the
// reply arrived, not by when the lock was granted, and a store checking tokens would take
// a stale client's write. Tokens only help a store that checks them. redisson-rw's lease
// fails exactly as the plain lock's. redisson-fair queues waiters by give-up times
// computed from each client's wall clock: a client whose clock is ahead or behind expires
// others' places or keeps its own too long.
//
// Options: watchdog (0/1, default 0): renew while held; lease_ms is then the watchdog
// timeout (Redisson's lockWatchdogTimeout). wait_replicas (N, default 0): after taking the
// lock, WAIT N replicas for wait_timeout_ms (default half the command timeout) and give
// the lock back when fewer confirm. fair_wait_ms (default 5000, Redisson's
// threadWaitTime): how long a queued waiter keeps its place between retries.
#include <memory>
#include <optional>

#include "lockstep/algorithms.h"
#include "lockstep/lock.h"
#include "profiles/redisson.h"

namespace lockstep {
namespace {

namespace rs = profiles::redisson;

rs::Config recipe_config(const std::string& algorithm, const LockParams& p, rs::Kind kind) {
  auto option = [&](const char* name) { return algorithm_option(algorithm, p, name); };
  rs::Config c;
  c.version = rs::Version::Recipe;
  c.kind = kind;
  c.timeout = p.command_timeout;
  c.retry_attempts = 0;  // one command sent once
  c.retry_interval = Nanos(0);
  c.watchdog_ms = std::max<int64_t>(to_ms(p.lease), 1);
  c.rounds_max = p.retry.count_max;
  c.refused_delay = std::max(p.retry.delay, Nanos(1'000'000));
  if (kind == rs::Kind::Fair) c.fair_wait_ms = *option("fair_wait_ms");
  c.wait_replicas = static_cast<int>(*option("wait_replicas"));
  c.wait_timeout = Millis(option("wait_timeout_ms").value_or(to_ms(p.command_timeout) / 2));
  return c;
}

// One side of a recipe: tryLock(wait, lease_ms), or with the watchdog tryLock(wait, -1).
class RecipeSide : public Lock {
 public:
  RecipeSide(Env& env, const std::string& algorithm, const LockParams& p, rs::Kind kind, std::string owner)
      : lock_(env, 0, p.key, std::move(owner), recipe_config(algorithm, p, kind)),
        lease_ms_(*algorithm_option(algorithm, p, "watchdog") != 0 ? -1 : std::max<int64_t>(to_ms(p.lease), 1)) {}

  Task<AcquireOutcome> acquire(Nanos wait) override { return lock_.try_lock(to_ms(wait), lease_ms_); }
  Task<ReleaseOutcome> release() override { return lock_.unlock(); }
  const std::string& token() const override { return lock_.owner(); }
  int64_t fencing_token() const override { return lock_.fence(); }

 private:
  rs::RLock lock_;
  int64_t lease_ms_;
};

// The read and write sides of one read-write lock share the owner, which is what lets the
// writer also read.
class RedissonReadWriteLock : public ReadWriteLock {
 public:
  RedissonReadWriteLock(Env& env, const LockParams& params, const std::string& owner)
      : read_(env, "redisson-rw", params, rs::Kind::Read, owner),
        write_(env, "redisson-rw", params, rs::Kind::Write, owner) {}
  Lock& read_lock() override { return read_; }
  Lock& write_lock() override { return write_; }

 private:
  RecipeSide read_;
  RecipeSide write_;
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

std::string new_owner(Env& env) { return random_uuid(env) + ":" + profiles::kThreadId; }

}  // namespace

std::unique_ptr<Lock> make_redisson_lock(const std::string& algorithm, Env& env, const LockParams& params) {
  const std::optional<rs::Kind> kind = algorithm == "redisson"          ? std::optional(rs::Kind::Lock)
                                       : algorithm == "redisson-fenced" ? std::optional(rs::Kind::Fenced)
                                       : algorithm == "redisson-fair"   ? std::optional(rs::Kind::Fair)
                                                                        : std::nullopt;
  if (kind) return std::make_unique<RecipeSide>(env, algorithm, params, *kind, new_owner(env));
  if (algorithm == "redisson-rw") return std::make_unique<WriteSide>(make_rw_lock(algorithm, env, params));
  return nullptr;
}

std::unique_ptr<ReadWriteLock> make_rw_lock(const std::string& algorithm, Env& env, const LockParams& params) {
  if (algorithm == "redisson-rw") return std::make_unique<RedissonReadWriteLock>(env, params, new_owner(env));
  return nullptr;
}

}  // namespace lockstep
