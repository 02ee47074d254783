// Scenario files with an external workload: what they default to (live only, a lock named
// freely, the command run in the file's folder), that they write back as they were read,
// and each mistake rejected with the path, what was expected and what was found.
#include <gtest/gtest.h>

#include "lockstep/runner/scenario.h"

namespace lockstep::runner {
namespace {

std::string with_workload(const std::string& workload, const std::string& extra = "") {
  return R"({"lock": {"lease_ms": 1000}, "workload": )" + workload + extra + R"(, "expect": {"violations": []}})";
}

TEST(ExternalScenario, DefaultsToLiveARunInTheFilesFolderAndALockOfAnyName) {
  auto r = parse_scenario(with_workload(R"({"kind": "external", "command": ["node", "stock.js"], "clients": 3})"),
                          "/some/where/demo.json");
  ASSERT_TRUE(std::holds_alternative<Scenario>(r)) << std::get<ScenarioError>(r).message();
  const Scenario& s = std::get<Scenario>(r);
  EXPECT_TRUE(s.workload.external());
  EXPECT_EQ(s.workload.command, (std::vector<std::string>{"node", "stock.js"}));
  EXPECT_EQ(s.workload.command_dir, "/some/where");
  EXPECT_EQ(s.worlds, std::vector<World>{World::Live});
  EXPECT_EQ(s.lock.algorithm, "external");
  auto named = parse_scenario(R"({"lock": {"algorithm": "node-redlock 5.0.0-beta.2"},
      "workload": {"kind": "external", "command": ["node"]}, "expect": {"violations": []}})", "x.json");
  ASSERT_TRUE(std::holds_alternative<Scenario>(named));
  EXPECT_EQ(std::get<Scenario>(named).lock.algorithm, "node-redlock 5.0.0-beta.2");
  // Written back in the file format, it reads as the same scenario.
  auto again = parse_scenario(to_json(s).dump(), s.file);
  ASSERT_TRUE(std::holds_alternative<Scenario>(again)) << std::get<ScenarioError>(again).message();
  EXPECT_EQ(std::get<Scenario>(again), s);
}

struct BadExternal {
  std::string text, path, expected, found;
};

TEST(ExternalScenario, EachMistakeIsNamedWithItsPath) {
  const std::string ext = R"("kind": "external", "command": ["node"])";
  const std::vector<BadExternal> table = {
      {with_workload(R"({"kind": "external"})"), "$.workload.command",
       "a non-empty array of strings: the program and its arguments", "nothing"},
      {with_workload(R"({"kind": "external", "command": []})"), "$.workload.command",
       "a non-empty array of strings: the program and its arguments", "an empty array"},
      {with_workload(R"({"kind": "external", "command": ["node", 5]})"), "$.workload.command[1]", "a non-empty string",
       "5"},
      {with_workload(R"({"kind": "external", "command": ["node", ""]})"), "$.workload.command[1]",
       "a non-empty string", "\"\""},
      {with_workload("{" + ext + "}", R"(, "worlds": ["sim", "live"])"), "$.worlds[0]",
       "\"live\" only (an external workload runs your own program, which only the live world starts)", "\"sim\""},
      {with_workload("{" + ext + R"(, "fencing": true})"), "$.workload.fencing",
       "no fencing in an external workload (the program reports what its store did)", "true"},
      {with_workload("{" + ext + R"(, "readers": 1})"), "$.workload.readers",
       "no readers in an external workload (the program reports what its store did)", "1"},
      {R"({"lock": {"algorithm": "setnx"}, "workload": {"command": ["node"]}, "expect": {"violations": []}})",
       "$.workload.command",
       "no command in a stock workload (kind \"external\" runs one)", "an array"},
      {R"({"lock": {"lease_ms": 1000}, "workload": {"kind": "stock"}, "expect": {"violations": []}})", "$.lock.algorithm",
       "", "nothing"},
  };
  for (const auto& b : table) {
    auto r = parse_scenario(b.text, "bad.json");
    ASSERT_TRUE(std::holds_alternative<ScenarioError>(r)) << b.text;
    const auto& e = std::get<ScenarioError>(r);
    EXPECT_EQ(e.path, b.path) << b.text;
    if (!b.expected.empty()) {
      EXPECT_EQ(e.expected, b.expected) << b.text;
    }
    EXPECT_EQ(e.found, b.found) << b.text;
  }
}

}  // namespace
}  // namespace lockstep::runner
