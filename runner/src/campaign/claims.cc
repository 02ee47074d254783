#include "lockstep/runner/claims.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "lockstep/algorithms.h"
#include "lockstep/runner/fuzz.h"
#include "lockstep/runner/live_runner.h"
#include "lockstep/runner/sim_runner.h"
#include "lockstep/text.h"

namespace lockstep::runner {
namespace {

namespace fs = std::filesystem;

std::string claim_problem(const std::string& algorithm, const Claim& claim, const ClaimOptions& o) {
  if (!is_algorithm(algorithm))
    return "unknown algorithm \"" + algorithm + "\" (one of " + join(algorithm_names()) +
           "; a lock of your own needs register_algorithm first)";
  const auto& props = property_names();
  for (const auto& p : claim.keeps) {
    if (std::find(props.begin(), props.end(), p) == props.end())
      return "unknown property \"" + p + "\" (one of " + join(props) + ")";
  }
  if (o.runs == 0) return "runs must be at least 1";
  if (o.clients_max < 2) return "clients_max must be at least 2 (one client cannot contend)";
  if (o.duration_ms < 100) return "duration_ms must be at least 100";
  return "";
}

bool write_file(const fs::path& p, const std::string& data) {
  std::error_code ec;
  fs::create_directories(p.parent_path(), ec);
  std::ofstream f(p, std::ios::binary);
  f << data;
  return static_cast<bool>(f);
}

}  // namespace

std::set<std::string> ClaimResult::broken() const {
  return outcome ? outcome->report.found_violations() : std::set<std::string>{};
}

std::string ClaimResult::message() const {
  if (holds()) return algorithm + ": the claim held in " + std::to_string(runs) + " generated scenarios";
  std::string m = algorithm + ": claim broken after " + std::to_string(runs) + " generated scenarios; shrunk to " +
                  std::to_string(counterexample->faults.size()) + " fault(s):\n";
  for (const auto& f : counterexample->faults) m += "  fault: " + describe_fault(f) + "\n";
  for (const auto& v : outcome->report.violations) m += "  " + std::string(checker::to_string(v.property)) + ": " + v.explanation + "\n";
  if (counterexample_file.empty()) return m + "  (not written: ClaimOptions::out_dir is empty or unwritable)";
  m += "  counterexample: " + counterexample_file + "\n";
  m += "  replay: " + replay;
  return m;
}

std::variant<ClaimResult, ClaimError> check_claim(const std::string& algorithm, const Claim& claim,
                                                  const ClaimOptions& o) {
  if (std::string why = claim_problem(algorithm, claim, o); !why.empty()) return ClaimError{why};
  FuzzSpace space;
  space.locks = {algorithm};
  space.fault_kinds = claim.under;
  space.duration_ms = o.duration_ms;
  space.clients_max = o.clients_max;
  // No claimed property means every property: a violation of an unnamed one must not
  // pass silently, and an empty filter is the fuzzer's "all".
  space.properties = claim.keeps;
  space.pauses_within_lease = claim.pauses_within_lease;
  FuzzOptions fo;
  fo.seed = o.seed;
  fo.runs = o.runs;
  FuzzSummary s = fuzz(space, fo);

  ClaimResult r;
  r.algorithm = algorithm;
  r.runs = s.runs;
  if (!s.finding) return r;
  Scenario shrunk = s.finding->shrunk;
  shrunk.name = algorithm + "-counterexample";
  shrunk.description = "A counterexample to a claim about " + algorithm + " (seed " + std::to_string(o.seed) +
                       ", run " + std::to_string(s.finding->index) + "), shrunk in " +
                       std::to_string(s.finding->shrink_steps) + " steps.";
  std::string path = shrunk.name + ".json";
  if (!o.out_dir.empty()) {
    path = (fs::path(o.out_dir) / path).string();
    if (write_file(path, to_json(shrunk).dump(2) + "\n")) r.counterexample_file = path;
  }
  r.outcome = run_in_sim(shrunk, {std::nullopt, path});
  r.replay = r.outcome->report.replay;
  r.counterexample = std::move(shrunk);
  return r;
}

std::string ScenarioVerdict::message() const {
  if (!error.empty()) return error;
  std::string m;
  for (const auto& r : reports) {
    std::string found;
    for (const auto& p : r.found_violations()) found += (found.empty() ? "" : ", ") + p;
    m += r.scenario + " (" + r.world + "): " + r.verdict + (found.empty() ? "" : " [" + found + "]") +
         (r.as_expected() ? ", as expected" : ", NOT as expected") + "\n";
    for (const auto& v : r.violations) m += "  " + std::string(checker::to_string(v.property)) + ": " + v.explanation + "\n";
    if (!r.as_expected()) m += "  replay: " + r.replay + "\n";
  }
  return m;
}

ScenarioVerdict run_scenario_file(const std::string& path, bool live) {
  ScenarioVerdict v;
  ScenarioResult loaded = load_scenario_file(path);
  if (auto* e = std::get_if<ScenarioError>(&loaded)) {
    v.error = e->message();
    return v;
  }
  const Scenario& s = std::get<Scenario>(loaded);
  if (std::string why = sim_unsupported(s); why.empty()) {
    v.reports.push_back(run_in_sim(s, {std::nullopt, path}).report);
  } else if (!live) {
    v.error = path + ": the simulator cannot run it: " + why;
    return v;
  }
  const bool wants_live = s.runs_in(World::Live);
  if (live && wants_live) {
    LiveOptions lo;
    lo.replay_path = path;
    if (std::string why = live_unsupported(s, lo); !why.empty()) {
      v.error = path + ": the live world cannot run it: " + why;
      return v;
    }
    v.reports.push_back(run_live(s, lo).report);
  }
  v.as_expected = !v.reports.empty();
  for (const auto& r : v.reports) v.as_expected = v.as_expected && r.as_expected() && !r.unknown();
  return v;
}

}  // namespace lockstep::runner
