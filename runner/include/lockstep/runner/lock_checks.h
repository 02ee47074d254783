// How a recorded run is judged, shared by both worlds so that a scenario's expected
// verdict means the same thing in the simulator and live.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "lockstep/checker/history.h"
#include "lockstep/checker/linearizability.h"
#include "lockstep/checker/run_history.h"
#include "lockstep/reports/report.h"
#include "lockstep/runner/scenario.h"

namespace lockstep::runner {

// The report of a recorded run: the invariants, then the linearizability of the lock
// operations; the verdict (unknown when the check ran out of its limits or the run out of
// its event bound); the scenario, its faults and the counts in stats. `played` is the
// scenario as run, whose key names the history carries (live under --redis they have a
// prefix); all else comes from `s`. The caller adds what depends on the world (world,
// seed and replay) and the digest of the history's JSON lines. With `verdict_only` the
// report leaves out the scenario's definition and its faults.
reports::RunReport judge_run(const Scenario& s, const Scenario& played, const checker::History& h,
                             bool verdict_only = false);

// The lock's operations, drawn from a history (lockstep/checker/run_history.h).
using checker::LockOperations;

}  // namespace lockstep::runner
