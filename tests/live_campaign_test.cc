// Live campaigns (`lockstep live --repeat N [--vary-faults]`): the schedule each run plays
// follows from (campaign seed, run index) alone, within the stated range and the run; the
// summary counts runs by what they broke; a saved schedule replays with plain `lockstep
// live FILE` and breaks the same way; bad option values are refused with a reason.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "lockstep/live/client_process.h"
#include "lockstep/live/redis_server.h"
#include "lockstep/runner/live_campaign.h"
#include "test_shell.h"

namespace lockstep::runner {
namespace {

namespace fs = std::filesystem;

const std::string kClients = std::string(LOCKSTEP_SOURCE_DIR) + "/tests/data/clients/";

Scenario parse(const std::string& json, const std::string& file = "") {
  auto r = parse_scenario(json, file);
  if (auto* e = std::get_if<ScenarioError>(&r)) ADD_FAILURE() << e->message();
  return std::get<Scenario>(r);
}

// One timed fault and one on an event: both kinds of time a campaign moves.
const char* kTwoFaults = R"({"name": "two-faults", "seed": 5, "duration_ms": 2000, "worlds": ["sim", "live"],
  "lock": {"algorithm": "set-px-lua", "lease_ms": 1000},
  "workload": {"clients": 1, "initial_stock": 1, "hold_ms": 300},
  "faults": [{"kind": "pause", "target": "client-1", "duration_ms": 10, "on": {"process": "client-1", "enters": "critical-section"}},
             {"kind": "pause", "target": "node-1", "at_ms": 400, "duration_ms": 10}],
  "expect": {"violations": []}})";

TEST(CampaignSchedule, EachRunsScheduleFollowsFromTheCampaignSeedAndItsIndexAlone) {
  const Scenario s = parse(kTwoFaults);
  const VaryRange range{50, 100};
  std::set<std::pair<int64_t, int64_t>> drawn;
  for (uint64_t i = 1; i <= 40; ++i) {
    const Scenario a = campaign_run_scenario(s, 7, i, 40, range);
    // Drawn again later, after other draws: the same run.
    EXPECT_EQ(a, campaign_run_scenario(s, 7, i, 40, range)) << "run " << i;
    EXPECT_EQ(a.seed, campaign_run_seed(7, i));
    const int64_t delay = a.faults[0].on->delay_ms, at = a.faults[1].at_ms;
    // 0 ms after the event moves by the 100 ms floor, never below 0; 400 ms by half of it.
    EXPECT_TRUE(delay >= 0 && delay <= 100) << delay;
    EXPECT_TRUE(at >= 200 && at <= 600) << at;
    drawn.insert({delay, at});
    // Nothing else of the fault moves.
    EXPECT_EQ(a.faults[0].duration_ms, 10);
    EXPECT_EQ(a.faults[1].target, "node-1");
  }
  EXPECT_GT(drawn.size(), 30u) << "the times are drawn, not fixed";
  EXPECT_EQ(campaign_run_scenario(s, 7, 3, 40, range).name, "two-faults-run-03");
  EXPECT_NE(campaign_run_scenario(s, 7, 3, 40, range).faults, campaign_run_scenario(s, 8, 3, 40, range).faults);
  // Without a range only the seed changes.
  const Scenario plain = campaign_run_scenario(s, 7, 3, 40, std::nullopt);
  EXPECT_EQ(plain.faults, s.faults);
  EXPECT_EQ(plain.seed, campaign_run_seed(7, 3));
}

TEST(CampaignSchedule, TimesStayWithinTheRun) {
  Scenario s = parse(kTwoFaults);
  s.faults[1].at_ms = 1990;
  for (uint64_t i = 1; i <= 50; ++i) {
    const Scenario a = campaign_run_scenario(s, 1, i, 50, VaryRange{100, 2000});
    EXPECT_LT(a.faults[1].at_ms, s.duration_ms);
    EXPECT_LE(a.faults[0].on->delay_ms, s.duration_ms);
    EXPECT_GE(a.faults[1].at_ms, 0);
  }
}

