// redlock: Redis's RedLock over N independent masters. SET key token NX PX ttl on each
// node with a per-node timeout far below the TTL; the lock is held when a majority
// (N/2+1) said yes and the validity TTL - elapsed - (TTL * drift + 2 ms) is still
// positive, elapsed measured on the monotonic clock. Otherwise it unlocks everywhere and
// retries after a random delay.
// Where it breaks: a node that forgets the key — restarted without persistence, or whose
// wall clock jumps so the key expires early — lets a second client assemble a majority
// while the first still holds; a pause longer than the validity does the same.
//
// Options: node_timeout_ms (default 50), drift_factor_ppm (default 10000 = 0.01),
// parallel (1 = ask all nodes at once, 0 = one after another; default 1), check_validity
// (default 1; 0 is the hand-rolled client that counts OKs and forgets that the first keys
// may have expired while it was still asking the last nodes).
#include <algorithm>
#include <memory>

#include "lockstep/algorithms.h"
#include "lockstep/lock.h"
#include "lockstep/scripts.h"
#include "ms_arg.h"
#include "retry.h"

namespace lockstep {

std::unique_ptr<Lock> make_multilock(Env& env, const LockParams& params);

namespace {

using Argv = std::vector<std::string>;

class RedLock : public Lock {
 public:
  RedLock(Env& env, LockParams params)
      : env_(env),
        p_(std::move(params)),
        token_(random_uuid(env)),
        node_timeout_(Millis(*algorithm_option("redlock", p_, "node_timeout_ms"))),
        drift_ppm_(*algorithm_option("redlock", p_, "drift_factor_ppm")),
        parallel_(*algorithm_option("redlock", p_, "parallel") != 0),
        check_validity_(*algorithm_option("redlock", p_, "check_validity") != 0) {}

  Task<AcquireOutcome> acquire(Nanos wait) override {
    return acquire_with_retries(env_, p_.retry, wait, [this]() -> Task<AcquireOutcome> {
      const bool taken = co_await try_once();
      co_return taken ? AcquireOutcome::Acquired : AcquireOutcome::NotAcquired;
    });
  }

  // Released when a majority still held our token; NotOwner when our keys were gone
  // (the validity had ended); Unknown when too few nodes answered to tell.
  Task<ReleaseOutcome> release() override {
    std::vector<Reply> replies = co_await unlock_all();
    int deleted = 0, unknown = 0;
    for (const Reply& r : replies) {
      deleted += r.is_integer(1);
      unknown += r.is_unknown();
    }
    if (deleted >= quorum()) co_return ReleaseOutcome::Released;
    if (deleted + unknown >= quorum()) co_return ReleaseOutcome::Unknown;
    co_return ReleaseOutcome::NotOwner;
  }

  const std::string& token() const override { return token_; }

 private:
  int quorum() const { return env_.node_count() / 2 + 1; }

  Task<bool> try_once() {
    const Nanos start = env_.now_mono();
    Argv set = make_argv("SET", p_.key, token_, "NX", "PX", ms_string(p_.lease));
    std::vector<Reply> replies = co_await on_all_nodes(set, node_timeout_);
    int yes = static_cast<int>(std::count_if(replies.begin(), replies.end(), [](const Reply& r) { return r.is_ok(); }));
    const Nanos elapsed = env_.now_mono() - start;
    const Nanos drift = Nanos(p_.lease.count() / 1'000'000 * drift_ppm_) + 2ms;
    const Nanos validity = p_.lease - elapsed - drift;
    if (yes >= quorum() && (validity > Nanos(0) || !check_validity_)) co_return true;
    co_await unlock_all();
    co_return false;
  }

  Task<std::vector<Reply>> unlock_all() {
    Argv del = make_argv("EVAL", script("unlock_if_owner"), "1", p_.key, token_);
    co_return co_await on_all_nodes(del, node_timeout_);
  }

  Task<std::vector<Reply>> on_all_nodes(const Argv& argv, Nanos timeout) {
    const int n = env_.node_count();
    if (!parallel_) {
      std::vector<Reply> out;
      for (int i = 0; i < n; ++i) {
        Argv copy = argv;
        out.push_back(co_await env_.node(i).call(std::move(copy), timeout));
      }
      co_return out;
    }
    // All nodes at once; the round ends when the last reply (or timeout) is in, not at
    // the next tick of a polling loop, which added up to a millisecond to every
    // acquisition and counted it against the lock's validity.
    std::vector<Task<Reply>> calls;
    calls.reserve(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      Argv copy = argv;
      calls.push_back(env_.node(i).call(std::move(copy), timeout));
    }
    co_return co_await when_all(std::move(calls));
  }

  Env& env_;
  LockParams p_;
  std::string token_;
  Nanos node_timeout_;
  int64_t drift_ppm_;
  bool parallel_;
  bool check_validity_;
};

}  // namespace

std::unique_ptr<Lock> make_multinode_lock(const std::string& algorithm, Env& env, const LockParams& params) {
  if (algorithm == "redlock") return std::make_unique<RedLock>(env, params);
  if (algorithm == "multilock") return make_multilock(env, params);
  return nullptr;
}

}  // namespace lockstep
