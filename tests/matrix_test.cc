// The fuzzer draws library profiles and their options (and keeps the profile while
// shrinking), and the safety matrix tells a buggy library version from its fix under a
// small budget: node-redlock 5.0.0-beta.2's expiration from the first attempt (#169)
// breaks it under plain contention, and the fix on main keeps the same cell clean;
// redis-py's Lock without a timeout deadlocks under client crashes.
#include <gtest/gtest.h>

#include "lockstep/profiles.h"
#include "lockstep/reports/matrix.h"
#include "lockstep/runner/matrix.h"

namespace lockstep::runner {
namespace {

TEST(ProfileFuzz, GeneratedScenariosAreValidFilesForEveryProfileAndFault) {
  FuzzSpace space;
  space.locks = profile_names();
  for (const auto& k : fault_kinds()) space.fault_kinds.push_back(k.kind);
  std::set<std::string> seen;
  for (uint64_t i = 0; i < 300; ++i) {
    Scenario s = generate_scenario(space, 5, i);
    seen.insert(s.lock.algorithm);
    auto parsed = parse_scenario(to_json(s).dump(), "generated.json");
    ASSERT_TRUE(std::holds_alternative<Scenario>(parsed)) << std::get<ScenarioError>(parsed).message() << "\n"
                                                          << to_json(s).dump();
    EXPECT_EQ(to_json(std::get<Scenario>(parsed)), to_json(s));
  }
  EXPECT_EQ(seen.size(), library_profiles().size());
}

TEST(ProfileFuzz, FindsTheBugShrinksWithinTheProfileAndReplays) {
  FuzzSpace space;
  space.locks = {"node-redlock@5.0.0-beta.2"};
  FuzzOptions o;
  o.seed = 1;
  o.runs = 200;
  FuzzSummary s = fuzz(space, o);
  ASSERT_TRUE(s.finding.has_value()) << "no violation in " << s.runs << " runs";
  EXPECT_EQ(s.finding->shrunk.lock.algorithm, "node-redlock@5.0.0-beta.2");
  EXPECT_EQ(s.finding->original.lock.algorithm, "node-redlock@5.0.0-beta.2");
  auto reread = parse_scenario(to_json(s.finding->shrunk).dump(2), "counterexample.json");
  ASSERT_TRUE(std::holds_alternative<Scenario>(reread)) << std::get<ScenarioError>(reread).message();
  RunOutcome replay = run_in_sim(std::get<Scenario>(reread));
  EXPECT_EQ(replay.history_jsonl, s.finding->outcome.history_jsonl);
  EXPECT_EQ(replay.report.found_violations(), s.finding->shrunk.expect.names);
}

const MatrixCell& cell(const std::vector<MatrixCell>& cells, const std::string& profile, const std::string& fault) {
  for (const auto& c : cells)
    if (c.profile == profile && c.fault == fault) return c;
  static const MatrixCell kNone;
  ADD_FAILURE() << "no cell " << profile << " x " << fault;
  return kNone;
}

TEST(Matrix, TellsTheBuggyVersionFromItsFixUnderASmallBudget) {
  MatrixOptions o;
  o.profiles = {"node-redlock@5.0.0-beta.2", "node-redlock@afe5cf9", "redis-py@5.0.0"};
  o.faults = {"none", "crash"};
  o.runs = 80;
  ASSERT_EQ(matrix_options_problem(o), "");
  const auto cells = run_matrix(o);
  ASSERT_EQ(cells.size(), 6u);
  EXPECT_TRUE(cell(cells, "node-redlock@5.0.0-beta.2", "none").broken());
  EXPECT_FALSE(cell(cells, "node-redlock@afe5cf9", "none").broken());
  EXPECT_EQ(cell(cells, "node-redlock@afe5cf9", "none").summary.runs, 80u);
  const MatrixCell& crash = cell(cells, "redis-py@5.0.0", "crash");
  ASSERT_TRUE(crash.broken());
  EXPECT_EQ(crash.summary.finding->shrunk.expect.names, std::set<std::string>{"deadlock"});
  EXPECT_FALSE(cell(cells, "redis-py@5.0.0", "none").broken());
}

TEST(Matrix, BadOptionsAreNamed) {
  MatrixOptions o;
  o.profiles = {"redsync@4.17"};
  o.faults = {"none"};
  EXPECT_EQ(matrix_options_problem(o), "unknown profile \"redsync@4.17\" (lockstep profiles lists them)");
  o.profiles = {"redsync@4.17.0"};
  o.faults = {"pauze"};
  EXPECT_EQ(matrix_options_problem(o), "unknown fault kind \"pauze\"");
}

TEST(Matrix, FilesSayEachCellsVerdictAndLinkItsCounterexample) {
  std::vector<reports::MatrixRow> rows = {
      {"a@1", "none", reports::matrix_verdict::kNoViolation, 10, 0.5, 0, "", "", "", {}, {}, ""},
      {"a@1", "pause", reports::matrix_verdict::kBroken, 3, 0.1, 1, "a@1--pause/counterexample.json",
       "a@1--pause/report.html", "lockstep run m/a@1--pause/counterexample.json", {"mutual-exclusion"},
       {"two-holders"}, "x <y>"},
  };
  const auto j = reports::matrix_json(rows, {7, "10 runs per cell", "lockstep matrix"});
  ASSERT_EQ(j["cells"].size(), 2u);
  EXPECT_EQ(j["cells"][0]["verdict"], "no-violation");
  EXPECT_TRUE(j["cells"][0]["counterexample"].is_null());
  EXPECT_EQ(j["cells"][1]["verdict"], "broken");
  EXPECT_EQ(j["cells"][1]["counterexample"], "a@1--pause/counterexample.json");
  EXPECT_EQ(j["cells"][1]["classes"], nlohmann::json::array({"two-holders"}));
  const std::string html = reports::render_matrix_html(rows, {7, "10 runs per cell", "lockstep matrix"});
  EXPECT_NE(html.find("<a href=\"a@1--pause/report.html\">report</a>"), std::string::npos);
  EXPECT_NE(html.find("lockstep run m/a@1--pause/counterexample.json"), std::string::npos);
  EXPECT_NE(html.find("x &lt;y&gt;"), std::string::npos);
  // Coloured and named by the most severe class, the details folded away.
  EXPECT_NE(html.find("<td class=\"broken cls-two-holders\""), std::string::npos) << html;
  EXPECT_NE(html.find("data-class=\"two-holders\"><b>two-holders</b><details><summary>mutual-exclusion</summary>"),
            std::string::npos)
      << html;
  EXPECT_EQ(html.find("<script"), std::string::npos);
  const std::string md = reports::render_matrix_markdown(rows);
  EXPECT_NE(md.find("| a@1 | no-violation | **broken**: two-holders (mutual-exclusion) |"), std::string::npos) << md;
}

}  // namespace
}  // namespace lockstep::runner
