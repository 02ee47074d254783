// Cache consistency (docs/cache-consistency.md): the cache-aside workload's fields read
// and write back; without a lock the double write and the read/write race leave the cache
// holding what the database no longer has (stale-cache), in the simulator and against
// real redis-servers; the read-write lock keeps the cache consistent under the very same
// faults and seed; and a writer paused past its lease makes it stale again.
#include <gtest/gtest.h>

#include "lockstep/checker/invariants.h"
#include "lockstep/live/redis_server.h"
#include "lockstep/reports/timeline.h"
#include "lockstep/runner/live_runner.h"
#include "lockstep/runner/scenario.h"
#include "lockstep/runner/sim_runner.h"
#include "scenario_files.h"

namespace lockstep::runner {
namespace {

using scenario_files::load;

std::string error_path(const std::string& text) {
  auto r = parse_scenario(text, "t.json");
  if (!std::holds_alternative<ScenarioError>(r)) return "(accepted)";
  return std::get<ScenarioError>(r).path;
}

const checker::Violation* find(const reports::RunReport& r, const std::string& property) {
  for (const auto& v : r.violations)
    if (checker::to_string(v.property) == property) return &v;
  return nullptr;
}

TEST(CacheAside, FieldsReadAndWriteBack) {
  const Scenario s = load("62-cache-aside-rwlock-consistent.json");
  const CacheAsideSpec& c = s.workload.cache_aside;
  EXPECT_TRUE(c.enabled());
  EXPECT_EQ(c.writers, 2);
  EXPECT_EQ(c.readers, 1);
  EXPECT_EQ(s.workload.clients, 3);  // writers + readers, "clients" left out
  EXPECT_EQ(c.after_write, "overwrite");
  EXPECT_EQ(c.lock, "read-write");
  EXPECT_EQ(c.db_node, 2);
  EXPECT_EQ(c.reader_start_ms, 0);
  EXPECT_EQ(c.writer_start_ms, 300);
  auto back = parse_scenario(to_json(s).dump(), s.file);
  ASSERT_TRUE(std::holds_alternative<Scenario>(back)) << std::get<ScenarioError>(back).message();
  EXPECT_EQ(std::get<Scenario>(back), s);
}

TEST(CacheAside, BadFieldsAreRejectedWithTheirPath) {
  const std::string head = R"({"topology": {"nodes": 2}, "lock": {"algorithm": "redisson-rw"}, "expect": {"violations": []}, )";
  EXPECT_EQ(error_path(head + R"("workload": {"cache_aside": {"writers": 1, "db_node": 1}}})"), "$.workload.cache_aside.db_node");
  EXPECT_EQ(error_path(head + R"("workload": {"cache_aside": {"writers": 1, "db_node": 3}}})"), "$.workload.cache_aside.db_node");
  EXPECT_EQ(error_path(head + R"("workload": {"cache_aside": {"writers": 0}}})"), "$.workload.cache_aside.writers");
  EXPECT_EQ(error_path(head + R"("workload": {"cache_aside": {"writers": 1, "after_write": "update"}}})"),
            "$.workload.cache_aside.after_write");
  EXPECT_EQ(error_path(head + R"("workload": {"cache_aside": {"writers": 1, "ttl": 5}}})"), "$.workload.cache_aside.ttl");
  EXPECT_EQ(error_path(head + R"("workload": {"clients": 3, "cache_aside": {"writers": 1, "readers": 1}}})"),
            "$.workload.clients");
  EXPECT_EQ(error_path(R"({"topology": {"nodes": 2}, "lock": {"algorithm": "set-px-lua"}, "expect": {"violations": []},
                           "workload": {"cache_aside": {"writers": 1, "lock": "read-write"}}})"),
            "$.workload.cache_aside.lock");
  EXPECT_EQ(error_path(head + R"("workload": {"cache_aside": {"writers": 1, "readers": 1}}})"), "(accepted)");
  EXPECT_EQ(error_path(R"({"topology": {"cluster": {"masters": 3}}, "lock": {"algorithm": "redisson-rw"},
                           "expect": {"violations": []}, "workload": {"cache_aside": {"writers": 1}}})"),
            "$.workload.cache_aside");
}

