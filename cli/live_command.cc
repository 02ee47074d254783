// `lockstep live`: runs scenarios against real redis-server processes that lockstep
// starts on free loopback ports and removes afterwards (or, with --redis, against one
// server the user runs, touching only keys under lockstep:<run-id>:). Prints what is run
// and a verdict table like `lockstep run`; scenarios that cannot run live are listed as
// skipped, with the reason.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>

#include "commands.h"
#include "lockstep/runner/live_runner.h"
#include "scenario_files.h"

namespace lockstep::cli {
namespace {

namespace fs = std::filesystem;

struct LiveArgs {
  std::string out = "lockstep-out-live";
  std::optional<std::string> redis;
  std::vector<std::string> paths;
};

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

bool write_file(const fs::path& path, const std::string& data) {
  std::ofstream f(path, std::ios::binary);
  f << data;
  return static_cast<bool>(f);
}

bool matched(const Row& r) {
  return r.skipped.empty() && !r.report.unknown() && r.report.as_expected();
}

void print_table(const std::vector<Row>& rows) {
  size_t w_name = 8, w_alg = 9, w_exp = 8, w_found = 5;
  auto found_of = [](const Row& r) {
    if (!r.skipped.empty()) return std::string("-");
    return r.report.unknown() ? std::string("unknown") : join(r.report.found_violations());
  };
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

Row skipped_row(const runner::Scenario& s, std::string why) {
  Row row;
  row.report.scenario = s.name;
  row.report.algorithm = s.lock.algorithm;
  row.report.expected_violations = s.expected_violations;
  row.skipped = std::move(why);
  return row;
}

int run(const LiveArgs& args) {
  std::vector<LoadedScenario> scenarios;
  if (!load_scenarios(args.paths, scenarios)) return kExitDataErr;
  std::vector<Row> rows;
  for (const auto& [s, path] : scenarios) {
    runner::LiveOptions options;
    options.redis = args.redis;
    options.replay_path = path;
    if (auto why = runner::live_unsupported(s, options); !why.empty()) {
      std::printf("skipped %s: %s\n", s.name.c_str(), why.c_str());
      rows.push_back(skipped_row(s, why));
      continue;
    }
    std::string faults;
    for (const auto& f : s.faults) faults += (faults.empty() ? "" : "; ") + describe_fault(f);
    std::printf("seed=%llu algorithm=%s faults=%s  [%s]\n", static_cast<unsigned long long>(s.seed),
                s.lock.algorithm.c_str(), faults.empty() ? "none" : faults.c_str(), s.name.c_str());
    std::fflush(stdout);
    runner::RunOutcome outcome = runner::run_live(s, options);
    if (outcome.report.stats.contains("error"))
      std::fprintf(stderr, "lockstep live: %s: %s\n", s.name.c_str(),
                   outcome.report.stats["error"].get<std::string>().c_str());
    const fs::path dir = fs::path(args.out) / s.name;
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec || !write_file(dir / "history.jsonl", outcome.history_jsonl) ||
        !write_file(dir / "report.json", reports::to_json(outcome.report).dump(2) + "\n")) {
      std::fprintf(stderr, "lockstep live: cannot write to %s\n", dir.string().c_str());
      return kExitDataErr;
    }
    rows.push_back(Row{std::move(outcome.report), ""});
  }
  print_table(rows);
  int ran = 0, mismatches = 0, skipped = 0;
  for (const auto& r : rows) {
    if (!r.skipped.empty()) {
      ++skipped;
      continue;
    }
    ++ran;
    if (!matched(r)) ++mismatches;
  }
  std::printf("\n%d scenarios run live, %d as expected, %d mismatched, %d skipped; reports in %s/\n", ran,
              ran - mismatches, mismatches, skipped, args.out.c_str());
  for (const auto& r : rows) {
    if (!r.skipped.empty()) std::printf("  skipped %s: %s\n", r.report.scenario.c_str(), r.skipped.c_str());
  }
  for (const auto& r : rows) {
    if (r.skipped.empty() && !matched(r)) std::printf("  replay: %s\n", r.report.replay.c_str());
  }
  return mismatches == 0 ? 0 : kExitMismatch;
}

}  // namespace

CommandRunner add_live_command(CLI::App& app) {
  auto args = std::make_shared<LiveArgs>();
  auto* cmd = app.add_subcommand(
      "live", "Run scenario files against real redis-server processes lockstep starts on loopback and removes");
  cmd->add_option("--out", args->out, "Directory for histories and reports")->capture_default_str();
  cmd->add_option("--redis", args->redis,
                  "Use this server (HOST:PORT) instead of starting one; only keys under lockstep:<run-id>: are "
                  "touched, single-server scenarios without server faults only");
  cmd->add_option("paths", args->paths, "Scenario files or directories of them")->required();
  return [args] { return run(*args); };
}

}  // namespace lockstep::cli
