// `lockstep matrix`: one fuzz campaign per (profile x fault kind) cell, the broken cells
// shrunk to replayable counterexamples, and the table as DIR/matrix.json and
// DIR/matrix.html (see lockstep/runner/matrix.h). Exit 1 when any cell is broken.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "commands.h"
#include "lockstep/profiles.h"
#include "lockstep/reports/matrix.h"
#include "lockstep/reports/writers.h"
#include "lockstep/runner/matrix.h"

namespace lockstep::cli {
namespace {

namespace fs = std::filesystem;

struct MatrixArgs {
  std::string profiles;
  std::string algorithms;
  std::string faults;
  std::optional<uint64_t> runs;
  double time_limit_s = 0;
  uint64_t seed = 1;
  std::string out = "lockstep-matrix";
  std::string junit;
  bool markdown = false;
};

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

bool write(const fs::path& p, const std::string& data) {
  std::ofstream f(p, std::ios::binary);
  f << data;
  return static_cast<bool>(f);
}

// A directory name for a cell: "redsync@4.0.3--pause".
std::string cell_dir(const runner::MatrixCell& c) { return c.profile + "--" + c.fault; }

std::string command_line(const MatrixArgs& a, const runner::MatrixOptions& o) {
  std::string c = runner::replay_program() + " matrix";
  if (!a.profiles.empty() || a.algorithms.empty()) c += " --profiles " + (a.profiles.empty() ? "all" : a.profiles);
  if (!a.algorithms.empty()) c += " --algorithms " + a.algorithms;
  c += " --faults " + (a.faults.empty() ? "all" : a.faults);
  c += a.time_limit_s > 0 ? " --time-limit " + std::to_string(a.time_limit_s) : " --runs " + std::to_string(o.runs);
  return c + " --seed " + std::to_string(a.seed);
}

// Writes a broken cell's counterexample with its history and reports; fills the row.
bool write_cell(const fs::path& out, runner::MatrixCell& c, reports::MatrixRow& row, std::string& error) {
  auto& f = *c.summary.finding;
  const fs::path dir = out / cell_dir(c);
  std::error_code ec;
  fs::create_directories(dir, ec);
  const fs::path file = dir / "counterexample.json";
  f.shrunk.description = "Found by lockstep matrix in the cell " + c.profile + " x " + c.fault + " (run " +
                         std::to_string(f.index) + ") and shrunk in " + std::to_string(f.shrink_steps) + " steps.";
  row.replay = runner::replay_program() + " run " + file.string();
  auto outcome = runner::run_in_sim(f.shrunk, {std::nullopt, file.string()});
  if (!write(file, runner::to_json(f.shrunk).dump(2) + "\n") || !write(dir / "history.jsonl", outcome.history_jsonl) ||
      !reports::write_scenario_reports(dir, outcome.report, outcome.history, error)) {
    if (error.empty()) error = "cannot write to " + dir.string();
    return false;
  }
  row.counterexample = (fs::path(cell_dir(c)) / "counterexample.json").string();
  row.report = (fs::path(cell_dir(c)) / "report.html").string();
  for (const auto& p : outcome.report.found_violations()) row.properties.push_back(p);
  if (!outcome.report.violations.empty()) row.story = outcome.report.violations.front().explanation;
  return true;
}

// One JUnit test case per cell: it fails when the cell is broken.
reports::RunReport junit_case(const runner::MatrixCell& c) {
  reports::RunReport r;
  if (c.summary.finding) r = c.summary.finding->outcome.report;
  r.scenario = c.profile + " x " + c.fault;
  r.algorithm = c.profile;
  r.expected_violations.clear();
  if (!c.summary.finding) r.verdict = reports::verdict::kSafe;
  r.stats["runs"] = c.summary.runs;
  r.stats["seconds"] = c.summary.seconds;
  return r;
}

void show_progress(size_t i, size_t total, const runner::MatrixCell& c, bool done) {
  static const bool tty = isatty(fileno(stdout));
  if (!tty) return;
  std::printf("\r\033[K[%zu/%zu] %s x %s%s", i + (done ? 1 : 0), total, c.profile.c_str(), c.fault.c_str(),
              done ? (c.broken() ? ": broken" : ": no violation") : " ...");
  std::fflush(stdout);
}

int matrix(const MatrixArgs& a) {
  runner::MatrixOptions o;
  // Algorithm rows alone (a registered lock's table) leave the profiles out.
  const bool all_profiles = a.profiles == "all" || (a.profiles.empty() && a.algorithms.empty());
  o.profiles = all_profiles ? profile_names() : split(a.profiles);
  o.algorithms = split(a.algorithms);
  o.faults = a.faults.empty() || a.faults == "all" ? std::vector<std::string>{"none"} : split(a.faults);
  if (a.faults.empty() || a.faults == "all") {
    for (const auto& k : fault_kind_names()) o.faults.push_back(k);
  }
  if (a.runs && a.time_limit_s > 0) {
    std::fprintf(stderr, "lockstep matrix: give --runs or --time-limit, not both\n");
    return kExitUsage;
  }
  o.runs = a.runs.value_or(100);
  o.time_limit_s = a.time_limit_s;
  o.seed = a.seed;
  if (std::string why = runner::matrix_options_problem(o); !why.empty()) {
    std::fprintf(stderr, "lockstep matrix: %s\n", why.c_str());
    return kExitUsage;
  }
  std::vector<runner::MatrixCell> cells = runner::run_matrix(o, show_progress);
  if (isatty(fileno(stdout))) std::printf("\r\033[K");
  std::error_code ec;
  fs::create_directories(a.out, ec);
  std::vector<reports::MatrixRow> rows;
  std::vector<reports::RunReport> cases;
  std::string error;
  int broken = 0;
  for (auto& c : cells) {
    reports::MatrixRow row{c.profile, c.fault, c.broken() ? reports::matrix_verdict::kBroken
                                                          : reports::matrix_verdict::kNoViolation,
                           c.summary.runs, c.summary.seconds, c.summary.violations, "", "", "", {}, ""};
    if (c.broken()) {
      ++broken;
      if (!write_cell(a.out, c, row, error)) {
        std::fprintf(stderr, "lockstep matrix: %s\n", error.c_str());
        return kExitDataErr;
      }
    }
    cases.push_back(junit_case(c));
    rows.push_back(std::move(row));
  }
  reports::MatrixMeta meta{o.seed,
                           a.time_limit_s > 0 ? std::to_string(a.time_limit_s) + " s per cell"
                                              : std::to_string(o.runs) + " runs per cell",
                           command_line(a, o)};
  const fs::path dir(a.out);
  if (!write(dir / "matrix.json", reports::matrix_json(rows, meta).dump(2) + "\n") ||
      !write(dir / "matrix.html", reports::render_matrix_html(rows, meta)) ||
      (!a.junit.empty() && !reports::write_junit(cases, "lockstep matrix", a.junit, error))) {
    std::fprintf(stderr, "lockstep matrix: cannot write to %s %s\n", a.out.c_str(), error.c_str());
    return kExitDataErr;
  }
  if (a.markdown) std::printf("%s", reports::render_matrix_markdown(rows).c_str());
  for (const auto& r : rows) {
    std::string found;
    for (const auto& p : r.properties) found += (found.empty() ? "  " : ",") + p;
    std::printf("%-28s %-12s %-12s %5llu runs%s\n", r.profile.c_str(), r.fault.c_str(), r.verdict.c_str(),
                static_cast<unsigned long long>(r.runs), found.c_str());
    if (!r.replay.empty()) std::printf("    replay: %s\n", r.replay.c_str());
  }
  std::printf("%zu cells, %d broken; %s/matrix.html\n", rows.size(), broken, a.out.c_str());
  return broken > 0 ? kExitMismatch : 0;
}

}  // namespace

CommandRunner add_matrix_command(CLI::App& app) {
  auto a = std::make_shared<MatrixArgs>();
  auto* cmd = app.add_subcommand("matrix", "Fuzz every library profile under every fault kind: the safety table");
  cmd->add_option("--profiles", a->profiles, "Profiles, comma-separated (default: all; see lockstep profiles)");
  cmd->add_option("--algorithms", a->algorithms, "Algorithms as rows too, comma-separated (built-in or registered)");
  cmd->add_option("--faults", a->faults, "Fault kinds, comma-separated, and/or none (default: none and every kind)");
  cmd->add_option("--runs", a->runs, "Generated scenarios per cell (default 100)");
  cmd->add_option("--time-limit", a->time_limit_s, "Seconds per cell instead of a run count");
  cmd->add_option("--seed", a->seed, "Campaign seed")->capture_default_str();
  cmd->add_option("--out", a->out, "Directory for matrix.json, matrix.html and counterexamples")->capture_default_str();
  cmd->add_option("--junit", a->junit, "Write JUnit XML here (one test case per cell)");
  cmd->add_flag("--markdown", a->markdown, "Also print the table in Markdown");
  return [a] { return matrix(*a); };
}

}  // namespace lockstep::cli
