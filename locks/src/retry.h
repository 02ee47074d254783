// The acquire loop lockstep's recipes share: try, and while the answer is a definite "no",
// pause delay + a random [0, jitter] and try again, at most 1 + retry.count_max times and
// never past the caller's wait (a pause that would end after it is not taken).
#pragma once

#include "lockstep/env.h"
#include "lockstep/lock.h"

namespace lockstep {

// `once()` is one attempt: a Task<AcquireOutcome>. Acquired and Unknown end the loop
// (an unknown outcome may have taken the lock; trying again would only hide that).
template <typename Once>
Task<AcquireOutcome> acquire_with_retries(Env& env, const RetryPolicy& retry, Nanos wait, Once once) {
  const Nanos deadline = env.now_mono() + wait;
  for (int attempt = 0; attempt <= retry.count_max; ++attempt) {
    const AcquireOutcome o = co_await once();
    if (o != AcquireOutcome::NotAcquired) co_return o;
    if (attempt == retry.count_max) break;
    const Nanos pause = retry.delay + Nanos(random_between(env, 0, retry.jitter.count()));
    if (env.now_mono() + pause >= deadline) break;
    co_await env.sleep(pause);
  }
  co_return AcquireOutcome::NotAcquired;
}

}  // namespace lockstep
