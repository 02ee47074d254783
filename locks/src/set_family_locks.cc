// The SET-family locks of the lock-evolution story, from naive to "correct but still
// lease-based". Each is the recipe as people write it, flaws included — the flaws are
// what lockstep's scenarios exist to expose:
//
//   setnx           SETNX key 1; DEL to unlock. No expiry: a holder that dies holds the
//                   lock forever (deadlock).
//   setnx-expire    SETNX then EXPIRE as two commands: a crash between them leaves a key
//                   with no expiry (deadlock again).
//   set-px-del      SET key 1 NX PX lease, atomic; DEL to unlock. A holder whose work
//                   outlives the lease deletes whoever holds it next (foreign unlock).
//   set-px-get-del  SET key <uuid> NX PX; unlock = GET, compare, DEL as separate commands.
//                   The lock can expire and be re-taken between GET and DEL.
//   set-px-lua      SET key <uuid> NX PX; unlock by an atomic Lua compare-and-delete. Only
//                   the owner unlocks, but a pause longer than the lease still lets two
//                   clients believe they hold the lock.
//   watch-multi     SET key <uuid> NX PX; unlock with optimistic locking instead of Lua:
//                   WATCH, GET and compare, then DEL inside MULTI/EXEC. A change to the key
//                   between WATCH and EXEC (its expiry included) makes EXEC do nothing.
//   renewal-thread  set-px-lua plus a hand-made renewal thread: every scan_ms (2 s) it
//                   looks at the lock and extends it once the last third of the lease has
//                   begun, judged on the wall clock; it gives up after renew_count_max
//                   renewals. A pause freezes it with its owner, and a wall clock stepped
//                   back makes it wait while the lease runs out.
#include <algorithm>
#include <functional>
#include <memory>

#include "lockstep/algorithms.h"
#include "lockstep/lock.h"
#include "lockstep/scripts.h"
#include "ms_arg.h"
#include "retry.h"

namespace lockstep {
namespace {

// GCC 12 rejects braced lists inside co_await expressions ("array used as
// initializer"), so command vectors are built as named locals first.
using Argv = std::vector<std::string>;

// The acquire loop shared by the family: try once, and on "held by someone else" wait
// delay + jitter and try again, until the wait budget (monotonic clock) or the retry
// count runs out.
class SetFamilyLock : public Lock {
 public:
  SetFamilyLock(Env& env, LockParams params, std::string token)
      : env_(env), p_(std::move(params)), token_(std::move(token)) {}

  Task<AcquireOutcome> acquire(Nanos wait) override {
    return acquire_with_retries(env_, p_.retry, wait, [this] { return try_once(); });
  }

  const std::string& token() const override { return token_; }

 protected:
  virtual Task<AcquireOutcome> try_once() = 0;

  Task<Reply> call(std::vector<std::string> argv) {
    return env_.node(0).call(std::move(argv), p_.command_timeout);
  }
  // For the commands a lock sends the same on every attempt (its key, token and lease
  // never change): built once, on first use, and shared with every send.
  Task<Reply> call(const Command& command) { return env_.node(0).call(command, p_.command_timeout); }

  // Maps a SET NX / SETNX reply: set, not set, or we cannot tell. A refused or reset
  // connection means the command never ran, so it is worth another try; a timeout
  // means it may have run.
  static AcquireOutcome outcome_of_set(const Reply& r) {
    if (r.is_ok() || r.is_integer(1)) return AcquireOutcome::Acquired;
    if (r.is_nil() || r.is_integer(0) || r.type == Reply::Type::IoError) return AcquireOutcome::NotAcquired;
    return AcquireOutcome::Unknown;
  }
  static ReleaseOutcome outcome_of_del(const Reply& r) {
    if (r.is_integer(1)) return ReleaseOutcome::Released;
    if (r.type == Reply::Type::Integer) return ReleaseOutcome::NotOwner;
    return ReleaseOutcome::Unknown;
  }

  Task<ReleaseOutcome> plain_del() {
    if (!del_) del_ = make_command("DEL", p_.key);
    co_return outcome_of_del(co_await call(del_));
  }

