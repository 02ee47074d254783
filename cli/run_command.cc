// `lockstep run`: the main job. Runs scenarios in the simulator, prints what is being run
// (seed, algorithm, faults) and then one verdict table, and writes each scenario's
// history and report under the output directory.
#include <cstdio>
#include <optional>

#include "commands.h"
#include "lockstep/runner/jobs.h"
#include "lockstep/runner/sim_runner.h"
#include "scenario_batch.h"

namespace lockstep::cli {
namespace {

struct RunArgs {
  std::optional<uint64_t> seed;
  std::string out = "lockstep-out";
  std::string junit;
  bool quiet = false;
  bool verbose = false;
  std::string jobs;  // scenarios at once; "" for one per core
  std::vector<std::string> paths;
};

int run(const RunArgs& args) {
  unsigned jobs = runner::default_jobs();
  if (std::string why = args.jobs.empty() ? "" : runner::parse_jobs(args.jobs, jobs); !why.empty()) {
    std::fprintf(stderr, "lockstep run: %s\n", why.c_str());
    return kExitUsage;
  }
  std::vector<LoadedScenario> scenarios;
  if (!load_scenarios(args.paths, scenarios)) return kExitDataErr;
  BatchOptions o{"run", args.out, args.junit, args.seed, "", args.quiet, args.verbose, jobs};
  return run_batch(scenarios, o, [&args](const LoadedScenario& s, runner::RunOutcome& out) {
    if (auto why = runner::sim_unsupported(s.scenario); !why.empty()) return why;
    out = runner::run_in_sim(s.scenario, {args.seed, s.path});
    return std::string();
  });
}

}  // namespace

CommandRunner add_run_command(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  auto* cmd = app.add_subcommand("run", "Run scenario files in the simulator and print a verdict table");
  cmd->add_option("--seed", args->seed, "Override every scenario's seed");
  cmd->add_option("--out", args->out, "Directory for histories and reports")->capture_default_str();
  cmd->add_option("--junit", args->junit, "Also write JUnit XML (one test case per scenario) for CI");
  cmd->add_option("--jobs", args->jobs,
                  "Scenarios run at once, 1 or more (default: one per core); the output is the same for any number")
      ->type_name("N");
  cmd->add_flag("-q,--quiet", args->quiet, "Print only the scenarios that did not go as expected, and the summary");
  cmd->add_flag("-v,--verbose", args->verbose, "Print each scenario's seed, lock and faults before it runs");
  cmd->add_option("paths", args->paths, "Scenario files or directories of them")->required();
  return [args] { return run(*args); };
}

}  // namespace lockstep::cli
