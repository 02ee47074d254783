// What `lockstep run` and `lockstep live` do alike around each world's run: print what is
// run, write each scenario's history and reports (report.json, report.md, report.html),
// then index.html and, if asked, JUnit XML for the whole batch, print one verdict table
// and say how many runs matched their expectation. A scenario the world cannot play is
// listed as skipped with the reason, never silently dropped.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "lockstep/runner/run.h"
#include "scenario_files.h"

namespace lockstep::cli {

struct BatchOptions {
  std::string command;  // "run" or "live", for messages
  std::string out;
  std::string junit;
  std::optional<uint64_t> seed;  // shown in each scenario's header line
  std::string ran_where;         // "" or " live": "N scenarios run live, ..."
};

// Runs one scenario, or says why it cannot ("" when it ran).
using RunOne = std::function<std::string(const LoadedScenario& s, runner::RunOutcome& out)>;

// Exit code: 0 every run as expected, 1 a mismatch or unknown verdict, 65 when a report
// cannot be written.
int run_batch(const std::vector<LoadedScenario>& scenarios, const BatchOptions& o, const RunOne& run_one);

}  // namespace lockstep::cli
