// Registering a lock of one's own (lockstep/algorithms.h) and checking claims about it
// (lockstep/runner/claims.h), with the example project's lease lock: scenario files,
// the fuzzer, the matrix and both worlds must treat it like a built-in algorithm.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "../examples/cpp-user-lock/lease_lock.h"
#include "live_support.h"
#include "lockstep/algorithms.h"
#include "lockstep/locks.h"
#include "lockstep/profiles.h"
#include "lockstep/reports/writers.h"
#include "lockstep/runner/claims_gtest.h"
#include "lockstep/runner/fuzz.h"
#include "lockstep/runner/matrix.h"
#include "lockstep/runner/sim_runner.h"

namespace lockstep::runner {
namespace {

namespace fs = std::filesystem;

const std::string kExample = std::string(LOCKSTEP_SOURCE_DIR) + "/examples/cpp-user-lock/scenarios/";

// Each test leaves the registry as it found it, so suites iterating algorithm_names()
// never meet the example's locks.
class Registry : public ::testing::Test {
 protected:
  void SetUp() override { acme::register_lease_locks(); }
  void TearDown() override {
    unregister_algorithm("lease-lock");
    unregister_algorithm("lease-lock-v1");
    unregister_algorithm("three-node-lease");
  }
};

AlgorithmInfo info(std::string name) {
  AlgorithmInfo a;
  a.name = std::move(name);
  a.make = [](Env& env, const LockParams& p) { return std::make_unique<acme::LeaseLock>(env, p, true); };
  return a;
}

std::string registration_error(AlgorithmInfo a) {
  try {
    register_algorithm(std::move(a));
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

// A library's lock of one's own, registered as a profile from the installed headers: its
// options spelled as the library spells them, its lease one of them. Scenario files name
// it like any profile, and the scenario reader, the fuzzer and the reports use its table.
TEST(RegistryProfile, AProgramRegistersALibrarysLockAsAProfile) {
  LockInfo acme;
  acme.name = "acme-lock@2.1";
  acme.library = "acme-lock";
  acme.version = "2.1";
  acme.description = "Acme's lock: SET NX PX with a TTL in seconds, compare-and-delete to unlock";
  acme.options = std::vector<LockOption>{
      {"ttlSeconds", LockOption::Type::Number, 5, 0.001, 3600, {}, true, 1000, "how long the key lives (s)"}};
  acme.lease_option = "ttlSeconds";
  acme.make_with_options = [](const LockInfo& info, Env& env, const std::string& key, const nlohmann::json& options) {
    LockParams p;
    p.key = key;
    p.lease = Millis(static_cast<int64_t>(ProfileOptions(info, options).number("ttlSeconds") * 1000));
    return std::unique_ptr<Lock>(std::make_unique<acme::LeaseLock>(env, p, true));
  };
  register_lock(acme);
  struct Cleanup {
    ~Cleanup() { unregister_lock("acme-lock@2.1"); }
  } cleanup;
  ASSERT_NE(profile_named("acme-lock@2.1"), nullptr);
  EXPECT_EQ(profile_names().back(), "acme-lock@2.1");
  // A pause longer than its 1 s TTL breaks it, as any lease lock.
  auto r = parse_scenario(R"({"seed": 3, "lock": {"profile": "acme-lock@2.1", "options": {"ttlSeconds": 1}},
    "workload": {"clients": 2, "hold_ms": 100, "wait_ms": 5000, "start_stagger_ms": 5},
    "faults": [{"kind": "pause", "target": "client-1", "at_ms": 50, "duration_ms": 1500}],
    "expect": {"violations": ["mutual-exclusion"]}})", "acme.json");
  ASSERT_TRUE(std::holds_alternative<Scenario>(r)) << std::get<ScenarioError>(r).message();
  const RunOutcome o = run_in_sim(std::get<Scenario>(r));
  EXPECT_TRUE(o.report.as_expected()) << reports::found_text(o.report) << "\n" << o.history_jsonl;
  EXPECT_EQ(o.report.stats["lease_ms"], 1000);
  auto bad = parse_scenario(R"({"lock": {"algorithm": "acme-lock@2.1", "options": {"ttl": 1}}, "expect": {"verdict": "safe"}})",
                            "acme.json");
  ASSERT_TRUE(std::holds_alternative<ScenarioError>(bad));
  EXPECT_EQ(std::get<ScenarioError>(bad).path, "$.lock.options.ttl");
}

TEST_F(Registry, RegisteredLocksFollowTheBuiltInsInOrder) {
  const auto& names = algorithm_names();
  ASSERT_GE(names.size(), 2u);
  EXPECT_EQ(names.front(), "setnx");
  EXPECT_EQ(names[names.size() - 2], "lease-lock-v1");
  EXPECT_EQ(names.back(), "lease-lock");
  EXPECT_EQ(find_algorithm("redlock")->nodes, 3);
  EXPECT_EQ(find_algorithm("lease-lock")->options->front().name, "attempts_max");
}

TEST_F(Registry, BadRegistrationsAreRefusedWithTheReason) {
  EXPECT_NE(registration_error(info("lease-lock")).find("already taken by an algorithm registered before"),
            std::string::npos);
  EXPECT_NE(registration_error(info("redlock")).find("already taken by a built-in algorithm"), std::string::npos);
  EXPECT_NE(registration_error(info("")).find("the name is empty"), std::string::npos);
  EXPECT_NE(registration_error(info("my lock")).find("may only hold letters"), std::string::npos);
  AlgorithmInfo no_factory = info("no-factory");
  no_factory.make = nullptr;
  EXPECT_NE(registration_error(no_factory).find("no factory"), std::string::npos);
  AlgorithmInfo no_nodes = info("no-nodes");
  no_nodes.nodes = 0;
  EXPECT_NE(registration_error(no_nodes).find("nodes must be from 1 to 16"), std::string::npos);
  AlgorithmInfo twice = info("twice");
  twice.options = std::vector<LockOption>{integer_option("a", 0, 0, 1, ""), integer_option("a", 0, 0, 1, "")};
  EXPECT_NE(registration_error(twice).find("option \"a\" is listed twice"), std::string::npos);
  AlgorithmInfo backwards = info("backwards");
  backwards.options = std::vector<LockOption>{integer_option("a", 5, 5, 1, "")};
  EXPECT_NE(registration_error(backwards).find("min > max"), std::string::npos);
  EXPECT_FALSE(is_algorithm("no-factory") || is_algorithm("twice") || is_algorithm("backwards"));
}

TEST_F(Registry, OnlyRegisteredAlgorithmsCanBeRemoved) {
  EXPECT_FALSE(unregister_algorithm("redlock"));
  EXPECT_FALSE(unregister_algorithm("never-registered"));
  EXPECT_TRUE(unregister_algorithm("lease-lock"));
  EXPECT_FALSE(is_algorithm("lease-lock"));
  EXPECT_TRUE(is_algorithm("redlock"));
}

std::string lock_json(const std::string& lock) {
  return R"({"lock": )" + lock + R"(, "workload": {"clients": 2}, "expect": {"violations": []}})";
}

std::string parse_error(const std::string& text) {
  auto r = parse_scenario(text, "s.json");
  if (auto* e = std::get_if<ScenarioError>(&r)) return e->message();
  return "";
}

TEST_F(Registry, ScenarioOptionsAreCheckedAgainstTheSchema) {
  EXPECT_EQ(parse_error(lock_json(R"({"algorithm": "lease-lock", "options": {"attempts_max": 3}})")), "");
  EXPECT_EQ(parse_error(lock_json(R"({"algorithm": "lease-lock", "options": {"attempts_mx": 3}})")),
            "s.json: $.lock.options.attempts_mx: expected an option of lease-lock (did you mean \"attempts_max\"?), "
            "found unknown key \"attempts_mx\"");
  EXPECT_EQ(parse_error(lock_json(R"({"algorithm": "lease-lock", "options": {"attempts_max": 0}})")),
            "s.json: $.lock.options.attempts_max: expected a positive integer, found 0");
  EXPECT_EQ(parse_error(lock_json(R"({"algorithm": "lease-lock", "options": {"attempts_max": "3"}})")),
            "s.json: $.lock.options.attempts_max: expected a positive integer, found \"3\"");
  unregister_algorithm("lease-lock");
  // Once removed, the name is unknown again, and the list offers what remains.
  const std::string gone = parse_error(lock_json(R"({"algorithm": "lease-lock"})"));
  EXPECT_NE(gone.find("mysql-table-fenced, lease-lock-v1, found \"lease-lock\""), std::string::npos) << gone;
}

TEST_F(Registry, ScenarioFilesRunTheRegisteredLockInTheSimulator) {
  for (const char* file : {"lease-lock-v1-long-pause.json", "lease-lock-long-pause.json"}) {
    ScenarioVerdict v = run_scenario_file(kExample + file);
    EXPECT_TRUE(v.as_expected) << v.message();
    ASSERT_EQ(v.reports.size(), 1u);
    EXPECT_EQ(v.reports[0].algorithm, std::string(file).starts_with("lease-lock-v1") ? "lease-lock-v1" : "lease-lock");
  }
  EXPECT_NE(run_scenario_file(kExample + "missing.json").error.find("missing.json"), std::string::npos);
}

TEST_F(Registry, ScenarioFilesRunTheRegisteredLockLive) {
  if (!live_support::has_redis()) GTEST_SKIP() << "no redis-server installed";
  for (const char* file : {"lease-lock-v1-long-pause.json", "lease-lock-long-pause.json"}) {
    ScenarioVerdict v = run_scenario_file(kExample + file, true);
    ASSERT_EQ(v.reports.size(), 2u) << v.message();
    EXPECT_EQ(v.reports[1].world, "live");
    EXPECT_TRUE(v.reports[1].found_violations().count("mutual-exclusion")) << v.message();
    EXPECT_EQ(v.reports[1].found_violations().count("foreign-unlock") > 0,
              std::string(file).starts_with("lease-lock-v1"))
        << v.message();
  }
}

ClaimOptions claim_options(const fs::path& dir) {
  ClaimOptions o;
  o.seed = 1;
  o.runs = 1000;
  o.out_dir = dir.string();
  return o;
}

const Claim kOnlyOwnerUnlocks{{"foreign-unlock", "deadlock"}, {FaultKind::Pause, FaultKind::Crash}};

TEST_F(Registry, ClaimCatchesTheForeignUnlockAndPassesTheFixUnderTheSameSeed) {
  const fs::path dir = fs::temp_directory_path() / ("lockstep-claims-" + std::to_string(::getpid()));
  auto buggy = std::get<ClaimResult>(check_claim("lease-lock-v1", kOnlyOwnerUnlocks, claim_options(dir)));
  ASSERT_FALSE(buggy.holds());
  EXPECT_TRUE(buggy.broken().count("foreign-unlock"));
  const std::string m = buggy.message();
  EXPECT_NE(m.find("foreign-unlock: "), std::string::npos) << m;
  EXPECT_NE(m.find("fault: "), std::string::npos) << m;
  EXPECT_NE(m.find("replay: lockstep run --seed "), std::string::npos) << m;
  // The written counterexample replays to the same violation.
  ASSERT_TRUE(fs::exists(buggy.counterexample_file)) << m;
  ScenarioVerdict replay = run_scenario_file(buggy.counterexample_file);
  EXPECT_TRUE(replay.as_expected) << replay.message();
  EXPECT_TRUE(replay.reports.at(0).found_violations().count("foreign-unlock"));

  auto fixed = std::get<ClaimResult>(check_claim("lease-lock", kOnlyOwnerUnlocks, claim_options(dir)));
  EXPECT_TRUE(fixed.holds()) << fixed.message();
  EXPECT_EQ(fixed.runs, 1000u);
  fs::remove_all(dir);
}

TEST_F(Registry, PausesWithinTheLeaseKeepTheFixExclusive) {
  const fs::path dir = fs::temp_directory_path() / ("lockstep-claims-" + std::to_string(::getpid()));
  const Claim exclusive{{"mutual-exclusion"}, {FaultKind::Pause}, true};
  EXPECT_TRUE(ClaimHolds("lease-lock", exclusive, claim_options(dir)));
  // The same claim without the assumption is false for any lease lock: a long pause
  // outlives the lease.
  EXPECT_TRUE(ClaimBroken("lease-lock", {{"mutual-exclusion"}, {FaultKind::Pause}}, {"mutual-exclusion"},
                          claim_options(dir)));
  fs::remove_all(dir);
}

TEST_F(Registry, BadClaimsAreErrorsNotCrashes) {
  auto unknown = check_claim("lease-lok", kOnlyOwnerUnlocks);
  ASSERT_TRUE(std::holds_alternative<ClaimError>(unknown));
  EXPECT_NE(std::get<ClaimError>(unknown).message.find("unknown algorithm \"lease-lok\""), std::string::npos);
  auto property = check_claim("lease-lock", {{"mutual-exlusion"}, {}});
  ASSERT_TRUE(std::holds_alternative<ClaimError>(property));
  EXPECT_NE(std::get<ClaimError>(property).message.find("unknown property \"mutual-exlusion\""), std::string::npos);
  ClaimOptions none;
  none.runs = 0;
  EXPECT_TRUE(std::holds_alternative<ClaimError>(check_claim("lease-lock", kOnlyOwnerUnlocks, none)));
}

TEST_F(Registry, FuzzerGivesARegisteredLockTheNodesItAsksFor) {
  AlgorithmInfo a = info("three-node-lease");
  a.nodes = 3;
  register_algorithm(a);
  FuzzSpace space;
  space.locks = {"three-node-lease"};
  EXPECT_EQ(generate_scenario(space, 1, 0).topology.nodes, 3);
  space.locks = {"lease-lock"};
  EXPECT_EQ(generate_scenario(space, 1, 0).topology.nodes, 1);
}

TEST_F(Registry, MatrixRowsMayBeRegisteredAlgorithms) {
  MatrixOptions o;
  o.algorithms = {"lease-lock-v1", "lease-lock"};
  o.faults = {"none", "pause"};
  o.runs = 300;
  ASSERT_EQ(matrix_options_problem(o), "");
  auto cells = run_matrix(o);
  ASSERT_EQ(cells.size(), 4u);
  EXPECT_EQ(cells[0].profile, "lease-lock-v1");
  EXPECT_EQ(cells[0].fault, "none");
  EXPECT_FALSE(cells[0].broken());
  // A pause that outlives the lease is beyond what any lease claims, but v1's unlock then
  // deletes the next holder's lock, which no fault excuses: a bug. The fixed lock only
  // loses its lease there: the limit of every lease.
  EXPECT_STREQ(cells[1].verdict(), cell_verdict::kBug);
  EXPECT_TRUE(cells[1].broke_a_promise);
  EXPECT_TRUE(cells[1].summary.finding->shrunk.expect.names.count("foreign-unlock"));
  EXPECT_EQ(cells[2].profile, "lease-lock");
  EXPECT_FALSE(cells[2].broken());
  EXPECT_STREQ(cells[3].verdict(), cell_verdict::kLimit);
  o.algorithms = {"lease-lok"};
  EXPECT_NE(matrix_options_problem(o).find("unknown algorithm \"lease-lok\""), std::string::npos);
}

}  // namespace
}  // namespace lockstep::runner
