// The stock workload for library profiles: the same sale as for lockstep's algorithms,
// driven through the library's API as its users drive it — acquire with the library's
// wait rules, extend on a schedule where the library has an extend call and no watchdog,
// take a reentrant lock again inside the work, and stop the work (no write) when the
// library says the lock is gone: a failed extend, a failed nested release, or the abort
// signal its documentation says to check before writing.
//
// Extensions are recorded as `extend` operations: the client's own on thread 0 (its
// failure ends the hold, see lock_checks.cc), the library's background renewals on
// thread 1 and up, so reports show them without the checker treating them as the
// client's word.
#pragma once

#include <cstdint>

#include "lockstep/env.h"
#include "lockstep/runner/recorder.h"
#include "lockstep/runner/scenario.h"

namespace lockstep::runner {

Task<void> profile_stock_client(Env& env, Recorder& rec, int64_t process, const LockSpec& lock,
                                const WorkloadSpec& w);

}  // namespace lockstep::runner
