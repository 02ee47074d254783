// `lockstep matrix`: one fuzz campaign per (profile x fault kind) cell, the broken cells
// shrunk to replayable counterexamples, and the table as DIR/matrix.json and
// DIR/matrix.html (see lockstep/runner/matrix.h). Exit 1 when any cell is broken.

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include "commands.h"
#include "lockstep/algorithms.h"
#include "lockstep/checker/properties.h"
#include "lockstep/text.h"
#include "option_values.h"
#include "lockstep/profiles.h"
#include "lockstep/reports/matrix.h"
#include "lockstep/reports/writers.h"
#include "lockstep/runner/jobs.h"
#include "lockstep/runner/matrix.h"
#include "lockstep/runner/progress.h"
#include "lockstep/runner/shard.h"

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
  std::string stop_on = "safety";
  std::string shard = "0/1";
  std::optional<int> shard_count;
  std::vector<std::string> merge;
  std::string jobs;  // runs at once; "" for one per core
};

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

// A directory name for a cell: "redsync@4.0.3--pause".
std::string cell_dir(const runner::MatrixCell& c) { return c.profile + "--" + c.fault; }

std::string command_line(const MatrixArgs& a, const runner::MatrixOptions& o) {
  std::string c = runner::replay_program() + " matrix";
  if (!a.profiles.empty() || a.algorithms.empty()) c += " --profiles " + (a.profiles.empty() ? "all" : a.profiles);
  if (!a.algorithms.empty()) c += " --algorithms " + a.algorithms;
  c += " --faults " + (a.faults.empty() ? "all" : a.faults);
  c += a.time_limit_s > 0 ? " --time-limit " + seconds_text(a.time_limit_s) : " --runs " + std::to_string(o.runs);
  if (o.stop_on != "safety") c += " --stop-on " + o.stop_on;
  return c + " --seed " + std::to_string(a.seed);
}

// Writes a broken cell's counterexample with its history and reports; fills the row.
bool write_cell(const fs::path& out, runner::MatrixCell& c, reports::MatrixRow& row, std::string& error) {
  auto& f = *c.summary.finding;
  const fs::path dir = out / cell_dir(c);
  std::error_code ec;
  fs::create_directories(dir, ec);
  const fs::path file = dir / "counterexample.json";
  f.shrunk.description = "Found by lockstep matrix in the cell " + c.profile + " x " + c.fault + ", faults " +
                         runner::to_string(c.found_in) + " the lock's assumptions (run " +
                         std::to_string(f.index) + ") and shrunk in " + std::to_string(f.shrink_steps) + " steps" +
                         (c.broke_a_promise ? ": a promise no fault excuses, so a bug all the same." : ".");
  row.replay = runner::replay_program() + " run " + file.string();
  auto outcome = runner::run_in_sim(f.shrunk, {std::nullopt, file.string()});
  if (!write_file(file, runner::to_json(f.shrunk).dump(2) + "\n") || !write_file(dir / "history.jsonl", outcome.history_jsonl) ||
      !reports::write_scenario_reports(dir, outcome.report, outcome.history, error)) {
    if (error.empty()) error = "cannot write to " + dir.string();
    return false;
  }
  row.counterexample = (fs::path(cell_dir(c)) / "counterexample.json").string();
  row.report = (fs::path(cell_dir(c)) / "report.html").string();
  for (const auto& p : outcome.report.found_violations()) row.properties.push_back(p);
  for (const auto& c : checker::severity_classes()) {
    if (outcome.report.found_classes().count(c.name)) row.classes.push_back(c.name);
  }
  if (!outcome.report.violations.empty()) row.story = outcome.report.violations.front().explanation;
  return true;
}

// One JUnit test case per cell: it fails when the cell is a bug (a limit passes, as the
// command's exit code does).
reports::RunReport junit_case(const runner::MatrixCell& c) {
  reports::RunReport r;
  const bool bug = std::string(c.verdict()) == runner::cell_verdict::kBug;
  if (bug) r = c.summary.finding->outcome.report;
  r.scenario = c.profile + " x " + c.fault;
  r.algorithm = c.profile;
  r.expected = reports::Expectation::safe();
  if (!bug) r.verdict = reports::verdict::kSafe;
  r.stats["runs"] = c.summary.runs;
  r.stats["seconds"] = c.summary.seconds;
  return r;
}

// matrix.json with what a merge needs beside the table: the shard, the full row and column
// lists (the order of the unsharded table) and each broken cell's story.
nlohmann::ordered_json matrix_file(const std::vector<reports::MatrixRow>& rows, const reports::MatrixMeta& meta,
                                   const runner::MatrixOptions& o) {
  nlohmann::ordered_json j = reports::matrix_json(rows, meta);
  j["shard"] = std::to_string(o.shard) + "/" + std::to_string(o.shards);
  j["profiles"] = o.profiles;
  j["faults"] = o.faults;
  j["stop_on"] = o.stop_on;
  for (size_t i = 0; i < rows.size(); ++i) j["cells"][i]["story"] = rows[i].story;
  return j;
}