TEST(CacheAside, CheckerCountsTheTtlFromTheDatabasesLastWrite) {
  auto history = [](int64_t ttl_ms, int64_t max_stale_ms) {
    checker::History h;
    auto add = [&h](checker::EventType t, int64_t p, std::string f, nlohmann::json v, int64_t at_ms) {
      checker::Event e;
      e.type = t;
      e.process = p;
      e.f = std::move(f);
      e.key = "item:0";
      e.value = std::move(v);
      e.time_ns = at_ms * 1'000'000;
      h.events.push_back(std::move(e));
    };
    add(checker::EventType::Ok, 2, "cache-fill", "initial:0", 900);
    add(checker::EventType::Invoke, 1, "db-write", "client-1:1", 1000);
    add(checker::EventType::Ok, 1, "db-write", "client-1:1", 1001);
    add(checker::EventType::Truth, -1, checker::truth::kCacheFinal,
        {{"cache", "initial:0"}, {"db", "client-1:1"}, {"cache_ttl_ms", ttl_ms}, {"max_stale_ms", max_stale_ms}}, 2001);
    return h;
  };
  // Stale from 1.001 s; a TTL of 500 ms left at 2.001 s keeps it so until 2.501 s.
  EXPECT_TRUE(checker::check_stale_cache(history(500, 1600)).empty());
  auto v = checker::check_stale_cache(history(500, 1000));
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].property, checker::Property::StaleCache);
  EXPECT_EQ(v[0].processes, (std::vector<int64_t>{2, 1}));
  EXPECT_NE(v[0].explanation.find("client-2 put it there"), std::string::npos) << v[0].explanation;
  // No TTL: stale for good, whatever the allowance.
  EXPECT_EQ(checker::check_stale_cache(history(-1, 1'000'000'000)).size(), 1u);
}

TEST(CacheAside, DoubleWriteWithoutALockLeavesTheCacheStale) {
  const RunOutcome o = run_in_sim(load("60-cache-aside-double-write-stale.json"));
  EXPECT_EQ(o.report.found_violations(), (std::set<std::string>{"stale-cache"})) << o.history_jsonl;
  EXPECT_EQ(o.report.algorithm, "none");  // the lock section waits for lock "read-write"
  const checker::Violation* v = find(o.report, "stale-cache");
  ASSERT_NE(v, nullptr);
  EXPECT_NE(v->explanation.find("\"client-1:1\" (client-1 put it there"), std::string::npos) << v->explanation;
  EXPECT_NE(v->explanation.find("database holds \"client-2:1\""), std::string::npos) << v->explanation;
}

TEST(CacheAside, ReadWriteRaceWithoutALockLeavesTheCacheStale) {
  const RunOutcome o = run_in_sim(load("61-cache-aside-read-write-race-stale.json"));
  EXPECT_EQ(o.report.found_violations(), (std::set<std::string>{"stale-cache"})) << o.history_jsonl;
  const checker::Violation* v = find(o.report, "stale-cache");
  ASSERT_NE(v, nullptr);
  EXPECT_NE(v->explanation.find("\"initial:0\" (client-2 put it there"), std::string::npos) << v->explanation;
}

// The report's excerpt tells the race: the reader's database read, the writer's write and
// delete, the reader's late fill, and what the cache and the database held at the end.
TEST(CacheAside, ReportExcerptShowsTheRace) {
  const RunOutcome o = run_in_sim(load("61-cache-aside-read-write-race-stale.json"));
  const reports::Excerpt x = reports::history_excerpt(o.report, o.history);
  std::string text;
  for (const auto& l : x.lines) text += l + "\n";
  // The database answered the reader at once; the paused reader takes the reply in only
  // when it wakes, after the writer is done.
  const std::vector<std::string> in_order = {"client-2  invoke db-read", "client-1  ok     db-write",
                                             "client-1  ok     cache-delete", "client-2  ok     cache-fill",
                                             "cache-final"};
  size_t at = 0;
  for (const auto& step : in_order) {
    at = text.find(step, at);
    ASSERT_NE(at, std::string::npos) << step << " missing or out of order in:\n" << text;
  }
}

// The fix: the same scenarios, faults and seeds, with the read-write lock queueing them.
TEST(CacheAside, ReadWriteLockKeepsTheCacheConsistentUnderTheSameFaults) {
  for (const char* name : {"60-cache-aside-double-write-stale.json", "61-cache-aside-read-write-race-stale.json"}) {
    Scenario s = load(name);
    s.workload.cache_aside.lock = "read-write";
    const RunOutcome o = run_in_sim(s);
    EXPECT_EQ(o.report.verdict, "safe") << name << "\n" << o.history_jsonl;
    EXPECT_TRUE(o.report.violations.empty()) << name;
    EXPECT_FALSE(o.report.stats.contains("faults_never_fired")) << name;
  }
  const RunOutcome o = run_in_sim(load("62-cache-aside-rwlock-consistent.json"));
  EXPECT_EQ(o.report.verdict, "safe") << o.history_jsonl;
}

// A TTL short enough to end the staleness within the allowance is what the scenario allows.
TEST(CacheAside, StalenessWithinTheAllowanceIsNoViolation) {
  Scenario s = load("61-cache-aside-read-write-race-stale.json");
  s.workload.cache_aside.max_stale_ms = 120'000;
  EXPECT_EQ(run_in_sim(s).report.verdict, "safe");
}

TEST(CacheAside, WriterPausedPastItsLeaseLeavesTheCacheStaleAgain) {
  const RunOutcome o = run_in_sim(load("63-cache-aside-rwlock-writer-paused-stale.json"));
  EXPECT_EQ(o.report.found_violations(), (std::set<std::string>{"linearizability", "mutual-exclusion", "stale-cache"}))
      << o.history_jsonl;
}

// --- Live: the cache on one redis-server, a second one standing for the database. ---

void expect_live(const std::string& file) {
  if (live::find_redis_server().empty()) GTEST_SKIP() << "redis-server not installed: live tests need it";
  const Scenario s = load(file);
  ASSERT_EQ(live_unsupported(s, {}), "");
  const RunOutcome o = run_live(s);
  ASSERT_FALSE(o.report.stats.contains("error")) << o.report.stats.dump();
  EXPECT_NE(o.report.stats["checkable"].dump().find("stale-cache"), std::string::npos) << o.report.stats.dump();
  scenario_files::expect_shipped_verdict(o.report, s, o.history_jsonl);
}

TEST(CacheAsideLive, DoubleWriteWithoutALockLeavesTheCacheStale) { expect_live("60-cache-aside-double-write-stale.json"); }
TEST(CacheAsideLive, ReadWriteRaceWithoutALockLeavesTheCacheStale) {
  expect_live("61-cache-aside-read-write-race-stale.json");
}
TEST(CacheAsideLive, ReadWriteLockKeepsTheCacheConsistent) { expect_live("62-cache-aside-rwlock-consistent.json"); }
TEST(CacheAsideLive, WriterPausedPastItsLeaseLeavesTheCacheStaleAgain) {
  expect_live("63-cache-aside-rwlock-writer-paused-stale.json");
}

}  // namespace
}  // namespace lockstep::runner
