// `lockstep fuzz`: generated scenarios until one breaks a property, shrunk to a small
// replayable scenario file. Also `--merge DIR...` to combine the summaries of shards run
// on different machines.

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include "commands.h"
#include "option_values.h"
#include "lockstep/algorithms.h"
#include "lockstep/checker/properties.h"
#include "lockstep/profiles.h"
#include "lockstep/reports/writers.h"
#include "lockstep/runner/fuzz.h"
#include "lockstep/runner/jobs.h"
#include "lockstep/runner/progress.h"
#include "lockstep/runner/shard.h"

namespace lockstep::cli {
namespace {

namespace fs = std::filesystem;

struct FuzzArgs {
  std::string algorithm;
  std::string profile;  // library profiles to draw instead of algorithms, comma-separated
  std::string faults = "pause,crash";
  std::string stop_on = "all";  // severity classes and properties that end the campaign
  std::string budget = "any";   // faults as drawn, within the lock's assumptions, or beyond them
  std::optional<uint64_t> runs;
  double time_limit_s = 0;
  uint64_t seed = 1;
  std::string shard = "0/1";
  std::optional<int> shard_count;
  std::string out = "lockstep-fuzz";
  std::string junit;
  std::vector<std::string> merge;
  std::string jobs;  // runs at once; "" for one per core
  bool out_given = false;  // --merge writes a merged summary.json only where asked to
};

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, sep)) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

// What the campaign draws: the profiles, the one algorithm, or "all" algorithms.
std::string subject(const FuzzArgs& a) {
  if (!a.profile.empty()) return a.profile;
  return a.algorithm.empty() ? "all" : a.algorithm;
}

bool usage_error(const std::string& why) {
  std::fprintf(stderr, "lockstep fuzz: %s\n", why.c_str());
  return false;
}

bool parse_space(const FuzzArgs& a, runner::FuzzSpace& sp, runner::FuzzOptions& o) {
  if (!a.profile.empty() && !a.algorithm.empty()) return usage_error("give --algorithm or --profile, not both");
  if (!a.profile.empty()) {
    if (std::string why = expand_profiles(split(a.profile, ','), sp.locks); !why.empty()) return usage_error(why);
  } else {
    if (a.algorithm.empty()) {
      // All algorithms means the Redis ones, as it always has; a lock of another service is
      // fuzzed when it is named.
      for (const auto& n : algorithm_names())
        if (find_lock(n)->service == LockService::Redis) sp.locks.push_back(n);
    } else {
      sp.locks = {a.algorithm};
    }
    if (std::string why = first_unknown("algorithm", sp.locks, algorithm_names(), "Algorithms"); !why.empty())
      return usage_error(why);
  }
  if (a.faults != "none") {
    const std::vector<std::string> kinds = split(a.faults, ',');
    std::vector<std::string> known = fault_kind_names();
    if (std::string why = first_unknown("fault kind", kinds, known, "Fault kinds (or none)"); !why.empty())
      return usage_error(why);
    for (const auto& k : kinds) sp.fault_kinds.push_back(*fault_kind_named(k));
  }
  if (std::string why = runner::parse_stop_on(a.stop_on, sp); !why.empty()) return usage_error("--stop-on: " + why);
  sp.budget = a.budget == "within" ? runner::Budget::Within
              : a.budget == "beyond" ? runner::Budget::Beyond
                                     : runner::Budget::Any;
  if (a.runs && a.time_limit_s > 0) return usage_error("give --runs or --time-limit, not both");
  o.runs = a.runs.value_or(100);
  o.time_limit_s = a.time_limit_s;
  o.seed = a.seed;
  runner::Shard shard;
  if (std::string why = runner::resolve_shard(a.shard, a.shard_count, std::getenv, shard); !why.empty())
    return usage_error(why);
  o.shard = shard.index;
  o.shards = shard.count;
  o.jobs = runner::default_jobs();
  if (!a.jobs.empty()) {
    if (std::string why = runner::parse_jobs(a.jobs, o.jobs); !why.empty()) return usage_error(why);
  }
  return true;
}