// Writes matrix.json, matrix.html and JUnit, prints the table; the exit code.
int finish(const MatrixArgs& a, const runner::MatrixOptions& o, const reports::MatrixMeta& meta,
           const std::vector<reports::MatrixRow>& rows, const std::vector<reports::RunReport>& cases) {
  std::string error;
  const fs::path dir(a.out);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (!write_file(dir / "matrix.json", matrix_file(rows, meta, o).dump(2) + "\n") ||
      !write_file(dir / "matrix.html", reports::render_matrix_html(rows, meta)) ||
      (!a.junit.empty() && !reports::write_junit(cases, "lockstep matrix", a.junit, error))) {
    std::fprintf(stderr, "lockstep matrix: cannot write to %s %s\n", a.out.c_str(), error.c_str());
    return kExitDataErr;
  }
  if (a.markdown) std::printf("%s", reports::render_matrix_markdown(rows).c_str());
  int bugs = 0, limits = 0;
  std::map<std::string, uint64_t> by_class;
  for (const auto& r : rows) {
    bugs += r.verdict == reports::matrix_verdict::kBug || r.verdict == reports::matrix_verdict::kBroken;
    limits += r.verdict == reports::matrix_verdict::kLimit;
    for (const auto& c : r.classes) ++by_class[c];
    const std::string found = r.properties.empty() ? "" : "  " + join(r.classes, ",") + ": " + join(r.properties, ",");
    std::printf("%-28s %-12s %-12s %5llu runs%s\n", r.profile.c_str(), r.fault.c_str(), r.verdict.c_str(),
                static_cast<unsigned long long>(r.runs), found.c_str());
    if (!r.replay.empty()) std::printf("    replay: %s\n", r.replay.c_str());
  }
  std::printf("%zu cell%s, %d bug%s, %d limit%s (by class: %s); %s/matrix.html\n", rows.size(),
              rows.size() == 1 ? "" : "s", bugs, bugs == 1 ? "" : "s", limits, limits == 1 ? "" : "s",
              runner::by_class_text(by_class).c_str(), a.out.c_str());
  // A limit is what the lock never claimed to survive: only a bug fails the command.
  return bugs > 0 ? kExitMismatch : 0;
}

int fail_merge(const std::string& why) {
  std::fprintf(stderr, "lockstep matrix --merge: %s\n", why.c_str());
  return kExitDataErr;
}