  Env& env_;
  LockParams p_;
  std::string token_;

 private:
  Command del_;
};

class SetnxLock : public SetFamilyLock {
 public:
  using SetFamilyLock::SetFamilyLock;
  Task<ReleaseOutcome> release() override { return plain_del(); }

 protected:
  Task<AcquireOutcome> try_once() override {
    if (!setnx_) setnx_ = make_command("SETNX", p_.key, token_);
    co_return outcome_of_set(co_await call(setnx_));
  }

 private:
  Command setnx_;
};

class SetnxExpireLock : public SetnxLock {
 public:
  using SetnxLock::SetnxLock;

 protected:
  Task<AcquireOutcome> try_once() override {
    AcquireOutcome o = co_await SetnxLock::try_once();
    if (o != AcquireOutcome::Acquired) co_return o;
    // The gap the recipe is famous for: the key exists without a TTL until this lands.
    Argv expire = make_argv("PEXPIRE", p_.key, ms_string(p_.lease));
    Reply r = co_await call(std::move(expire));
    co_return r.is_unknown() ? AcquireOutcome::Unknown : AcquireOutcome::Acquired;
  }
};

class SetPxDelLock : public SetFamilyLock {
 public:
  using SetFamilyLock::SetFamilyLock;
  Task<ReleaseOutcome> release() override { return plain_del(); }

 protected:
  Task<AcquireOutcome> try_once() override {
    if (!set_) set_ = make_command("SET", p_.key, token_, "NX", "PX", ms_string(p_.lease));
    co_return outcome_of_set(co_await call(set_));
  }

 private:
  Command set_;
};

class SetPxGetDelLock : public SetPxDelLock {
 public:
  using SetPxDelLock::SetPxDelLock;
  Task<ReleaseOutcome> release() override {
    Argv get = make_argv("GET", p_.key);
    Reply current = co_await call(std::move(get));
    if (current.is_unknown()) co_return ReleaseOutcome::Unknown;
    if (current.type != Reply::Type::Bulk || current.str != token_) co_return ReleaseOutcome::NotOwner;
    // Not atomic with the GET: the key may have expired and been taken by now.
    Argv del = make_argv("DEL", p_.key);
    co_return outcome_of_del(co_await call(std::move(del)));
  }
};

class SetPxLuaLock : public SetPxDelLock {
 public:
  using SetPxDelLock::SetPxDelLock;
  Task<ReleaseOutcome> release() override {
    if (!unlock_) unlock_ = make_command("EVAL", script("unlock_if_owner"), "1", p_.key, token_);
    co_return outcome_of_del(co_await call(unlock_));
  }

