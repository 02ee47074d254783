#include "lease_lock.h"

namespace acme {

using lockstep::AcquireOutcome;
using lockstep::ReleaseOutcome;

namespace {

constexpr const char* kCompareAndDelete =
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";

}  // namespace

LeaseLock::LeaseLock(lockstep::Env& env, lockstep::LockParams params, bool compare_on_release)
    : env_(env), params_(std::move(params)), compare_on_release_(compare_on_release),
      token_(lockstep::random_uuid(env)) {}

lockstep::Task<lockstep::Reply> LeaseLock::call(std::vector<std::string> argv) {
  return env_.node(0).call(std::move(argv), params_.command_timeout);
}

lockstep::Task<AcquireOutcome> LeaseLock::acquire(lockstep::Nanos wait) {
  const auto deadline = env_.now_mono() + wait;
  const auto lease_ms = std::to_string(lockstep::to_ms(params_.lease));
  const int64_t attempts = lockstep::option_or(params_, "attempts_max", params_.retry.count_max + 1);
  for (int64_t attempt = 1;; ++attempt) {
    auto set = lockstep::make_argv("SET", params_.key, token_, "NX", "PX", lease_ms);
    lockstep::Reply r = co_await call(std::move(set));
    if (r.is_ok()) co_return AcquireOutcome::Acquired;
    // A timeout may have set the key: the caller must treat the lock as maybe held.
    if (r.is_unknown()) co_return AcquireOutcome::Unknown;
    const auto pause = params_.retry.delay + lockstep::Nanos(lockstep::random_between(env_, 0, params_.retry.jitter.count()));
    if (attempt >= attempts || env_.now_mono() + pause >= deadline) co_return AcquireOutcome::NotAcquired;
    co_await env_.sleep(pause);
  }
}

lockstep::Task<ReleaseOutcome> LeaseLock::release() {
  lockstep::Reply r;
  if (compare_on_release_) {
    auto eval = lockstep::make_argv("EVAL", kCompareAndDelete, "1", params_.key, token_);
    r = co_await call(std::move(eval));
  } else {
    auto del = lockstep::make_argv("DEL", params_.key);
    r = co_await call(std::move(del));
  }
  if (r.is_integer(1)) co_return ReleaseOutcome::Released;
  if (r.type == lockstep::Reply::Type::Integer) co_return ReleaseOutcome::NotOwner;
  co_return ReleaseOutcome::Unknown;
}

void register_lease_locks() {
  if (lockstep::find_algorithm("lease-lock")) return;
  // Listing the options makes a typo in a scenario file an error instead of a default.
  lockstep::LockOption attempts = lockstep::integer_option(
      "attempts_max", 0, 1, 100000, "how many times acquire tries SET before giving up (default: retries + 1)");
  attempts.default_value = nullptr;  // derived from the retry policy, as option_or below does
  const std::vector<lockstep::LockOption> options = {attempts};
  lockstep::register_algorithm({"lease-lock-v1",
                                [](lockstep::Env& env, const lockstep::LockParams& p) {
                                  return std::make_unique<LeaseLock>(env, p, false);
                                },
                                "SET NX PX to lock, DEL to unlock", 1, options});
  lockstep::register_algorithm({"lease-lock",
                                [](lockstep::Env& env, const lockstep::LockParams& p) {
                                  return std::make_unique<LeaseLock>(env, p, true);
                                },
                                "SET NX PX to lock, compare-and-delete to unlock", 1, options});
}

}  // namespace acme