TEST(CampaignSchedule, RangesAreReadOrRefusedWithTheReason) {
  VaryRange r;
  EXPECT_EQ(parse_vary_range("30%", r), "");
  EXPECT_EQ(r, (VaryRange{30, 0}));
  EXPECT_EQ(parse_vary_range("250ms", r), "");
  EXPECT_EQ(r, (VaryRange{0, 250}));
  EXPECT_EQ(parse_vary_range("50%,100ms", r), "");
  EXPECT_EQ(r, (VaryRange{50, 100}));
  EXPECT_EQ(vary_range_text(r), "50%,100ms");
  EXPECT_NE(parse_vary_range("150%", r).find("at most 100%"), std::string::npos);
  EXPECT_NE(parse_vary_range("-5%", r).find("expected P%"), std::string::npos);
  EXPECT_NE(parse_vary_range("5s", r).find("found \"5s\""), std::string::npos);
  EXPECT_NE(parse_vary_range("0%", r).find("moves no fault"), std::string::npos);
  EXPECT_NE(parse_vary_range("10%,20%", r).find("expected"), std::string::npos);
  const Scenario s = parse(kTwoFaults);
  EXPECT_EQ(vary_range_problem(VaryRange{50, 100}, s), "");
  EXPECT_NE(vary_range_problem(VaryRange{50, 5000}, s).find("longer than the scenario's run (duration_ms 2000)"),
            std::string::npos);
  Scenario none = s;
  none.faults.clear();
  EXPECT_NE(vary_range_problem(VaryRange{}, none).find("no faults"), std::string::npos);
}

TEST(CampaignSchedule, TheSummaryCountsRunsByWhatTheyBroke) {
  LiveCampaignSummary sum;
  reports::RunReport safe, unknown, lost, two;
  safe.verdict = reports::verdict::kSafe;
  unknown.verdict = reports::verdict::kUnknown;
  lost.verdict = two.verdict = reports::verdict::kViolation;
  checker::Violation v;
  v.property = checker::Property::Linearizability;
  v.severity = checker::Severity::LeaseLost;
  lost.violations.push_back(v);
  two.violations.push_back(v);
  v.property = checker::Property::MutualExclusion;
  v.severity = checker::Severity::TwoHolders;
  two.violations.push_back(v);
  for (const auto* r : {&safe, &two, &unknown, &lost, &two}) sum.add(*r);
  EXPECT_EQ(sum.runs, 5u);
  EXPECT_EQ(sum.broken, 3u);
  EXPECT_EQ(sum.safe, 1u);
  EXPECT_EQ(sum.unknown, 1u);
  EXPECT_EQ(sum.by_worst_class, (std::map<std::string, uint64_t>{{"two-holders", 2}, {"lease-lost", 1}}));
  EXPECT_EQ(sum.by_class, (std::map<std::string, uint64_t>{{"two-holders", 2}, {"lease-lost", 3}}));
  EXPECT_EQ(sum.break_rate_text(), "3 of 5 runs broke (60%)");
}

// A saved schedule reaches the client program from where it is saved.
TEST(CampaignSchedule, ASavedClientScenarioReachesItsProgramFromItsFolder) {
  const Scenario s = parse(R"({"duration_ms": 2000, "worlds": ["live"], "lock": {"lease_ms": 1000},
    "workload": {"kind": "external", "command": ["bash", "shell_stock.sh", "--x"], "clients": 1}, "expect": {"violations": []}})",
                           kClients + "scenario.json");
  const fs::path dir = fs::path(::testing::TempDir()) / "lockstep-rebase" / "a-run-1";
  fs::create_directories(dir);
  const Scenario saved = rebased_to(s, dir);
  ASSERT_EQ(saved.workload.command.size(), 3u);
  EXPECT_EQ(saved.workload.command[0], "bash");
  EXPECT_EQ(saved.workload.command[2], "--x");
  EXPECT_TRUE(fs::exists(dir / saved.workload.command[1])) << saved.workload.command[1];
  EXPECT_TRUE(fs::path(saved.workload.command[1]).is_relative());
  // A program without a '/' is looked up in PATH, even when the folder holds a file of
  // that name; with one, it is a path like any other.
  Scenario named = s;
  named.workload.command = {"shell_stock.sh", "./shell_stock.sh"};
  const Scenario saved_named = rebased_to(named, dir);
  EXPECT_EQ(saved_named.workload.command[0], "shell_stock.sh");
  EXPECT_TRUE(fs::exists(dir / saved_named.workload.command[1])) << saved_named.workload.command[1];
}

struct Cli {
  int code;
  std::string out;
};

Cli lockstep(const std::string& args) {
  const auto r = test_shell::run("COLUMNS=300 " + std::string(LOCKSTEP_BINARY) + " " + args + " 2>&1");
  return {r.code, r.out};
}

