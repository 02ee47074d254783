// What a verdict means: a run that did not test what it describes is never safe, every
// violation says how bad it is, and an expectation means what a reader takes it to mean.
#include <gtest/gtest.h>

#include "checker_builder.h"
#include "lockstep/checker/invariants.h"
#include "lockstep/reports/writers.h"
#include "lockstep/runner/fuzz.h"
#include "lockstep/runner/sim_runner.h"
#include "scenario_files.h"

namespace lockstep::runner {
namespace {

Scenario parsed(const std::string& text) {
  auto r = parse_scenario(text, "verdict.json");
  if (auto* e = std::get_if<ScenarioError>(&r)) {
    ADD_FAILURE() << e->message();
    return {};
  }
  return std::get<Scenario>(r);
}

// Redisson's watchdog keeps the lock for client-1 while a 40 s pause stops it (and the
// watchdog) inside its critical section; the run ends at 20 s, before the 30 s lease
// runs out: nobody else ever got the lock, so nothing was tested.
Scenario pause_outlasts_the_run(const std::string& expect = R"({"violations": []})") {
  return parsed(R"({"seed": 7, "duration_ms": 20000,
    "lock": {"algorithm": "redisson", "lease_ms": 30000},
    "workload": {"clients": 5, "hold_ms": 100, "wait_ms": 60000, "start_stagger_ms": 5},
    "faults": [{"kind": "pause", "target": "client-1", "duration_ms": 40000,
                "on": {"process": "client-1", "enters": "critical-section"}}],
    "expect": )" + expect + "}");
}

TEST(Verdict, ARunWhoseWorkloadDidNotFinishIsUnknownNotSafe) {
  const RunOutcome o = run_in_sim(pause_outlasts_the_run());
  EXPECT_TRUE(o.report.violations.empty());
  EXPECT_EQ(o.report.verdict, reports::verdict::kUnknown);
  EXPECT_FALSE(o.report.as_expected()) << "an unknown verdict never meets \"safe\"";
  ASSERT_EQ(o.report.inconclusive.size(), 2u);
  EXPECT_EQ(o.report.inconclusive[0],
            "4 clients were still waiting for the lock when the run ended (client-2, client-3, client-4, client-5): "
            "the run did not see the workload through.");
  EXPECT_EQ(o.report.inconclusive[1],
            "1 client was still working when the run ended (client-1 in read): the run did not see the workload "
            "through.");
}

// The reason is in every output a person or a CI job reads.
TEST(Verdict, EveryOutputSaysWhyARunIsUnknown) {
  RunOutcome o = run_in_sim(pause_outlasts_the_run());
  const std::string why = "were still waiting for the lock when the run ended";
  const auto json = reports::to_json(o.report);
  EXPECT_EQ(json["verdict"], "unknown");
  EXPECT_EQ(json["as_expected"], false);
  ASSERT_TRUE(json["inconclusive"].is_array());
  EXPECT_NE(json["inconclusive"][0].get<std::string>().find(why), std::string::npos);
  EXPECT_NE(reports::render_markdown(o.report, o.history).find(why), std::string::npos);
  EXPECT_NE(reports::render_html(o.report, o.history).find(why), std::string::npos);
  const std::string junit = reports::render_junit({o.report}, "verdict");
  EXPECT_NE(junit.find("<failure type=\"unknown\""), std::string::npos) << junit;
  EXPECT_NE(junit.find(why), std::string::npos) << junit;
}

// A live run cannot promise a byte-identical replay, and its report does not.
TEST(Verdict, ALiveReportPromisesWhatALiveReplayKeeps) {
  RunOutcome o = run_in_sim(scenario_files::load("05-set-px-del-slow-holder.json"));
  EXPECT_NE(reports::render_html(o.report, o.history).find("byte-identical history"), std::string::npos);
  o.report.world = "live";
  const std::string html = reports::render_html(o.report, o.history);
  EXPECT_EQ(html.find("byte-identical"), std::string::npos);
  EXPECT_NE(html.find("each fault at the same time or event"), std::string::npos);
}

TEST(Verdict, AScenarioMayExpectUnknownAndThenMeetsIt) {
  const RunOutcome o = run_in_sim(pause_outlasts_the_run(R"({"verdict": "unknown"})"));
  EXPECT_EQ(o.report.verdict, reports::verdict::kUnknown);
  EXPECT_TRUE(o.report.as_expected());
  EXPECT_EQ(reports::to_json(o.report)["as_expected"], true);
  EXPECT_EQ(reports::to_json(o.report)["expected"], "unknown");
}

// A violation seen in a run that did not finish still happened: it stays a violation,
// with the gaps listed beside it.
TEST(Verdict, AViolationStandsInARunThatDidNotFinish) {
  reports::RunReport r;
  r.violations.push_back({checker::Property::MutualExclusion, "two at once", {1, 2}, 0});
  r.add_inconclusive("1 client was still waiting for the lock when the run ended (client-3).");
  r.settle_verdict();
  EXPECT_EQ(r.verdict, reports::verdict::kViolation);
  r.add_inconclusive("an external client went wrong, so its operations are unknown: x.", true);
  r.settle_verdict();
  EXPECT_EQ(r.verdict, reports::verdict::kUnknown) << "a reason that doubts the findings wins";
}

TEST(Verdict, FencingAskedOfALockWithoutTokensIsAnError) {
  auto r = parse_scenario(R"({"lock": {"algorithm": "set-px-lua"}, "workload": {"fencing": true},
                              "expect": {"violations": []}})",
                          "f.json");
  ASSERT_TRUE(std::holds_alternative<ScenarioError>(r));
  const auto& e = std::get<ScenarioError>(r);
  EXPECT_EQ(e.path, "$.workload.fencing");
  EXPECT_EQ(e.message(),
            "f.json: $.workload.fencing: expected false (lock algorithm \"set-px-lua\" hands out no fencing token; "
            "redisson-fenced does), found true");
  auto ok = parse_scenario(R"({"lock": {"algorithm": "redisson-fenced"}, "workload": {"fencing": true},
                               "expect": {"violations": []}})",
                           "f.json");
  EXPECT_TRUE(std::holds_alternative<Scenario>(ok));
}

