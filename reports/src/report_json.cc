#include "lockstep/reports/report.h"

#include "lockstep/checker/properties.h"

namespace lockstep::reports {

std::set<std::string> RunReport::found_violations() const {
  std::set<std::string> s;
  for (const auto& v : violations) s.insert(checker::to_string(v.property));
  return s;
}

std::set<std::string> RunReport::found_classes() const {
  std::set<std::string> s;
  for (const auto& v : violations) s.insert(checker::to_string(v.severity));
  return s;
}

void RunReport::settle_verdict() {
  if (!inconclusive.empty() && (violations.empty() || doubts_findings)) {
    verdict = verdict::kUnknown;
  } else {
    verdict = violations.empty() ? verdict::kSafe : verdict::kViolation;
  }
}

bool Expectation::met_by(const RunReport& r) const {
  if (mode == Mode::Unknown) return r.unknown();
  if (r.unknown()) return false;
  const std::set<std::string> found = r.found_violations();
  switch (mode) {
    case Mode::Safe:
      return found.empty();
    case Mode::Exactly:
      return found == names;
    case Mode::AtLeast: {
      if (found.empty()) return false;
      const std::set<std::string> classes = r.found_classes();
      for (const auto& n : names) {
        if (!found.count(n) && !classes.count(n)) return false;
      }
      return true;
    }
    case Mode::Unknown:
      break;
  }
  return false;
}

const char* Expectation::verdict() const {
  switch (mode) {
    case Mode::Safe:
      return verdict::kSafe;
    case Mode::AtLeast:
    case Mode::Exactly:
      return verdict::kViolation;
    case Mode::Unknown:
      return verdict::kUnknown;
  }
  return verdict::kSafe;
}

std::string Expectation::text() const {
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ",") + n;
  switch (mode) {
    case Mode::Safe:
      return "safe";
    case Mode::Unknown:
      return "unknown";
    case Mode::AtLeast:
      return names.empty() ? "any violation" : list + "+";
    case Mode::Exactly:
      return list;
  }
  return list;
}

nlohmann::ordered_json to_json(const RunReport& r) {
  nlohmann::ordered_json j;
  j["scenario"] = r.scenario;
  j["description"] = r.description;
  j["world"] = r.world;
  j["algorithm"] = r.algorithm;
  j["seed"] = r.seed;
  j["faults"] = r.faults;
  j["expected"] = r.expected.verdict();
  j["expected_violations"] = r.expected.names;
  j["expected_match"] = r.expected.match();
  j["verdict"] = r.verdict;
  j["as_expected"] = r.as_expected();
  j["inconclusive"] = r.inconclusive;
  auto& vs = j["violations"] = nlohmann::ordered_json::array();
  for (const auto& v : r.violations) {
    nlohmann::ordered_json o;
    o["property"] = checker::to_string(v.property);
    o["class"] = checker::to_string(v.severity);
    o["explanation"] = v.explanation;
    o["processes"] = v.processes;
    o["at_ns"] = v.at_ns;
    o["count"] = v.count;
    vs.push_back(std::move(o));
  }
  j["history_sha256"] = r.history_sha256;
  j["replay"] = r.replay;
  j["stats"] = r.stats;
  j["scenario_definition"] = r.scenario_json;
  return j;
}

}  // namespace lockstep::reports
