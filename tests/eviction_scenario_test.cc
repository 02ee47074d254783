// Memory limits and cache writers in scenario files and simulated runs: the fields read
// and write back, a cache on the lock's node under a volatile policy evicts the lock and
// the history says whose it was, and noeviction turns a full node into refused
// acquisitions that the report calls unavailability, not a safety violation.
#include <gtest/gtest.h>

#include "lockstep/runner/scenario.h"
#include "lockstep/runner/sim_runner.h"
#include "scenario_files.h"

namespace lockstep::runner {
namespace {

using scenario_files::load;

TEST(EvictionScenario, MemoryAndCacheFieldsReadAndWriteBack) {
  const Scenario s = load("49-cache-evicts-lock-volatile-ttl.json");
  EXPECT_EQ(s.topology.maxmemory_bytes, 4194304);
  EXPECT_EQ(s.topology.maxmemory_policy, EvictionPolicy::VolatileTtl);
  EXPECT_EQ(s.topology.maxmemory_samples, 5);
  EXPECT_EQ(s.workload.cache.writers, 1);
  EXPECT_EQ(s.workload.cache.keys, 150);
  EXPECT_DOUBLE_EQ(s.workload.cache.ttl_fraction, 0.8);
  auto back = parse_scenario(to_json(s).dump(), s.file);
  ASSERT_TRUE(std::holds_alternative<Scenario>(back));
  EXPECT_EQ(std::get<Scenario>(back), s);
}

TEST(EvictionScenario, BadMemoryFieldsAreRejectedWithTheirPath) {
  auto policy = parse_scenario(R"({"topology": {"maxmemory_policy": "lru"}, "lock": {"algorithm": "set-px-lua"}})", "t.json");
  ASSERT_TRUE(std::holds_alternative<ScenarioError>(policy));
  EXPECT_EQ(std::get<ScenarioError>(policy).path, "$.topology.maxmemory_policy");
  auto node = parse_scenario(R"({"lock": {"algorithm": "set-px-lua"}, "workload": {"cache": {"writers": 1, "node": 2}}})",
                             "t.json");
  ASSERT_TRUE(std::holds_alternative<ScenarioError>(node));
  EXPECT_EQ(std::get<ScenarioError>(node).path, "$.workload.cache.node");
  auto key = parse_scenario(R"({"lock": {"algorithm": "set-px-lua"}, "workload": {"cache": {"size": 1}}})", "t.json");
  ASSERT_TRUE(std::holds_alternative<ScenarioError>(key));
  EXPECT_EQ(std::get<ScenarioError>(key).path, "$.workload.cache.size");
}

// The truth names the owner whose lock went, and no delete or expiry of the lock comes
// before client-2 takes it.
TEST(EvictionScenario, VolatileLruEvictsClientOnesLock) {
  const RunOutcome o = run_in_sim(load("48-cache-evicts-lock-volatile-lru.json"));
  const checker::Event* evict = nullptr;
  for (const auto& e : o.history.events) {
    if (e.type != checker::EventType::Truth || e.key != "lock") continue;
    if (e.f == checker::truth::kKeyEvict && !evict) evict = &e;
    if (!evict) {
      EXPECT_TRUE(e.f == checker::truth::kKeySet || e.f == checker::truth::kCsEnter) << e.f;
    }
  }
  ASSERT_NE(evict, nullptr) << o.history_jsonl;
  EXPECT_EQ(evict->extra.value("owner", -1), 1);
  EXPECT_EQ(evict->process, -1);
  EXPECT_EQ(o.report.found_violations(), (std::set<std::string>{"linearizability", "lost-update", "mutual-exclusion"}));
}

// allkeys-lru takes data as readily as the lock: client-1's lock goes first, then the
// stock, which client-2 finds missing and which is gone again at the end although
// client-1 wrote it back.
TEST(EvictionScenario, AllkeysLruEvictsTheLockAndTheStock) {
  const RunOutcome o = run_in_sim(load("58-cache-evicts-lock-and-stock-allkeys-lru.json"));
  bool lock_evicted = false, client2_found_no_stock = false, client1_wrote_back = false;
  const checker::Event* resource = nullptr;
  for (const auto& e : o.history.events) {
    if (e.f == checker::truth::kKeyEvict && e.key == "lock") lock_evicted = e.extra.value("owner", -1) == 1;
    if (e.process == 2 && e.f == "read" && e.type == checker::EventType::Fail) client2_found_no_stock = true;
    if (e.process == 1 && e.f == "write" && e.type == checker::EventType::Ok) client1_wrote_back = true;
    if (e.f == checker::truth::kResource) resource = &e;
  }
  EXPECT_TRUE(lock_evicted) << o.history_jsonl;
  EXPECT_TRUE(client2_found_no_stock);
  EXPECT_TRUE(client1_wrote_back);
  ASSERT_NE(resource, nullptr);
  EXPECT_TRUE(resource->value.at("final").is_null()) << resource->value.dump();
  EXPECT_EQ(o.report.found_violations(), (std::set<std::string>{"linearizability", "lost-update", "mutual-exclusion"}));
}

TEST(EvictionScenario, NoevictionIsAnAvailabilityFailureNotASafetyOne) {
  const RunOutcome o = run_in_sim(load("51-noeviction-oom-refuses-lock.json"));
  EXPECT_EQ(o.report.verdict, "safe");
  EXPECT_GT(o.report.stats.value("oom_errors", 0), 0);
  EXPECT_EQ(o.report.stats.value("acquisitions", -1), 1);
  EXPECT_NE(o.report.stats.value("unavailable", std::string()).find("1 of 2 acquisitions succeeded"), std::string::npos)
      << o.report.stats.dump();
  for (const auto& e : o.history.events) EXPECT_NE(e.f, checker::truth::kKeyEvict);
}

TEST(EvictionScenario, CacheOnItsOwnNodeNeverTouchesTheLock) {
  const RunOutcome o = run_in_sim(load("50-cache-on-its-own-node.json"));
  EXPECT_EQ(o.report.verdict, "safe");
  EXPECT_EQ(o.report.stats.value("sales", -1), 2);
  EXPECT_FALSE(o.report.stats.contains("unavailable"));
}

}  // namespace
}  // namespace lockstep::runner
