// A RunReport is everything a person or a machine needs to know about one scenario run:
// what was run (scenario, world, algorithm, seed, faults), what was expected, what was
// found (verdict and violations, each with a sentence), the digest of the recorded
// history, and the exact command that replays it. Writers turn it into report.json (and,
// later, Markdown, HTML and JUnit).
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lockstep/checker/invariants.h"

namespace lockstep::reports {

// A run's verdict: it broke a property, kept them all, or could not be decided (a check
// ran out of its limits, the run out of its event bound, or a live run could not start).
namespace verdict {
inline constexpr const char* kViolation = "violation";
inline constexpr const char* kSafe = "safe";
inline constexpr const char* kUnknown = "unknown";
}  // namespace verdict

struct RunReport {
  std::string scenario;
  std::string description;
  std::string world = "sim";
  std::string algorithm;
  uint64_t seed = 0;
  nlohmann::json faults = nlohmann::json::array();  // [{kind, target, at_ms, ...}]
  std::set<std::string> expected_violations;
  std::vector<checker::Violation> violations;
  std::string verdict;  // one of verdict::k...
  std::string history_sha256;
  std::string replay;  // the command that reproduces this run
  nlohmann::json stats = nlohmann::json::object();  // counts a reader may want (sales, ops)
  nlohmann::json scenario_json;  // the scenario as run

  std::set<std::string> found_violations() const;
  // The verdict matches the expectation: exactly the expected properties were violated.
  bool as_expected() const { return found_violations() == expected_violations; }
  bool unknown() const { return verdict == verdict::kUnknown; }
};

nlohmann::ordered_json to_json(const RunReport& r);

// SHA-256 of `data` as 64 lowercase hex digits.
std::string sha256_hex(const std::string& data);

}  // namespace lockstep::reports
