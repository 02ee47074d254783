// Fuzzing finds each race of the catalogue within a fixed budget, shrinks it to a few
// faults, and hands back a scenario that replays byte for byte; a safe configuration
// survives the same budget.
#include "lockstep/runner/fuzz.h"

#include <gtest/gtest.h>

#include <map>

#include "lockstep/locks.h"
#include "lockstep/profiles.h"

namespace lockstep::runner {
namespace {

struct Race {
  const char* algorithm;
  const char* fault_kind;
  int64_t runs = 300;  // RedLock's races need two faults lined up: a larger budget
};

class FuzzFinds : public ::testing::TestWithParam<Race> {};

TEST_P(FuzzFinds, ViolationWithinBudgetShrunkAndReplayable) {
  FuzzSpace space{{GetParam().algorithm}, {*fault_kind_named(GetParam().fault_kind)}};
  FuzzOptions opts;
  opts.seed = 7;
  opts.runs = GetParam().runs;
  FuzzSummary s = fuzz(space, opts);
  ASSERT_TRUE(s.finding.has_value()) << "no violation in " << s.runs << " runs";
  const auto& f = *s.finding;
  EXPECT_LE(f.shrunk.faults.size(), 5u);
  EXPECT_LE(f.shrunk.faults.size(), f.original.faults.size());
  EXPECT_FALSE(f.shrunk.expect.names.empty());

  // Written as a scenario file and read back, it replays to the same history.
  auto reread = parse_scenario(to_json(f.shrunk).dump(2), "counterexample.json");
  ASSERT_TRUE(std::holds_alternative<Scenario>(reread)) << std::get<ScenarioError>(reread).message();
  RunOutcome replay = run_in_sim(std::get<Scenario>(reread));
  EXPECT_EQ(replay.history_jsonl, f.outcome.history_jsonl);
  EXPECT_EQ(replay.report.found_violations(), f.shrunk.expect.names);
}

INSTANTIATE_TEST_SUITE_P(Races, FuzzFinds,
                         ::testing::Values(Race{"set-px-lua", "pause"}, Race{"set-px-del", "pause"},
                                           Race{"set-px-get-del", "pause"}, Race{"setnx", "crash"},
                                           Race{"setnx-expire", "crash"}, Race{"set-px-lua", "failover"},
                                           Race{"watch-multi", "pause"}, Race{"renewal-thread", "clock-jump"},
                                           Race{"redisson", "pause"}, Race{"redisson-rw", "pause"},
                                           Race{"multilock", "pause"}, Race{"redlock", "partition"},
                                           Race{"redlock", "crash", 2000}, Race{"redlock", "clock-jump", 2000},
                                           Race{"redlock", "delay"}, Race{"redisson", "failover"},
                                           Race{"redisson-fair", "pause"}, Race{"redisson-fenced", "pause"}),
                         [](const auto& info) {
                           std::string n = std::string(info.param.algorithm) + "_" + info.param.fault_kind;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

TEST(Fuzz, LeasedLuaLockSurvivesClientCrashes) {
  FuzzSpace space{{"set-px-lua"}, {FaultKind::Crash}};
  FuzzOptions opts;
  opts.runs = 150;
  FuzzSummary s = fuzz(space, opts);
  EXPECT_FALSE(s.finding.has_value()) << "unexpected: " << to_json(s.finding->shrunk).dump();
  EXPECT_EQ(s.runs, 150u);
}

TEST(Fuzz, GenerationIsDeterministicAndShardsDiffer) {
  FuzzSpace space{{"set-px-lua"}, {FaultKind::Pause, FaultKind::Delay}};
  EXPECT_EQ(generate_scenario(space, 3, 10), generate_scenario(space, 3, 10));
  EXPECT_NE(generate_scenario(space, 3, 10), generate_scenario(space, 3, 11));
  // Shard 1 of 2 runs the odd indices of the same campaign.
  FuzzOptions a, b;
  a.runs = b.runs = 5;
  b.shard = 1;
  b.shards = 2;
  FuzzSummary sa = fuzz(FuzzSpace{{"set-px-lua"}, {}}, a), sb = fuzz(FuzzSpace{{"set-px-lua"}, {}}, b);
  EXPECT_EQ(sa.runs, 5u);
  EXPECT_EQ(sb.runs, 5u);
}

TEST(Fuzz, GeneratedScenariosAreValidFiles) {
  FuzzSpace space{{"set-px-lua", "setnx", "redlock", "redisson"}, {}};
  for (const auto& k : fault_kinds()) space.fault_kinds.push_back(k.kind);
  for (uint64_t i = 0; i < 200; ++i) {
    Scenario s = generate_scenario(space, 11, i);
    auto parsed = parse_scenario(to_json(s).dump(), "generated.json");
    EXPECT_EQ(to_report_json(s).dump(), nlohmann::json(to_json(s)).dump());
    ASSERT_TRUE(std::holds_alternative<Scenario>(parsed)) << std::get<ScenarioError>(parsed).message();
  }
}

// "Pauses within the lease" (a claim's assumption for a lease lock without fencing)
// holds whichever kind of lock a run draws, a library's as a recipe's: each client's
// pauses and the work together stay inside the lock's lease.
TEST(Fuzz, PausesWithinTheLeaseHoldForLibraryLocksToo) {
  FuzzSpace space{{"set-px-lua", "redlock-py@1.0.8", "redsync@4.17.0"}, {FaultKind::Pause}};
  space.pauses_within_lease = true;
  int paused = 0;
  for (uint64_t i = 0; i < 300; ++i) {
    const Scenario s = generate_scenario(space, 5, i);
    const LockInfo& lock = *find_lock(s.lock.algorithm);
    LockSetup setup;
    setup.options = s.lock.options;
    setup.lease_ms = s.lock.lease_ms;
    const int64_t lease = lock_lease_ms(lock, setup);
    std::map<std::string, int64_t> paused_ms;
    for (const auto& f : s.faults) paused_ms[f.target] += f.duration_ms;
    for (const auto& [client, ms] : paused_ms) {
      EXPECT_LT(ms + s.workload.hold_ms, lease) << "run " << i << " " << s.lock.algorithm << " " << client;
      paused += ms > 0;
    }
  }
  EXPECT_GT(paused, 50) << "too few pauses drawn for the check to mean anything";
}

// A fuzz run judged for its verdict only reaches the same verdict and violations over
// the same history as a full run; it only leaves out what is written for a counterexample.
TEST(Fuzz, VerdictOnlyRunsJudgeAsFullRuns) {
  FuzzSpace space{{"set-px-lua", "setnx", "redlock"}, {FaultKind::Pause, FaultKind::Crash}};
  RunOptions verdict_only;
  verdict_only.verdict_only = true;
  int violating = 0;
  for (uint64_t i = 0; i < 40; ++i) {
    const Scenario s = generate_scenario(space, 3, i);
    const RunOutcome full = run_in_sim(s);
    const RunOutcome quick = run_in_sim(s, verdict_only);
    EXPECT_EQ(quick.report.verdict, full.report.verdict) << "run " << i;
    EXPECT_EQ(quick.report.found_violations(), full.report.found_violations()) << "run " << i;
    EXPECT_EQ(checker::to_jsonl(quick.history), full.history_jsonl) << "run " << i;
    EXPECT_TRUE(quick.history_jsonl.empty());
    EXPECT_TRUE(quick.report.history_sha256.empty());
    violating += full.report.violations.empty() ? 0 : 1;
  }
  EXPECT_GT(violating, 0) << "no run found a violation: the comparison covered safe runs only";
}

}  // namespace
}  // namespace lockstep::runner
