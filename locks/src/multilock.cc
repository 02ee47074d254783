// multilock: Redisson's RedissonMultiLock in its strict form — the set-px-lua lock must
// be taken on every node (one after another); any refusal gives back the ones taken and
// the whole attempt is retried. Release = Lua compare-and-delete on every node.
// Where it breaks: one unreachable node blocks everyone (no majority rule), and like
// every lease a pause longer than the lease lets a second client in.
#include <algorithm>
#include <memory>

#include "lockstep/lock.h"
#include "lockstep/scripts.h"
#include "ms_arg.h"
#include "retry.h"

namespace lockstep {
namespace {

using Argv = std::vector<std::string>;

class MultiLock : public Lock {
 public:
  MultiLock(Env& env, LockParams params) : env_(env), p_(std::move(params)), token_(random_uuid(env)) {}

  Task<AcquireOutcome> acquire(Nanos wait) override {
    return acquire_with_retries(env_, p_.retry, wait, [this] { return attempt(); });
  }

  // Released only when every node still held our token.
  Task<ReleaseOutcome> release() override {
    int deleted = 0, unknown = 0;
    for (int i = 0; i < env_.node_count(); ++i) {
      Reply r = co_await unlock(i);
      deleted += r.is_integer(1);
      unknown += r.is_unknown();
    }
    if (deleted == env_.node_count()) co_return ReleaseOutcome::Released;
    co_return unknown > 0 ? ReleaseOutcome::Unknown : ReleaseOutcome::NotOwner;
  }

  const std::string& token() const override { return token_; }

 private:
  Task<AcquireOutcome> attempt() {
    const bool all = co_await take_all();
    co_return all ? AcquireOutcome::Acquired : AcquireOutcome::NotAcquired;
  }

  // All or nothing: on the first node that does not say OK (refused, held, or no answer,
  // which may have set it) undo every node up to and including that one.
  Task<bool> take_all() {
    for (int i = 0; i < env_.node_count(); ++i) {
      Argv set = make_argv("SET", p_.key, token_, "NX", "PX", ms_string(p_.lease));
      Reply r = co_await env_.node(i).call(std::move(set), p_.command_timeout);
      if (r.is_ok()) continue;
      for (int j = 0; j <= i; ++j) co_await unlock(j);
      co_return false;
    }
    co_return true;
  }

  Task<Reply> unlock(int i) {
    Argv eval = make_argv("EVAL", script("unlock_if_owner"), "1", p_.key, token_);
    co_return co_await env_.node(i).call(std::move(eval), p_.command_timeout);
  }

  Env& env_;
  LockParams p_;
  std::string token_;
};

}  // namespace

std::unique_ptr<Lock> make_multilock(Env& env, const LockParams& params) {
  return std::make_unique<MultiLock>(env, params);
}

}  // namespace lockstep