// --- severity classes ---------------------------------------------------------------

std::map<std::string, std::string> classes_of(const std::string& file) {
  const RunOutcome o = run_in_sim(scenario_files::load(file));
  std::map<std::string, std::string> out;
  for (const auto& v : o.report.violations) out[checker::to_string(v.property)] = checker::to_string(v.severity);
  return out;
}

TEST(Verdict, EachViolationCarriesItsClass) {
  using M = std::map<std::string, std::string>;
  EXPECT_EQ(classes_of("05-set-px-del-slow-holder.json"),
            (M{{"mutual-exclusion", "two-holders"}, {"linearizability", "two-holders"}, {"lost-update", "damage"},
               {"foreign-unlock", "damage"}}));
  EXPECT_EQ(classes_of("08-set-px-lua-pause-in-unlock.json"), (M{{"linearizability", "lease-lost"}}));
  EXPECT_EQ(classes_of("01-setnx-crash-deadlock.json"), (M{{"deadlock", "stuck"}}));
  EXPECT_EQ(classes_of("44-redisson-order-under-contention.json"), (M{{"fairness", "unfair"}}));
  EXPECT_EQ(classes_of("38-redisson-rw-writer-gc-pause.json"),
            (M{{"mutual-exclusion", "two-holders"}, {"linearizability", "two-holders"}, {"stale-read", "damage"}}));
  EXPECT_EQ(classes_of("60-cache-aside-double-write-stale.json"), (M{{"stale-cache", "damage"}}));
}

// A lease lost under a holder that nobody overlapped is said in those words, and the
// class reaches report.json.
TEST(Verdict, ALeaseLostWithoutOverlapSaysSo) {
  const RunOutcome o = run_in_sim(scenario_files::load("08-set-px-lua-pause-in-unlock.json"));
  ASSERT_EQ(o.report.violations.size(), 1u);
  const std::string& s = o.report.violations[0].explanation;
  EXPECT_EQ(s.rfind("lease lost while held: process 3's acquire completed at t=1.003s while process 1 still held", 0), 0u)
      << s;
  EXPECT_NE(s.find("but no two critical sections overlapped"), std::string::npos) << s;
  EXPECT_EQ(reports::to_json(o.report)["violations"][0]["class"], "lease-lost");
  EXPECT_EQ(reports::found_text(o.report), "lease-lost: linearizability");
}

// The reports draw lease deadlines from the lease the judgment found: a profile's own
// option in its unit, left out its library's default.
TEST(Verdict, TheReportSaysTheLeaseTheLockSets) {
  const std::string base = R"({"duration_ms": 3000, "lock": {"profile": "redsync@4.17.0", "options": )";
  EXPECT_EQ(run_in_sim(parsed(base + R"({"expiry": 1200}}, "expect": {"violations": []}})")).report.stats["lease_ms"],
            1200);
  EXPECT_EQ(run_in_sim(parsed(base + R"({}}, "expect": {"violations": []}})")).report.stats["lease_ms"], 8000);
  EXPECT_EQ(run_in_sim(scenario_files::load("05-set-px-del-slow-holder.json")).report.stats["lease_ms"], 1000);
}

// --- expectations -------------------------------------------------------------------

