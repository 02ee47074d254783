#include "scenario_batch.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "commands.h"
#include "lockstep/fault_plan.h"
#include "lockstep/reports/writers.h"
#include "lockstep/runner/progress.h"

namespace lockstep::cli {
namespace {

namespace fs = std::filesystem;

struct Row {
  reports::RunReport report;
  std::string skipped;  // why, if it did not run
};

std::string join(const std::set<std::string>& s) {
  if (s.empty()) return "safe";
  std::string out;
  for (const auto& x : s) out += (out.empty() ? "" : ",") + x;
  return out;
}

bool matched(const Row& r) { return r.skipped.empty() && !r.report.unknown() && r.report.as_expected(); }

std::string found_of(const Row& r) {
  if (!r.skipped.empty()) return "-";
  return r.report.unknown() ? "unknown" : join(r.report.found_violations());
}

void print_table(const std::vector<Row>& rows) {
  size_t w_name = 8, w_alg = 9, w_exp = 8, w_found = 5;
  for (const auto& r : rows) {
    w_name = std::max(w_name, r.report.scenario.size());
    w_alg = std::max(w_alg, r.report.algorithm.size());
    w_exp = std::max(w_exp, join(r.report.expected_violations).size());
    w_found = std::max(w_found, found_of(r).size());
  }
  auto line = [&](const std::string& a, const std::string& b, const std::string& c, const std::string& d,
                  const std::string& e) {
    std::printf("%-*s  %-*s  %-*s  %-*s  %s\n", int(w_name), a.c_str(), int(w_alg), b.c_str(), int(w_exp), c.c_str(),
                int(w_found), d.c_str(), e.c_str());
  };
  std::printf("\n");
  line("SCENARIO", "ALGORITHM", "EXPECTED", "FOUND", "RESULT");
  for (const auto& r : rows) {
    const std::string result = !r.skipped.empty() ? "skipped" : matched(r) ? "ok" : "MISMATCH";
    line(r.report.scenario, r.report.algorithm, join(r.report.expected_violations), found_of(r), result);
  }
}

void print_header(const runner::Scenario& s, const BatchOptions& o) {
  std::string faults;
  for (const auto& f : s.faults) faults += (faults.empty() ? "" : "; ") + describe_fault(f);
  std::printf("seed=%llu algorithm=%s faults=%s  [%s]\n", static_cast<unsigned long long>(o.seed.value_or(s.seed)),
              lock_in_use(s).c_str(), faults.empty() ? "none" : faults.c_str(), s.name.c_str());
  std::fflush(stdout);
}

// Why a run's verdict could not be given, for the terminal.
void print_unknown(const reports::RunReport& r) {
  for (const auto& why : reports::unknown_reasons(r)) std::printf("  %s: %s\n", r.scenario.c_str(), why.c_str());
}

}  // namespace

int run_batch(const std::vector<LoadedScenario>& scenarios, const BatchOptions& o, const RunOne& run_one) {
  std::vector<Row> rows;
  // One file needs no count; many get a progress line under the headers on a terminal.
  runner::Progress progress(o.command, scenarios.size() > 1 && isatty(STDERR_FILENO));
  for (const auto& loaded : scenarios) {
    const runner::Scenario& s = loaded.scenario;
    // The header goes out before a long run starts, so a terminal shows what is running.
    progress.clear();
    print_header(s, o);
    progress.show(rows.size(), scenarios.size(), s.name);
    runner::RunOutcome outcome;
    const std::string skipped = run_one(loaded, outcome);
    progress.clear();
    if (!skipped.empty()) {
      std::printf("skipped %s: %s\n", s.name.c_str(), skipped.c_str());
      Row row;
      row.report.scenario = s.name;
      row.report.algorithm = lock_in_use(s);
      row.report.expected_violations = s.expected_violations;
      row.report.description = s.description;
      row.skipped = skipped;
      rows.push_back(std::move(row));
      continue;
    }
    const fs::path dir = fs::path(o.out) / s.name;
    std::error_code ec;
    fs::create_directories(dir, ec);
    std::string error;
    if (ec || !write_file(dir / "history.jsonl", outcome.history_jsonl) ||
        !reports::write_scenario_reports(dir, outcome.report, outcome.history, error)) {
      std::fprintf(stderr, "lockstep %s: cannot write to %s%s%s\n", o.command.c_str(), dir.string().c_str(),
                   error.empty() ? "" : ": ", error.c_str());
      return kExitDataErr;
    }
    rows.push_back(Row{std::move(outcome.report), ""});
  }
  print_table(rows);
  std::vector<reports::RunReport> ran;
  reports::IndexInfo index{o.command, {}};
  for (const auto& r : rows) {
    if (r.skipped.empty()) ran.push_back(r.report);
    else index.skipped.push_back({r.report.scenario, r.report.algorithm, r.report.description, r.skipped});
  }
  std::string error;
  if (!reports::write_index(o.out, ran, error, index) ||
      (!o.junit.empty() && !reports::write_junit(ran, "lockstep", o.junit, error))) {
    std::fprintf(stderr, "lockstep %s: %s\n", o.command.c_str(), error.c_str());
    return kExitDataErr;
  }
  int mismatches = 0, skipped = 0;
  for (const auto& r : rows) {
    if (!r.skipped.empty()) ++skipped;
    else if (!matched(r)) ++mismatches;
  }
  const int count = static_cast<int>(ran.size());
  std::printf("\n%d scenarios%s, %d as expected, %d mismatched", count, o.ran_where.c_str(), count - mismatches,
              mismatches);
  if (skipped > 0) std::printf(", %d skipped", skipped);
  std::printf("; reports in %s/ (open %s/index.html)\n", o.out.c_str(), o.out.c_str());
  for (const auto& r : rows) {
    if (!r.skipped.empty()) std::printf("  skipped %s: %s\n", r.report.scenario.c_str(), r.skipped.c_str());
  }
  for (const auto& r : rows) {
    if (!r.skipped.empty() || matched(r)) continue;
    if (r.report.unknown()) print_unknown(r.report);
    std::printf("  replay: %s\n", r.report.replay.c_str());
  }
  return mismatches == 0 ? 0 : kExitMismatch;
}

}  // namespace lockstep::cli
