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

// The program a report's replay command names: "lockstep", or a user's own build of
// the command line with its lock registered (lockstep/cli.h sets it from argv[0]), since
// only that program knows the lock the scenario names.
const std::string& replay_program();
void set_replay_program(std::string program);

}  // namespace lockstep::runner
