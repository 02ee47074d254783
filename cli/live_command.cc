// `lockstep live`: runs scenarios against real redis-server processes that lockstep
// starts on free loopback ports and removes afterwards (or, with --redis, against one
// server the user runs, touching only keys under lockstep:<run-id>:). Prints what is run
// and a verdict table, and leaves the same histories and reports, as `lockstep run`;
// scenarios that cannot run live are listed as skipped, with the reason.
#include <optional>

#include "commands.h"
#include "lockstep/runner/live_runner.h"
#include "scenario_batch.h"

namespace lockstep::cli {
namespace {

struct LiveArgs {
  std::string out = "lockstep-out-live";
  std::string junit;
  std::optional<std::string> redis;
  std::vector<std::string> paths;
};

int run(const LiveArgs& args) {
  std::vector<LoadedScenario> scenarios;
  if (!load_scenarios(args.paths, scenarios)) return kExitDataErr;
  BatchOptions o{"live", args.out, args.junit, std::nullopt, " run live"};
  return run_batch(scenarios, o, [&args](const LoadedScenario& s, runner::RunOutcome& out) {
    runner::LiveOptions options;
    options.redis = args.redis;
    options.replay_path = s.path;
    if (auto why = runner::live_unsupported(s.scenario, options); !why.empty()) return why;
    out = runner::run_live(s.scenario, options);
    return std::string();
  });
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
  cmd->add_option("--junit", args->junit, "Also write JUnit XML (one test case per scenario) for CI");
  cmd->add_option("paths", args->paths, "Scenario files or directories of them")->required();
  return [args] { return run(*args); };
}

}  // namespace lockstep::cli
