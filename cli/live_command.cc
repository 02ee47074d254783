// `lockstep live`: runs scenarios against real redis-server processes that lockstep
// starts on free loopback ports and removes afterwards (or, with --redis, against one
// server the user runs, touching only keys under lockstep:<run-id>:). Prints what is run
// and a verdict table, and leaves the same histories and reports, as `lockstep run`;
// scenarios that cannot run live are listed as skipped, with the reason. With --repeat N,
// a campaign: one scenario N times, its fault times optionally drawn anew for each run
// (lockstep/runner/live_campaign.h), counted by what broke.
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <optional>

#include "commands.h"
#include "lockstep/checker/properties.h"
#include "lockstep/fault_plan.h"
#include "lockstep/reports/writers.h"
#include "lockstep/runner/fuzz.h"
#include "lockstep/runner/live_campaign.h"
#include "lockstep/runner/live_runner.h"
#include "lockstep/runner/progress.h"
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
  // A campaign: --repeat N [--vary-faults [--vary-range R]] [--seed S].
  std::optional<int64_t> repeat;
  bool vary_faults = false;
  std::optional<std::string> vary_range;
  std::optional<uint64_t> seed;
};

constexpr int64_t kRepeatMax = 10000;

namespace fs = std::filesystem;

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

int usage(const std::string& why) {
  std::fprintf(stderr, "lockstep live: %s\n", why.c_str());
  return kExitUsage;
}

// `text` cut to `width` columns, the cut marked (UTF-8: continuation bytes take no column).
std::string fit(const std::string& text, size_t width) {
  const auto starts = [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; };
  size_t columns = 0;
  for (char c : text) columns += starts(c);
  if (columns <= width) return text;
  size_t kept = 0, i = 0;
  for (; i < text.size(); ++i) {
    if (starts(text[i]) && ++kept > (width > 3 ? width - 3 : 0)) break;
  }
  return text.substr(0, i) + "...";
}

std::string faults_text(const runner::Scenario& s) {
  std::string text;
  for (const auto& f : s.faults) text += (text.empty() ? "" : "; ") + describe_fault(f);
  return text.empty() ? "none" : text;
}

// The times a run drew, in the faults' order: "at 1.2s", "+37ms" (after its event).
std::string drawn_times(const runner::Scenario& s) {
  std::string text;
  for (const auto& f : s.faults)
    text += (text.empty() ? "" : " ") +
            (f.on ? "+" + std::to_string(f.on->delay_ms) + "ms" : "at " + std::to_string(f.at_ms) + "ms");
  return text;
}

// What a run found in a few words: its most severe class, safe or unknown, and why.
std::string found_words(const reports::RunReport& r) {
  if (r.unknown()) {
    const auto why = reports::inconclusive_reasons(r);
    return "unknown" + (why.empty() ? "" : ": " + why.front());
  }
  if (r.violations.empty()) return r.verdict;
  const std::string worst = runner::worst_class(r);
  for (const auto& v : r.violations)
    if (checker::to_string(v.severity) == worst) return worst + ": " + v.explanation;
  return worst;
}

nlohmann::ordered_json campaign_json(const LiveArgs& a, const runner::Scenario& s, const LoadedScenario& loaded,
                                     uint64_t seed, const std::optional<runner::VaryRange>& vary,
                                     const runner::LiveCampaignSummary& sum, const nlohmann::ordered_json& runs, double seconds) {
  nlohmann::ordered_json j;
  j["scenario"] = s.name;
  j["file"] = loaded.path;
  j["seed"] = seed;
  j["repeat"] = *a.repeat;
  j["vary_faults"] = vary.has_value();
  if (vary) {
    j["vary_range"] = runner::vary_range_text(*vary);
    j["vary_range_text"] = runner::describe_vary_range(*vary);
  }
  j["runs"] = sum.runs;
  j["broken"] = sum.broken;
  j["safe"] = sum.safe;
  j["unknown"] = sum.unknown;
  j["break_rate"] = sum.runs ? static_cast<double>(sum.broken) / static_cast<double>(sum.runs) : 0.0;
  j["by_worst_class"] = sum.by_worst_class;
  j["by_class"] = sum.by_class;
  j["seconds"] = seconds;
  j["each_run"] = runs;
  return j;
}

