// The shipped example clients (examples/clients/: node-redlock 5.0.0-beta.2 over ioredis,
// redis-semaphore 5.6.2's Mutex over ioredis, Debian's redis-py Lock, and Debian's kazoo
// 2.8.0 Lock on a real ZooKeeper ensemble) under
// scenarios/external/, with the verdicts those scenarios expect: the flash sale safe
// without faults, a pause longer than the lease breaking all three, node-redlock #296 (an
// acquired lock that has already expired) shown by a slow link, redis-py's Lock without a
// timeout deadlocked by a client crash, node-redlock's using() extensions reported on a
// thread of their own, and redis-semaphore's background refresh keeping a hold longer
// than the lease safe, its onLockLost sparing the stale write but not the overlap.
// redis-semaphore locks `mutex:<name>`, so those runs must have learnt that key.
// scripts/setup installs what they need; a missing Node or Python skips, a missing npm
// install fails and says what to run.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "lockstep/live/client_process.h"
#include "lockstep/live/mariadb_server.h"
#include "lockstep/live/redis_server.h"
#include "lockstep/live/zk_ensemble.h"
#include "lockstep/runner/live_runner.h"
#include "scenario_param_name.h"
#include "scenario_files.h"

namespace lockstep::runner {
namespace {

namespace fs = std::filesystem;

const fs::path kSource = LOCKSTEP_SOURCE_DIR;

std::vector<std::string> external_scenarios() {
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(kSource / "scenarios" / "external")) {
    if (e.path().extension() == ".json") files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Why the scenario's program cannot run here ("" if it can), and whether that is a skip
// (the runtime is not installed) or a failure (scripts/setup was not run).
std::string missing(const Scenario& s, bool& skip) {
  const std::string& program = s.workload.command.at(0);
  skip = true;
  if (live::resolve_program(program, s.workload.command_dir).empty()) return program + " is not installed";
  skip = false;
  if (program == "node") {
    const fs::path dir = (fs::path(s.workload.command_dir) / s.workload.command.at(1)).parent_path().lexically_normal();
    if (!fs::exists(dir / "node_modules/.package-lock.json"))
      return (dir / "node_modules").string() + " is missing: run scripts/setup (npm ci there)";
  }
  if (program == "/usr/bin/python3" && !fs::exists("/usr/lib/python3/dist-packages/redis/lock.py"))
    return "Debian's python3-redis is missing: run scripts/setup";
  if (s.topology.zookeeper.servers > 0) {
    skip = true;  // as a missing runtime: the ensemble's JVMs
    if (live::ZkEnsemble::classpath().empty()) return "ZooKeeper is not installed";
    skip = false;
    if (!fs::exists("/usr/lib/python3/dist-packages/kazoo/recipe/lock.py"))
      return "Debian's python3-kazoo is missing: run scripts/setup";
  }
  if (s.topology.mysql.enabled) {
    skip = true;
    if (live::find_mariadbd().empty()) return "mariadbd is not installed";
    if (!live::mariadb_client_missing().empty()) return live::mariadb_client_missing();
    skip = false;
    if (live::resolve_program("mariadb", ".").empty()) return "the mariadb client is missing: run scripts/setup";
  }
  return "";
}

class ExternalExamples : public ::testing::TestWithParam<std::string> {};

TEST_P(ExternalExamples, VerdictAsTheScenarioExpects) {
  if (live::find_redis_server().empty()) GTEST_SKIP() << "redis-server not installed: live tests need it";
  auto r = load_scenario_file(GetParam());
  ASSERT_TRUE(std::holds_alternative<Scenario>(r)) << std::get<ScenarioError>(r).message();
  const Scenario& s = std::get<Scenario>(r);
  bool skip = false;
  if (const std::string why = missing(s, skip); !why.empty()) {
    if (skip) GTEST_SKIP() << why;
    FAIL() << why;
  }
  ASSERT_EQ(live_unsupported(s, {}), "");
  const RunOutcome o = run_live(s);
  ASSERT_FALSE(o.report.stats.contains("error")) << o.report.stats.dump();
  ASSERT_FALSE(o.report.stats.contains("client_errors")) << o.report.stats["client_errors"].dump();
  scenario_files::expect_shipped_verdict(o.report, s, o.history_jsonl);
  EXPECT_TRUE(o.report.as_expected());
  if (s.expect.mode == reports::Expectation::Mode::Safe) {
    EXPECT_EQ(o.report.stats["sales"], s.workload.initial_stock) << o.history_jsonl;
  }
  // node-redlock's using() extends in the background; the Node client reports each
  // extension on a thread of its own, beside its main thread's lines.
  const auto& cmd = s.workload.command;
  if (std::find(cmd.begin(), cmd.end(), "--using") != cmd.end()) {
    int extended = 0;
    for (const auto& e : o.history.events) {
      if (e.f != "extend" || e.type != checker::EventType::Ok) continue;
      EXPECT_GE(e.thread, 1);
      EXPECT_EQ(e.extra.value("client_thread", "").rfind("auto-extend", 0), 0u) << e.extra.dump();
      ++extended;
    }
    EXPECT_GE(extended, 2) << "each 3.5 s hold outlives a 3 s lease only by extensions: " << o.history_jsonl;
  }
  // The Mutex never writes the key it is given: judging it at all needs the learnt key.
  if (s.lock.algorithm.rfind("redis-semaphore", 0) == 0) {
    EXPECT_EQ(o.report.stats["clients"]["lock_key"].value("key", ""), "mutex:" + s.lock.key) << o.report.stats.dump();
    for (const char* p : {"foreign-unlock", "deadlock"}) {
      EXPECT_NE(std::find(o.report.stats["checkable"].begin(), o.report.stats["checkable"].end(), p),
                o.report.stats["checkable"].end())
          << p << " not checkable: " << o.report.stats.dump();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Scenarios, ExternalExamples, ::testing::ValuesIn(external_scenarios()), scenario_param_name);

TEST(ExternalExamples, EveryLibraryAndEveryStoryAreCovered) {
  const auto files = external_scenarios();
  EXPECT_EQ(files.size(), 14u);
  for (const char* name : {"node-redlock-stock-demo", "node-redlock-gc-pause", "node-redlock-issue-296-slow-acquire",
                           "redis-py-stock-demo", "redis-py-gc-pause", "redis-py-no-timeout-crash-deadlock",
                           "redis-semaphore-stock-demo", "redis-semaphore-gc-pause", "redis-semaphore-slow-hold",
                           "redis-semaphore-gc-pause-check-is-acquired", "node-redlock-using-auto-extend",
                           "kazoo-gc-pause", "kazoo-short-pause", "mysql-cli-gc-pause"}) {
    EXPECT_TRUE(fs::exists(kSource / "scenarios/external" / (std::string(name) + ".json"))) << name;
  }
}

// docs/live-mode.md is where a user finds the shipped clients: each folder of
// examples/clients/ and each scenario of scenarios/external/ is named there.
TEST(ExternalExamples, TheManualNamesEveryClientAndScenario) {
  std::ifstream f(kSource / "docs/live-mode.md");
  std::stringstream page;
  page << f.rdbuf();
  const std::string text = page.str();
  ASSERT_FALSE(text.empty());
  for (const auto& e : fs::directory_iterator(kSource / "examples/clients")) {
    const std::string folder = "`" + e.path().filename().string() + "/";
    EXPECT_NE(text.find(folder), std::string::npos) << "docs/live-mode.md does not name " << folder;
  }
  for (const std::string& file : external_scenarios()) {
    const std::string name = "`" + fs::path(file).stem().string() + "`";
    EXPECT_NE(text.find(name), std::string::npos) << "docs/live-mode.md does not name " << name;
  }
}

}  // namespace
}  // namespace lockstep::runner
