// `lockstep run`: the main job. Runs scenarios in the simulator, prints what is being run
// (seed, algorithm, faults) and then one verdict table, and writes each scenario's
// history and report under the output directory.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>

#include "commands.h"
#include "lockstep/reports/writers.h"
#include "lockstep/runner/sim_runner.h"
#include "scenario_files.h"

namespace lockstep::cli {
namespace {

namespace fs = std::filesystem;

struct RunArgs {
  std::optional<uint64_t> seed;
  std::string out = "lockstep-out";
  std::string junit;
  std::vector<std::string> paths;
};

std::string join(const std::set<std::string>& s) {
  if (s.empty()) return "safe";
  std::string out;
  for (const auto& x : s) out += (out.empty() ? "" : ",") + x;
  return out;
}

bool write_file(const fs::path& path, const std::string& data) {
  std::ofstream f(path, std::ios::binary);
  f << data;
  return static_cast<bool>(f);
}

void print_table(const std::vector<reports::RunReport>& rows) {
  size_t w_name = 8, w_alg = 9, w_exp = 8, w_found = 5;
  for (const auto& r : rows) {
    w_name = std::max(w_name, r.scenario.size());
    w_alg = std::max(w_alg, r.algorithm.size());
    w_exp = std::max(w_exp, join(r.expected_violations).size());
    w_found = std::max(w_found, join(r.found_violations()).size());
  }
  auto line = [&](const std::string& a, const std::string& b, const std::string& c, const std::string& d,
                  const std::string& e) {
    std::printf("%-*s  %-*s  %-*s  %-*s  %s\n", int(w_name), a.c_str(), int(w_alg), b.c_str(), int(w_exp), c.c_str(),
                int(w_found), d.c_str(), e.c_str());
  };
  std::printf("\n");
  line("SCENARIO", "ALGORITHM", "EXPECTED", "FOUND", "RESULT");
  for (const auto& r : rows) {
    std::string found = r.unknown() ? "unknown" : join(r.found_violations());
    line(r.scenario, r.algorithm, join(r.expected_violations), found,
         !r.unknown() && r.as_expected() ? "ok" : "MISMATCH");
  }
}

int run(const RunArgs& args) {
  std::vector<LoadedScenario> scenarios;
  if (!load_scenarios(args.paths, scenarios)) return kExitDataErr;
  std::vector<reports::RunReport> rows;
  for (const auto& [s, path] : scenarios) {
    std::string faults;
    for (const auto& f : s.faults) faults += (faults.empty() ? "" : "; ") + describe_fault(f);
    std::printf("seed=%llu algorithm=%s faults=%s  [%s]\n",
                static_cast<unsigned long long>(args.seed.value_or(s.seed)), s.lock.algorithm.c_str(),
                faults.empty() ? "none" : faults.c_str(), s.name.c_str());
    std::fflush(stdout);
    runner::RunOutcome outcome = runner::run_in_sim(s, {args.seed, path});
    const fs::path dir = fs::path(args.out) / s.name;
    std::error_code ec;
    fs::create_directories(dir, ec);
    std::string error;
    if (ec || !write_file(dir / "history.jsonl", outcome.history_jsonl) ||
        !reports::write_scenario_reports(dir, outcome.report, outcome.history, error)) {
      std::fprintf(stderr, "lockstep run: cannot write to %s%s%s\n", dir.string().c_str(), error.empty() ? "" : ": ",
                   error.c_str());
      return kExitDataErr;
    }
    rows.push_back(std::move(outcome.report));
  }
  print_table(rows);
  std::string error;
  if (!reports::write_index(args.out, rows, error) ||
      (!args.junit.empty() && !reports::write_junit(rows, "lockstep", args.junit, error))) {
    std::fprintf(stderr, "lockstep run: %s\n", error.c_str());
    return kExitDataErr;
  }
  int mismatches = 0;
  for (const auto& r : rows) {
    if (r.unknown() || !r.as_expected()) ++mismatches;
  }
  std::printf("\n%zu scenarios, %d as expected, %d mismatched; reports in %s/ (open %s/index.html)\n",
              rows.size(), int(rows.size()) - mismatches, mismatches, args.out.c_str(), args.out.c_str());
  for (const auto& r : rows) {
    if (r.unknown() || !r.as_expected()) std::printf("  replay: %s\n", r.replay.c_str());
  }
  return mismatches == 0 ? 0 : kExitMismatch;
}

}  // namespace

CommandRunner add_run_command(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  auto* cmd = app.add_subcommand("run", "Run scenario files in the simulator and print a verdict table");
  cmd->add_option("--seed", args->seed, "Override every scenario's seed");
  cmd->add_option("--out", args->out, "Directory for histories and reports")->capture_default_str();
  cmd->add_option("--junit", args->junit, "Also write JUnit XML (one test case per scenario) for CI");
  cmd->add_option("paths", args->paths, "Scenario files or directories of them")->required();
  return [args] { return run(*args); };
}

}  // namespace lockstep::cli
