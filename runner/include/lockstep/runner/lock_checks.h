// The linearizability check of a run's lock operations, shared by both worlds so that a
// scenario's expected verdict means the same thing in the simulator and live.
#pragma once

#include <optional>
#include <string>

#include "lockstep/checker/history.h"
#include "lockstep/checker/invariants.h"
#include "lockstep/runner/scenario.h"

namespace lockstep::runner {

// Checks the acquire/release operations on the scenario's lock key against the lock's
// model (mutex, reentrant mutex or read-write lock). Returns the violation, if any; sets
// `unknown` when the search ran out of its time or memory limit.
std::optional<checker::Violation> check_lock_linearizability(const Scenario& s, const checker::History& h,
                                                             bool& unknown);

}  // namespace lockstep::runner
