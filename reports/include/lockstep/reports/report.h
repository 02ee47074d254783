// A RunReport is everything a person or a machine needs to know about one scenario run:
// what was run (scenario, world, algorithm, seed, faults), what was expected, what was
// found (verdict and violations, each with a sentence), the digest of the recorded
// history, and the exact command that replays it. Writers turn it into report.json (and,
// later, Markdown, HTML and JUnit).
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "lockstep/checker/invariants.h"
#include "lockstep/topology.h"

namespace lockstep::reports {

// A run's verdict: it broke a property, kept them all, or could not be decided (a check
// ran out of its limits, the run out of its event bound, or a live run could not start).
namespace verdict {
inline constexpr const char* kViolation = "violation";
inline constexpr const char* kSafe = "safe";
inline constexpr const char* kUnknown = "unknown";
}  // namespace verdict

struct RunReport;

// What a scenario's author expects a run to find (the file's "expect"):
//   Safe      no violation, and a verdict that could be given ("violations": []);
//   AtLeast   a violation of each named property or class, and maybe more
//             ("violations": [...]; none named: any violation, "verdict": "violation");
//   Exactly   violations of exactly the named properties ("exactly": [...]);
//   Unknown   the run cannot give a verdict ("verdict": "unknown"), e.g. a scenario
//             that shows what lockstep refuses to call green.
// An unknown verdict meets only Unknown.
struct Expectation {
  enum class Mode { Safe, AtLeast, Exactly, Unknown };
  Mode mode = Mode::Safe;
  std::set<std::string> names;  // properties; AtLeast also takes severity class names

  static Expectation safe() { return {}; }
  static Expectation at_least(std::set<std::string> names) { return {Mode::AtLeast, std::move(names)}; }
  static Expectation exactly(std::set<std::string> names) {
    return names.empty() ? safe() : Expectation{Mode::Exactly, std::move(names)};
  }
  static Expectation unknown() { return {Mode::Unknown, {}}; }

  bool met_by(const RunReport& r) const;
  // "safe", "violation" or "unknown": the verdict this expects.
  const char* verdict() const;
  // "at-least" or "exactly": how names are compared with what a run found.
  const char* match() const { return mode == Mode::Exactly ? "exactly" : "at-least"; }
  // For tables: "safe", "unknown", "any violation", "mutual-exclusion+" (at least these),
  // "lost-update,mutual-exclusion" (exactly).
  std::string text() const;
  bool operator==(const Expectation&) const = default;
};

struct RunReport {
  std::string scenario;
  std::string description;
  std::string world = to_string(World::Sim);  // lockstep/topology.h
  std::string algorithm;
  uint64_t seed = 0;
  nlohmann::json faults = nlohmann::json::array();  // [{kind, target, at_ms, ...}]
  Expectation expected;
  std::vector<checker::Violation> violations;
  std::string verdict;  // one of verdict::k...; settle_verdict() decides it
  // Why the run does not show what it describes, one sentence each: clients still
  // waiting at the end, a fault that never fired, a check that ran out of its limits...
  // A run with any is never safe: unknown, or a violation if it found one (what was seen
  // did happen) — unless one of them doubts the findings themselves (`doubts_findings`).
  std::vector<std::string> inconclusive;
  bool doubts_findings = false;
  std::string history_sha256;
  std::string replay;  // the command that reproduces this run
  nlohmann::json stats = nlohmann::json::object();  // counts a reader may want (sales, ops)
  nlohmann::json scenario_json;  // the scenario as run

  std::set<std::string> found_violations() const;
  std::set<std::string> found_classes() const;
  // The verdict meets the scenario's expectation (Expectation::met_by).
  bool as_expected() const { return expected.met_by(*this); }
  bool unknown() const { return verdict == verdict::kUnknown; }

  // Adds a reason the run is inconclusive; `doubts_findings` when the reason puts what
  // the run found in doubt too (a client whose reports cannot be trusted, a run that
  // is not the scenario because its fault never fired).
  void add_inconclusive(std::string why, bool doubts = false) {
    inconclusive.push_back(std::move(why));
    doubts_findings = doubts_findings || doubts;
  }
  // Sets `verdict` from the violations and the reasons above (a run that could not be
  // played at all has its violations cleared by the caller first).
  void settle_verdict();
};

nlohmann::ordered_json to_json(const RunReport& r);

// SHA-256 of `data` as 64 lowercase hex digits.
std::string sha256_hex(const std::string& data);

}  // namespace lockstep::reports