std::string write_scenario(const std::string& name, const std::string& json) {
  const fs::path p = fs::path(::testing::TempDir()) / (name + ".json");
  std::ofstream(p) << json;
  return p.string();
}

TEST(CampaignOptions, BadValuesAreRefusedWithTheReason) {
  const std::string file = write_scenario("two-faults", kTwoFaults);
  const struct {
    std::string args, says;
  } cases[] = {
      {"--repeat 0 " + file, "--repeat: expected a number of runs from 1 to 10000, found 0"},
      {"--repeat 20000 " + file, "found 20000"},
      {"--vary-faults " + file, "--vary-faults needs --repeat N"},
      {"--seed 3 " + file, "--seed needs --repeat N"},
      {"--repeat 2 --vary-range 10% " + file, "--vary-range needs --vary-faults"},
      {"--repeat 2 --vary-faults --vary-range 150% " + file, "at most 100%"},
      {"--repeat 2 --vary-faults --vary-range 9000ms " + file, "longer than the scenario's run (duration_ms 2000)"},
      {"--repeat 2 --vary-faults --vary-range soon " + file, "expected P% (of each fault's time), Nms"},
      {"--repeat 2 " + std::string(LOCKSTEP_SOURCE_DIR) + "/scenarios/external", "--repeat runs one scenario file"},
  };
  for (const auto& c : cases) {
    const Cli r = lockstep("live --out " + ::testing::TempDir() + "/lockstep-bad-campaign " + c.args);
    EXPECT_EQ(r.code, 64) << c.args << "\n" << r.out;
    EXPECT_NE(r.out.find(c.says), std::string::npos) << c.args << "\n" << r.out;
  }
  // Nothing to vary, or nothing the live world can play: said before any server starts.
  const std::string calm = write_scenario("calm", R"({"duration_ms": 2000, "worlds": ["live"], "lock": {"algorithm": "set-px-lua"},
    "workload": {"clients": 1}, "expect": {"violations": []}})");
  Cli r = lockstep("live --repeat 2 --vary-faults " + calm);
  EXPECT_EQ(r.code, 64) << r.out;
  EXPECT_NE(r.out.find("--vary-faults on " + calm + ": the scenario has no faults to move"), std::string::npos) << r.out;
  const std::string sim_only = write_scenario("sim-only", R"({"duration_ms": 2000, "lock": {"algorithm": "set-px-lua"},
    "workload": {"clients": 1}, "expect": {"violations": []}})");
  r = lockstep("live --repeat 2 " + sim_only);
  EXPECT_EQ(r.code, 65) << r.out;
  EXPECT_NE(r.out.find(sim_only + " cannot run live: "), std::string::npos) << r.out;
  const Cli help = lockstep("help live");
  for (const char* option : {"--repeat", "--vary-faults", "--vary-range", "--seed"})
    EXPECT_NE(help.out.find(option), std::string::npos) << option << "\n" << help.out;
}

bool can_run() { return !live::find_redis_server().empty() && !live::resolve_program("redis-cli", "").empty(); }

#define SKIP_WITHOUT_REDIS() \
  if (!can_run()) GTEST_SKIP() << "redis-server and redis-cli are needed: live tests start their own"

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Two campaigns with one seed play the same schedules, saved as the same files; another
// seed draws others. lockstep's own lock, so that the runs are short.
TEST(LiveCampaign, TheSameCampaignSeedSavesTheSameSchedules) {
  SKIP_WITHOUT_REDIS();
  const std::string file = write_scenario("two-faults", kTwoFaults);
  const std::string out = ::testing::TempDir() + "/lockstep-campaign-seed";
  fs::remove_all(out);
  for (const char* dir : {"a", "b", "c"}) {
    const std::string seed = std::string(dir) == "c" ? "12" : "11";
    const Cli r = lockstep("live --repeat 2 --vary-faults --seed " + seed + " --out " + out + "/" + dir + " " + file);
    EXPECT_NE(r.out.find("campaign: two-faults runs=2 seed=" + seed), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("vary-faults: ±50% of each fault's time, at least ±100ms"), std::string::npos) << r.out;
  }
  for (const char* run : {"two-faults-run-1", "two-faults-run-2"}) {
    const std::string a = read(fs::path(out) / "a" / run / "scenario.json");
    ASSERT_FALSE(a.empty()) << run;
    EXPECT_EQ(a, read(fs::path(out) / "b" / run / "scenario.json")) << run;
    const auto ja = nlohmann::json::parse(a), jc = nlohmann::json::parse(read(fs::path(out) / "c" / run / "scenario.json"));
    EXPECT_NE(ja["faults"], jc["faults"]) << run;
    EXPECT_EQ(ja["seed"], campaign_run_seed(11, std::string(run).back() - '0'));
  }
  const auto summary = nlohmann::json::parse(read(fs::path(out) / "a" / "summary.json"));
  EXPECT_EQ(summary["runs"], 2);
  EXPECT_EQ(summary["vary_range"], "50%,100ms");
  EXPECT_EQ(summary["broken"].get<int>() + summary["safe"].get<int>() + summary["unknown"].get<int>(), 2);
  // The index lists both runs under the campaign's counts.
  const std::string index = read(fs::path(out) / "a" / "index.html");
  EXPECT_NE(index.find("<p>A campaign of 2 runs of two-faults (campaign seed 11): "), std::string::npos) << index;
  EXPECT_NE(index.find("two-faults-run-2/report.html"), std::string::npos);
  // The campaign's folder replays every run it saved; its summary is passed over.
  const Cli again = lockstep("live --out " + out + "/again " + out + "/a");
  EXPECT_NE(again.out.find("2 scenarios run live: "), std::string::npos) << again.out;
}

