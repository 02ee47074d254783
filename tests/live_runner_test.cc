// Whole scenarios in the live world: the set-px-lua GC-pause race (race 5) reproduces
// against a real redis-server, its long-lease counterpart and the stock demos (set-px-lua
// and Redisson's lock) are safe, unsupported scenarios are refused with a reason, and --redis mode keeps to its
// own keys.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "lockstep/live/redis_server.h"
#include "lockstep/runner/live_runner.h"
#include "live_support.h"
#include "scenario_files.h"

namespace lockstep::runner {
namespace {

using scenario_files::load;

live::ServerConfig users_server() {
  live::ServerConfig c;
  c.name = "users-server";
  return c;
}

using live_support::has_redis;

std::set<std::string> found(const RunOutcome& o) { return o.report.found_violations(); }

bool lists(const nlohmann::json& arr, const std::string& name) {
  for (const auto& x : arr)
    if (x == name) return true;
  return false;
}

TEST(LiveRunner, GcPauseRaceReproducesLive) {
  if (!has_redis()) GTEST_SKIP() << "redis-server not installed: live tests need it";
  RunOutcome o = run_live(load("09-set-px-lua-gc-pause.json"));
  EXPECT_EQ(o.report.world, "live");
  ASSERT_FALSE(o.report.stats.contains("error")) << o.report.stats.dump();
  EXPECT_EQ(found(o), (std::set<std::string>{"linearizability", "lost-update", "mutual-exclusion"})) << o.history_jsonl;
  EXPECT_TRUE(o.report.as_expected());
  EXPECT_TRUE(lists(o.report.stats["checkable"], "mutual-exclusion"));
  EXPECT_TRUE(lists(o.report.stats["checkable"], "lost-update"));
  // The poller saw client-2's key replace the expired one of client-1.
  bool expired = false, set_by_2 = false;
  for (const auto& e : o.history.events) {
    expired = expired || (e.f == "key-expire" && e.extra.value("owner", -1) == 1);
    set_by_2 = set_by_2 || (e.f == "key-set" && e.process == 2);
  }
  EXPECT_TRUE(expired);
  EXPECT_TRUE(set_by_2);
}

TEST(LiveRunner, SmallStockDemoIsSafeLive) {
  if (!has_redis()) GTEST_SKIP() << "redis-server not installed: live tests need it";
  Scenario s = load("11-seed001-stock-demo.json");
  s.workload.clients = 20;
  s.workload.initial_stock = 15;
  RunOutcome o = run_live(s);
  ASSERT_FALSE(o.report.stats.contains("error")) << o.report.stats.dump();
  EXPECT_EQ(o.report.verdict, "safe") << o.report.stats.dump();
  EXPECT_EQ(o.report.stats["sales"], 15);
  EXPECT_TRUE(lists(o.report.stats["checkable"], "deadlock"));
  EXPECT_TRUE(lists(o.report.stats["checkable"], "foreign-unlock")) << o.history_jsonl;
}

// The RedLock clock-jump race on three real servers: node-2 runs with lockstep's clock
// library preloaded and its wall clock jumps 10 s, so client-1's key there expires while
// client-1 holds the lock; client-2 wins node-2 and the restarted node-3. Without the
// jump, the same restart leaves client-2 one node short.
TEST(LiveRunner, RedLockClockJumpRaceReproducesLive) {
  if (!has_redis()) GTEST_SKIP() << "redis-server not installed: live tests need it";
  RunOutcome o = run_live(load("live/redlock-clock-jump.json"));
  ASSERT_FALSE(o.report.stats.contains("error")) << o.report.stats.dump();
  EXPECT_EQ(found(o), (std::set<std::string>{"linearizability", "lost-update", "mutual-exclusion"})) << o.history_jsonl;
  bool jumped = false;
  for (const auto& e : o.history.events) {
    jumped = jumped || (e.f == "fault-start" && e.value.value("kind", "") == "clock-jump");
  }
  EXPECT_TRUE(jumped) << o.history_jsonl;
}

TEST(LiveRunner, RedLockWithoutClockJumpIsSafeLive) {
  if (!has_redis()) GTEST_SKIP() << "redis-server not installed: live tests need it";
  RunOutcome o = run_live(load("live/redlock-no-clock-jump.json"));
  ASSERT_FALSE(o.report.stats.contains("error")) << o.report.stats.dump();
  EXPECT_EQ(o.report.verdict, "safe") << o.history_jsonl;
  EXPECT_EQ(o.report.stats["sales"], 2);
}

TEST(LiveRunner, NodeFaultsPlayOnRealServers) {
  if (!has_redis()) GTEST_SKIP() << "redis-server not installed: live tests need it";
  Scenario s = load("10-set-px-lua-lease-outlasts-pause.json");
  s.topology.persistence = Persistence::AofAlways;
  s.lock.command_timeout_ms = 200;
  s.lock.lease_ms = 1000;
  s.workload.clients = 3;
  s.workload.attempts_per_client = 3;
  s.workload.hold_ms = 20;
  s.workload.start_stagger_ms = 10;
  FaultSpec pause;
  pause.kind = FaultKind::Pause;
  pause.target = "node-1";
  pause.at_ms = 100;
  pause.duration_ms = 300;
  FaultSpec crash;
  crash.kind = FaultKind::Crash;
  crash.target = "node-1";
  crash.at_ms = 600;
  crash.restart_after_ms = 200;
  s.faults = {pause, crash};
  RunOutcome o = run_live(s);
  ASSERT_FALSE(o.report.stats.contains("error")) << o.report.stats.dump();
  EXPECT_NE(o.report.verdict, "unknown");
  EXPECT_EQ(o.report.found_violations().count("mutual-exclusion"), 0u) << o.history_jsonl;
  bool crashed = false, restarted = false;
  for (const auto& e : o.history.events) {
    crashed = crashed || (e.f == "crash" && e.node == 0);
    restarted = restarted || (e.f == "restart" && e.node == 0);
  }
  EXPECT_TRUE(crashed);
  EXPECT_TRUE(restarted);
  // The stock survived the crash (aof-always), so the final value could be read.
  EXPECT_TRUE(lists(o.report.stats["checkable"], "lost-update"));
}

TEST(LiveRunner, RefusesWhatLiveCannotDo) {
  Scenario s = load("09-set-px-lua-gc-pause.json");
  Scenario sim_only = s;
  sim_only.worlds = {World::Sim};
  EXPECT_NE(live_unsupported(sim_only, {}), "");

  // Network faults play through the fault proxy, drifts through the clock library.
  Scenario partition = s;
  FaultSpec p;
  p.kind = FaultKind::Partition;
  p.groups = {{"client-1"}, {"node-1"}};
  p.duration_ms = 100;
  FaultSpec drift;
  drift.kind = FaultKind::ClockDrift;
  drift.target = "client-1";
  drift.drift_ppm = 500;
  partition.faults = {p, drift};
  EXPECT_EQ(live_unsupported(partition, {}), "");

  LiveOptions external;
  external.redis = "127.0.0.1:1";
  Scenario node_fault = s;
  FaultSpec crash;
  crash.kind = FaultKind::Crash;
  crash.target = "node-1";
  node_fault.faults = {crash};
  EXPECT_NE(live_unsupported(node_fault, external).find("refusing"), std::string::npos);
  Scenario detector = s;
  detector.topology.replicas = 1;
  detector.topology.down_after_ms = 500;
  EXPECT_NE(live_unsupported(detector, {}).find("sentinels"), std::string::npos);
  Scenario three = s;
  three.topology.nodes = 3;
  EXPECT_NE(live_unsupported(three, external), "");
  EXPECT_EQ(live_unsupported(s, external), "");
}

TEST(LiveRunner, ExternalRedisTouchesOnlyPrefixedKeysAndCleansUp) {
  if (!has_redis()) GTEST_SKIP() << "redis-server not installed: live tests need it";
  live::ServerFarm farm;  // stands in for the user's server
  live::RedisServer* server = farm.start(users_server());
  ASSERT_NE(server, nullptr) << farm.error();
  std::vector<std::string> set_theirs{"SET", "their-key", "untouched"};
  ASSERT_TRUE(live::sync_command(server->address(), set_theirs, Millis(1000)).is_ok());

  Scenario s = load("11-seed001-stock-demo.json");
  s.workload.clients = 5;
  s.workload.initial_stock = 3;
  LiveOptions o;
  o.redis = server->address().text();
  o.run_id = "test";
  RunOutcome out = run_live(s, o);
  ASSERT_FALSE(out.report.stats.contains("error")) << out.report.stats.dump();
  EXPECT_EQ(out.report.verdict, "safe");
  for (const auto& e : out.history.events) {
    if (!e.key.empty()) {
      EXPECT_EQ(e.key.rfind("lockstep:test:", 0), 0u) << e.key;
    }
  }
  std::vector<std::string> dbsize{"DBSIZE"};
  EXPECT_EQ(live::sync_command(server->address(), dbsize, Millis(1000)), Reply::integer_of(1));
  std::vector<std::string> get_theirs{"GET", "their-key"};
  EXPECT_EQ(live::sync_command(server->address(), get_theirs, Millis(1000)), Reply::bulk("untouched"));
}

TEST(LiveRunner, CliSkipsScenariosNotMeantForLive) {
  const std::string out_dir = ::testing::TempDir() + "/lockstep-live-cli";
  // Every catalogue scenario runs live now: a copy of one, for the simulator only.
  auto sim_only = load("09-set-px-lua-gc-pause.json");
  sim_only.worlds = {World::Sim};
  sim_only.name = "09-sim-only";
  const std::string file = out_dir + "-09-sim-only.json";
  std::ofstream(file) << to_json(sim_only).dump(2);
  const std::string cmd = std::string(LOCKSTEP_BINARY) + " live --out " + out_dir + " " + file + " > " + out_dir +
                          ".txt 2>&1";
  const int rc = std::system(cmd.c_str());
  // Skipped and said so; with nothing else to run, nothing was tested: not a success.
  EXPECT_EQ(WEXITSTATUS(rc), 1);
  std::ifstream f(out_dir + ".txt");
  std::stringstream ss;
  ss << f.rdbuf();
  EXPECT_NE(ss.str().find("skipped   09-sim-only"), std::string::npos) << ss.str();
  EXPECT_NE(ss.str().find("nothing ran"), std::string::npos) << ss.str();
}

// `lockstep live` leaves what `lockstep run` leaves: per scenario the history, report.json,
// report.md and report.html, and index.html and JUnit XML for the batch.
TEST(LiveRunner, CliWritesTheSameReportsAsRun) {
  if (!has_redis()) GTEST_SKIP() << "redis-server not installed: live tests need it";
  namespace fs = std::filesystem;
  const fs::path out = fs::path(::testing::TempDir()) / "lockstep-live-reports";
  fs::remove_all(out);
  const std::string cmd = std::string(LOCKSTEP_BINARY) + " live --out " + out.string() + " --junit " +
                          (out / "junit.xml").string() + " " + LOCKSTEP_SOURCE_DIR +
                          "/scenarios/04-set-px-del-crash-between.json > " + out.string() + ".txt 2>&1";
  ASSERT_EQ(WEXITSTATUS(std::system(cmd.c_str())), 0);
  const fs::path dir = out / "04-set-px-del-crash-between";
  for (const char* f : {"history.jsonl", "report.json", "report.md", "report.html"}) EXPECT_TRUE(fs::exists(dir / f)) << f;
  EXPECT_TRUE(fs::exists(out / "index.html"));
  std::ifstream junit(out / "junit.xml"), html(dir / "report.html");
  std::stringstream j, h;
  j << junit.rdbuf();
  h << html.rdbuf();
  EXPECT_NE(j.str().find("04-set-px-del-crash-between"), std::string::npos) << j.str();
  EXPECT_NE(h.str().find("lockstep live"), std::string::npos) << "the replay command is the live one";
}

// The catalogue directory takes in its subdirectories: `lockstep live scenarios` runs
// what scenarios/live/ holds, and `lockstep run scenarios` keeps those verdicts in check.
TEST(LiveRunner, CliReadsScenarioSubdirectories) {
  const std::string out_dir = ::testing::TempDir() + "/lockstep-run-recursive";
  const std::string cmd = std::string(LOCKSTEP_BINARY) + " run --out " + out_dir + " " + LOCKSTEP_SOURCE_DIR +
                          "/scenarios > " + out_dir + ".txt 2>&1";
  const int rc = std::system(cmd.c_str());
  std::ifstream f(out_dir + ".txt");
  std::stringstream ss;
  ss << f.rdbuf();
  EXPECT_EQ(WEXITSTATUS(rc), 0) << ss.str();
  EXPECT_NE(ss.str().find("ok        09-set-px-lua-gc-pause"), std::string::npos) << ss.str();
  EXPECT_NE(ss.str().find("ok        redlock-clock-jump"), std::string::npos) << ss.str();
  EXPECT_EQ(ss.str().find("schema"), std::string::npos) << ss.str();
}

// A directory that also holds lockstep's own output (a run's report.json beside its
// history, a fuzz summary) runs its scenarios and passes over the output quietly.
TEST(LiveRunner, CliPassesOverItsOwnOutputInAScenarioDirectory) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(::testing::TempDir()) / "lockstep-run-own-output";
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::copy_file(fs::path(LOCKSTEP_SOURCE_DIR) / "scenarios" / "08-set-px-lua-pause-in-unlock.json",
                dir / "08-set-px-lua-pause-in-unlock.json");
  std::ofstream(dir / "summary.json") << R"({"runs": 3, "violations": 0, "counterexamples": []})";
  const std::string run = std::string(LOCKSTEP_BINARY) + " run --out " + (dir / "out").string() + " " + dir.string() +
                          " > " + (dir / "log.txt").string() + " 2>&1";
  ASSERT_EQ(WEXITSTATUS(std::system(run.c_str())), 0);
  ASSERT_TRUE(fs::exists(dir / "out" / "08-set-px-lua-pause-in-unlock" / "report.json"));
  ASSERT_EQ(WEXITSTATUS(std::system(run.c_str())), 0);  // now with out/ inside the directory
  std::ifstream f(dir / "log.txt");
  std::stringstream ss;
  ss << f.rdbuf();
  EXPECT_NE(ss.str().find("1 scenario: 1 as expected"), std::string::npos) << ss.str();
}

}  // namespace
}  // namespace lockstep::runner
