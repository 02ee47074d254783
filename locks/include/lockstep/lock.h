// A Lock is one client's handle on a distributed lock, written once against Env and run
// unchanged in the simulator and against real Redis. One Lock object belongs to one
// process (one owner identity); it is not shared between processes.
//
// Outcomes are values. `Unknown` means a command's reply never came (timeout, connection
// reset): the lock may or may not have been taken or released, and the history records
// the operation as `info`, exactly as Jepsen does.
//
// Every retry loop is bounded twice: by the wait budget and by retry.count_max.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "lockstep/env.h"

namespace lockstep {

enum class AcquireOutcome { Acquired, NotAcquired, Unknown };
enum class ReleaseOutcome { Released, NotOwner, Unknown };

const char* to_string(AcquireOutcome o);
const char* to_string(ReleaseOutcome o);

struct RetryPolicy {
  int count_max = 100;       // attempts after the first
  Nanos delay = 10ms;        // between attempts
  Nanos jitter = 10ms;       // plus a random [0, jitter], so contenders spread out
};

struct LockParams {
  std::string key = "lock";
  Nanos lease = 10s;          // how long the lock key lives without renewal
  RetryPolicy retry;
  Nanos command_timeout = 1s;  // per Redis command
  // Algorithm-specific integer options (e.g. "wait_replicas"), declared in each
  // algorithm's table (algorithms.h) with their defaults; absent means default.
  std::map<std::string, int64_t> options;
};

// The integer option `name`, or `fallback` when the scenario did not set it: how a lock of
// your own reads its options (lockstep's own read them through algorithm_option, which
// also holds them to their declared table).
inline int64_t option_or(const LockParams& p, const std::string& name, int64_t fallback) {
  auto it = p.options.find(name);
  return it == p.options.end() ? fallback : it->second;
}

enum class ExtendOutcome { Extended, NotExtended, Unknown };
const char* to_string(ExtendOutcome o);

// An extension the lock made on its own (a watchdog's renewal, an automatic extension),
// told to whoever records the history: it began, then ended with `outcome`.
struct ExtendNote {
  bool begin = true;
  ExtendOutcome outcome = ExtendOutcome::Extended;
  std::string detail;  // what the lock concluded: "renewed", "renewal stopped", ...
  int lane = 0;        // which of the lock's concurrent activities (a MultiLock's nodes)
};

// One lock interface for every lock lockstep runs, its own recipes and the library
// profiles alike: acquire and release, and what a lock may also let its user do or learn
// while holding it (each with a default for a lock that offers nothing of the kind).
class Lock {
 public:
  virtual ~Lock() = default;
  // Tries to take the lock, giving up after `wait` (as the algorithm measures time).
  virtual Task<AcquireOutcome> acquire(Nanos wait) = 0;
  virtual Task<ReleaseOutcome> release() = 0;
  // The value this owner writes into the lock key (its identity on the server).
  virtual const std::string& token() const = 0;
  // The fencing token of the current hold (rises with every acquisition), or -1 when the
  // algorithm issues none. A storage service would reject writes with an older token.
  virtual int64_t fencing_token() const { return -1; }
  // How long, from when its last acquire returned, the lock told its user the hold is
  // valid (RedLock's validity time: the TTL less the time the acquisition took and the
  // clock drift allowed for, within which its users are told to finish), or nullopt when
  // it tells none.
  virtual std::optional<Nanos> validity() const { return std::nullopt; }

  // The lock has an extend call (redsync Extend, node-redlock extend, redis-py
  // extend/reacquire, redis-plus-plus extend_lock) that a user makes on a schedule.
  virtual bool can_extend() const { return false; }
  // One extension as the user calls it. NotExtended means the lock told the user it is
  // not held (a false return or an exception saying so): the user stops.
  virtual Task<ExtendOutcome> extend();
  // The lock has told its user, out of band, that the hold is lost: node-redlock's abort
  // signal in using(), redis-plus-plus's auto-extension error callback. A user following
  // the library's documentation checks it before writing.
  virtual bool aborted() const { return false; }
  // The lock tells its user that the hold is lost by calling the user's code at once
  // (redis-plus-plus's auto_extend_err_callback, when given), rather than leaving a signal
  // to check: it then calls on_told_lost, once the lock has done what it does by itself.
  // A user following the documentation stops the work of its critical section there.
  virtual bool tells_when_lost() const { return false; }
  std::function<void()> on_told_lost;
  // Where the lock's own background extensions are reported (may be empty).
  std::function<void(const ExtendNote&)> on_background_extend;

 protected:
  void tell_lost() {
    if (on_told_lost) on_told_lost();
  }
  void note_background(bool begin, ExtendOutcome o = ExtendOutcome::Extended, std::string detail = "") {
    if (on_background_extend) on_background_extend(ExtendNote{begin, o, std::move(detail)});
  }
};

// A read-write lock: one owner identity (one process's thread) with two sides. Any number
// of owners may hold the read side at once; the write side excludes every other owner,
// readers included. The owner of the write side may also take the read side.
class ReadWriteLock {
 public:
  virtual ~ReadWriteLock() = default;
  virtual Lock& read_lock() = 0;
  virtual Lock& write_lock() = 0;
};

// Builds the named algorithm (see algorithms.h) for the process behind `env`. Returns
// nullptr for an unknown name. For a read-write algorithm this is its write side.
std::unique_ptr<Lock> make_lock(const std::string& algorithm, Env& env, const LockParams& params);

// Builds a read-write algorithm ("redisson-rw"); nullptr for any other name.
std::unique_ptr<ReadWriteLock> make_rw_lock(const std::string& algorithm, Env& env, const LockParams& params);

}  // namespace lockstep
