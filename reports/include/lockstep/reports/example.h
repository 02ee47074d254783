// A small hand-made run, race 5 in miniature: client-1 takes the lock, a GC pause
// outlives the lease, client-2 takes the expired lock, and both are in their critical
// sections at once. Tests of the writers and the browser test draw it; it needs no
// simulator, so it also shows what a history must contain for a report.
#pragma once

#include <utility>

#include "lockstep/checker/history.h"
#include "lockstep/reports/report.h"

namespace lockstep::reports {

std::pair<RunReport, checker::History> example_run();

}  // namespace lockstep::reports
