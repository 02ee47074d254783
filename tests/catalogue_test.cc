// Every scenario of the catalogue must reach the verdict it expects, and two runs of the
// same scenario and seed must record byte-identical histories.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "lockstep/runner/sim_runner.h"

namespace lockstep::runner {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> catalogue() {
  std::vector<std::string> files;
  // scenarios/live/ too: those scenarios must keep their verdicts in the simulator.
  for (const auto& e : fs::recursive_directory_iterator(fs::path(LOCKSTEP_SOURCE_DIR) / "scenarios")) {
    if (e.is_regular_file() && e.path().extension() == ".json" && !e.path().string().ends_with(".schema.json"))
      files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

Scenario load(const std::string& file) {
  auto r = load_scenario_file(file);
  if (auto* err = std::get_if<ScenarioError>(&r)) ADD_FAILURE() << err->message();
  return std::get<Scenario>(r);
}

class Catalogue : public ::testing::TestWithParam<std::string> {};

TEST_P(Catalogue, VerdictAsExpectedAndHistoryReproducible) {
  const Scenario s = load(GetParam());
  RunOutcome first = run_in_sim(s);
  RunOutcome second = run_in_sim(s);
  EXPECT_EQ(first.history_jsonl, second.history_jsonl) << "same scenario and seed, different history";
  EXPECT_EQ(first.report.history_sha256, second.report.history_sha256);
  EXPECT_EQ(first.report.verdict, s.expected_violations.empty() ? "safe" : "violation");
  EXPECT_EQ(first.report.found_violations(), s.expected_violations);
  for (const auto& v : first.report.violations) {
    EXPECT_FALSE(v.explanation.empty());
    EXPECT_FALSE(v.processes.empty() && v.property != "lost-update") << v.property;
  }
}

std::string name_of(const ::testing::TestParamInfo<std::string>& info) {
  std::string n = fs::path(info.param).stem().string();
  std::replace_if(n.begin(), n.end(), [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); }, '_');
  return n;
}

INSTANTIATE_TEST_SUITE_P(Scenarios, Catalogue, ::testing::ValuesIn(catalogue()), name_of);

TEST(Catalogue, StockDemoSellsEverythingExactlyOnce) {
  const Scenario s = load(std::string(LOCKSTEP_SOURCE_DIR) + "/scenarios/11-seed001-stock-demo.json");
  RunOutcome out = run_in_sim(s);
  EXPECT_EQ(out.report.verdict, "safe");
  EXPECT_EQ(out.report.stats["sales"], 90);
  const auto& resource = out.history.events.back();
  ASSERT_EQ(resource.f, "resource");
  EXPECT_EQ(resource.value["final"], 0);
}

TEST(Catalogue, ADifferentSeedGivesADifferentHistory) {
  const Scenario s = load(std::string(LOCKSTEP_SOURCE_DIR) + "/scenarios/11-seed001-stock-demo.json");
  RunOptions other;
  other.seed = s.seed + 1;
  EXPECT_NE(run_in_sim(s).report.history_sha256, run_in_sim(s, other).report.history_sha256);
}

}  // namespace
}  // namespace lockstep::runner