reports::RunReport found(std::vector<std::pair<std::string, checker::Severity>> vs) {
  reports::RunReport r;
  for (auto& [p, c] : vs) {
    checker::Violation v{*checker::property_named(p), "", {}, 0};
    v.severity = c;
    r.violations.push_back(v);
  }
  r.settle_verdict();
  return r;
}

TEST(Verdict, ListedPropertiesMeanAtLeastTheseAndExactlyMeansExactly) {
  using S = checker::Severity;
  const auto overlap = found({{"mutual-exclusion", S::TwoHolders}, {"linearizability", S::TwoHolders}});
  // The trap of the old exact lists: every overlap also breaks linearizability.
  EXPECT_TRUE(reports::Expectation::at_least({"mutual-exclusion"}).met_by(overlap));
  EXPECT_TRUE(reports::Expectation::at_least({"two-holders"}).met_by(overlap));
  EXPECT_FALSE(reports::Expectation::at_least({"mutual-exclusion", "lost-update"}).met_by(overlap));
  EXPECT_FALSE(reports::Expectation::exactly({"mutual-exclusion"}).met_by(overlap));
  EXPECT_TRUE(reports::Expectation::exactly({"linearizability", "mutual-exclusion"}).met_by(overlap));
  EXPECT_FALSE(reports::Expectation::safe().met_by(overlap));
  EXPECT_TRUE(reports::Expectation::at_least({}).met_by(overlap)) << "\"verdict\": \"violation\": any";
  EXPECT_TRUE(reports::Expectation::safe().met_by(found({})));
  EXPECT_FALSE(reports::Expectation::at_least({}).met_by(found({})));
}

TEST(Verdict, TheExpectFormsReadAndWriteBack) {
  const std::string base = R"({"lock": {"algorithm": "set-px-lua"}, "expect": )";
  EXPECT_EQ(parsed(base + R"({"violations": ["mutual-exclusion"]}})").expect,
            reports::Expectation::at_least({"mutual-exclusion"}));
  EXPECT_EQ(parsed(base + R"({"violations": ["lease-lost"]}})").expect, reports::Expectation::at_least({"lease-lost"}));
  EXPECT_EQ(parsed(base + R"({"exactly": ["lost-update", "mutual-exclusion"]}})").expect,
            reports::Expectation::exactly({"lost-update", "mutual-exclusion"}));
  EXPECT_EQ(parsed(base + R"({"exactly": []}})").expect, reports::Expectation::safe());
  EXPECT_EQ(parsed(base + R"({"verdict": "unknown"}})").expect, reports::Expectation::unknown());
  EXPECT_EQ(parsed(base + R"({"verdict": "violation"}})").expect, reports::Expectation::at_least({}));
  for (const char* e : {R"({"violations": ["deadlock"]})", R"({"exactly": ["deadlock", "fencing"]})",
                        R"({"verdict": "unknown"})", R"({"verdict": "violation"})", R"({"violations": []})"}) {
    const Scenario s = parsed(base + e + "}");
    EXPECT_EQ(parsed(to_json(s).dump()).expect, s.expect) << e;
  }
  auto two = parse_scenario(base + R"({"violations": [], "verdict": "safe"}})", "x.json");
  ASSERT_TRUE(std::holds_alternative<ScenarioError>(two));
  EXPECT_EQ(std::get<ScenarioError>(two).path, "$.expect");
  auto cls = parse_scenario(base + R"({"exactly": ["two-holders"]}})", "x.json");
  ASSERT_TRUE(std::holds_alternative<ScenarioError>(cls)) << "an exact list names properties only";
  EXPECT_EQ(std::get<ScenarioError>(cls).path, "$.expect.exactly[0]");
}

// --- fairness -----------------------------------------------------------------------

checker::History line_of_three() {
  // client-2 asks at 30 ms and client-3 at 40 ms while client-1 holds; client-3 is served
  // first, at 70 ms, with client-2 still waiting.
  checker::Builder b;
  b.op(1, "acquire", nullptr, nullptr, "lock")
      .invoke(2, "acquire", nullptr, "lock")
      .invoke(3, "acquire", nullptr, "lock")
      .op(1, "release", nullptr, nullptr, "lock")
      .ok(3, "acquire", nullptr, "lock")
      .op(3, "release", nullptr, nullptr, "lock")
      .ok(2, "acquire", nullptr, "lock");
  return b.history();
}

TEST(Verdict, AFairLockServingALaterClientFirstIsUnfair) {
  checker::InvariantOptions o;
  o.fair = true;
  const auto v = checker::check_fairness(line_of_three(), o);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].property, checker::Property::Fairness);
  EXPECT_EQ(v[0].severity, checker::Severity::Unfair);
  EXPECT_EQ(v[0].explanation,
            "client-3 was served at t=0.070s (it asked at t=0.040s) while client-2, which had asked at t=0.030s, was "
            "still waiting: a fair lock serves in arrival order.");
  EXPECT_EQ(v[0].processes, (std::vector<int64_t>{3, 2}));
  // Asks closer together than the margin are one moment: the network may swap them.
  o.fairness_margin_ns = 15'000'000;
  EXPECT_TRUE(checker::check_fairness(line_of_three(), o).empty());
  o.fair = false;
  o.fairness_margin_ns = 0;
  EXPECT_TRUE(checker::check_fairness(line_of_three(), o).empty()) << "only a lock that promises order";
}

