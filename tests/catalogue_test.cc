// Every scenario of the catalogue must reach the verdict it expects, and two runs of the
// same scenario and seed must record byte-identical histories.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <numeric>

#include "lockstep/runner/sim_runner.h"
#include "scenario_param_name.h"
#include "scenario_files.h"

namespace lockstep::runner {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> catalogue() {
  std::vector<std::string> files;
  // scenarios/live/ too: those scenarios must keep their verdicts in the simulator.
  // scenarios/external/ runs users' programs, which only the live world starts
  // (ExternalExamples runs them there).
  const fs::path external = fs::path(LOCKSTEP_SOURCE_DIR) / "scenarios" / "external";
  for (const auto& e : fs::recursive_directory_iterator(fs::path(LOCKSTEP_SOURCE_DIR) / "scenarios")) {
    if (e.path().parent_path() == external) continue;
    if (e.is_regular_file() && e.path().extension() == ".json" && !e.path().string().ends_with(".schema.json"))
      files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

using scenario_files::load;

class Catalogue : public ::testing::TestWithParam<std::string> {};

TEST_P(Catalogue, VerdictAsExpectedAndHistoryReproducible) {
  const Scenario s = load(GetParam());
  RunOutcome first = run_in_sim(s);
  RunOutcome second = run_in_sim(s);
  EXPECT_EQ(first.history_jsonl, second.history_jsonl) << "same scenario and seed, different history";
  EXPECT_EQ(first.report.history_sha256, second.report.history_sha256);
  EXPECT_EQ(first.report.verdict, s.expect.verdict());
  scenario_files::expect_shipped_verdict(first.report, s);
  for (const auto& v : first.report.violations) {
    EXPECT_FALSE(v.explanation.empty());
    EXPECT_FALSE(v.processes.empty() && v.property != checker::Property::LostUpdate) << v.property;
  }
}

INSTANTIATE_TEST_SUITE_P(Scenarios, Catalogue, ::testing::ValuesIn(catalogue()), scenario_param_name);

TEST(Catalogue, StockDemoSellsEverythingExactlyOnce) {
  const Scenario s = load(std::string(LOCKSTEP_SOURCE_DIR) + "/scenarios/11-seed001-stock-demo.json");
  RunOutcome out = run_in_sim(s);
  EXPECT_EQ(out.report.verdict, "safe");
  EXPECT_EQ(out.report.stats["sales"], 90);
  const auto& resource = out.history.events.back();
  ASSERT_EQ(resource.f, "resource");
  EXPECT_EQ(resource.value["final"], 0);
}

std::vector<int64_t> acquisition_order(const checker::History& h) {
  std::vector<int64_t> order;
  for (const auto& e : h.events)
    if (e.type == checker::EventType::Ok && checker::is_acquire(e.f)) order.push_back(e.process);
  return order;
}

// 43 and 44: the same contention; the fair lock serves clients in arrival order, the
// plain one does not.
TEST(Catalogue, FairLockServesInArrivalOrderAndThePlainLockDoesNot) {
  const std::string dir = std::string(LOCKSTEP_SOURCE_DIR) + "/scenarios/";
  const Scenario fair = load(dir + "43-redisson-fair-order-under-contention.json");
  const Scenario plain = load(dir + "44-redisson-order-under-contention.json");
  std::vector<int64_t> arrival(fair.workload.clients);
  std::iota(arrival.begin(), arrival.end(), 1);
  EXPECT_EQ(acquisition_order(run_in_sim(fair).history), arrival);
  const auto plain_order = acquisition_order(run_in_sim(plain).history);
  EXPECT_EQ(plain_order.size(), arrival.size());
  EXPECT_NE(plain_order, arrival);
}

// 37: readers really share the lock (their read sections overlap) while no writer's does.
TEST(Catalogue, ReadersShareTheReadWriteLock) {
  const Scenario s = load(std::string(LOCKSTEP_SOURCE_DIR) + "/scenarios/37-redisson-rw-readers-and-writers.json");
  RunOutcome out = run_in_sim(s);
  ASSERT_EQ(out.report.verdict, "safe");
  std::map<int64_t, int64_t> open;  // reader -> enter time
  int max_readers = 0;
  for (const auto& e : out.history.events) {
    if (e.type != checker::EventType::Truth) continue;
    if (e.f == checker::truth::kCsEnter && e.value == "read") open[e.process] = e.time_ns;
    if (e.f == checker::truth::kCsExit) open.erase(e.process);
    max_readers = std::max(max_readers, static_cast<int>(open.size()));
  }
  EXPECT_GE(max_readers, 2);
}

TEST(Catalogue, ADifferentSeedGivesADifferentHistory) {
  const Scenario s = load(std::string(LOCKSTEP_SOURCE_DIR) + "/scenarios/11-seed001-stock-demo.json");
  RunOptions other;
  other.seed = s.seed + 1;
  EXPECT_NE(run_in_sim(s).report.history_sha256, run_in_sim(s, other).report.history_sha256);
}

}  // namespace
}  // namespace lockstep::runner
