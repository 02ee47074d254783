#include "scenario_batch.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "commands.h"
#include "lockstep/fault_plan.h"
#include "lockstep/reports/writers.h"
#include "lockstep/runner/jobs.h"
#include "lockstep/runner/progress.h"

namespace lockstep::cli {
namespace {

namespace fs = std::filesystem;

struct Row {
  reports::RunReport report;
  std::string skipped;  // why, if it did not run
};

bool matched(const Row& r) { return r.skipped.empty() && r.report.as_expected(); }

// `s` cut to `width` columns, the cut marked. Sentences and names are ASCII or UTF-8; a
// cut never splits a character, and continuation bytes take no column.
std::string fit(const std::string& s, size_t width) {
  size_t columns = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) continue;
    if (++columns > width) {
      // Room for "...": back up three columns.
      size_t keep = i, back = 0;
      while (keep > 0 && back < 3) {
        --keep;
        if ((static_cast<unsigned char>(s[keep]) & 0xC0) != 0x80) ++back;
      }
      return s.substr(0, keep) + "...";
    }
  }
  return s;
}

std::string plural(size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// What a row says in its last column: the most severe finding's sentence, why the run is
// inconclusive, or why it was skipped.
std::string sentence_of(const Row& r) {
  if (!r.skipped.empty()) return r.skipped;
  const auto& rep = r.report;
  if (rep.unknown()) {
    const auto why = reports::inconclusive_reasons(rep);
    return why.empty() ? "" : why.front();
  }
  const checker::Violation* first = nullptr;
  for (const auto& v : rep.violations) {
    if (!first || v.severity < first->severity) first = &v;
  }
  return first ? first->explanation : "";
}

// External clients that were still running when the run ended, hung or slow: they come
// first on the row, because what they were doing went untested whatever the verdict.
std::string first_sentence(const Row& r) {
  std::string sentence = sentence_of(r);
  const auto clients = r.report.stats.find("clients");
  if (clients == r.report.stats.end() || !clients->is_object() || !clients->contains("killed_at_end")) return sentence;
  std::string names;
  for (const auto& k : (*clients)["killed_at_end"]) {
    if (!k.is_string()) continue;
    const std::string text = k.get<std::string>();
    names += (names.empty() ? "" : ", ") + text.substr(0, text.find(' '));
  }
  if (names.empty()) return sentence;
  return "killed at the end, still running: " + names + (sentence.empty() ? "" : "; " + sentence);
}

// safe, unknown, or the most severe class found.
std::string verdict_word(const Row& r) {
  if (!r.skipped.empty()) return "-";
  if (r.report.unknown() || r.report.violations.empty()) return r.report.verdict;
  auto most = r.report.violations.front().severity;
  for (const auto& v : r.report.violations) most = std::min(most, v.severity);
  return checker::to_string(most);
}

std::string result_word(const Row& r) { return !r.skipped.empty() ? "skipped" : matched(r) ? "ok" : "MISMATCH"; }

struct Columns {
  size_t width, name;
};

// One line per scenario: RESULT  SCENARIO  VERDICT-OR-CLASS  first sentence.
void print_row(const Row& r, const Columns& c) {
  constexpr size_t kResult = 8, kVerdict = 11;
  std::string line = result_word(r);
  line.resize(kResult, ' ');
  std::string name = fit(r.report.scenario, c.name);
  name.resize(std::max(name.size(), c.name), ' ');
  std::string verdict = verdict_word(r);
  verdict.resize(std::max(verdict.size(), kVerdict), ' ');
  line += "  " + name + "  " + verdict;
  const std::string sentence = first_sentence(r);
  if (!sentence.empty() && line.size() + 2 + 8 <= c.width) line += "  " + fit(sentence, c.width - line.size() - 2);
  while (!line.empty() && line.back() == ' ') line.pop_back();
  std::printf("%s\n", fit(line, c.width).c_str());
  if (!r.skipped.empty() || matched(r)) return;
  std::printf("%s\n",
              fit("          expected " + r.report.expected.text() + ", found " + reports::found_text(r.report), c.width)
                  .c_str());
}

void print_header(const runner::Scenario& s, const BatchOptions& o, size_t width) {
  std::string faults;
  for (const auto& f : s.faults) faults += (faults.empty() ? "" : "; ") + describe_fault(f);
  const std::string line = "seed=" + std::to_string(o.seed.value_or(s.seed)) + " algorithm=" + lock_in_use(s) +
                           " faults=" + (faults.empty() ? "none" : faults) + "  [" + s.name + "]";
  std::printf("%s\n", fit(line, width).c_str());
  std::fflush(stdout);
}

}  // namespace

