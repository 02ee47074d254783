// What a run of a scenario gives back, in either world: the judged report, the history
// and the history as JSON lines (the bytes its digest is of).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "lockstep/checker/history.h"
#include "lockstep/reports/report.h"

namespace lockstep::runner {

struct RunOutcome {
  reports::RunReport report;
  checker::History history;
  std::string history_jsonl;
};

}  // namespace lockstep::runner