// The campaign as one JUnit test case: it passes when nothing was found; a finding fails
// it with the counterexample's sentences and replay command (the shared JUnit writer).
reports::RunReport campaign_report(const FuzzArgs& a, const runner::FuzzSummary& s) {
  reports::RunReport r;
  if (s.finding) r = s.finding->outcome.report;
  r.scenario = "fuzz " + (subject(a) == "all" ? std::string("all algorithms") : subject(a)) + " faults=" + a.faults;
  r.algorithm = subject(a) == "all" ? "fuzz" : subject(a);
  r.expected = reports::Expectation::safe();  // the campaign expects safety
  if (!s.finding) r.verdict = reports::verdict::kSafe;
  r.stats["runs"] = s.runs;
  r.stats["seconds"] = s.seconds;
  return r;
}

std::string shard_text(const runner::FuzzOptions& o) { return std::to_string(o.shard) + "/" + std::to_string(o.shards); }

nlohmann::ordered_json summary_json(const FuzzArgs& a, const runner::FuzzOptions& o, const runner::FuzzSummary& s,
                                    const std::string& counterexample) {
  nlohmann::ordered_json j;
  j["algorithm"] = subject(a);
  j["faults"] = a.faults;
  j["seed"] = a.seed;
  j["shard"] = shard_text(o);
  j["stop_on"] = a.stop_on;
  j["runs"] = s.runs;
  j["violations"] = s.violations;
  j["by_class"] = s.by_class;
  j["unknown"] = s.unknown;
  j["seconds"] = s.seconds;
  j["counterexamples"] = counterexample.empty() ? nlohmann::json::array() : nlohmann::json::array({counterexample});
  return j;
}

// When every summary is a shard of one campaign (same subject, faults and seed), the
// shards must be all of it, each once: a lost shard would make the merged count a lie.
std::string shards_problem(const std::vector<nlohmann::json>& summaries, const std::vector<std::string>& dirs) {
  const auto campaign = [](const nlohmann::json& j) {
    return j.value("algorithm", "") + "|" + j.value("faults", "") + "|" + std::to_string(j.value("seed", uint64_t{0}));
  };
  std::vector<int> seen;
  int count = -1;
  for (size_t i = 0; i < summaries.size(); ++i) {
    if (campaign(summaries[i]) != campaign(summaries[0])) return "";  // different campaigns: a plain sum
    const std::string spec = summaries[i].value("shard", "0/1");
    runner::Shard sh;
    if (std::string why = runner::resolve_shard(spec, std::nullopt, std::getenv, sh); !why.empty())
      return dirs[i] + ": shard " + why;
    if (count >= 0 && sh.count != count)
      return dirs[i] + ": shard " + spec + " of a split into " + std::to_string(count) + " elsewhere";
    count = sh.count;
    if (std::find(seen.begin(), seen.end(), sh.index) != seen.end())
      return dirs[i] + ": shard " + std::to_string(sh.index) + " given twice";
    seen.push_back(sh.index);
  }
  if (static_cast<int>(seen.size()) != count)
    return "only " + std::to_string(seen.size()) + " of the campaign's " + std::to_string(count) + " shards given";
  return "";
}