// `lockstep live --repeat N`: the checks of the options, then the runs, each written as it
// ends, then summary.json, index.html and the counts. Exit 0 when every run was safe, 1 when
// one broke, 2 when none broke but some tested nothing trustworthy.
int campaign(const LiveArgs& a, const std::vector<std::string>& command) {
  if (*a.repeat < 1 || *a.repeat > kRepeatMax)
    return usage("--repeat: expected a number of runs from 1 to " + std::to_string(kRepeatMax) + ", found " +
                 std::to_string(*a.repeat));
  std::optional<runner::VaryRange> vary;
  if (a.vary_faults) {
    vary = runner::VaryRange{};
    if (a.vary_range) {
      if (std::string why = runner::parse_vary_range(*a.vary_range, *vary); !why.empty())
        return usage("--vary-range: " + why);
    }
  }
  std::vector<LoadedScenario> loaded;
  if (!load_scenarios(a.paths, loaded)) return kExitDataErr;
  if (loaded.size() != 1)
    return usage("--repeat runs one scenario file; " + std::string(a.paths.size() == 1 ? a.paths[0] + " holds " : "found ") +
                 std::to_string(loaded.size()));
  runner::Scenario base = loaded[0].scenario;
  if (!command.empty()) {
    std::error_code ec;
    base = runner::with_external_client(base, command, fs::current_path(ec).string());
  }
  if (vary) {
    if (std::string why = runner::vary_range_problem(*vary, base); !why.empty())
      return usage("--vary-faults on " + loaded[0].path + ": " + why);
  }
  runner::LiveOptions options;
  options.redis = a.redis;
  if (std::string why = runner::live_unsupported(base, options); !why.empty()) {
    std::fprintf(stderr, "lockstep live: %s cannot run live: %s\n", loaded[0].path.c_str(), why.c_str());
    return kExitDataErr;
  }
  const uint64_t seed = a.seed.value_or(base.seed);
  const auto runs = static_cast<uint64_t>(*a.repeat);
  const size_t width = terminal_columns();
  std::printf("%s\n", fit("campaign: " + base.name + " runs=" + std::to_string(runs) + " seed=" + std::to_string(seed) +
                               " algorithm=" + runner::lock_in_use(base) + " faults=" + faults_text(base),
                           width)
                           .c_str());
  if (vary) std::printf("%s\n", fit("vary-faults: " + runner::describe_vary_range(*vary), width).c_str());
  std::fflush(stdout);
  std::error_code ec;
  fs::create_directories(a.out, ec);
  runner::Progress progress("live", isatty(STDERR_FILENO) != 0);
  runner::LiveCampaignSummary sum;
  std::vector<reports::RunReport> reports_of_runs;
  nlohmann::ordered_json each_run = nlohmann::ordered_json::array();
  const auto start = std::chrono::steady_clock::now();
  for (uint64_t i = 1; i <= runs; ++i) {
    const runner::Scenario drawn = runner::campaign_run_scenario(base, seed, i, runs, vary);
    const fs::path dir = fs::path(a.out) / drawn.name;
    const fs::path file = dir / "scenario.json";
    fs::create_directories(dir, ec);
    runner::Scenario saved = runner::rebased_to(drawn, dir);
    saved.file = file.string();
    // Written before the run, so an interrupted campaign still leaves the schedule it played.
    if (ec || !write_file(file, runner::to_json(saved).dump(2) + "\n")) {
      std::fprintf(stderr, "lockstep live: cannot write %s\n", file.string().c_str());
      return kExitDataErr;
    }
    progress.show(i - 1, runs, drawn.name + ", " + sum.break_rate_text());
    options.replay_path = file.string();
    runner::RunOutcome outcome = runner::run_live(saved, options);
    progress.clear();
    std::string error;
    if (!write_file(dir / "history.jsonl", outcome.history_jsonl) ||
        !reports::write_scenario_reports(dir, outcome.report, outcome.history, error)) {
      std::fprintf(stderr, "lockstep live: cannot write to %s%s%s\n", dir.string().c_str(), error.empty() ? "" : ": ",
                   error.c_str());
      return kExitDataErr;
    }
    sum.add(outcome.report);
    const auto& r = outcome.report;
    const bool broke = r.verdict == reports::verdict::kViolation;
    if (!a.quiet || broke) {
      std::string line = drawn.name + "  seed=" + std::to_string(drawn.seed);
      if (vary) line += "  " + drawn_times(drawn);
      line += "  " + found_words(r);
      if (a.verbose) std::printf("%s\n", fit("  faults: " + faults_text(drawn), width).c_str());
      std::printf("%s\n", fit(line, width).c_str());
      std::fflush(stdout);
    }
    nlohmann::ordered_json run;
    run["run"] = i;
    run["name"] = drawn.name;
    run["seed"] = drawn.seed;
    run["verdict"] = r.verdict;
    run["class"] = runner::worst_class(r);
    run["found"] = reports::found_text(r);
    run["scenario"] = (fs::path(drawn.name) / "scenario.json").string();
    run["report"] = (fs::path(drawn.name) / "report.html").string();
    run["replay"] = r.replay;
    run["faults"] = nlohmann::ordered_json::array();
    for (const auto& f : drawn.faults) run["faults"].push_back(fault_file_json(f));
    each_run.push_back(std::move(run));
    reports::RunReport kept = r;
    reports_of_runs.push_back(std::move(kept));
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  reports::IndexInfo index{"live", {}};
  index.notes.push_back("A campaign of " + std::to_string(runs) + " runs of " + base.name + " (campaign seed " +
                        std::to_string(seed) + "): " + sum.break_rate_text() + ", " + std::to_string(sum.safe) +
                        " safe, " + std::to_string(sum.unknown) + " unknown; broken runs by their most severe class: " +
                        runner::by_class_text(sum.by_worst_class) + ".");
  if (vary) index.notes.push_back("Fault times drawn for each run within " + runner::describe_vary_range(*vary) + ".");
  std::string error;
  if (!write_file(fs::path(a.out) / "summary.json",
                  campaign_json(a, base, loaded[0], seed, vary, sum, each_run, seconds).dump(2) + "\n") ||
      !reports::write_index(a.out, reports_of_runs, error, index) ||
      (!a.junit.empty() && !reports::write_junit(reports_of_runs, "lockstep live", a.junit, error))) {
    std::fprintf(stderr, "lockstep live: cannot write to %s%s%s\n", a.out.c_str(), error.empty() ? "" : ": ",
                 error.c_str());
    return kExitDataErr;
  }
  std::printf("\n%s\n", fit(sum.break_rate_text() + ", " + std::to_string(sum.safe) + " safe, " +
                                 std::to_string(sum.unknown) + " unknown; by most severe class: " +
                                 runner::by_class_text(sum.by_worst_class),
                             width)
                             .c_str());
  if (vary) std::printf("%s\n", fit("fault times varied within " + runner::describe_vary_range(*vary), width).c_str());
  // One replay per class, its first run: the others are in summary.json.
  for (const auto& c : checker::severity_classes()) {
    const auto n = sum.by_worst_class.find(c.name);
    if (n == sum.by_worst_class.end()) continue;
    for (const auto& run : each_run) {
      if (run["verdict"] != reports::verdict::kViolation || run["class"] != c.name) continue;
      std::printf("%s\n", fit("  " + std::string(c.name) + " in " + std::to_string(n->second) + " run" +
                                   (n->second == 1 ? "" : "s") + ", the first: " + runner::replay_program() + " live " +
                                   (fs::path(a.out) / run["scenario"].get<std::string>()).string(),
                               width)
                               .c_str());
      break;
    }
  }
  std::printf("%s\n", fit("summary: " + (fs::path(a.out) / "summary.json").string() + ", " +
                               (fs::path(a.out) / "index.html").string(),
                           width)
                           .c_str());
  if (sum.broken > 0) return kExitMismatch;
  return sum.unknown > 0 ? kExitUnknown : 0;
}

int run(const LiveArgs& args) {
  std::vector<std::string> command;
  if (args.client && !split_command(*args.client, command)) {
    std::fprintf(stderr, "lockstep live: --client: expected a command such as 'node stock.js', found \"%s\"\n",
                 args.client->c_str());
    return kExitUsage;
  }
  if (!args.repeat) {
    if (args.vary_faults) return usage("--vary-faults needs --repeat N: it draws new fault times for each run of a campaign");
    if (args.vary_range) return usage("--vary-range needs --repeat N and --vary-faults");
    if (args.seed) return usage("--seed needs --repeat N: it is the campaign's seed");
  } else {
    if (args.vary_range && !args.vary_faults) return usage("--vary-range needs --vary-faults");
    return campaign(args, command);
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
  cmd->add_option("--repeat", args->repeat,
                  "Run the one scenario file N times, each against fresh servers, and count the runs that broke by "
                  "severity class (a campaign; each run's schedule is saved as DIR/<scenario>-run-I/scenario.json)");
  cmd->add_flag("--vary-faults", args->vary_faults,
                "With --repeat: draw each fault's time (at_ms, or the delay after its event) anew for each run, "
                "within --vary-range");
  cmd->add_option("--vary-range", args->vary_range,
                  "How far --vary-faults moves a time either way: P% of it, at least N ms (P%,Nms; default 50%,100ms), "
                  "kept within the run");
  cmd->add_option("--seed", args->seed,
                  "With --repeat: the campaign seed (default the scenario's); run I's seed and fault times follow "
                  "from it and I alone");
  cmd->add_option("paths", args->paths, "Scenario files or directories of them")->required();
  return [args] { return run(*args); };
}

}  // namespace lockstep::cli
