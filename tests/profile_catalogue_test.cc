// scenarios/profiles/: every library bug beside its fix. The catalogue test runs each
// file in the simulator and checks its expected verdict; here, that the files pair up
// as promised (same faults and seed, the buggy one broken, the fixed one safe), that
// each cites where its behaviour comes from, the pairs whose difference is not a
// property violation (the fair lock's order, redis-plus-plus refusing a lock it won,
// redis-plus-plus's unlock throwing), and that the pairs marked for both worlds keep
// their verdicts against real servers.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <set>

#include "lockstep/live/redis_server.h"
#include "lockstep/profiles.h"
#include "lockstep/runner/live_runner.h"
#include "lockstep/runner/sim_runner.h"
#include "scenario_param_name.h"
#include "scenario_files.h"

namespace lockstep::runner {
namespace {

namespace fs = std::filesystem;

const std::string kDir = std::string(LOCKSTEP_SOURCE_DIR) + "/scenarios/profiles/";

Scenario load_profile(const std::string& name) {
  auto r = load_scenario_file(name.rfind('/', 0) == 0 ? name : kDir + name);
  if (auto* e = std::get_if<ScenarioError>(&r)) {
    ADD_FAILURE() << e->message();
    return Scenario{};  // the failure is said; every other test of the binary still runs
  }
  return std::get<Scenario>(r);
}

std::vector<std::string> profile_scenarios() {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(kDir))
    if (e.path().extension() == ".json") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

// Each bug and the version (or mitigation) that fixes it, under the same faults and seed.
struct Pair {
  const char* buggy;
  const char* fixed;
};
const std::vector<Pair>& pairs() {
  static const std::vector<Pair> kPairs = {
      {"redsync-4.0.3-extend-hides-lost-lock.json", "redsync-4.17.0-extend-reports-lost-lock.json"},
      {"redsync-4.3.0-slow-extend-reported-valid.json", "redsync-4.17.0-slow-extend-refused.json"},
      {"redsync-4.12.0-touch-error-releases-lock.json", "redsync-4.17.0-touch-error-keeps-lock.json"},
      {"node-redlock-5.0.0-beta.2-using-expired-at-birth.json", "node-redlock-afe5cf9-using-keeps-lock.json"},
      {"node-redlock-5.0.0-beta.2-slow-acquire-not-checked.json", "node-redlock-4.2.0-slow-acquire-refused.json"},
      {"redisson-3.43.0-watchdog-dies-after-renewal-error.json", "redisson-3.44.0-watchdog-survives-renewal-error.json"},
      {"redisson-3.23.0-unlock-resent-counts-down-twice.json", "redisson-3.43.0-unlock-latch-counts-down-once.json"},
      {"redisson-3.43.0-redlock-crash-holds-twice-the-wait.json", "redisson-3.43.0-redlock-crash-wait-half-the-lease.json"},
      {"redisson-3.43.0-fair-lock-skewed-clock-jumps-the-queue.json", "redisson-3.43.0-fair-lock-skew-within-wait.json"},
      {"redisson-3.43.0-fair-lock-sustained-contention-drops-live-waiters.json",
       "redisson-3.43.0-fair-lock-wait-covers-the-contention.json"},
      {"redisson-2.3.0-multilock-split-holds-twice.json", "redisson-3.23.0-multilock-takes-locks-in-turn.json"},
      {"redisson-3.11.0-multilock-no-wait-lease-deletes-keys.json", "redisson-3.11.1-multilock-no-wait-keeps-lease.json"},
      {"redlock-py-1.0.8-wall-clock-jump-accepts-expired-lock.json",
       "redis-plus-plus-1.3.15-steady-clock-refuses-expired-lock.json"},
      {"redlock-py-1.0.2-drift-added-accepts-late-lock.json", "redlock-py-1.0.8-drift-subtracted-refuses-late-lock.json"},
      {"redlock-py-1.0.2-validity-outlasts-keys.json", "redlock-py-1.0.8-validity-ends-before-keys.json"},
      {"redis-plus-plus-1.3.15-validity-from-first-attempt.json", "redis-plus-plus-1.3.15-one-attempt-per-call.json"},
      {"redis-plus-plus-1.3.12-unlock-error-rethrown.json", "redis-plus-plus-1.3.15-unlock-error-swallowed.json"},
      {"redis-plus-plus-1.3.15-unlock-after-watcher-reset-throws.json",
       "redis-plus-plus-fc67c2e-unlock-after-watcher-reset-returns.json"},
      {"redis-py-5.0.0-no-timeout-crash-deadlock.json", "redis-py-5.0.0-timeout-crash-recovers.json"},
      {"redis-py-2.10.6-with-runs-body-without-lock.json", "redis-py-5.0.0-with-raises-when-not-acquired.json"},
      {"redis-py-2.10.6-lock-class-crash-between-setnx-and-pexpire.json", "redis-py-5.0.0-crash-after-set-recovers.json"},
  };
  return kPairs;
}

TEST(ProfileCatalogue, EveryScenarioIsHalfOfAPairWithTheSameFaultsAndSeed) {
  std::set<std::string> paired;
  for (const auto& p : pairs()) {
    SCOPED_TRACE(p.buggy);
    const Scenario bug = load_profile(p.buggy), fix = load_profile(p.fixed);
    EXPECT_EQ(bug.seed, fix.seed);
    EXPECT_EQ(bug.faults, fix.faults);
    EXPECT_EQ(bug.clocks, fix.clocks);
    EXPECT_EQ(bug.worlds, fix.worlds);
    EXPECT_EQ(fix.expect.mode, reports::Expectation::Mode::Safe) << p.fixed << " must stay safe";
    paired.insert(p.buggy);
    paired.insert(p.fixed);
  }
  for (const auto& f : profile_scenarios()) EXPECT_TRUE(paired.count(fs::path(f).filename().string())) << f;
}

// An issue number ("#296") or a source file ("lock.py", "redlock.ts") in the text.
// (Hand-written: GCC 12 warns inside <regex> under the sanitizer build's -O1.)
bool cites_issue_or_source(const std::string& text) {
  for (size_t i = 0; i + 1 < text.size(); ++i) {
    if (text[i] == '#' && std::isdigit(static_cast<unsigned char>(text[i + 1]))) return true;
  }
  for (const char* ext : {".py", ".cpp", ".ts", ".js", ".go", ".java"}) {
    for (size_t at = text.find(ext); at != std::string::npos; at = text.find(ext, at + 1)) {
      const size_t end = at + std::char_traits<char>::length(ext);
      if (end == text.size() || !std::isalnum(static_cast<unsigned char>(text[end]))) return true;
    }
  }
  return false;
}

TEST(ProfileCatalogue, EveryBugUsesItsLibraryAndCitesWhereItComesFrom) {
  for (const auto& f : profile_scenarios()) {
    const Scenario s = load_profile(f);
    SCOPED_TRACE(f);
    ASSERT_FALSE(s.lock.algorithm.empty());
    EXPECT_NE(s.description.find(profile_named(s.lock.algorithm)->library), std::string::npos);
    EXPECT_TRUE(cites_issue_or_source(s.description)) << "no issue or source file cited";
  }
}

std::vector<int64_t> main_thread_acquisitions(const checker::History& h) {
  std::vector<int64_t> order;
  for (const auto& e : h.events)
    if (e.type == checker::EventType::Ok && e.f == "acquire" && e.thread == 0) order.push_back(e.process);
  return order;
}

TEST(ProfileCatalogue, ASkewedClockBreaksTheFairLocksOrderAndAWaitLongerThanTheSkewKeepsIt) {
  const auto skewed = main_thread_acquisitions(run_in_sim(load_profile("redisson-3.43.0-fair-lock-skewed-clock-jumps-the-queue.json")).history);
  const auto kept = main_thread_acquisitions(run_in_sim(load_profile("redisson-3.43.0-fair-lock-skew-within-wait.json")).history);
  EXPECT_EQ(kept, (std::vector<int64_t>{1, 2, 3, 4, 5}));
  ASSERT_EQ(skewed.size(), 5u);
  EXPECT_NE(skewed, kept);
  // client-5, ahead by 10 s, is served before client-2 and client-3 who came first.
  const auto at = [&](int64_t p) { return std::find(skewed.begin(), skewed.end(), p) - skewed.begin(); };
  EXPECT_LT(at(5), at(2));
  EXPECT_LT(at(5), at(3));
}

// With no fault at all: under contention that never empties the queue, the fair script's
// places stop moving forward, and from about PTTL + wait on a live waiter is dropped at
// its turn; a wait longer than the busy period keeps arrival order to the end.
TEST(ProfileCatalogue, SustainedContentionDropsLiveWaitersFromTheFairQueue) {
  const auto dropped = main_thread_acquisitions(
      run_in_sim(load_profile("redisson-3.43.0-fair-lock-sustained-contention-drops-live-waiters.json")).history);
  const auto kept =
      main_thread_acquisitions(run_in_sim(load_profile("redisson-3.43.0-fair-lock-wait-covers-the-contention.json")).history);
  std::vector<int64_t> rounds;
  for (int i = 0; i < 8; ++i) rounds.insert(rounds.end(), {1, 2, 3});
  EXPECT_EQ(kept, rounds);
  // The first five rounds (about 5 s: the 3 s PTTL plus the 2 s wait) keep the order.
  ASSERT_GE(dropped.size(), 16u);
  EXPECT_EQ(std::vector<int64_t>(dropped.begin(), dropped.begin() + 16), std::vector<int64_t>(rounds.begin(), rounds.begin() + 16));
  EXPECT_NE(dropped, kept);
}

// Acquires that failed although, during them, the same client's value was set on a
// majority of the nodes (and then taken back by its own unlock).
int refused_after_winning(const checker::History& h, int nodes) {
  int refused = 0;
  std::map<int64_t, int64_t> since;  // process -> invoke time of its open acquire
  std::map<int64_t, std::set<int64_t>> won;
  for (const auto& e : h.events) {
    if (e.f == "acquire" && e.type == checker::EventType::Invoke) {
      since[e.process] = e.time_ns;
      won[e.process].clear();
    } else if (e.type == checker::EventType::Truth && e.f == checker::truth::kKeySet && since.count(e.process)) {
      won[e.process].insert(e.node);
    } else if (e.f == "acquire" && e.type != checker::EventType::Truth && e.type != checker::EventType::Invoke) {
      if (e.type == checker::EventType::Fail && static_cast<int>(won[e.process].size()) >= nodes / 2 + 1) ++refused;
      since.erase(e.process);
    }
  }
  return refused;
}

TEST(ProfileCatalogue, RedisPlusPlusRefusesALockItWonWhenValidityCountsFromTheFirstAttempt) {
  const Scenario bug = load_profile("redis-plus-plus-1.3.15-validity-from-first-attempt.json");
  const Scenario fix = load_profile("redis-plus-plus-1.3.15-one-attempt-per-call.json");
  EXPECT_GE(refused_after_winning(run_in_sim(bug).history, bug.topology.nodes), 1);
  EXPECT_EQ(refused_after_winning(run_in_sim(fix).history, fix.topology.nodes), 0);
}

// What client-1's release returned (its first one).
std::string first_release(const checker::History& h) {
  for (const auto& e : h.events)
    if (e.f == "release" && e.process == 1 && e.type != checker::EventType::Invoke && e.value.is_string())
      return e.value.get<std::string>();
  return "";
}

// redis-plus-plus's two unlock fixes change what RedMutex::unlock tells its caller (an
// exception, which under std::lock_guard kills the application, or a normal return),
// not what is left on the servers: the difference is the release's outcome.
TEST(ProfileCatalogue, RedisPlusPlusUnlockFixesReturnWhereTheOlderVersionsThrew) {
  const auto outcome = [](const char* file) { return first_release(run_in_sim(load_profile(file)).history); };
  EXPECT_EQ(outcome("redis-plus-plus-1.3.12-unlock-error-rethrown.json"), "unknown");
  EXPECT_EQ(outcome("redis-plus-plus-1.3.15-unlock-error-swallowed.json"), "released");
  EXPECT_EQ(outcome("redis-plus-plus-1.3.15-unlock-after-watcher-reset-throws.json"), "not-owner");
  EXPECT_EQ(outcome("redis-plus-plus-fc67c2e-unlock-after-watcher-reset-returns.json"), "released");
}

std::vector<std::string> live_pairs() {
  std::vector<std::string> out;
  for (const auto& f : profile_scenarios()) {
    const Scenario s = load_profile(f);
    if (s.runs_in(World::Live)) out.push_back(f);
  }
  return out;
}

class ProfileLiveCatalogue : public ::testing::TestWithParam<std::string> {};

TEST_P(ProfileLiveCatalogue, SameVerdictAgainstRealServers) {
  if (live::find_redis_server().empty()) GTEST_SKIP() << "redis-server not installed: live tests need it";
  const Scenario s = load_profile(GetParam());
  ASSERT_EQ(live_unsupported(s, {}), "");
  RunOutcome o = run_live(s);
  ASSERT_FALSE(o.report.stats.contains("error")) << o.report.stats.dump();
  scenario_files::expect_shipped_verdict(o.report, s, o.history_jsonl);
}

INSTANTIATE_TEST_SUITE_P(Scenarios, ProfileLiveCatalogue, ::testing::ValuesIn(live_pairs()), scenario_param_name);

TEST(ProfileLiveCatalogue, MostPairsRunLive) { EXPECT_GE(live_pairs().size(), 12u); }

}  // namespace
}  // namespace lockstep::runner