// The shards' matrix.json files as one table in the unsharded order, their counterexample
// folders copied beside it: the same directory an unsharded run writes.
int merge(const MatrixArgs& a) {
  std::vector<nlohmann::json> parts;
  for (const auto& d : a.merge) {
    const fs::path p = fs::path(d) / "matrix.json";
    std::ifstream in(p);
    nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
    if (!in || j.is_discarded() || !j.contains("cells") || !j["cells"].is_array() || !j.contains("shard"))
      return fail_merge(p.string() + ": expected a shard's matrix.json, found " +
                        (in ? "something else" : "no readable file"));
    parts.push_back(std::move(j));
  }
  runner::MatrixOptions o;
  o.profiles = parts[0].value("profiles", std::vector<std::string>{});
  o.stop_on = parts[0].value("stop_on", std::string("all"));
  o.faults = parts[0].value("faults", std::vector<std::string>{});
  std::vector<bool> seen(parts.size(), false);
  for (size_t i = 0; i < parts.size(); ++i) {
    const auto& j = parts[i];
    if (j.value("seed", uint64_t{0}) != parts[0].value("seed", uint64_t{0}) ||
        j.value("budget", "") != parts[0].value("budget", "") || j.value("profiles", o.profiles) != o.profiles ||
        j.value("faults", o.faults) != o.faults)
      return fail_merge(a.merge[i] + ": a shard of another matrix (seed, budget, profiles or faults differ)");
    runner::Shard sh;
    if (std::string why = runner::resolve_shard(j["shard"].get<std::string>(), std::nullopt, std::getenv, sh);
        !why.empty())
      return fail_merge(a.merge[i] + ": " + why);
    if (sh.count != static_cast<int>(parts.size()))
      return fail_merge(a.merge[i] + " is shard " + std::to_string(sh.index) + " of " + std::to_string(sh.count) +
                        ", but " + std::to_string(parts.size()) + " directories were given");
    if (seen[sh.index]) return fail_merge(a.merge[i] + ": shard " + std::to_string(sh.index) + " given twice");
    seen[sh.index] = true;
  }
  std::vector<std::pair<size_t, reports::MatrixRow>> ordered;
  const fs::path out(a.out);
  for (size_t i = 0; i < parts.size(); ++i) {
    for (const auto& c : parts[i]["cells"]) {
      reports::MatrixRow r;
      r.profile = c.value("profile", "");
      r.fault = c.value("fault", "");
      r.verdict = c.value("verdict", "");
      r.runs = c.value("runs", uint64_t{0});
      r.seconds = c.value("seconds", 0.0);
      r.violations = c.value("violations", uint64_t{0});
      auto text = [&](const char* key) { return c.contains(key) && c[key].is_string() ? c[key].get<std::string>() : ""; };
      r.counterexample = text("counterexample");
      r.report = text("report");
      r.story = text("story");
      r.properties = c.value("properties", std::vector<std::string>{});
      r.classes = c.value("classes", std::vector<std::string>{});
      r.by_class = c.value("by_class", std::map<std::string, uint64_t>{});
      r.unknown = c.value("unknown", uint64_t{0});
      const auto p = std::find(o.profiles.begin(), o.profiles.end(), r.profile);
      const auto f = std::find(o.faults.begin(), o.faults.end(), r.fault);
      if (p == o.profiles.end() || f == o.faults.end())
        return fail_merge(a.merge[i] + ": cell " + r.profile + " x " + r.fault + " is outside the matrix");
      if (!r.counterexample.empty()) {
        // The cell's folder moves into the merged directory, and its replay with it.
        const fs::path cell = fs::path(r.counterexample).parent_path();
        std::error_code ec;
        fs::create_directories(out / cell, ec);
        fs::copy(fs::path(a.merge[i]) / cell, out / cell,
                 fs::copy_options::recursive | fs::copy_options::overwrite_existing, ec);
        if (ec) return fail_merge("cannot copy " + (fs::path(a.merge[i]) / cell).string() + ": " + ec.message());
        r.replay = "lockstep run " + (out / r.counterexample).string();
      }
      const size_t order = static_cast<size_t>(p - o.profiles.begin()) * o.faults.size() +
                           static_cast<size_t>(f - o.faults.begin());
      ordered.emplace_back(order, std::move(r));
    }
  }
  std::sort(ordered.begin(), ordered.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<reports::MatrixRow> rows;
  std::vector<reports::RunReport> cases;
  for (auto& [order, r] : ordered) {
    reports::RunReport c;
    c.scenario = r.profile + " x " + r.fault;
    c.algorithm = r.profile;
    const bool broken = r.verdict == reports::matrix_verdict::kBug || r.verdict == reports::matrix_verdict::kBroken;
    c.verdict = broken ? reports::verdict::kViolation : reports::verdict::kSafe;
    for (const auto& p : broken ? r.properties : std::vector<std::string>{}) {
      const auto prop = checker::property_named(p);
      if (!prop) continue;  // the matrix's cells come from lockstep's own checks: every name is known
      checker::Violation v{*prop, r.story, {}, 0, 1};
      v.severity = checker::property_info(*prop).severity;
      c.violations.push_back(std::move(v));
    }
    c.replay = r.replay;
    c.stats["runs"] = r.runs;
    c.stats["seconds"] = r.seconds;
    cases.push_back(std::move(c));
    rows.push_back(std::move(r));
  }
  const std::string command = parts[0].value("command", "");
  reports::MatrixMeta meta{parts[0].value("seed", uint64_t{1}), parts[0].value("budget", ""), command};
  return finish(a, o, meta, rows, cases);
}

int matrix(const MatrixArgs& a) {
  if (!a.merge.empty()) return merge(a);
  runner::MatrixOptions o;
  // Algorithm rows alone (a registered lock's table) leave the profiles out.
  const bool all_profiles = a.profiles == "all" || (a.profiles.empty() && a.algorithms.empty());
  o.algorithms = split(a.algorithms);
  o.faults = a.faults.empty() || a.faults == "all" ? std::vector<std::string>{"none"} : split(a.faults);
  if (a.faults.empty() || a.faults == "all") {
    for (const auto& k : fault_kind_names()) o.faults.push_back(k);
  }
  std::vector<std::string> kinds = fault_kind_names();
  kinds.insert(kinds.begin(), "none");
  std::string why = expand_profiles(all_profiles ? std::vector<std::string>{"all"} : split(a.profiles), o.profiles);
  if (why.empty()) why = first_unknown("algorithm", o.algorithms, algorithm_names(), "Algorithms");
  if (why.empty()) why = first_unknown("fault kind", o.faults, kinds, "Fault kinds");
  if (!why.empty()) {
    std::fprintf(stderr, "lockstep matrix: %s\n", why.c_str());
    return kExitUsage;
  }
  if (a.runs && a.time_limit_s > 0) {
    std::fprintf(stderr, "lockstep matrix: give --runs or --time-limit, not both\n");
    return kExitUsage;
  }
  o.runs = a.runs.value_or(1000);
  o.time_limit_s = a.time_limit_s;
  o.seed = a.seed;
  o.stop_on = a.stop_on;
  runner::Shard shard;
  if (std::string why = runner::resolve_shard(a.shard, a.shard_count, std::getenv, shard); !why.empty()) {
    std::fprintf(stderr, "lockstep matrix: %s\n", why.c_str());
    return kExitUsage;
  }
  o.shard = shard.index;
  o.shards = shard.count;
  o.jobs = runner::default_jobs();
  if (std::string why = a.jobs.empty() ? "" : runner::parse_jobs(a.jobs, o.jobs); !why.empty()) {
    std::fprintf(stderr, "lockstep matrix: %s\n", why.c_str());
    return kExitUsage;
  }
  if (std::string why = runner::matrix_options_problem(o); !why.empty()) {
    std::fprintf(stderr, "lockstep matrix: %s\n", why.c_str());
    return kExitUsage;
  }
  runner::Progress progress("matrix");
  auto show = [&](size_t i, size_t total, const runner::MatrixCell& c, bool done) {
    progress.show(i + (done ? 1 : 0), total, c.profile + " x " + c.fault);
  };
  std::vector<runner::MatrixCell> cells = runner::run_matrix(o, show);
  progress.clear();
  std::error_code ec;
  fs::create_directories(a.out, ec);
  std::vector<reports::MatrixRow> rows;
  std::vector<reports::RunReport> cases;
  std::string error;
  for (auto& c : cells) {
    reports::MatrixRow row{c.profile, c.fault, c.verdict(),
                           c.summary.runs, c.summary.seconds, c.summary.violations, "", "", "", {}, {}, ""};
    row.by_class = c.summary.by_class;
    row.unknown = c.summary.unknown;
    if (c.broken() && !write_cell(a.out, c, row, error)) {
      std::fprintf(stderr, "lockstep matrix: %s\n", error.c_str());
      return kExitDataErr;
    }
    cases.push_back(junit_case(c));
    rows.push_back(std::move(row));
  }
  reports::MatrixMeta meta{o.seed,
                           a.time_limit_s > 0 ? seconds_text(a.time_limit_s) + " s per cell and budget"
                                              : std::to_string(o.runs) + " runs per cell and budget",
                           command_line(a, o)};
  return finish(a, o, meta, rows, cases);
}

}  // namespace

