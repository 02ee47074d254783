// Event-triggered faults in the simulator: a fault lands exactly between the two steps it
// names on every run, and one whose event never comes makes the verdict unknown rather
// than letting an untested run pass as safe.
#include <gtest/gtest.h>

#include "lockstep/runner/sim_runner.h"

namespace lockstep::runner {
namespace {

Scenario triggered_scenario(const std::string& faults, const std::string& algorithm = "setnx-expire") {
  const std::string text = R"({"seed": 3, "duration_ms": 8000,
    "lock": {"algorithm": ")" + algorithm + R"(", "lease_ms": 1000},
    "workload": {"clients": 2, "hold_ms": 50, "wait_ms": 7000, "start_stagger_ms": 5},
    "faults": )" + faults + R"(, "expect": {"violations": []}})";
  auto r = parse_scenario(text, "trigger.json");
  if (auto* e = std::get_if<ScenarioError>(&r)) ADD_FAILURE() << e->message();
  return std::get<Scenario>(r);
}

const checker::Event* first(const checker::History& h, const std::string& f, int64_t process = -2) {
  for (const auto& e : h.events) {
    if (e.f == f && (process == -2 || e.process == process)) return &e;
  }
  return nullptr;
}

TEST(FaultTrigger, ACrashBeforeACommandLeavesStopsItFromRunning) {
  Scenario s = triggered_scenario(R"([{"kind": "crash", "target": "client-1", "on": {"process": "client-1", "sends": "PEXPIRE"}}])");
  RunOutcome o = run_in_sim(s);
  // SETNX ran on the node (the key is set), PEXPIRE never did: the key outlives the run.
  const checker::Event* set = first(o.history, "key-set", 1);
  const checker::Event* crash = first(o.history, "crash", 1);
  ASSERT_NE(set, nullptr) << o.history_jsonl;
  ASSERT_NE(crash, nullptr) << o.history_jsonl;
  EXPECT_LT(set->time_ns, crash->time_ns);
  EXPECT_EQ(first(o.history, "key-expire"), nullptr) << o.history_jsonl;
  EXPECT_EQ(first(o.history, "ok", 1), nullptr) << "client-1's acquire never completed";
  EXPECT_EQ(o.report.found_violations(), std::set<std::string>{"deadlock"});
  // The record says when the fault struck and on what.
  const checker::Event* start = first(o.history, "fault-start");
  ASSERT_NE(start, nullptr);
  EXPECT_EQ(start->value["at_ms"], crash->time_ns / 1'000'000);
  EXPECT_EQ(start->value["on"]["sends"], "PEXPIRE");
}

TEST(FaultTrigger, APauseOnAReplyHoldsItUntilThePauseEnds) {
  // client-1's second GET reply (its unlock's look at the lock; the first GET reads the
  // stock, which the key narrows away) is held for 300 ms.
  Scenario s = triggered_scenario(
      R"([{"kind": "pause", "target": "client-1", "duration_ms": 300,
           "on": {"process": "client-1", "receives": "GET", "key": "lock", "delay_ms": 0}}])",
      "set-px-get-del");
  RunOutcome o = run_in_sim(s);
  const checker::Event* start = first(o.history, "fault-start");
  const checker::Event* release_ok = nullptr;
  for (const auto& e : o.history.events) {
    if (e.process == 1 && e.f == "release" && e.type != checker::EventType::Invoke) release_ok = &e;
  }
  ASSERT_NE(start, nullptr) << o.history_jsonl;
  ASSERT_NE(release_ok, nullptr) << o.history_jsonl;
  // The release (GET, compare, DEL) finished only after the pause.
  EXPECT_GE(release_ok->time_ns - start->time_ns, 300'000'000);
  // Byte for byte the same on a second run.
  EXPECT_EQ(run_in_sim(s).history_jsonl, o.history_jsonl);
}

TEST(FaultTrigger, AFaultWhoseEventNeverComesMakesTheVerdictUnknown) {
  Scenario s = triggered_scenario(R"([{"kind": "crash", "target": "client-1", "on": {"process": "client-1", "sends": "FLUSHALL"}}])");
  RunOutcome o = run_in_sim(s);
  EXPECT_EQ(o.report.verdict, reports::verdict::kUnknown);
  ASSERT_TRUE(o.report.stats.contains("faults_never_fired")) << o.report.stats.dump();
  EXPECT_EQ(o.report.stats["faults_never_fired"][0], "crash on client-1 when client-1 sends FLUSHALL");
  EXPECT_EQ(first(o.history, "fault-start"), nullptr);
  EXPECT_NE(first(o.history, "fault-unfired"), nullptr);
}

TEST(FaultTrigger, ANodeEventStartsAFaultOnAnotherProcess) {
  // node-1 setting the lock crashes client-1 20 ms later: in the middle of its work.
  Scenario s = triggered_scenario(
      R"([{"kind": "crash", "target": "client-1", "on": {"process": "node-1", "sets": "lock", "delay_ms": 20}}])",
      "set-px-lua");
  RunOutcome o = run_in_sim(s);
  const checker::Event* set = first(o.history, "key-set", 1);
  const checker::Event* crash = first(o.history, "crash", 1);
  ASSERT_NE(set, nullptr);
  ASSERT_NE(crash, nullptr);
  EXPECT_EQ(crash->time_ns - set->time_ns, 20'000'000);
  EXPECT_TRUE(o.report.found_violations().empty()) << "the lease frees the lock";
}

}  // namespace
}  // namespace lockstep::runner
