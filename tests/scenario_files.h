// The catalogue's scenario files as the tests load them. A file that does not load fails
// the test that asked for it, with the reader's message and path, and the test goes on
// with an empty scenario instead of throwing out of the whole suite.
#pragma once

#include <string>
#include <utility>
#include <variant>

#include <gtest/gtest.h>

#include "lockstep/reports/writers.h"
#include "lockstep/runner/scenario.h"

namespace lockstep::scenario_files {

inline const std::string kDir = std::string(LOCKSTEP_SOURCE_DIR) + "/scenarios/";

// `file` is an absolute path, or a path under scenarios/.
inline runner::Scenario load(const std::string& file) {
  auto r = runner::load_scenario_file(file.starts_with('/') ? file : kDir + file);
  if (auto* e = std::get_if<runner::ScenarioError>(&r)) {
    ADD_FAILURE() << e->message();
    return {};
  }
  return std::get<runner::Scenario>(std::move(r));
}

// A shipped scenario's run meets its expectation, and its list of properties is the
// whole of what the run found: "violations" only promises at least those, but the
// catalogue names every property its race breaks, so an extra one is a change to look at.
inline void expect_shipped_verdict(const reports::RunReport& r, const runner::Scenario& s, const std::string& context = "") {
  EXPECT_TRUE(r.as_expected()) << s.name << ": expected " << s.expect.text() << ", verdict " << r.verdict << ", found "
                               << reports::found_text(r) << "\n" << context;
  if (s.expect.mode == reports::Expectation::Mode::AtLeast && !s.expect.names.empty()) {
    EXPECT_EQ(r.found_violations(), s.expect.names) << s.name << "\n" << context;
  }
}

}  // namespace lockstep::scenario_files
