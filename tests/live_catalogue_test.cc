// The catalogue scenarios marked for both worlds reach the same verdict against real
// redis-server processes (and a real ZooKeeper ensemble, for scenarios/zookeeper/) as in
// the simulator: the same lock code, the same faults played in real time, the same
// checks. (scenarios/live/ has its own tests in live_runner_test.cc and
// live_sentinel_test.cc.)
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "lockstep/live/redis_server.h"
#include "lockstep/live/zk_ensemble.h"
#include "lockstep/runner/live_runner.h"
#include "scenario_param_name.h"
#include "scenario_files.h"

namespace lockstep::runner {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> live_catalogue(const char* folder = "") {
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(fs::path(LOCKSTEP_SOURCE_DIR) / "scenarios" / folder)) {
    if (!e.is_regular_file() || e.path().extension() != ".json") continue;
    auto r = load_scenario_file(e.path().string());
    if (const auto* s = std::get_if<Scenario>(&r); s && s->runs_in(World::Live)) {
      files.push_back(e.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<std::string> live_zookeeper_catalogue() { return live_catalogue("zookeeper"); }

class LiveCatalogue : public ::testing::TestWithParam<std::string> {};

TEST_P(LiveCatalogue, SameVerdictAsInTheSimulator) {
  if (live::find_redis_server().empty()) GTEST_SKIP() << "redis-server not installed: live tests need it";
  auto r = load_scenario_file(GetParam());
  ASSERT_TRUE(std::holds_alternative<Scenario>(r)) << std::get<ScenarioError>(r).message();
  const Scenario& s = std::get<Scenario>(r);
  ASSERT_EQ(live_unsupported(s, {}), "");
  RunOutcome o = run_live(s);
  ASSERT_FALSE(o.report.stats.contains("error")) << o.report.stats.dump();
  EXPECT_EQ(o.report.world, "live");
  scenario_files::expect_shipped_verdict(o.report, s, o.history_jsonl);
}

INSTANTIATE_TEST_SUITE_P(Scenarios, LiveCatalogue, ::testing::ValuesIn(live_catalogue()), scenario_param_name);

class LiveZooKeeperCatalogue : public ::testing::TestWithParam<std::string> {};

TEST_P(LiveZooKeeperCatalogue, SameVerdictAsInTheSimulator) {
  if (live::find_redis_server().empty()) GTEST_SKIP() << "redis-server not installed: live tests need it";
  if (live::ZkEnsemble::classpath().empty()) GTEST_SKIP() << "ZooKeeper not installed (scripts/setup installs it)";
  auto r = load_scenario_file(GetParam());
  ASSERT_TRUE(std::holds_alternative<Scenario>(r)) << std::get<ScenarioError>(r).message();
  const Scenario& s = std::get<Scenario>(r);
  ASSERT_EQ(live_unsupported(s, {}), "");
  RunOutcome o = run_live(s);
  ASSERT_FALSE(o.report.stats.contains("error")) << o.report.stats.dump();
  EXPECT_EQ(o.report.world, "live");
  scenario_files::expect_shipped_verdict(o.report, s, o.history_jsonl);
}

INSTANTIATE_TEST_SUITE_P(Scenarios, LiveZooKeeperCatalogue, ::testing::ValuesIn(live_zookeeper_catalogue()),
                         scenario_param_name);

TEST(LiveZooKeeperCatalogue, CatalogueHasLiveScenarios) { EXPECT_GE(live_zookeeper_catalogue().size(), 2u); }

// The list is not empty by accident of a renamed field: the catalogue has live scenarios.
TEST(LiveCatalogue, CatalogueHasLiveScenarios) { EXPECT_GE(live_catalogue().size(), 18u); }

}  // namespace
}  // namespace lockstep::runner