int merge(const std::vector<std::string>& dirs, const std::string& out) {
  uint64_t runs = 0, violations = 0, unknown = 0;
  std::map<std::string, uint64_t> by_class;
  double seconds = 0;
  std::vector<std::string> examples;
  std::vector<nlohmann::json> summaries;
  for (const auto& d : dirs) {
    const fs::path p = fs::path(d) / "summary.json";
    std::ifstream in(p);
    nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
    if (!in || j.is_discarded() || !j.contains("runs") || !j["runs"].is_number_unsigned()) {
      std::fprintf(stderr, "%s: $: expected a lockstep fuzz summary, found %s\n", p.string().c_str(),
                   in ? "something else" : "no readable file");
      return kExitDataErr;
    }
    runs += j["runs"].get<uint64_t>();
    violations += j.value("violations", uint64_t{0});
    unknown += j.value("unknown", uint64_t{0});
    if (j.contains("by_class") && j["by_class"].is_object()) {
      for (const auto& [c, n] : j["by_class"].items()) {
        if (n.is_number_unsigned()) by_class[c] += n.get<uint64_t>();
      }
    }
    seconds += j.value("seconds", 0.0);
    for (const auto& c : j.value("counterexamples", nlohmann::json::array())) examples.push_back(c.get<std::string>());
    summaries.push_back(std::move(j));
  }
  if (std::string why = shards_problem(summaries, dirs); !why.empty()) {
    std::fprintf(stderr, "lockstep fuzz --merge: %s\n", why.c_str());
    return kExitDataErr;
  }
  std::printf("merged %zu shard%s: %llu runs, %llu stopped on a violation, by class: %s; %llu unknown; %.1fs of fuzzing\n",
              dirs.size(), dirs.size() == 1 ? "" : "s", static_cast<unsigned long long>(runs),
              static_cast<unsigned long long>(violations), runner::by_class_text(by_class).c_str(),
              static_cast<unsigned long long>(unknown), seconds);
  for (const auto& e : examples) std::printf("  counterexample: %s  (replay: lockstep run %s)\n", e.c_str(), e.c_str());
  if (!out.empty()) {
    nlohmann::ordered_json j;
    j["algorithm"] = summaries[0].value("algorithm", "");
    j["faults"] = summaries[0].value("faults", "");
    j["seed"] = summaries[0].value("seed", uint64_t{0});
    j["shards"] = dirs.size();
    j["runs"] = runs;
    j["violations"] = violations;
    j["by_class"] = by_class;
    j["unknown"] = unknown;
    j["seconds"] = seconds;
    j["counterexamples"] = examples;
    std::error_code ec;
    fs::create_directories(out, ec);
    if (!write_file(fs::path(out) / "summary.json", j.dump(2) + "\n")) {
      std::fprintf(stderr, "lockstep fuzz --merge: cannot write %s/summary.json\n", out.c_str());
      return kExitDataErr;
    }
  }
  return violations ? kExitMismatch : 0;
}

int fuzz(const FuzzArgs& a) {
  if (!a.merge.empty()) return merge(a.merge, a.out_given ? a.out : "");
  runner::FuzzSpace space;
  runner::FuzzOptions opts;
  if (!parse_space(a, space, opts)) return kExitUsage;
  std::printf("fuzz: seed=%llu shard=%s algorithm=%s faults=%s stop-on=%s %s\n", static_cast<unsigned long long>(a.seed),
              shard_text(opts).c_str(), subject(a).c_str(), a.faults.c_str(), a.stop_on.c_str(),
              a.time_limit_s > 0 ? ("time-limit=" + seconds_text(a.time_limit_s) + "s").c_str()
                                 : ("runs=" + std::to_string(opts.runs)).c_str());
  std::fflush(stdout);
  runner::Progress progress("fuzz");
  runner::FuzzSummary s = runner::fuzz(space, opts, [&](uint64_t done, uint64_t total) { progress.show(done, total); });
  progress.clear();
  std::error_code ec;
  fs::create_directories(a.out, ec);
  std::string example, replay;
  if (s.finding) {
    auto& f = *s.finding;
    f.shrunk.name = "counterexample-1";
    f.shrunk.description = "Found by lockstep fuzz (seed " + std::to_string(a.seed) + ", run " +
                           std::to_string(f.index) + ") and shrunk in " + std::to_string(f.shrink_steps) + " steps.";
    example = (fs::path(a.out) / "counterexample-1.json").string();
    replay = runner::replay_program() + " run " + example;
    const fs::path dir = fs::path(a.out) / "counterexample-1";
    fs::create_directories(dir, ec);
    auto outcome = runner::run_in_sim(f.shrunk, {std::nullopt, example});
    std::string error;
    if (!write_file(example, runner::to_json(f.shrunk).dump(2) + "\n") ||
        !write_file(dir / "history.jsonl", outcome.history_jsonl) ||
        !reports::write_scenario_reports(dir, outcome.report, outcome.history, error)) {
      std::fprintf(stderr, "lockstep fuzz: cannot write to %s %s\n", a.out.c_str(), error.c_str());
      return kExitDataErr;
    }
    std::printf("violation after %llu runs: %zu fault(s) after shrinking (%d steps)\n",
                static_cast<unsigned long long>(s.runs), f.shrunk.faults.size(), f.shrink_steps);
    for (const auto& fault : f.shrunk.faults) std::printf("  fault: %s\n", describe_fault(fault).c_str());
    for (const auto& v : outcome.report.violations) {
      std::printf("  %s [%s]: %s\n", checker::to_string(v.property), checker::to_string(v.severity), v.explanation.c_str());
    }
    std::printf("counterexample: %s\nreplay: %s\n", example.c_str(), replay.c_str());
  }
  write_file(fs::path(a.out) / "summary.json", summary_json(a, opts, s, example).dump(2) + "\n");
  std::string error;
  if (!a.junit.empty() && !reports::write_junit({campaign_report(a, s)}, "lockstep fuzz", a.junit, error)) {
    std::fprintf(stderr, "lockstep fuzz: %s\n", error.c_str());
    return kExitDataErr;
  }
  std::printf("%llu run%s, %llu stopped on a violation, by class: %s; %llu unknown; %.1fs\n",
              static_cast<unsigned long long>(s.runs), s.runs == 1 ? "" : "s",
              static_cast<unsigned long long>(s.violations), runner::by_class_text(s.by_class).c_str(),
              static_cast<unsigned long long>(s.unknown), s.seconds);
  return s.finding ? kExitMismatch : 0;
}

}  // namespace