TEST(Verdict, FairnessIsJudgedOnFairLocksAndWhereAScenarioAsks) {
  const auto fair = run_in_sim(scenario_files::load("43-redisson-fair-order-under-contention.json"));
  EXPECT_EQ(fair.report.verdict, reports::verdict::kSafe);
  const auto plain = run_in_sim(scenario_files::load("44-redisson-order-under-contention.json"));
  EXPECT_EQ(plain.report.found_violations(), std::set<std::string>{"fairness"});
  Scenario unasked = scenario_files::load("44-redisson-order-under-contention.json");
  unasked.check_fairness.reset();
  EXPECT_EQ(run_in_sim(unasked).report.verdict, reports::verdict::kSafe) << "the plain lock promises no order";
  const auto skew = run_in_sim(scenario_files::load("profiles/redisson-3.43.0-fair-lock-skewed-clock-jumps-the-queue.json"));
  ASSERT_EQ(skew.report.found_violations(), std::set<std::string>{"fairness"});
  EXPECT_NE(skew.report.violations[0].explanation.find("client-4 was served"), std::string::npos)
      << skew.report.violations[0].explanation;
}

// --- campaigns ----------------------------------------------------------------------

// With every fault kind a campaign meets a lease lost without harm before two holders;
// --stop-on two-holders passes over it, counts it, and stops on the real collision.
TEST(Verdict, AFuzzCampaignStopsOnlyOnTheClassesAskedFor) {
  FuzzSpace all;
  all.locks = {"set-px-lua"};
  all.fault_kinds = {FaultKind::Pause};
  FuzzOptions o;
  o.seed = 1;
  o.runs = 300;
  const FuzzSummary any = fuzz(all, o);
  ASSERT_TRUE(any.finding);
  EXPECT_EQ(any.finding->outcome.report.found_classes(), std::set<std::string>{"lease-lost"});
  FuzzSpace strict = all;
  ASSERT_EQ(parse_stop_on("two-holders", strict), "");
  EXPECT_EQ(strict.classes, std::set<checker::Severity>{checker::Severity::TwoHolders});
  const FuzzSummary two = fuzz(strict, o);
  ASSERT_TRUE(two.finding);
  EXPECT_GE(two.runs, any.runs);
  EXPECT_TRUE(two.finding->outcome.report.found_classes().count("two-holders"));
  EXPECT_GE(two.by_class.at("lease-lost"), 1u) << "passed over, and counted";
  EXPECT_EQ(parse_stop_on("two-holder", strict),
            "unknown class or property \"two-holder\" (did you mean \"two-holders\"?): classes two-holders, damage, "
            "lease-lost, stuck, unfair; properties mutual-exclusion, lost-update, foreign-unlock, deadlock, "
            "linearizability, fencing, stale-read, stale-cache, fairness, false-extend");
}

// A client that crashed before its start time and came back starts once, and a client
// that comes back after a crash is a new process to the lock: such runs get a verdict
// (they used to end unknown, the lock's history unreadable to the checker).
TEST(Verdict, ClientsThatCrashAndComeBackAreJudged) {
  const Scenario s = parsed(R"({"seed": 3927, "duration_ms": 6000,
    "lock": {"algorithm": "set-px-lua", "lease_ms": 500},
    "workload": {"clients": 3, "attempts_per_client": 2, "hold_ms": 10, "wait_ms": 3000, "start_stagger_ms": 5},
    "faults": [{"kind": "crash", "target": "client-3", "at_ms": 3, "restart_after_ms": 51},
               {"kind": "crash", "target": "client-2", "at_ms": 7, "restart_after_ms": 30},
               {"kind": "crash", "target": "client-3", "at_ms": 8, "restart_after_ms": 1}],
    "expect": {"violations": []}})");
  const RunOutcome o = run_in_sim(s);
  EXPECT_EQ(o.report.verdict, reports::verdict::kSafe) << reports::found_text(o.report) << "\n" << o.history_jsonl;
  int starts = 0;
  for (const auto& e : o.history.events) {
    starts += e.process == 3 && e.type == checker::EventType::Invoke && checker::is_acquire(e.f) && e.time_ns < 20'000'000;
  }
  EXPECT_EQ(starts, 1) << "client-3 began its workload once";
}

}  // namespace
}  // namespace lockstep::runner