CommandRunner add_matrix_command(CLI::App& app) {
  auto a = std::make_shared<MatrixArgs>();
  auto* cmd = app.add_subcommand("matrix", "Fuzz every library profile under every fault kind: the safety table");
  cmd->add_option("--profiles", a->profiles, "Profiles, comma-separated: LIBRARY@VERSION, a library alone for all its versions (default: all; see lockstep profiles)");
  cmd->add_option("--algorithms", a->algorithms, "Algorithms as rows too, comma-separated (built-in or registered)");
  cmd->add_option("--faults", a->faults, "Fault kinds, comma-separated, and/or none (default: none and every kind)");
  cmd->add_option("--runs", a->runs, "Generated scenarios per cell and budget (default 1000)");
  cmd->add_option("--time-limit", a->time_limit_s, "Seconds per cell instead of a run count");
  cmd->add_option("--seed", a->seed, "Campaign seed")->capture_default_str();
  cmd->add_option("--stop-on", a->stop_on,
                  "A cell is broken only by violations of these severity classes or properties, comma-separated "
                  "(e.g. two-holders,damage), all, or safety (every class but unfair)")
      ->capture_default_str();
  cmd->add_option("--jobs", a->jobs,
                  "Runs at once, 1 or more (default: one per core); the table is the same for any number")
      ->type_name("N");
  cmd->add_option("--out", a->out, "Directory for matrix.json, matrix.html and counterexamples")->capture_default_str();
  cmd->add_option("--junit", a->junit, "Write JUnit XML here (one test case per cell)");
  cmd->add_flag("--markdown", a->markdown, "Also print the table in Markdown");
  cmd->add_option("--shard", a->shard,
                  "Run shard I of N (I/N: cells I, I+N, ... row by row), or auto: from a Kubernetes Indexed Job or a "
                  "Slurm job array")
      ->capture_default_str();
  cmd->add_option("--shard-count", a->shard_count, "With --shard auto under Kubernetes: how many shards (completions)");
  cmd->add_option("--merge", a->merge, "Combine these shards' output directories into --out")->expected(1, -1);
  return [a] { return matrix(*a); };
}

}  // namespace lockstep::cli
