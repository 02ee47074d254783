// `lockstep live`: runs scenarios against real redis-server processes that lockstep
// starts on free loopback ports and removes afterwards (or, with --redis, against one
// server the user runs, touching only keys under lockstep:<run-id>:). Prints what is run
// and a verdict table, and leaves the same histories and reports, as `lockstep run`;
// scenarios that cannot run live are listed as skipped, with the reason.
#include <filesystem>
#include <optional>

#include "commands.h"
#include "lockstep/runner/live_runner.h"
#include "scenario_batch.h"

namespace lockstep::cli {
namespace {

struct LiveArgs {
  std::optional<std::string> client;  // --client 'CMD'; given empty is a usage error
  std::string out = "lockstep-out-live";
  std::string junit;
  bool quiet = false;
  bool verbose = false;
  std::optional<std::string> redis;
  std::vector<std::string> paths;
};

// Splits a command line as a shell would for plain words: spaces separate, '...' and
// "..." quote, a backslash takes the next character as it is. Returns false on an
// unclosed quote or nothing at all.
bool split_command(const std::string& text, std::vector<std::string>& out) {
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quote) {
      if (c == quote) {
        quote = 0;
      } else if (c == '\\' && quote == '"' && i + 1 < text.size()) {
        word += text[++i];
      } else {
        word += c;
      }
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == '\\' && i + 1 < text.size()) {
      word += text[++i];
      in_word = true;
    } else if (c == ' ' || c == '\t') {
      if (in_word) out.push_back(std::move(word));
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) out.push_back(std::move(word));
  return quote == 0 && !out.empty();
}

int run(const LiveArgs& args) {
  std::vector<std::string> command;
  if (args.client && !split_command(*args.client, command)) {
    std::fprintf(stderr, "lockstep live: --client: expected a command such as 'node stock.js', found \"%s\"\n",
                 args.client->c_str());
    return kExitUsage;
  }
  std::vector<LoadedScenario> scenarios;
  if (!load_scenarios(args.paths, scenarios)) return kExitDataErr;
  if (!command.empty()) {
    std::error_code ec;
    const std::string here = std::filesystem::current_path(ec).string();
    for (auto& s : scenarios) s.scenario = runner::with_external_client(s.scenario, command, here);
  }
  BatchOptions o{"live", args.out, args.junit, std::nullopt, " run live", args.quiet, args.verbose};
  return run_batch(scenarios, o, [&args](const LoadedScenario& s, runner::RunOutcome& out) {
    runner::LiveOptions options;
    options.redis = args.redis;
    options.replay_path = s.path;
    options.client = args.client.value_or("");
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
  cmd->add_option("--client", args->client,
                  "Run this command once per client instead of lockstep's own clients (an external client: see "
                  "docs/external-clients.md), e.g. --client 'node stock.js'");
  cmd->add_flag("-q,--quiet", args->quiet, "Print only the scenarios that did not go as expected, and the summary");
  cmd->add_flag("-v,--verbose", args->verbose, "Print each scenario's seed, lock and faults before it runs");
  cmd->add_option("paths", args->paths, "Scenario files or directories of them")->required();
  return [args] { return run(*args); };
}

}  // namespace lockstep::cli
