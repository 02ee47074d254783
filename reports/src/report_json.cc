#include "lockstep/reports/report.h"

namespace lockstep::reports {

std::set<std::string> RunReport::found_violations() const {
  std::set<std::string> s;
  for (const auto& v : violations) s.insert(v.property);
  return s;
}

nlohmann::ordered_json to_json(const RunReport& r) {
  nlohmann::ordered_json j;
  j["scenario"] = r.scenario;
  j["description"] = r.description;
  j["world"] = r.world;
  j["algorithm"] = r.algorithm;
  j["seed"] = r.seed;
  j["faults"] = r.faults;
  j["expected"] = r.expected_violations.empty() ? "safe" : "violation";
  j["expected_violations"] = r.expected_violations;
  j["verdict"] = r.verdict;
  j["as_expected"] = r.as_expected();
  auto& vs = j["violations"] = nlohmann::ordered_json::array();
  for (const auto& v : r.violations) {
    nlohmann::ordered_json o;
    o["property"] = v.property;
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