CommandRunner add_fuzz_command(CLI::App& app) {
  auto a = std::make_shared<FuzzArgs>();
  auto* cmd = app.add_subcommand("fuzz", "Search for lock violations with generated scenarios, shrunk to a replayable file");
  cmd->add_option("--algorithm", a->algorithm, "Only this algorithm (default: all)");
  cmd->add_option("--profile", a->profile, "Library profiles instead of algorithms, comma-separated: LIBRARY@VERSION, a library alone for all its versions, or all");
  cmd->add_option("--faults", a->faults, "Fault kinds to draw from, comma-separated, or none")->capture_default_str();
  cmd->add_option("--stop-on", a->stop_on,
                  "Stop only on violations of these severity classes or properties, comma-separated (e.g. "
                  "two-holders,damage), or all")
      ->capture_default_str();
  cmd->add_option("--budget", a->budget,
                  "any: faults as drawn; within: cut down to what each lock claims to tolerate (lockstep profiles "
                  "--assumptions); beyond: at least one past it")
      ->check(CLI::IsMember({"any", "within", "beyond"}))
      ->capture_default_str();
  cmd->add_option("--runs", a->runs, "Number of generated scenarios (default 100)");
  cmd->add_option("--time-limit", a->time_limit_s, "Fuzz for this many seconds instead of a run count");
  cmd->add_option("--seed", a->seed, "Campaign seed")->capture_default_str();
  cmd->add_option("--shard", a->shard,
                  "Run shard I of N (I/N, interleaved run indices), or auto: from a Kubernetes Indexed Job or a Slurm "
                  "job array")
      ->capture_default_str();
  cmd->add_option("--shard-count", a->shard_count, "With --shard auto under Kubernetes: how many shards (completions)");
  cmd->add_option("--jobs", a->jobs,
                  "Runs at once, 1 or more (default: one per core); the results are the same for any number")
      ->type_name("N");
  cmd->add_option("--out", a->out, "Directory for the summary and counterexamples")->capture_default_str();
  cmd->add_option("--junit", a->junit, "Write a JUnit XML result here");
  cmd->add_option("--merge", a->merge, "Combine the summaries of these shard output directories")->expected(1, -1);
  return [a, cmd] {
    a->out_given = cmd->count("--out") > 0;
    return fuzz(*a);
  };
}

}  // namespace lockstep::cli