// Race 5 with a client written from the docs (bash and redis-cli): client-1 is stopped for
// 3 s under a 1 s lease, 0-50 ms after its stock read's reply (its work takes 400 ms more,
// so the pause lands inside it on every draw); client-2 starts 1.5 s after it, 500 ms after
// the lease ran out, and is done long before client-1 wakes. Every run breaks with two
// holders, and a saved schedule replayed alone breaks the same way.
TEST(LiveCampaign, ARacyExternalClientBreaksAndASavedScheduleReplaysTheBreak) {
  SKIP_WITHOUT_REDIS();
  const std::string file = write_scenario("campaign-race", R"({"seed": 21, "duration_ms": 10000, "worlds": ["live"], "lock": {"lease_ms": 1000},
    "workload": {"kind": "external", "command": ["bash", ")" + kClients + R"(shell_stock.sh"], "clients": 2, "initial_stock": 10,
                 "hold_ms": 400, "wait_ms": 3000, "start_stagger_ms": 1500},
    "faults": [{"kind": "pause", "target": "client-1", "duration_ms": 3000,
                "on": {"process": "client-1", "receives": "GET", "key": "stock"}}],
    "expect": {"violations": ["lost-update", "mutual-exclusion"]}})");
  const std::string out = ::testing::TempDir() + "/lockstep-campaign-race";
  fs::remove_all(out);
  const Cli r = lockstep("live --repeat 2 --vary-faults --vary-range 50ms --out " + out + " " + file);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("2 of 2 runs broke (100%), 0 safe, 0 unknown; by most severe class: two-holders 2"),
            std::string::npos)
      << r.out;
  const fs::path saved = fs::path(out) / "campaign-race-run-2" / "scenario.json";
  EXPECT_NE(r.out.find("two-holders in 2 runs, the first: lockstep live " +
                       (fs::path(out) / "campaign-race-run-1" / "scenario.json").string()),
            std::string::npos)
      << r.out;
  const auto summary = nlohmann::json::parse(read(fs::path(out) / "summary.json"));
  EXPECT_EQ(summary["broken"], 2);
  EXPECT_EQ(summary["by_worst_class"], nlohmann::json({{"two-holders", 2}}));
  EXPECT_EQ(summary["each_run"][1]["class"], "two-holders");
  const int64_t delay = summary["each_run"][1]["faults"][0]["on"]["delay_ms"];
  EXPECT_TRUE(delay >= 0 && delay <= 50) << delay;
  // The saved file is run from elsewhere: it finds its program from where it is.
  const Cli replay = lockstep("live --out " + out + "/replay " + saved.string());
  const auto report = nlohmann::json::parse(read(fs::path(out) / "replay" / "campaign-race-run-2" / "report.json"));
  std::set<std::string> classes;
  for (const auto& v : report["violations"]) classes.insert(v["class"].get<std::string>());
  EXPECT_TRUE(classes.count("two-holders")) << replay.out;
  EXPECT_EQ(report["faults"][0]["on"]["delay_ms"], delay) << report.dump().substr(0, 2000);
}

}  // namespace
}  // namespace lockstep::runner