int run_batch(const std::vector<LoadedScenario>& scenarios, const BatchOptions& o, const RunOne& run_one) {
  const size_t width = terminal_columns();
  size_t longest = 8;
  for (const auto& s : scenarios) longest = std::max(longest, s.scenario.name.size());
  // The name gives way to the sentence only so far: 40 columns keep most names whole.
  const Columns columns{width, std::min(longest, std::max<size_t>(40, width > 70 ? width - 70 : 0))};
  std::vector<Row> rows;
  // One file needs no count; many get a progress line on a terminal.
  runner::Progress progress(o.command, scenarios.size() > 1 && isatty(STDERR_FILENO));
  // A single scenario says what runs before it runs; a batch, with --verbose. With one
  // job the next header is printed before its scenario starts; with more, the scenario
  // may be running already, but stdout reads the same.
  const bool headers = o.verbose || scenarios.size() == 1;
  auto announce = [&](size_t i) {
    if (i >= scenarios.size()) return;
    progress.clear();
    if (headers && !o.quiet) print_header(scenarios[i].scenario, o, width);
    progress.show(i, scenarios.size(), scenarios[i].scenario.name);
  };
  struct Ran {
    runner::RunOutcome outcome;
    std::string skipped;
  };
  auto make_worker = [&run_one, &scenarios] {
    return [&run_one, &scenarios](uint64_t i) {
      Ran r;
      r.skipped = run_one(scenarios[i], r.outcome);
      return r;
    };
  };
  int failed = 0;
  announce(0);
  // The calling thread only takes, so that each row is printed as soon as it may be.
  runner::run_in_order<Ran>(runner::InOrderPlan{o.jobs, scenarios.size(), {}, 2, false}, make_worker, [&](uint64_t i, Ran&& ran) {
    const runner::Scenario& s = scenarios[i].scenario;
    progress.clear();
    Row row;
    if (!ran.skipped.empty()) {
      row.report.scenario = s.name;
      row.report.algorithm = lock_in_use(s);
      row.report.expected = s.expect;
      row.report.description = s.description;
      row.skipped = ran.skipped;
    } else {
      const fs::path dir = fs::path(o.out) / s.name;
      std::error_code ec;
      fs::create_directories(dir, ec);
      std::string error;
      if (ec || !write_file(dir / "history.jsonl", ran.outcome.history_jsonl) ||
          !reports::write_scenario_reports(dir, ran.outcome.report, ran.outcome.history, error)) {
        std::fprintf(stderr, "lockstep %s: cannot write to %s%s%s\n", o.command.c_str(), dir.string().c_str(),
                     error.empty() ? "" : ": ", error.c_str());
        failed = kExitDataErr;
        return false;
      }
      row.report = std::move(ran.outcome.report);
    }
    // Each row as its run ends, so a long batch shows its results as they come.
    if (!o.quiet || (row.skipped.empty() && !matched(row))) {
      print_row(row, columns);
      std::fflush(stdout);
    }
    rows.push_back(std::move(row));
    announce(i + 1);
    return true;
  });
  progress.clear();
  if (failed) return failed;
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
  size_t mismatches = 0, skipped = 0;
  for (const auto& r : rows) {
    if (!r.skipped.empty()) ++skipped;
    else if (!matched(r)) ++mismatches;
  }
  const size_t count = ran.size();
  std::string summary = plural(count, "scenario", "scenarios") + o.ran_where + ": " +
                        std::to_string(count - mismatches) + " as expected, " + std::to_string(mismatches) +
                        " mismatched";
  if (skipped > 0) summary += ", " + std::to_string(skipped) + " skipped";
  std::printf("\n%s\n", fit(summary, width).c_str());
  std::printf("%s\n", fit("reports: " + (fs::path(o.out) / "index.html").string(), width).c_str());
  for (const auto& r : rows) {
    if (!r.skipped.empty() || matched(r)) continue;
    for (const auto& why : reports::inconclusive_reasons(r.report))
      std::printf("%s\n", fit("  " + r.report.scenario + ": " + why, width).c_str());
    std::printf("  replay: %s\n", r.report.replay.c_str());
  }
  if (count == 0) {
    std::printf("nothing ran: every scenario was skipped, so nothing was tested\n");
    return kExitMismatch;
  }
  return mismatches == 0 ? 0 : kExitMismatch;
}

}  // namespace lockstep::cli
