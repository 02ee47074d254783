// Live campaigns (`lockstep live --repeat N [--vary-faults]`): one scenario run N times
// against fresh servers, each run's faults optionally moved in time, and the runs counted
// by what they broke.
//
// A live run is not reproducible bit for bit, so one run says little about a race: the
// campaign measures how often it breaks. What each run does is fixed before it starts and
// depends only on (campaign seed, run index): its seed, and with --vary-faults each fault's
// time (at_ms) or, for a fault waiting on an event, its delay after that event, drawn
// within a stated range. The run's scenario, drawn times written in, is saved beside its
// report, so `lockstep live FILE` plays that schedule again.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "lockstep/reports/report.h"
#include "lockstep/runner/scenario.h"

namespace lockstep::runner {

// How far a fault's time may move either way: `percent` of the time itself, but at least
// `floor_ms` (a fault on an event usually waits 0 ms after it, and a percentage of 0 moves
// nothing). Times stay within the run: at_ms in [0, duration_ms), an event's delay in
// [0, duration_ms].
struct VaryRange {
  int percent = 50;
  int64_t floor_ms = 100;
  bool operator==(const VaryRange&) const = default;
};

// Reads "50%", "200ms" or "50%,200ms" (a part left out is 0). "" or what is wrong.
std::string parse_vary_range(const std::string& text, VaryRange& out);
// "" or why the range cannot be used on this scenario: a percentage above 100, a floor
// longer than the run, a range that moves nothing.
std::string vary_range_problem(const VaryRange& r, const Scenario& s);
// "±50% of each fault's time, at least ±100ms": the range in words, for the summary.
std::string describe_vary_range(const VaryRange& r);
// The same as the option spells it: "50%,100ms".
std::string vary_range_text(const VaryRange& r);

// Run `index`'s seed (runs count from 1): a function of the campaign seed and the index
// alone, so the same campaign draws the same schedules however it is run.
uint64_t campaign_run_seed(uint64_t campaign_seed, uint64_t index);

// The scenario run `index` plays: named <name>-run-<index> (zero-padded to the width of
// `runs`), with the run's seed and, given a range, every fault's time drawn within it.
Scenario campaign_run_scenario(const Scenario& s, uint64_t campaign_seed, uint64_t index, uint64_t runs,
                               const std::optional<VaryRange>& vary);

// The scenario as a file saved in `dir`: an external client's command words that name a
// file beside the original scenario are rewritten to reach it from `dir`, and the program
// runs in `dir`, so the saved file replays from where it is.
Scenario rebased_to(const Scenario& s, const std::filesystem::path& dir);

// What a campaign's runs found so far.
struct LiveCampaignSummary {
  uint64_t runs = 0;
  uint64_t broken = 0;   // verdict violation
  uint64_t safe = 0;
  uint64_t unknown = 0;  // runs that tested nothing trustworthy: neither broken nor safe
  // Broken runs by their most severe class, and every class a run showed (a run counts
  // once per class), as fuzz and the matrix count them.
  std::map<std::string, uint64_t> by_worst_class;
  std::map<std::string, uint64_t> by_class;
  void add(const reports::RunReport& r);
  // "7 of 20 runs broke (35%)".
  std::string break_rate_text() const;
};

// The most severe class a report found ("" without a violation).
std::string worst_class(const reports::RunReport& r);

}  // namespace lockstep::runner
