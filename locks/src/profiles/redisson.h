// Redisson's pieces shared by its lock kinds: the command executor's timeout-and-resend
// rule, and one RLock (or RFairLock) on one node as one Redisson client sees it. The
// MultiLock and RedLock (redisson_multi.cc) are built from several RLocks, one per node,
// as users build them from one Redisson client per master.
#pragma once

#include <memory>
#include <string>

#include "common.h"

namespace lockstep::profiles::redisson {

enum class Version { V3_23, V3_43, V3_44 };

// Config and tryLock arguments, as Redisson names them.
struct Config {
  Version version = Version::V3_43;
  Nanos timeout = 3s;        // Config.timeout: how long a command waits for its reply
  int retry_attempts = 3;    // Config.retryAttempts: resends after a timeout
  Nanos retry_interval = 1500ms;
  int64_t watchdog_ms = 30000;  // Config.lockWatchdogTimeout
  bool fair = false;
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

  // The renewal's own state, shared with its background activity so that either may
  // outlive the other.
  struct Watchdog;

 private:
  Task<Reply> try_acquire(int64_t wait_ms, int64_t lease_ms);
  Task<void> acquire_failed(int64_t wait_ms);
  void after_acquire(int64_t lease_ms);
  Argv unlock_argv();
  std::string channel() const;

  Env& env_;
  int node_;
  std::string key_;
  std::string owner_;
  Config c_;
  int64_t internal_lease_ms_;
  std::function<void(const ExtendNote&)> note_;
  std::shared_ptr<Watchdog> dog_;
  int renew_holds_ = 0;  // ExpirationEntry's count of this thread's acquisitions
};

// The Redisson profile for `kind` multilock / redlock: built in redisson_multi.cc.
std::unique_ptr<ProfileLock> make_multi(Env& env, const std::string& key, const std::string& uuid, Config config,
                                        int64_t lease_ms, bool redlock);

}  // namespace lockstep::profiles::redisson
