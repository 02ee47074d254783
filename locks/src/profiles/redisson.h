// Redisson, once: the command executor's timeout-and-resend rule, and one RLock (or
// RFairLock, RFencedLock, one side of an RReadWriteLock) on one node as one Redisson
// client sees it. The library profiles (redisson@VERSION) and lockstep's own `redisson*`
// recipes are both this class: a recipe is the version `Recipe`, configured from a
// scenario's lock parameters (redisson_lock.cc). The MultiLock and RedLock
// (redisson_multi.cc) are built from several RLocks, one per node, as users build them
// from one Redisson client per master.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "common.h"

namespace lockstep::profiles::redisson {

// Recipe: lockstep's own terms — nothing resent, the unlock without a latch, the fair
// lock's older scripts (a queued waiter is told the time left to its own give-up time),
// and what no profile models (the fencing token, the read-write lock, WAIT for replicas).
// V2_3 (2.3.0): the MultiLock/RedLock before #624, every lock tried at once with the
// caller's own wait and lease; its watchdog PEXPIREs the key without asking whose it is.
// V3_11_0 (3.11.0): the MultiLock's lease while acquiring is 2 x waitTime even when the
// wait is -1 (#2172); V3_11_1 (3.11.1) takes the lease asked for then.
enum class Version { Recipe, V3_23, V3_43, V3_44, V2_3, V3_11_0, V3_11_1 };

// Before 3.24.0 (#4871) every command is resent after a response timeout and the unlock
// has no latch.
inline bool resends_all(Version v) {
  return v == Version::V2_3 || v == Version::V3_11_0 || v == Version::V3_11_1 || v == Version::V3_23;
}

// Up to 3.11 a leaseTime other than -1 is used as given (RedissonLock.tryAcquireAsync:
// `leaseTime != -1`), so 0 or a negative lease PEXPIREs the new key away at once; later
// versions keep the watchdog for any leaseTime <= 0.
inline bool lease_as_given(Version v) {
  return v == Version::V2_3 || v == Version::V3_11_0 || v == Version::V3_11_1;
}
inline bool explicit_lease(Version v, int64_t lease_ms) { return lease_as_given(v) ? lease_ms != -1 : lease_ms > 0; }

enum class Kind {
  Lock,    // RLock
  Fair,    // RFairLock
  Fenced,  // RFencedLock: a token counted in the lock script (Recipe only)
  Read,    // RReadWriteLock's sides (Recipe only)
  Write,
};

// Config and tryLock arguments, as Redisson names them.
struct Config {
  Version version = Version::V3_43;
  Kind kind = Kind::Lock;
  Nanos timeout = 3s;        // Config.timeout: how long a command waits for its reply
  int retry_attempts = 3;    // Config.retryAttempts: resends after a timeout
  Nanos retry_interval = 1500ms;
  int64_t watchdog_ms = 30000;  // Config.lockWatchdogTimeout
  // The recipes' own bounds and extras (Version::Recipe):
  int rounds_max = 1'000'000;  // tryLock's attempts after subscribing (retry.count_max)
  Nanos refused_delay{0};      // > 0: a refused connection is tried again after this
  int64_t fair_wait_ms = 5000;  // threadWaitTime, whatever the wait
  int wait_replicas = 0;        // after a grant, WAIT for this many replicas ...
  Nanos wait_timeout{0};        // ... this long, and give the lock back if fewer confirm
};

// RedisExecutor: a command whose reply does not come within `timeout` is resent after
// retryInterval, up to retryAttempts times, when resending is allowed; a connection that
// cannot be made is retried the same way whatever the command. The caller sees the
// first reply that comes, or the last failure.
Task<Reply> execute(Env& env, int node, Argv argv, const Config& c, bool resend);

// One RLock on one node. Reentrant by owner field "<client uuid>:<thread>".
class RLock {
 public:
  RLock(Env& env, int node, std::string key, std::string owner, Config config);
  ~RLock();
  RLock(const RLock&) = delete;
  RLock& operator=(const RLock&) = delete;

  // tryLock(waitTime, leaseTime): leaseTime <= 0 keeps the lock with the watchdog.
  // Acquired, NotAcquired, or Unknown when the lock command itself failed (an exception:
  // `timed_out` says whether it was a response timeout).
  Task<AcquireOutcome> try_lock(int64_t wait_ms, int64_t lease_ms, bool* timed_out = nullptr);
  Task<ReleaseOutcome> unlock();
  // expireAsync: PEXPIRE the lock key.
  Task<Reply> expire(int64_t ms);

  void set_note(std::function<void(const ExtendNote&)> note) { note_ = std::move(note); }
  const std::string& owner() const { return owner_; }
  // RFencedLock's token of the last grant, -1 before one.
  int64_t fence() const { return fence_; }

  // The renewal's own state, shared with its background activity so that either may
  // outlive the other.
  struct Watchdog;

 private:
  Task<Reply> try_acquire(int64_t wait_ms, int64_t lease_ms);
  Reply granted_or_ttl(Reply r);
  Task<AcquireOutcome> granted(int64_t lease_ms);
  Task<void> acquire_failed(int64_t wait_ms);
  void after_acquire(int64_t lease_ms);
  Argv unlock_argv();

  Env& env_;
  int node_;
  std::string key_;
  std::string owner_;
  Config c_;
  std::string field_;    // this side's hash field: the owner, or <owner>:write
  std::string channel_;  // where an unlock is published
  std::string queue_;    // the fair lock's waiters
  std::string timeouts_;  // and their give-up times
  int64_t fence_ = -1;
  int64_t internal_lease_ms_;
  std::function<void(const ExtendNote&)> note_;
  std::shared_ptr<Watchdog> dog_;
  int renew_holds_ = 0;  // ExpirationEntry's count of this thread's acquisitions
};

// The Redisson profile for `kind` multilock / redlock: built in redisson_multi.cc.
// `wait_ms`, when set, replaces the workload's wait as tryLock's waitTime (-1: none).
std::unique_ptr<ProfileLock> make_multi(Env& env, const std::string& key, const std::string& uuid, Config config,
                                        int64_t lease_ms, bool redlock, std::optional<int64_t> wait_ms);

}  // namespace lockstep::profiles::redisson
