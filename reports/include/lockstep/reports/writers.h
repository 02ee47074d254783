// Report writers: the files a person reads after a run. For each scenario, report.html
// (one self-contained page with an SVG timeline of the run) and report.md (the same
// facts for a pull-request comment) beside report.json; for a whole run, index.html
// linking every scenario and a JUnit XML file for CI. Also the reader for a run
// directory, so `lockstep report DIR` can redraw reports without running anything.
//
// Every writer is a pure function of its inputs: the same report and history give the
// same bytes, so reports can be diffed and committed.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "lockstep/checker/history.h"
#include "lockstep/reports/report.h"
#include "lockstep/reports/timeline.h"

namespace lockstep::reports {

struct HtmlOptions {
  size_t max_bytes = 3'000'000;  // above this, detail is dropped step by step
  size_t excerpt_lines = 60;
  TimelineOptions timeline;
};

std::string render_html(const RunReport& r, const checker::History& h, const HtmlOptions& o = {});
std::string render_markdown(const RunReport& r, const checker::History& h);
// A scenario a batch listed but did not run, and why (a world that cannot play it).
struct Skipped {
  std::string scenario;
  std::string algorithm;
  std::string description;
  std::string reason;
};

struct IndexInfo {
  // "run" or "live", for the page's title; "" to tell from the reports' world.
  std::string command;
  std::vector<Skipped> skipped;
  // Paragraphs shown under the heading: what a campaign of runs adds up to.
  std::vector<std::string> notes = {};
};

// index.html for a run: every scenario with its description and verdict, linking to
// <scenario>/report.html, then the skipped ones with the reason; a filter box and
// sortable columns (the page's own script).
std::string render_index(const std::vector<RunReport>& reports, const IndexInfo& info = {});
// JUnit XML: one testcase per scenario, a failure when the verdict is unknown or differs
// from the expectation. classname is the algorithm (or `suite` when there is none).
std::string render_junit(const std::vector<RunReport>& reports, const std::string& suite);

// "as expected", "MISMATCH" or "UNKNOWN": how a run compares with its scenario.
std::string outcome(const RunReport& r);
// What a run found, for tables: "unknown", "safe", or the violated properties grouped by
// severity class, "two-holders: linearizability, mutual-exclusion; damage: lost-update".
std::string found_text(const RunReport& r);
// Why the run is inconclusive (RunReport::inconclusive), one sentence each, capitalised;
// for an unknown verdict never empty. A violation verdict may have some too.
std::vector<std::string> inconclusive_reasons(const RunReport& r);
// What replaying the run promises: byte identity in the simulator, the same scenario and
// fault schedule live.
std::string replay_promise(const RunReport& r);
// The line that introduces those sentences ("" when there are none).
std::string inconclusive_heading(const RunReport& r);
// The scenario's parameters as (name, value) rows, and its faults as table rows.
std::vector<std::pair<std::string, std::string>> parameter_rows(const RunReport& r);
struct FaultRow {
  std::string kind, target, at, duration, details;
};
std::vector<FaultRow> fault_rows(const RunReport& r);
// The same, with `at` read from the history: when each fault struck (a fault waiting on
// an event says the time it fired), and the trigger in words among the details.
std::vector<FaultRow> fault_rows(const RunReport& r, const checker::History& h);

// Writes report.json, report.md and report.html into `dir` (created if needed).
bool write_scenario_reports(const std::filesystem::path& dir, const RunReport& r, const checker::History& h,
                            std::string& error);
// Writes only report.md and report.html: what `lockstep report` regenerates.
bool write_readable_reports(const std::filesystem::path& dir, const RunReport& r, const checker::History& h,
                            std::string& error);
// Writes index.html, and skipped.json beside it when some were skipped (what `lockstep
// report` reads back to list them again).
bool write_index(const std::filesystem::path& out_dir, const std::vector<RunReport>& reports, std::string& error,
                 const IndexInfo& info = {});
// Reads out_dir/skipped.json if there is one (none: an empty list, and true).
bool read_skipped(const std::filesystem::path& out_dir, std::vector<Skipped>& out, std::string& error);
bool write_junit(const std::vector<RunReport>& reports, const std::string& suite, const std::filesystem::path& path,
                 std::string& error);
bool write_junit(const std::vector<RunReport>& reports, const std::string& suite, const std::filesystem::path& path);

// Reads <scenario_dir>/report.json and history.jsonl back. Errors name the file and say
// what is wrong with it ("…/report.json: \"seed\" must be a non-negative integer").
bool load_run_dir(const std::filesystem::path& scenario_dir, RunReport& r, checker::History& h, std::string& error);
// Parses report.json's content; `error` says which field is wrong.
bool report_from_json(const nlohmann::json& j, RunReport& r, std::string& error);

}  // namespace lockstep::reports
