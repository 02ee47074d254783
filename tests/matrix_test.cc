// The fuzzer draws library profiles and their options (and keeps the profile while
// shrinking), and the safety matrix tells a buggy library version from its fix under a
// small budget: node-redlock 5.0.0-beta.2's expiration from the first attempt (#169)
// breaks it under plain contention, and the fix on main keeps the same cell clean; with
// the default budget it tells Redisson's watchdog and resend bugs from their fixes too;
// redis-py's Lock without a timeout deadlocks under client crashes, which it never claimed
// to survive (a limit). Each lock's assumptions, and the two budgets the fuzzer draws
// faults in, are checked here too.
#include <gtest/gtest.h>

#include "lockstep/profiles.h"
#include "lockstep/reports/matrix.h"
#include "lockstep/runner/matrix.h"

namespace lockstep::runner {
namespace {

TEST(ProfileFuzz, GeneratedScenariosAreValidFilesForEveryProfileAndFault) {
  FuzzSpace space;
  space.locks = profile_names();
  for (const auto& k : fault_kinds()) space.fault_kinds.push_back(k.kind);
  std::set<std::string> seen;
  for (uint64_t i = 0; i < 300; ++i) {
    Scenario s = generate_scenario(space, 5, i);
    seen.insert(s.lock.algorithm);
    auto parsed = parse_scenario(to_json(s).dump(), "generated.json");
    ASSERT_TRUE(std::holds_alternative<Scenario>(parsed)) << std::get<ScenarioError>(parsed).message() << "\n"
                                                          << to_json(s).dump();
    EXPECT_EQ(to_json(std::get<Scenario>(parsed)), to_json(s));
  }
  EXPECT_EQ(seen.size(), library_profiles().size());
}

TEST(ProfileFuzz, FindsTheBugShrinksWithinTheProfileAndReplays) {
  FuzzSpace space;
  space.locks = {"node-redlock@5.0.0-beta.2"};
  FuzzOptions o;
  o.seed = 1;
  o.runs = 200;
  FuzzSummary s = fuzz(space, o);
  ASSERT_TRUE(s.finding.has_value()) << "no violation in " << s.runs << " runs";
  EXPECT_EQ(s.finding->shrunk.lock.algorithm, "node-redlock@5.0.0-beta.2");
  EXPECT_EQ(s.finding->original.lock.algorithm, "node-redlock@5.0.0-beta.2");
  auto reread = parse_scenario(to_json(s.finding->shrunk).dump(2), "counterexample.json");
  ASSERT_TRUE(std::holds_alternative<Scenario>(reread)) << std::get<ScenarioError>(reread).message();
  RunOutcome replay = run_in_sim(std::get<Scenario>(reread));
  EXPECT_EQ(replay.history_jsonl, s.finding->outcome.history_jsonl);
  EXPECT_EQ(replay.report.found_violations(), s.finding->shrunk.expect.names);
}

const MatrixCell& cell(const std::vector<MatrixCell>& cells, const std::string& profile, const std::string& fault) {
  for (const auto& c : cells)
    if (c.profile == profile && c.fault == fault) return c;
  static const MatrixCell kNone;
  ADD_FAILURE() << "no cell " << profile << " x " << fault;
  return kNone;
}

TEST(Matrix, TellsTheBuggyVersionFromItsFixUnderASmallBudget) {
  MatrixOptions o;
  o.profiles = {"node-redlock@5.0.0-beta.2", "node-redlock@afe5cf9", "redis-py@5.0.0"};
  o.faults = {"none", "crash"};
  o.runs = 80;
  ASSERT_EQ(matrix_options_problem(o), "");
  const auto cells = run_matrix(o);
  ASSERT_EQ(cells.size(), 6u);
  EXPECT_STREQ(cell(cells, "node-redlock@5.0.0-beta.2", "none").verdict(), cell_verdict::kBug);
  EXPECT_FALSE(cell(cells, "node-redlock@afe5cf9", "none").broken());
  EXPECT_EQ(cell(cells, "node-redlock@afe5cf9", "none").summary.runs, 80u);
  // Without a timeout (its default) redis-py's lock never claims to survive its holder's
  // crash: the deadlock is found beyond its assumptions, a limit.
  const MatrixCell& crash = cell(cells, "redis-py@5.0.0", "crash");
  ASSERT_TRUE(crash.broken());
  EXPECT_STREQ(crash.verdict(), cell_verdict::kLimit);
  EXPECT_EQ(crash.summary.finding->shrunk.expect.names, std::set<std::string>{"deadlock"});
  EXPECT_FALSE(cell(cells, "redis-py@5.0.0", "none").broken());
}

// The locks of the other services are fuzzed with their service beside the stock's node:
// the files they write read back and replay, a partition cuts a client from the service,
// and the recipe that claims to survive short cuts (ZooKeeper's session) shows no bug
// within that claim however the cuts add up; beyond it, the session's end is a limit.
TEST(ServiceFuzz, ZooKeeperAndMysqlLocksGetTheirServiceAndAreJudgedAgainstTheirClaims) {
  FuzzSpace space;
  space.locks = {"zookeeper", "mysql-named", "mysql-table-fenced"};
  space.fault_kinds = {FaultKind::Pause, FaultKind::Partition, FaultKind::Crash};
  for (uint64_t i = 0; i < 60; ++i) {
    Scenario s = generate_scenario(space, 7, i);
    const bool zk = s.lock.algorithm == "zookeeper";
    EXPECT_EQ(s.topology.zookeeper.servers > 0, zk);
    EXPECT_EQ(s.topology.mysql.enabled, !zk);
    EXPECT_EQ(s.worlds, std::vector<World>{World::Sim});
    for (const auto& f : s.faults) {
      if (f.kind == FaultKind::Partition) {
        EXPECT_NE(f.groups[1], std::vector<std::string>{"node-1"});
      }
    }
    auto parsed = parse_scenario(to_json(s).dump(), "generated.json");
    ASSERT_TRUE(std::holds_alternative<Scenario>(parsed)) << std::get<ScenarioError>(parsed).message();
  }
  MatrixOptions o;
  o.algorithms = {"zookeeper"};
  o.faults = {"partition"};
  o.runs = 100;
  ASSERT_EQ(matrix_options_problem(o), "");
  const auto cells = run_matrix(o);
  ASSERT_EQ(cells.size(), 1u);
  EXPECT_STRNE(cells[0].verdict(), cell_verdict::kBug) << to_json(cells[0].summary.finding->shrunk).dump();
}

// Every lock states its assumptions, with the numbers its configuration gives them.
TEST(Assumptions, FollowTheLocksConfiguration) {
  auto find = [](const std::vector<Assumption>& list, const std::string& fault, const std::string& hits) {
    for (const auto& a : list)
      if (a.fault == fault && a.hits == hits) return a;
    ADD_FAILURE() << "no assumption for " << fault << " on " << hits;
    return Assumption{};
  };
  for (const auto& l : locks()) EXPECT_FALSE(lock_assumptions(l, LockSetup{}).empty()) << l.name;
  // Redisson's watchdog survives pauses and failed renewals shorter than its timeout
  // minus one renewal period; with an explicit leaseTime the work counts against it.
  const LockInfo& redisson = *find_lock("redisson@3.43.0");
  EXPECT_EQ(find(lock_assumptions(redisson, {}), "pause", "client").max, 20000);
  EXPECT_EQ(find(lock_assumptions(redisson, {}), "delay", "client").max, 20000);
  const auto leased = lock_assumptions(redisson, {{{"leaseTime", 900}, {"timeout", 50}}, 0, 0});
  EXPECT_EQ(find(leased, "pause", "client").max, 900);
  EXPECT_TRUE(find(leased, "pause", "client").work_counts);
  EXPECT_EQ(find(leased, "delay", "client").max, 50);
  // redsync 4.17.0's per-attempt deadline; node-redlock's wall clock held to its drift.
  EXPECT_EQ(find(lock_assumptions(*find_lock("redsync@4.17.0"), {}), "delay", "client").max, 400);
  const auto node = lock_assumptions(*find_lock("node-redlock@5.0.0-beta.2"), {{{"duration", 1000}}, 0, 0});
  EXPECT_EQ(find(node, "clock-jump", "client").max, 12);
  const Assumption crash = find(node, "crash", "node");
  EXPECT_EQ(crash.max, 1);
  EXPECT_EQ(crash.restart_min_ms, 1000);
  // redis-py without a timeout has no lease: a crashed holder is beyond what it claims.
  for (const auto& a : lock_assumptions(*find_lock("redis-py@5.0.0"), {})) EXPECT_NE(a.fault, "crash");
  // ZooKeeper's lease is the session (the scenario's lease_ms): heartbeats keep it while
  // the client runs, so the work does not count, and a client cut off for less than the
  // timeout minus one ping period keeps its session and its znode. No client clock plays
  // a part, and a lock that reaches no Redis node claims nothing about one.
  for (const char* name : {"zookeeper", "zookeeper-fenced"}) {
    SCOPED_TRACE(name);
    const auto zk = lock_assumptions(*find_lock(name), {nlohmann::json::object(), 9000, 1000});
    EXPECT_EQ(find(zk, "pause", "client").max, 6000);
    EXPECT_FALSE(find(zk, "pause", "client").work_counts);
    EXPECT_EQ(find(zk, "partition", "client").max, 6000);
    EXPECT_EQ(find(zk, "clock-jump", "client").max, Assumption::kAny);
    EXPECT_EQ(find(zk, "crash", "client").max, Assumption::kAny);
    for (const auto& a : zk) EXPECT_EQ(a.hits, "client") << a.fault;
  }
  // MySQL's session locks last while the server keeps the silent session: the work counts
  // against wait_timeout; the lock table is a lease on the client's wall clock.
  const auto named = lock_assumptions(*find_lock("mysql-named"), {{{"wait_timeout_s", 2}}, 1000, 500});
  EXPECT_EQ(find(named, "pause", "client").max, 2000);
  EXPECT_TRUE(find(named, "pause", "client").work_counts);
  EXPECT_EQ(find(named, "partition", "client").max, 2000);
  EXPECT_EQ(find(lock_assumptions(*find_lock("mysql-for-update"), {}), "pause", "client").max, 28'800'000);
  const auto table = lock_assumptions(*find_lock("mysql-table"), {nlohmann::json::object(), 1000, 500});
  EXPECT_EQ(find(table, "pause", "client").max, 1000);
  for (const auto& a : table) {
    EXPECT_EQ(a.hits, "client") << a.fault;
    EXPECT_NE(a.fault, "clock-jump");
  }
}

// A within campaign draws only faults the lock claims to tolerate, a beyond one always at
// least one it does not, and a beyond campaign's counterexample shrinks without falling
// back within.
TEST(Budgets, DrawAndShrinkInsideTheirBudget) {
  FuzzSpace space;
  space.locks = {"redsync@4.17.0", "redisson@3.44.0", "set-px-lua"};
  for (const auto& k : fault_kinds()) space.fault_kinds.push_back(k.kind);
  int within_faults = 0, beyond = 0;
  for (uint64_t i = 0; i < 200; ++i) {
    space.budget = Budget::Within;
    const Scenario in = generate_scenario(space, 3, i);
    EXPECT_TRUE(within_assumptions(in)) << to_json(in).dump();
    within_faults += static_cast<int>(in.faults.size());
    space.budget = Budget::Beyond;
    const Scenario out = generate_scenario(space, 3, i);
    beyond += !within_assumptions(out);
  }
  EXPECT_GT(within_faults, 100);
  EXPECT_GT(beyond, 150);
  space.locks = {"set-px-lua"};
  space.fault_kinds = {FaultKind::Pause};
  space.budget = Budget::Beyond;
  FuzzOptions o;
  o.runs = 100;
  const FuzzSummary s = fuzz(space, o);
  ASSERT_TRUE(s.finding.has_value());
  EXPECT_FALSE(within_assumptions(s.finding->shrunk));
  ASSERT_EQ(s.finding->shrunk.faults.size(), 1u);
  // Past the lease less the work: the pause a lease cannot survive.
  EXPECT_GT(s.finding->shrunk.faults[0].duration_ms + s.finding->shrunk.workload.hold_ms,
            s.finding->shrunk.lock.lease_ms - 20 - s.finding->shrunk.lock.lease_ms / 10);
  space.budget = Budget::Within;
  EXPECT_FALSE(fuzz(space, o).finding.has_value()) << "set-px-lua broke within its own assumptions";
}

// Each claim speaks of its fault alone; together, a pause and a delay on one client eat
// one lease. A within campaign of pauses and delays on Redisson's watchdog lock found two
// holders before they shared one budget: a 41 ms delay slowing the acquire, then a pause
// of all the claim's room.
TEST(Budgets, PausesAndDelaysOnOneClientShareOneLease) {
  Scenario s;
  s.lock.algorithm = "redisson@3.44.0";
  s.lock.options = {{"kind", "lock"}, {"lockWatchdogTimeout", 200}, {"retryInterval", 10}, {"timeout", 20}};
  s.topology.nodes = 1;
  s.workload.hold_ms = 16;
  FaultSpec delay;
  delay.kind = FaultKind::Delay;
  delay.target = "client-1";
  delay.at_ms = 2;
  delay.duration_ms = 160;
  delay.delay_ms = 41;
  FaultSpec pause;
  pause.kind = FaultKind::Pause;
  pause.target = "client-1";
  pause.at_ms = 59;
  pause.duration_ms = 101;
  s.faults = {delay};
  EXPECT_TRUE(within_assumptions(s));
  s.faults = {pause};
  EXPECT_TRUE(within_assumptions(s));
  s.faults = {delay, pause};
  EXPECT_FALSE(within_assumptions(s));
  // On another client the two do not add up.
  s.faults[1].target = "client-2";
  EXPECT_TRUE(within_assumptions(s));

  FuzzSpace space;
  space.locks = {"redisson@3.44.0"};
  space.fault_kinds = {FaultKind::Pause, FaultKind::Delay};
  space.budget = Budget::Within;
  ASSERT_EQ(parse_stop_on("safety", space), "");
  FuzzOptions o;
  o.seed = 1;
  o.runs = 600;
  o.jobs = 1;
  const FuzzSummary found = fuzz(space, o);
  EXPECT_FALSE(found.finding.has_value()) << to_json(found.finding->shrunk).dump();
}

// Delays add up along a path and count twice in a round trip: a within campaign keeps
// the latency that the delays and jitters active at any moment add together to half of
// what the lock claims for a round trip (less room for the network's own), so no
// request of a lock that claims "below the command timeout" times out.
TEST(Budgets, DelaysActiveTogetherStayWithinHalfTheRoundTripClaim) {
  FuzzSpace space;
  space.locks = {"redisson@3.44.0", "redsync@4.17.0"};
  space.fault_kinds = {FaultKind::Delay, FaultKind::Jitter};
  space.budget = Budget::Within;
  int overlapping = 0;
  for (uint64_t i = 0; i < 300; ++i) {
    const Scenario s = generate_scenario(space, 11, i);
    const LockInfo* info = s.lock.info();
    ASSERT_NE(info, nullptr);
    LockSetup setup;
    setup.options = s.lock.options;
    int64_t claim = 0;
    for (const auto& a : lock_assumptions(*info, setup))
      if (a.fault == "delay" && a.hits == "client") claim = a.max;
    ASSERT_GT(claim, 0) << s.lock.algorithm;
    for (const auto& f : s.faults) {
      int64_t together = 0, active = 0;
      for (const auto& g : s.faults) {
        if (g.at_ms > f.at_ms || g.at_ms + g.duration_ms <= f.at_ms) continue;
        together += g.kind == FaultKind::Delay ? g.delay_ms : g.jitter_ms;
        ++active;
      }
      overlapping += active > 1;
      EXPECT_LE(2 * together, claim) << to_json(s).dump();
    }
  }
  EXPECT_GT(overlapping, 20);
}

// The held-out check of the matrix: with its default budget and seed (no tuning per pair),
// each buggy version's cell under the fault its bug needs is a bug and its fixed
// version's is not. node-redlock 5.0.0-beta.2 dates its lock from the first attempt
// (#169; fixed at afe5cf9); Redisson 3.43.0's watchdog stops for good after one failed
// renewal (#2515, #3194; 3.44.0 reschedules it, #6303); 3.23.0 resends a lock command
// after a response timeout (#4871; 3.44.0 resends neither and has the watchdog fix);
// redsync 4.0.3's Extend reports a lost lock as extended (PR #61; 4.17.0 does not);
// redis-py 2.10.6's `with lock:` runs its body after acquire gave up under plain
// contention (#621; 3.0.0 raises).
// Redisson 2.3.0's MultiLock tries every lock at once with the caller's lease (#624,
// fixed in 2.4.0): a little jitter splits the locks between two callers, who each take
// the other's once its lease ends (3.23.0 has the fix but its jitter cell is #4871's).
// redsync 4.12.0's failed touch on one crashed master deletes the lock on every master
// while Extend reports success (PR #151, fixed in 4.12.1). Redisson 3.11.0's MultiLock and
// RedLock take each lock with a lease of twice the wait, -2 ms for tryLock(-1, leaseTime),
// so every caller holds them at once with no fault (#2172; 3.11.1 takes leaseTime).
// redlock-py 1.0.2 adds the drift to the validity it reports (PR #3, fixed in 1.0.4): a
// holder that works for all of it, as RedLock's users are told to, outlasts its keys by
// the drift, and a waiter trying then gets in, with no fault (1.0.8 ends before them).
TEST(Matrix, DefaultBudgetsSeparateEachBuggyVersionFromItsFix) {
  struct Pair {
    std::string buggy, fixed, fault;
  };
  const std::vector<Pair> pairs = {
      {"node-redlock@5.0.0-beta.2", "node-redlock@afe5cf9", "none"},
      {"redisson@3.43.0", "redisson@3.44.0", "delay"},
      {"redisson@3.43.0", "redisson@3.44.0", "jitter"},
      {"redisson@3.23.0", "redisson@3.44.0", "delay"},
      {"redisson@2.3.0", "redisson@3.44.0", "jitter"},
      {"redsync@4.0.3", "redsync@4.17.0", "pause"},
      {"redis-py@2.10.6", "redis-py@5.0.0", "none"},
      {"redsync@4.12.0", "redsync@4.17.0", "crash"},
      {"redisson@3.11.0", "redisson@3.11.1", "none"},
      {"redlock-py@1.0.2", "redlock-py@1.0.8", "none"},
  };
  for (const auto& p : pairs) {
    MatrixOptions o;
    o.profiles = {p.buggy, p.fixed};
    o.faults = {p.fault};
    ASSERT_EQ(matrix_options_problem(o), "");
    const auto cells = run_matrix(o);
    const MatrixCell& buggy = cell(cells, p.buggy, p.fault);
    const MatrixCell& fixed = cell(cells, p.fixed, p.fault);
    EXPECT_STREQ(buggy.verdict(), cell_verdict::kBug) << p.buggy << " under " << p.fault;
    EXPECT_STRNE(fixed.verdict(), cell_verdict::kBug)
        << p.fixed << " under " << p.fault << ": " << to_json(fixed.summary.finding->shrunk).dump();
  }
}

// redis-py 2.10.6's Lock class sends SETNX, then PEXPIRE (#554, #818; 3.0 sets both in
// one SET): a holder that crashes between them leaves a key with no TTL although it asked
// for a timeout, a deadlock within what the lock claims (a client's crash, with a
// timeout). #621 breaks every 2.10.6 cell first, so the crash cell alone cannot show this
// one; a campaign stopping on stuck locks only, with faults within the assumptions, finds
// it in a run drawing the Lock class, and the same campaign on 5.0.0 finds none.
TEST(Matrix, WithinItsAssumptionsOnlyRedisPy2SetnxThenPexpireLeavesAStuckLock) {
  auto campaign = [](const std::string& profile) {
    FuzzSpace space;
    space.locks = {profile};
    space.fault_kinds = {FaultKind::Crash};
    space.budget = Budget::Within;
    space.classes = {checker::Severity::Stuck};
    FuzzOptions o;
    o.seed = 1;
    o.runs = 3000;
    return fuzz(space, o);
  };
  const FuzzSummary buggy = campaign("redis-py@2.10.6");
  ASSERT_TRUE(buggy.finding.has_value()) << "no stuck lock in " << buggy.runs << " runs";
  const Scenario& found = buggy.finding->shrunk;
  EXPECT_EQ(found.expect.names, std::set<std::string>{"deadlock"});
  EXPECT_EQ(found.lock.options.at("class"), "Lock");
  EXPECT_TRUE(found.lock.options.at("timeout").is_number()) << found.lock.options.dump();
  const FuzzSummary fixed = campaign("redis-py@5.0.0");
  EXPECT_FALSE(fixed.finding.has_value()) << to_json(fixed.finding->shrunk).dump();
  EXPECT_EQ(fixed.runs, 3000u);
}

// redis-plus-plus's unlock fixes (#563 in 1.3.13, #659 at fc67c2e) stop RedMutex::unlock
// from throwing, which under std::lock_guard kills the application; they change nothing
// on the servers, so they are no pair above. The crash cell stays a bug on every version:
// one master's error escapes the watcher's extension (caught by no version), the watcher
// gives up, and the holder works on without a lease.
TEST(Matrix, RedisPlusPlusUnlockFixesLeaveTheWatchersCrashBug) {
  MatrixOptions o;
  o.profiles = {"redis-plus-plus@1.3.12", "redis-plus-plus@1.3.15", "redis-plus-plus@fc67c2e"};
  o.faults = {"crash"};
  const auto cells = run_matrix(o);
  for (const auto& p : o.profiles) EXPECT_STREQ(cell(cells, p, "crash").verdict(), cell_verdict::kBug) << p;
}

// redsync 4.0.3's Extend reports a lost lock as held (PR #61): no fault within its
// assumptions makes an extension fail, but beyond them (delays past its budget) its
// Extend says "extended" for a key gone from the masters. Losing the lease there is the
// price of any lease; telling the holder it still has the lock is not, so the cell is a
// bug, found by the campaign that looks beyond the assumptions for broken promises only.
// 4.17.0's Extend tells the truth: a limit.
TEST(Matrix, RedsyncsExtendBugIsABrokenPromiseBeyondItsAssumptions) {
  MatrixOptions o;
  o.profiles = {"redsync@4.0.3", "redsync@4.17.0"};
  o.faults = {"delay"};
  o.runs = 100;
  const auto cells = run_matrix(o);
  const MatrixCell& buggy = cell(cells, "redsync@4.0.3", "delay");
  ASSERT_STREQ(buggy.verdict(), cell_verdict::kBug);
  EXPECT_TRUE(buggy.broke_a_promise);
  EXPECT_FALSE(within_assumptions(buggy.summary.finding->shrunk));
  EXPECT_TRUE(buggy.summary.finding->shrunk.expect.names.count("false-extend"));
  const MatrixCell& fixed = cell(cells, "redsync@4.17.0", "delay");
  EXPECT_STRNE(fixed.verdict(), cell_verdict::kBug);
  EXPECT_FALSE(fixed.broke_a_promise);
}

TEST(Matrix, BadOptionsAreNamed) {
  MatrixOptions o;
  o.profiles = {"redsync@4.17"};
  o.faults = {"none"};
  EXPECT_EQ(matrix_options_problem(o), "unknown profile \"redsync@4.17\" (lockstep profiles lists them)");
  o.profiles = {"redsync@4.17.0"};
  o.faults = {"pauze"};
  EXPECT_EQ(matrix_options_problem(o), "unknown fault kind \"pauze\"");
}

TEST(Matrix, FilesSayEachCellsVerdictAndLinkItsCounterexample) {
  std::vector<reports::MatrixRow> rows = {
      {"a@1", "none", reports::matrix_verdict::kNoViolation, 10, 0.5, 0, "", "", "", {}, {}, ""},
      {"a@1", "pause", reports::matrix_verdict::kBug, 3, 0.1, 1, "a@1--pause/counterexample.json",
       "a@1--pause/report.html", "lockstep run m/a@1--pause/counterexample.json", {"mutual-exclusion"},
       {"two-holders"}, "x <y>"},
  };
  const auto j = reports::matrix_json(rows, {7, "10 runs per cell", "lockstep matrix"});
  ASSERT_EQ(j["cells"].size(), 2u);
  EXPECT_EQ(j["cells"][0]["verdict"], "no-violation");
  EXPECT_TRUE(j["cells"][0]["counterexample"].is_null());
  EXPECT_EQ(j["cells"][1]["verdict"], "bug");
  EXPECT_EQ(j["cells"][1]["counterexample"], "a@1--pause/counterexample.json");
  EXPECT_EQ(j["cells"][1]["classes"], nlohmann::json::array({"two-holders"}));
  const std::string html = reports::render_matrix_html(rows, {7, "10 runs per cell", "lockstep matrix"});
  EXPECT_NE(html.find("<a href=\"a@1--pause/report.html\">report</a>"), std::string::npos);
  EXPECT_NE(html.find("lockstep run m/a@1--pause/counterexample.json"), std::string::npos);
  EXPECT_NE(html.find("x &lt;y&gt;"), std::string::npos);
  // Coloured and named by the most severe class, the details folded away.
  EXPECT_NE(html.find("<td class=\"broken cls-two-holders\""), std::string::npos) << html;
  EXPECT_NE(html.find("data-class=\"two-holders\"><b>bug: two-holders</b><details><summary>mutual-exclusion</summary>"),
            std::string::npos)
      << html;
  EXPECT_EQ(html.find("<script"), std::string::npos);
  const std::string md = reports::render_matrix_markdown(rows);
  EXPECT_NE(md.find("| a@1 | no-violation | **bug**: two-holders (mutual-exclusion) |"), std::string::npos) << md;
  // A limit is shown apart: pale, its class in the border, not bold in Markdown.
  rows[1].verdict = reports::matrix_verdict::kLimit;
  EXPECT_NE(reports::render_matrix_html(rows, {7, "", ""}).find("<td class=\"limit cls-two-holders\""),
            std::string::npos);
  EXPECT_NE(reports::render_matrix_markdown(rows).find("| limit: two-holders (mutual-exclusion) |"),
            std::string::npos);
}

}  // namespace
}  // namespace lockstep::runner