 private:
  Command unlock_;
};

// The flash-sale controller's transaction unlock, bounded: an aborted EXEC means the key
// changed under the WATCH, so look again; the retry count caps how often.
class WatchMultiLock : public SetPxDelLock {
 public:
  using SetPxDelLock::SetPxDelLock;
  Task<ReleaseOutcome> release() override {
    for (int attempt = 0; attempt <= p_.retry.count_max; ++attempt) {
      Argv watch = make_argv("WATCH", p_.key);
      if ((co_await call(std::move(watch))).is_unknown()) co_return ReleaseOutcome::Unknown;
      Argv get = make_argv("GET", p_.key);
      Reply current = co_await call(std::move(get));
      if (current.is_unknown()) co_return ReleaseOutcome::Unknown;
      if (current.type != Reply::Type::Bulk || current.str != token_) {
        Argv unwatch = make_argv("UNWATCH");
        co_await call(std::move(unwatch));
        co_return ReleaseOutcome::NotOwner;
      }
      Argv multi = make_argv("MULTI");
      Argv del = make_argv("DEL", p_.key);
      Argv exec = make_argv("EXEC");
      Reply done = Reply::timeout();
      Reply opened = co_await call(std::move(multi));
      if (opened.is_ok()) {
        Reply queued = co_await call(std::move(del));
        if (!queued.is_unknown()) done = co_await call(std::move(exec));
      }
      if (done.type == Reply::Type::Array && done.elements.size() == 1) co_return outcome_of_del(done.elements[0]);
      if (done.is_nil()) continue;  // the WATCH saw the key change: look again
      // The transaction may still be open on this connection; close it so the next
      // command is not queued. Whether the DEL ran is unknown.
      Argv discard = make_argv("DISCARD");
      co_await call(std::move(discard));
      co_return ReleaseOutcome::Unknown;
    }
    co_return ReleaseOutcome::NotOwner;
  }
};

struct RenewalState {
  bool stopped = false;
};

// The flash-sale controller's hand-made renewal thread for one lock: a scan every `scan`,
// and an extension when the last third of the lease has begun (last renewal + 2/3 lease
// <= now, on the wall clock, as System.currentTimeMillis() has it). Like the original it
// checks only that the key still exists, not whose it is, and extends it with a plain
// PEXPIRE.
Task<void> renewal_thread(Env& env, LockParams p, Nanos scan, int64_t renew_count_max,
                          std::shared_ptr<RenewalState> st) {
  constexpr int kScanMax = 1'000'000;  // far beyond any run; the loop must end
  Nanos last_renewal = env.now_wall();
  int64_t renewals = 0;
  for (int i = 0; i < kScanMax && !st->stopped; ++i) {
    co_await env.sleep(scan);
    if (st->stopped) co_return;
    Argv get = make_argv("GET", p.key);
    Reply r = co_await env.node(0).call(std::move(get), p.command_timeout);
    if (st->stopped || r.is_nil() || renewals >= renew_count_max) break;
    const Nanos now = env.now_wall();
    if (last_renewal + p.lease * 2 / 3 > now) continue;
    last_renewal = now;
    Argv pexpire = make_argv("PEXPIRE", p.key, ms_string(p.lease));
    co_await env.node(0).call(std::move(pexpire), p.command_timeout);
    ++renewals;
  }
  st->stopped = true;
}

class RenewalThreadLock : public SetPxLuaLock {
 public:
  using SetPxLuaLock::SetPxLuaLock;
  ~RenewalThreadLock() override { stop(); }

  Task<AcquireOutcome> acquire(Nanos wait) override {
    AcquireOutcome o = co_await SetPxLuaLock::acquire(wait);
    if (o == AcquireOutcome::Acquired) {
      stop();
      renewal_ = std::make_shared<RenewalState>();
      env_.spawn(renewal_thread(env_, p_, Millis(*algorithm_option("renewal-thread", p_, "scan_ms")),
                                *algorithm_option("renewal-thread", p_, "renew_count_max"), renewal_));
    }
    co_return o;
  }

  Task<ReleaseOutcome> release() override {
    stop();
    co_return co_await SetPxLuaLock::release();
  }

 private:
  void stop() {
    if (renewal_) renewal_->stopped = true;
    renewal_.reset();
  }
  std::shared_ptr<RenewalState> renewal_;
};

}  // namespace

std::unique_ptr<Lock> make_set_family_lock(const std::string& algorithm, Env& env, const LockParams& params) {
  // The naive recipes write a constant, as the seeds do; the others a fresh uuid.
  if (algorithm == "setnx") return std::make_unique<SetnxLock>(env, params, "1");
  if (algorithm == "setnx-expire") return std::make_unique<SetnxExpireLock>(env, params, "1");
  if (algorithm == "set-px-del") return std::make_unique<SetPxDelLock>(env, params, "1");
  if (algorithm == "set-px-get-del") return std::make_unique<SetPxGetDelLock>(env, params, random_uuid(env));
  if (algorithm == "set-px-lua") return std::make_unique<SetPxLuaLock>(env, params, random_uuid(env));
  if (algorithm == "watch-multi") return std::make_unique<WatchMultiLock>(env, params, random_uuid(env));
  if (algorithm == "renewal-thread") return std::make_unique<RenewalThreadLock>(env, params, random_uuid(env));
  return nullptr;
}

}  // namespace lockstep
