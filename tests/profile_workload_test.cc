// The stock workload drives a library profile as the library's documentation tells its
// users to: here, redis-plus-plus's RedMutex with the auto_extend_err_callback its README
// shows, which is called "so that the application can be notified that the lock might no
// longer be locked, and stop running code in critical section". The holder's critical
// section ends when the callback comes, not when its work would have ended; it writes
// nothing and unlocks. In both worlds: the workload is the same code in each.
#include <gtest/gtest.h>

#include <functional>
#include <optional>

#include "lockstep/live/redis_server.h"
#include "lockstep/runner/live_runner.h"
#include "lockstep/runner/sim_runner.h"

namespace lockstep::runner {
namespace {

constexpr int64_t kHoldMs = 3000;

// client-1 holds a RedMutex (ttl 1 s, so its watcher extends every 500 ms) for 3 s of
// work; node-3 dies 200 ms into it, so the first extension fails on node-3 (an
// exception in redis-plus-plus) and the watcher calls the callback.
Scenario told_while_working() {
  auto r = parse_scenario(R"({
    "seed": 1, "duration_ms": 6000, "worlds": ["sim", "live"], "topology": {"nodes": 3},
    "network": {"latency": {"dist": "constant", "ms": 1}},
    "lock": {"profile": "redis-plus-plus@1.3.15", "options": {"ttl": 1000, "auto_extend_err_callback": true}},
    "workload": {"clients": 1, "initial_stock": 10, "hold_ms": 3000, "wait_ms": 2000},
    "faults": [{"kind": "crash", "target": "node-3",
                "on": {"process": "client-1", "enters": "critical-section", "delay_ms": 200}}],
    "expect": {"violations": []}})",
                          "told.json");
  EXPECT_TRUE(std::holds_alternative<Scenario>(r)) << std::get<ScenarioError>(r).message();
  return std::get<Scenario>(r);
}

std::optional<int64_t> time_of(const checker::History& h, const std::function<bool(const checker::Event&)>& is) {
  for (const auto& e : h.events)
    if (is(e)) return e.time_ns;
  return std::nullopt;
}

void expect_stops_when_told(const RunOutcome& o) {
  const checker::History& h = o.history;
  using checker::EventType;
  const auto entered = time_of(h, [](const auto& e) { return e.f == checker::truth::kCsEnter; });
  const auto told = time_of(h, [](const auto& e) {
    return e.f == "extend" && e.thread > 0 && e.type != EventType::Invoke && e.value.is_string() &&
           e.value.template get<std::string>().find("auto_extend_err_callback called") != std::string::npos;
  });
  const auto left = time_of(h, [](const auto& e) { return e.f == checker::truth::kCsExit; });
  const auto released = time_of(h, [](const auto& e) { return e.f == "release" && e.type != EventType::Invoke; });
  ASSERT_TRUE(entered && told && left && released) << o.history_jsonl;
  // Told at the first extension, half a ttl in, far from the end of the work: the
  // margin leaves a loaded machine's live run most of the hold.
  EXPECT_LT(*told - *entered, kHoldMs / 3 * kNsPerMs) << o.history_jsonl;
  EXPECT_GE(*left, *told);
  EXPECT_LT(*left - *told, kHoldMs / 3 * kNsPerMs) << "the holder worked on after the callback\n" << o.history_jsonl;
  EXPECT_GE(*released, *left);
  EXPECT_FALSE(time_of(h, [](const auto& e) { return e.f == "write"; })) << "the holder wrote after the callback";
}

TEST(ProfileWorkload, RedMutexCallbackStopsTheHoldersWork) { expect_stops_when_told(run_in_sim(told_while_working())); }

TEST(ProfileWorkloadLive, RedMutexCallbackStopsTheHoldersWork) {
  if (live::find_redis_server().empty()) GTEST_SKIP() << "redis-server not installed: live tests need it";
  const Scenario s = told_while_working();
  ASSERT_EQ(live_unsupported(s, {}), "");
  RunOutcome o = run_live(s);
  ASSERT_FALSE(o.report.stats.contains("error")) << o.report.stats.dump();
  expect_stops_when_told(o);
}

}  // namespace
}  // namespace lockstep::runner
