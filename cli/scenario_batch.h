// What `lockstep run` and `lockstep live` do alike around each world's run: write each
// scenario's history and reports (report.json, report.md, report.html), print one line per
// scenario as it ends (its result, verdict or most severe class, and the first sentence
// of what it found), cut to the terminal's width, then index.html and, if asked, JUnit XML
// for the whole batch, and say how many runs matched their expectation. A scenario the world cannot play is
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
  std::string ran_where;         // "" or " run live": "N scenarios run live: ..."
  bool quiet = false;    // -q: only the rows that did not go as expected, and the summary
  bool verbose = false;  // -v: each scenario's seed, lock and faults before it runs
  // Scenarios run at once (lockstep/runner/jobs.h). Whatever the number, rows, headers and
  // reports come out in the scenarios' order, as with one.
  unsigned jobs = 1;
};

// Runs one scenario, or says why it cannot ("" when it ran). With more than one job it is
// called from several threads at once.
using RunOne = std::function<std::string(const LoadedScenario& s, runner::RunOutcome& out)>;

// Exit code: 0 every run as expected, 1 a mismatch or unknown verdict, 65 when a report
// cannot be written.
int run_batch(const std::vector<LoadedScenario>& scenarios, const BatchOptions& o, const RunOne& run_one);

}  // namespace lockstep::cli
