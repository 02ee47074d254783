#include "lockstep/runner/scenario.h"

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>

#include "lockstep/locks.h"
#include "lockstep/text.h"
#include <filesystem>
#include <functional>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "lockstep/algorithms.h"
#include "lockstep/profiles.h"

namespace lockstep::runner {
namespace {

const std::string kData = std::string(LOCKSTEP_SOURCE_DIR) + "/tests/data/";

Scenario load_good(const std::string& name) {
  auto r = load_scenario_file(kData + "good_scenarios/" + name);
  if (auto* e = std::get_if<ScenarioError>(&r)) ADD_FAILURE() << e->message();
  return std::holds_alternative<Scenario>(r) ? std::get<Scenario>(r) : Scenario{};
}

ScenarioError parse_bad(const std::string& text) {
  auto r = parse_scenario(text, "t.json");
  if (std::holds_alternative<Scenario>(r)) {
    ADD_FAILURE() << "accepted: " << text;
    return {};
  }
  return std::get<ScenarioError>(r);
}

TEST(Scenario, MinimalFileGetsEveryDefault) {
  Scenario s = load_good("minimal.json");
  EXPECT_EQ(s.name, "minimal");
  EXPECT_EQ(s.file, kData + "good_scenarios/minimal.json");
  EXPECT_EQ(s.description, "");
  EXPECT_EQ(s.seed, 1u);
  EXPECT_EQ(s.duration_ms, 10000);
  EXPECT_EQ(s.worlds, std::vector<World>{World::Sim});
  EXPECT_EQ(s.topology, TopologySpec{});
  EXPECT_EQ(s.network.latency.kind, LatencySpec::Kind::Constant);
  EXPECT_EQ(s.network.latency.ms, 1.0);
  EXPECT_EQ(s.network.loss, 0.0);
  EXPECT_TRUE(s.clocks.empty());
  EXPECT_EQ(s.lock.algorithm, "set-px-lua");
  EXPECT_EQ(s.lock.key, "lock");
  EXPECT_EQ(s.lock.lease_ms, 10000);
  EXPECT_EQ(s.lock.retry, RetrySpec{});
  EXPECT_EQ(s.lock.command_timeout_ms, 1000);
  EXPECT_EQ(s.lock.options, nlohmann::json::object());
  EXPECT_EQ(s.workload, WorkloadSpec{});
  EXPECT_TRUE(s.faults.empty());
  EXPECT_EQ(s.expect, reports::Expectation::safe());
  EXPECT_EQ(s.deadlock_bound_ms, 5000);
}

TEST(Scenario, FullFileReadsEveryField) {
  Scenario s = load_good("every_fault.json");
  EXPECT_EQ(s.name, "every-fault");
  EXPECT_EQ(s.seed, UINT64_MAX);
  EXPECT_EQ(s.duration_ms, 20000);
  EXPECT_EQ(s.worlds, (std::vector<World>{World::Sim, World::Live}));
  EXPECT_EQ(s.topology.nodes, 3);
  EXPECT_EQ(s.topology.replicas, 2);
  EXPECT_EQ(s.topology.persistence, Persistence::AofEverysec);
  EXPECT_EQ(s.network.latency.kind, LatencySpec::Kind::LongTail);
  EXPECT_EQ(s.network.latency.ms, 0.5);
  EXPECT_EQ(s.network.latency.tail_ms, 200.0);
  EXPECT_EQ(s.network.latency.tail_probability, 0.01);
  EXPECT_EQ(s.network.loss, 0.001);
  ASSERT_EQ(s.clocks.size(), 2u);
  EXPECT_EQ(s.clocks[0], (ClockSpec{"node-2", -250, 35.5}));
  EXPECT_EQ(s.clocks[1], (ClockSpec{"client-3", 0, 0.0}));
  EXPECT_EQ(s.lock.algorithm, "redisson");
  EXPECT_EQ(s.lock.key, "orders-lock");
  EXPECT_EQ(s.lock.lease_ms, 3000);
  EXPECT_EQ(s.lock.retry, (RetrySpec{7, 20, 0}));
  EXPECT_EQ(s.lock.command_timeout_ms, 250);
  EXPECT_EQ(s.lock.options, (nlohmann::json{{"watchdog", true}, {"wait_replicas", 2}, {"wait_timeout_ms", 100}}));
  EXPECT_EQ(s.workload, (WorkloadSpec{"stock", 3, 100, 4, 15, 1200, 3, "orders"}));
  EXPECT_EQ(s.expect, reports::Expectation::at_least({"mutual-exclusion", "lost-update"}));
  EXPECT_EQ(s.deadlock_bound_ms, 7000);

  ASSERT_EQ(s.faults.size(), 9u);
  std::set<std::string> kinds;
  for (const auto& f : s.faults) kinds.insert(to_string(f.kind));
  const auto names = fault_kind_names();
  EXPECT_EQ(kinds, std::set<std::string>(names.begin(), names.end()));
  EXPECT_EQ(s.faults[0].target, "client-1");
  EXPECT_EQ(s.faults[0].at_ms, 50);
  EXPECT_EQ(s.faults[0].duration_ms, 2000);
  EXPECT_EQ(s.faults[1].restart_after_ms, 100);
  EXPECT_EQ(s.faults[2].restart_after_ms, std::nullopt);
  EXPECT_EQ(s.faults[3].jump_ms, -5000);
  EXPECT_EQ(s.faults[4].drift_ppm, 200.0);
  EXPECT_EQ(s.faults[5].delay_ms, 50);
  EXPECT_EQ(s.faults[6].target, "node-3-replica-2");
  EXPECT_EQ(s.faults[6].jitter_ms, 20);
  EXPECT_EQ(s.faults[7].groups,
            (std::vector<std::vector<std::string>>{{"client-1", "node-1-replica-1"}, {"node-1"}}));
  EXPECT_TRUE(s.faults[7].one_way);
  EXPECT_EQ(s.faults[8].target, "node-3");
  EXPECT_EQ(s.faults[8].at_ms, 19999);
}

TEST(Scenario, OtherLatencyDistributionsAndEdgeValues) {
  Scenario d = load_good("duplicate_faults.json");
  EXPECT_EQ(d.network.latency.kind, LatencySpec::Kind::Uniform);
  EXPECT_EQ(d.network.latency.min_ms, 1.0);
  EXPECT_EQ(d.network.latency.max_ms, 1.0);
  ASSERT_EQ(d.faults.size(), 2u);  // the same fault twice is not an error
  EXPECT_EQ(d.faults[0], d.faults[1]);

  Scenario n = load_good("normal_latency.json");
  EXPECT_EQ(n.seed, 0u);
  EXPECT_EQ(n.duration_ms, 1);
  EXPECT_EQ(n.network.latency.kind, LatencySpec::Kind::Normal);
  EXPECT_EQ(n.network.latency.mean_ms, 2.0);
  EXPECT_EQ(n.network.latency.stddev_ms, 0.75);
  EXPECT_EQ(n.faults[0].duration_ms, 1'000'000'000);
  EXPECT_FALSE(n.faults[0].one_way);
  EXPECT_EQ(n.expect, reports::Expectation::at_least({"foreign-unlock", "linearizability", "fencing"}));
}

TEST(Scenario, EveryRegisteredAlgorithmIsAccepted) {
  for (const auto& name : algorithm_names()) {
    // A lock of another service needs it in the topology, and runs in the simulator.
    const std::string field = topology_field(find_lock(name)->service);
    const std::string topology = field.empty() ? "" : R"("worlds": ["sim"], "topology": {")" + field + R"(": {}}, )";
    auto r = parse_scenario(R"({)" + topology + R"("lock": {"algorithm": ")" + name + R"("}, "expect": {"violations": []}})", "");
    ASSERT_TRUE(std::holds_alternative<Scenario>(r)) << std::get<ScenarioError>(r).message();
    EXPECT_EQ(std::get<Scenario>(r).lock.algorithm, name);
    EXPECT_EQ(std::get<Scenario>(r).name, "");  // no file, no default name
  }
}

TEST(Scenario, AZooKeeperLockNeedsAnEnsembleInEitherWorld) {
  auto none = parse_scenario(R"({"lock": {"algorithm": "zookeeper"}, "expect": {"violations": []}})", "");
  ASSERT_TRUE(std::holds_alternative<ScenarioError>(none));
  EXPECT_EQ(std::get<ScenarioError>(none).path, "$.lock.algorithm");
  EXPECT_NE(std::get<ScenarioError>(none).message().find("needs a ZooKeeper ensemble"), std::string::npos);
  auto live = parse_scenario(
      R"({"worlds": ["sim", "live"], "topology": {"zookeeper": {"servers": 3}}, "lock": {"algorithm": "zookeeper"}, "expect": {"violations": []}})",
      "");
  ASSERT_TRUE(std::holds_alternative<Scenario>(live)) << std::get<ScenarioError>(live).message();
  EXPECT_TRUE(std::get<Scenario>(live).runs_in(World::Live));
  auto bad_target = parse_scenario(
      R"({"worlds": ["sim"], "topology": {"zookeeper": {"servers": 3}}, "lock": {"algorithm": "zookeeper"},
          "faults": [{"kind": "pause", "target": "zk-4", "at_ms": 10, "duration_ms": 10}], "expect": {"violations": []}})",
      "");
  ASSERT_TRUE(std::holds_alternative<ScenarioError>(bad_target));
  EXPECT_NE(std::get<ScenarioError>(bad_target).message().find("zk-1 to zk-3"), std::string::npos);
  auto ok = parse_scenario(
      R"({"worlds": ["sim"], "topology": {"zookeeper": {"servers": 3}}, "lock": {"algorithm": "zookeeper"},
          "faults": [{"kind": "pause", "target": "zk-2", "at_ms": 10, "duration_ms": 10}], "expect": {"violations": []}})",
      "");
  ASSERT_TRUE(std::holds_alternative<Scenario>(ok)) << std::get<ScenarioError>(ok).message();
  EXPECT_EQ(std::get<Scenario>(ok).topology.zookeeper.servers, 3);
}

TEST(Scenario, AMysqlLockNeedsTheServer) {
  auto error_of = [](const std::string& text) {
    auto r = parse_scenario(text, "");
    return std::holds_alternative<ScenarioError>(r) ? std::get<ScenarioError>(r) : ScenarioError{};
  };
  const ScenarioError none = error_of(R"({"lock": {"algorithm": "mysql-named"}, "expect": {"violations": []}})");
  EXPECT_EQ(none.path, "$.lock.algorithm");
  EXPECT_NE(none.message().find("mysql-named needs a MySQL server: topology.mysql"), std::string::npos) << none.message();
  auto both = parse_scenario(
      R"({"worlds": ["sim", "live"], "topology": {"mysql": {}}, "lock": {"algorithm": "mysql-named"}, "expect": {"violations": []}})",
      "");
  ASSERT_TRUE(std::holds_alternative<Scenario>(both)) << std::get<ScenarioError>(both).message();
  EXPECT_TRUE(std::get<Scenario>(both).runs_in(World::Live));
  const ScenarioError target = error_of(
      R"({"lock": {"algorithm": "set-px-lua"}, "faults": [{"kind": "pause", "target": "mysql-1", "at_ms": 10, "duration_ms": 10}],
          "expect": {"violations": []}})");
  EXPECT_EQ(target.path, "$.faults[0].target");
  EXPECT_NE(target.message().find("mysql-1 needs topology.mysql"), std::string::npos) << target.message();
  auto ok = parse_scenario(
      R"({"worlds": ["sim"], "topology": {"mysql": {"wait_timeout_s": 2}}, "lock": {"algorithm": "mysql-table"},
          "faults": [{"kind": "partition", "groups": [["client-1"], ["mysql-1"]], "at_ms": 10, "duration_ms": 10}],
          "expect": {"violations": []}})",
      "");
  ASSERT_TRUE(std::holds_alternative<Scenario>(ok)) << std::get<ScenarioError>(ok).message();
  const MysqlSpec& m = std::get<Scenario>(ok).topology.mysql;
  EXPECT_TRUE(m.enabled);
  EXPECT_EQ(m.wait_timeout_s, 2);
  EXPECT_EQ(m.innodb_lock_wait_timeout_s, 50);
  // The server's settings survive a write and a read (a fuzz counterexample, a saved schedule).
  auto again = parse_scenario(to_json(std::get<Scenario>(ok)).dump(), "");
  ASSERT_TRUE(std::holds_alternative<Scenario>(again));
  EXPECT_EQ(std::get<Scenario>(again).topology.mysql, m);
}

TEST(Scenario, NamesForPropertiesAndFaults) {
  EXPECT_EQ(property_names(), (std::vector<std::string>{"mutual-exclusion", "lost-update", "foreign-unlock", "deadlock",
                                                        "linearizability", "fencing", "stale-read", "stale-cache",
                                                        "fairness", "false-extend"}));
  EXPECT_EQ(fault_kind_names(), (std::vector<std::string>{"pause", "crash", "clock-jump", "clock-drift", "delay", "jitter",
                                                     "partition", "failover"}));
}

struct Bad {
  std::string file, path, expected, found;
};

// The whole message is asserted: the wording is the interface a scenario author sees.
std::vector<Bad> bad_table() {
  const std::string algorithms = "one of the algorithms " + join(algorithm_names());
  const std::string properties = join(property_names());
  const std::string process = "a process name (client-N, node-N or node-N-replica-M)";
  return {
      {"empty", "$", "a JSON object", "an empty file"},
      {"invalid_json", "$", "valid JSON",
       "syntax error at line 3, column 12: while parsing object - invalid literal; last read: '4x'; expected '}'"},
      {"trailing_comma", "$", "valid JSON",
       "syntax error at line 4, column 1: while parsing object key - unexpected '}'; expected string literal"},
      {"array_top_level", "$", "an object", "an array"},
      {"string_top_level", "$", "an object", "\"hello\""},
      {"missing_lock", "$.lock", "an object with at least an algorithm", "nothing"},
      {"missing_expect", "$.expect", "an object such as {\"violations\": []}", "nothing"},
      {"missing_violations", "$.expect",
       "exactly one of \"violations\" (at least these), \"exactly\" (this set and no other) or \"verdict\"",
       "none of them"},
      {"unknown_algorithm", "$.lock.algorithm", algorithms + " (did you mean \"set-px-lua\"?)", "\"set-px-luaa\""},
      {"algorithm_not_string", "$.lock.algorithm", algorithms, "5"},
      {"unknown_top_level_key", "$.duraton_ms", "a known key (did you mean \"duration_ms\"?)",
       "unknown key \"duraton_ms\""},
      {"unknown_key_no_hint", "$.topology.zone", "one of the keys nodes, replicas, persistence, replication_lag_ms, down_after_ms, min_replicas_to_write, sentinels, maxmemory_bytes, maxmemory_policy, maxmemory_samples, cluster, zookeeper, mysql", "unknown key \"zone\""},
      {"negative_at_ms", "$.faults[1].at_ms", "a non-negative integer", "-5"},
      {"at_ms_beyond_duration", "$.faults[0].at_ms", "a time before duration_ms (1000)", "1000"},
      {"string_for_integer", "$.duration_ms", "a positive integer", "\"5000\""},
      {"float_for_integer", "$.lock.lease_ms", "a positive integer", "1.5"},
      {"bool_for_integer", "$.workload.clients", "an integer from 1 to 1000", "true"},
      {"integer_too_large", "$.duration_ms", "an integer at most 1000000000", "10000000000"},
      {"unknown_fault_kind", "$.faults[0].kind",
       "one of pause, crash, clock-jump, clock-drift, delay, jitter, partition, failover (did you mean \"pause\"?)",
       "\"pausee\""},
      {"pause_without_duration", "$.faults[0].duration_ms", "a positive integer", "nothing"},
      {"pause_zero_duration", "$.faults[0].duration_ms", "a positive integer", "0"},
      {"crash_with_jump_ms", "$.faults[0].jump_ms",
       "no jump_ms in a crash fault (it takes kind, target, at_ms, restart_after_ms, on)", "5000"},
      {"fault_without_target", "$.faults[0].target", process, "nothing"},
      {"nonexistent_client", "$.faults[0].target", "an existing client (client-1 to client-2)", "\"client-5\""},
      {"nonexistent_node", "$.clocks[0].process", "an existing node (node-1 to node-3)", "\"node-4\""},
      {"nonexistent_replica", "$.faults[0].target", "an existing replica (topology.replicas is 0)",
       "\"node-1-replica-1\""},
      {"unknown_process_form", "$.faults[0].target", process, "\"server-1\""},
      {"process_leading_zero", "$.clocks[0].process", process, "\"client-01\""},
      {"duplicate_clock", "$.clocks[1].process", "a process without an earlier clock entry", "\"node-1\""},
      {"partition_one_group", "$.faults[0].groups", "two non-empty arrays of process names", "an array of 1 group"},
      {"partition_overlap", "$.faults[0].groups[1][1]", "a process not already in a group", "\"client-1\""},
      {"failover_without_replicas", "$.faults[0].target",
       "a master with replicas to fail over to (topology.replicas is 0)", "\"node-1\""},
      {"failover_on_client", "$.faults[0].target", "a master node-N", "\"client-1\""},
      {"loss_one", "$.network.loss", "a probability from 0 up to (not including) 1", "1"},
      {"uniform_min_gt_max", "$.network.latency.max_ms", "a number at least min_ms (5)", "2"},
      {"latency_without_dist", "$.network.latency.dist", "one of constant, uniform, normal, long-tail", "nothing"},
      {"normal_with_min_ms", "$.network.latency.min_ms",
       "no min_ms in a normal latency (it takes dist, mean_ms, stddev_ms)", "0"},
      {"tail_probability_above_one", "$.network.latency.tail_probability", "a probability from 0 to 1", "1.5"},
      {"unknown_property", "$.expect.violations[0]",
       "one of " + properties + ", " + join(checker::severity_names()) + " (did you mean \"mutual-exclusion\"?)",
       "\"mutual-exlusion\""},
      {"clients_zero", "$.workload.clients", "an integer from 1 to 1000", "0"},
      {"nodes_ten", "$.topology.nodes", "an integer from 1 to 9", "10"},
      {"persistence_typo", "$.topology.persistence",
       "one of none, aof-everysec, aof-always (did you mean \"aof-everysec\"?)", "\"aof-every-sec\""},
      {"worlds_empty", "$.worlds", "a non-empty array of worlds (sim, live)", "an empty array"},
      {"worlds_moon", "$.worlds[1]", "one of sim, live", "\"moon\""},
      {"seed_negative", "$.seed", "a non-negative integer", "-1"},
      {"stock_key_is_lock_key", "$.workload.stock_key", "a key other than lock.key", "\"lock\""},
      {"readers_without_read_side", "$.workload.readers",
       "0 (lock algorithm \"set-px-lua\" has no read side; redisson-rw has)", "2"},
      {"readers_more_than_clients", "$.workload.readers", "an integer from 0 to 3", "4"},
      {"name_not_string", "$.name", "a string", "5"},
      {"options_not_object", "$.lock.options", "an object of set-px-lua options", "an array"},
      {"options_typo", "$.lock.options.watchdgo", "an option of redisson (did you mean \"watchdog\"?)",
       "unknown key \"watchdgo\""},
      {"options_none_taken", "$.lock.options.wait_replicas", "an option of set-px-lua (it takes none)",
       "unknown key \"wait_replicas\""},
      {"options_other_algorithm", "$.lock.options.fair_wait_ms",
       "an option of redisson (watchdog, wait_replicas, wait_timeout_ms)", "unknown key \"fair_wait_ms\""},
      {"options_out_of_range", "$.lock.options.node_timeout_ms", "a positive integer", "0"},
      {"options_switch_not_flag", "$.lock.options.parallel", "0 or 1 (or false or true)", "2"},
      {"profile_option_typo", "$.lock.options.expiri", "an option of redsync@4.17.0 (did you mean \"expiry\"?)",
       "unknown key \"expiri\""},
      {"profile_option_other_kind", "$.lock.options.retry_count",
       "no retry_count with the default kind \"redmutex\" (it applies to kind \"redlock\" only; did you mean "
       "\"kind\": \"redlock\"?)",
       "5"},
      {"profile_options_conflict", "$.lock.options.automaticExtensionThreshold",
       "at most duration - 100 (900): using() throws \"A lock `duration` must be at least 100ms greater than the "
       "`automaticExtensionThreshold` setting.\"",
       "950"},
      {"options_on_external_lock", "$.lock.options",
       "no options for an external workload's lock (your program configures its own lock)", "an object"},
      {"sentinels_without_replicas", "$.topology.sentinels",
       "0 while topology.replicas is 0 (Sentinel needs a replica to promote)", "3"},
      {"trigger_two_events", "$.faults[0].on.receives",
       "exactly one event: one of sends, receives, enters, leaves, sets, deletes", "sends, receives"},
      {"trigger_and_at_ms", "$.faults[0].at_ms", "either at_ms or on, not both", "5"},
      {"trigger_enters_other", "$.faults[0].on.enters", "one of critical-section", "\"the-lock\""},
      {"trigger_sets_on_client", "$.faults[0].on.process", "a node (node-N) for sets", "\"client-2\""},
      {"trigger_nth_zero", "$.faults[0].on.nth", "a positive integer", "0"},
      {"trigger_unknown_key", "$.faults[0].on.send", "a known key (did you mean \"sends\"?)", "unknown key \"send\""},
      {"fault_without_time", "$.faults[0].at_ms", "a start time in ms, or an event to wait for (on)", "nothing"},
      {"sentinels_without_down_after", "$.topology.sentinels",
       "0 unless topology.down_after_ms is set (it is Sentinel's down-after-milliseconds)", "1"},
      {"cluster_two_masters", "$.topology.cluster.masters", "an integer from 3 to 9", "2"},
      {"cluster_live_partition", "$.worlds[1]",
       "\"sim\" only (a partition with topology.cluster is not played live: the fault proxy would hold a cut "
       "cluster bus's bytes rather than lose them)",
       "\"live\""},
      {"cluster_external", "$.topology",
       "no topology.cluster with an external workload (its programs reach each node by address, not as cluster clients)",
       "topology.cluster"},
      {"start_after_hold_builtin", "$.workload.start_after_hold",
       "false (only an external workload's programs start after a hold)", "true"},
      {"hold_for_validity_no_validity", "$.workload.hold_for_validity",
       "false (set-px-lua reports no validity for its holds; redlock-py's profiles do)", "true"},
      {"retry_until_wait_external", "$.workload.retry_until_wait",
       "false (an external program decides how long it works and how often it tries)", "true"},
      {"cluster_with_sentinels", "$.topology.sentinels",
       "0 or nothing with topology.cluster (cluster nodes detect failures themselves: node_timeout_ms)", "3"},
  };
}

TEST(Scenario, EveryBadFileIsRejectedWithItsMessage) {
  std::set<std::string> covered;
  for (const Bad& b : bad_table()) {
    std::string file = kData + "bad_scenarios/" + b.file + ".json";
    covered.insert(b.file + ".json");
    auto r = load_scenario_file(file);
    ASSERT_TRUE(std::holds_alternative<ScenarioError>(r)) << file << " was accepted";
    const auto& e = std::get<ScenarioError>(r);
    EXPECT_EQ(e.file, file);
    EXPECT_EQ(e.path, b.path) << file;
    EXPECT_EQ(e.expected, b.expected) << file;
    EXPECT_EQ(e.found, b.found) << file;
    EXPECT_EQ(e.message(), file + ": " + b.path + ": expected " + b.expected + ", found " + b.found);
  }
  // A bad file without a row in the table would be rejected for an unchecked reason.
  for (const auto& entry : std::filesystem::directory_iterator(kData + "bad_scenarios"))
    EXPECT_TRUE(covered.count(entry.path().filename().string())) << entry.path() << " has no expectation";
  EXPECT_GE(covered.size(), 25u);
}

TEST(Scenario, UnreadableFilesAreErrorsNotExceptions) {
  auto missing = load_scenario_file(kData + "no_such_file.json");
  ASSERT_TRUE(std::holds_alternative<ScenarioError>(missing));
  EXPECT_EQ(std::get<ScenarioError>(missing).message(),
            kData + "no_such_file.json: $: expected a readable file, found cannot read file: No such file or directory");

  auto dir = load_scenario_file(kData + "good_scenarios");
  ASSERT_TRUE(std::holds_alternative<ScenarioError>(dir));
  EXPECT_EQ(std::get<ScenarioError>(dir).found, "cannot read file: Is a directory");
}

TEST(Scenario, MoreMistakesInline) {
  const std::string head = R"({"lock": {"algorithm": "setnx"}, "expect": {"violations": []}, )";
  auto msg = [&](const std::string& rest) { return parse_bad(head + rest + "}").message(); };
  EXPECT_EQ(msg(R"("faults": [{"kind": "pause", "target": "client-1", "at_ms": 1, "duraton_ms": 5}])"),
            "t.json: $.faults[0].duraton_ms: expected a known key (did you mean \"duration_ms\"?), found unknown key "
            "\"duraton_ms\"");
  EXPECT_EQ(msg(R"("faults": [7])"), "t.json: $.faults[0]: expected an object, found 7");
  EXPECT_EQ(msg(R"("faults": {})"), "t.json: $.faults: expected an array of fault objects, found an object");
  EXPECT_EQ(msg(R"("duration_ms": 1.0)"), "t.json: $.duration_ms: expected a positive integer, found 1.0");
  EXPECT_EQ(msg(R"("duration_ms": null)"), "t.json: $.duration_ms: expected a positive integer, found null");
  EXPECT_EQ(msg(R"("seed": 1e30)"), "t.json: $.seed: expected a non-negative integer, found 1e+30");
  EXPECT_EQ(msg(R"("worlds": ["sim", "sim"])"), "t.json: $.worlds[1]: expected a world not listed before, found \"sim\"");
  EXPECT_EQ(msg(R"("a b\n": 1)"), "t.json: $[\"a b\\n\"]: expected one of the keys name, description, seed, "
                                  "duration_ms, worlds, topology, network, clocks, lock, workload, faults, expect, "
                                  "checks, found unknown key \"a b\\n\"");
  EXPECT_EQ(msg(R"("faults": [{"kind": "partition", "groups": [["client-1"], []], "at_ms": 0, "duration_ms": 1}])"),
            "t.json: $.faults[0].groups[1]: expected a non-empty array of process names, found an array");
  EXPECT_EQ(msg(R"("faults": [{"kind": "partition", "groups": [["client-1"], ["node-1"]], "at_ms": 0,
                               "duration_ms": 1, "one_way": "yes"}])"),
            "t.json: $.faults[0].one_way: expected true or false, found \"yes\"");
  EXPECT_EQ(msg(R"("clocks": [{"process": "node-1", "drift_ppm": 1e6}])"),
            "t.json: $.clocks[0].drift_ppm: expected a number from -100000 to 100000, found 1000000.0");
  EXPECT_EQ(msg(R"("description": ")" + std::string(100, 'x') + "\", \"name\": 5"),
            "t.json: $.name: expected a string, found 5");
  EXPECT_EQ(msg(R"("name": ")" + std::string(100, 'x') + "\", \"seed\": \"" + std::string(100, 'y') + "\""),
            "t.json: $.seed: expected a non-negative integer, found \"" + std::string(43, 'y') + "...\"");
  EXPECT_EQ(parse_bad("{\"a\": 1e400}").message().substr(0, 24), "t.json: $: expected vali");
  EXPECT_EQ(parse_bad("{\"lock\": \"\xff\"}").path, "$");
}

// Every option an algorithm declares is accepted at its bounds (flags as true/false too),
// so the table, not a list kept by hand, decides what a file may set.
TEST(Scenario, EveryDeclaredAlgorithmOptionIsAcceptedAtItsBounds) {
  for (const auto& a : algorithms()) {
    ASSERT_TRUE(a.options.has_value()) << a.name;
    for (const auto& o : *a.options) {
      std::vector<nlohmann::json> values = {static_cast<int64_t>(o.min), static_cast<int64_t>(o.max)};
      if (o.min == 0 && o.max == 1) values.insert(values.end(), {true, false});
      for (const auto& v : values) {
        nlohmann::json j = {{"topology", {{"nodes", 3}, {"replicas", 4}}},
                            {"lock", {{"algorithm", a.name}, {"options", {{o.name, v}}}}},
                            {"expect", {{"violations", nlohmann::json::array()}}}};
        if (const std::string field = topology_field(a.service); !field.empty()) {
          j["topology"][field] = nlohmann::json::object();
          j["worlds"] = {"sim"};
        }
        auto r = parse_scenario(j.dump(), "t.json");
        EXPECT_TRUE(std::holds_alternative<Scenario>(r))
            << a.name << "." << o.name << "=" << v << ": " << std::get<ScenarioError>(r).message();
      }
      nlohmann::json too_big = {{"lock", {{"algorithm", a.name}, {"options", {{o.name, static_cast<int64_t>(o.max) + 1}}}}},
                                {"expect", {{"violations", nlohmann::json::array()}}}};
      auto r = parse_scenario(too_big.dump(), "t.json");
      ASSERT_TRUE(std::holds_alternative<ScenarioError>(r)) << a.name << "." << o.name << " above its maximum";
      EXPECT_EQ(std::get<ScenarioError>(r).path, "$.lock.options." + o.name);
    }
  }
}

// A scenario read back from its own JSON is the same scenario, field for field; and a
// report's copy of it is the same JSON with its keys sorted.
void expect_round_trip(const Scenario& s) {
  EXPECT_EQ(to_report_json(s).dump(), nlohmann::json(to_json(s)).dump());
  std::string text = to_json(s).dump(2);
  auto r = parse_scenario(text, s.file);
  ASSERT_TRUE(std::holds_alternative<Scenario>(r)) << std::get<ScenarioError>(r).message() << "\n" << text;
  EXPECT_EQ(std::get<Scenario>(r), s) << text;
}

TEST(Scenario, CatalogueReportJsonIsTheFileJsonSorted) {
  for (const auto& entry : std::filesystem::directory_iterator(std::string(LOCKSTEP_SOURCE_DIR) + "/scenarios")) {
    if (entry.path().extension() != ".json") continue;
    auto r = load_scenario_file(entry.path().string());
    ASSERT_TRUE(std::holds_alternative<Scenario>(r)) << entry.path();
    const Scenario& s = std::get<Scenario>(r);
    EXPECT_EQ(to_report_json(s).dump(), nlohmann::json(to_json(s)).dump()) << entry.path();
  }
}

TEST(Scenario, RoundTripsThroughJson) {
  for (const char* name : {"minimal.json", "every_fault.json", "duplicate_faults.json", "normal_latency.json"})
    expect_round_trip(load_good(name));

  Scenario built;  // built in code, not read: the writer must not depend on parsing
  built.lock.algorithm = "setnx-expire";
  built.network.latency = {LatencySpec::Kind::Uniform, 1.0, 0.25, 3.125};
  built.network.loss = 0.1;
  built.topology.replicas = 1;
  built.topology.down_after_ms = 300;
  built.topology.sentinels = 3;
  built.clocks = {{"node-1-replica-1", 1000000000, -99999.5}};
  FaultSpec jump, failover;
  jump.kind = FaultKind::ClockJump, jump.target = "node-1", jump.at_ms = 9999, jump.jump_ms = -1'000'000'000;
  failover.kind = FaultKind::Failover, failover.target = "node-1";
  built.faults = {jump, failover};
  built.expect = reports::Expectation::at_least({"deadlock", "fencing"});
  expect_round_trip(built);
}

TEST(Scenario, WriterUsesTheFileFormatKeyOrder) {
  auto j = to_json(load_good("every_fault.json"));
  std::vector<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.push_back(k);
  EXPECT_EQ(keys, scenario_keys().front().second);
  EXPECT_EQ(j["faults"][1].dump(), R"({"kind":"crash","target":"node-1","at_ms":5,"restart_after_ms":100})");
}

// --- The schema and the parser accept the same keys. ---

const nlohmann::json& schema() {
  static const nlohmann::json kSchema = [] {
    std::ifstream in(std::string(LOCKSTEP_SOURCE_DIR) + "/scenarios/schema/scenario.schema.json");
    return nlohmann::json::parse(in);
  }();
  return kSchema;
}

const nlohmann::json& resolve(const nlohmann::json& node) {
  if (!node.contains("$ref")) return node;
  const std::string ref = node["$ref"];
  const std::string prefix = "#/$defs/";
  EXPECT_EQ(ref.substr(0, prefix.size()), prefix);
  return schema()["$defs"][ref.substr(prefix.size())];
}

// Every object in the schema, by the parser's path pattern, with its property names.
void walk(const nlohmann::json& raw, const std::string& pattern, std::map<std::string, std::vector<std::string>>& out) {
  const nlohmann::json& node = resolve(raw);
  EXPECT_TRUE(node.contains("description") || raw.contains("description")) << pattern << " has no description";
  if (node.contains("properties")) {
    auto& keys = out[pattern];
    for (const auto& [k, v] : node["properties"].items()) {
      keys.push_back(k);
      walk(v, pattern + "." + k, out);
    }
  }
  if (node.contains("items")) walk(node["items"], pattern + "[]", out);
}

TEST(Scenario, SchemaListsExactlyTheKeysTheParserAccepts) {
  EXPECT_EQ(schema()["$schema"], "https://json-schema.org/draft/2020-12/schema");
  std::map<std::string, std::vector<std::string>> from_schema;
  walk(schema(), "$", from_schema);
  std::map<std::string, std::vector<std::string>> from_parser(scenario_keys().begin(), scenario_keys().end());
  for (auto& [pattern, keys] : from_parser) {
    ASSERT_TRUE(from_schema.count(pattern)) << pattern << " is missing from the schema";
    std::set<std::string> parser(keys.begin(), keys.end()), in_schema(from_schema[pattern].begin(), from_schema[pattern].end());
    EXPECT_EQ(parser, in_schema) << "keys of " << pattern;
  }
  for (const auto& [pattern, keys] : from_schema)
    if (pattern != "$.lock.options") {
      EXPECT_TRUE(from_parser.count(pattern)) << pattern << " only in the schema";
    }
}

// --- The schema's option rules are the option tables, written out. ---

nlohmann::json schema_number(double x) {
  if (x == std::floor(x) && std::fabs(x) < 1e15) return static_cast<int64_t>(x);
  return x;
}

nlohmann::json option_schema(const LockOption& o) {
  nlohmann::json j;
  switch (o.type) {
    case LockOption::Type::Integer:
      // A 0/1 switch of lockstep's also takes false/true; minimum and maximum leave booleans alone.
      j["type"] = o.min == 0 && o.max == 1 ? nlohmann::json{"integer", "boolean"} : nlohmann::json("integer");
      break;
    case LockOption::Type::Number: j["type"] = "number"; break;
    case LockOption::Type::NumberOrNull: j["type"] = {"number", "null"}; break;
    case LockOption::Type::Boolean: j["type"] = "boolean"; break;
    case LockOption::Type::Choice: j["enum"] = o.choices; break;
  }
  if (o.type != LockOption::Type::Boolean && o.type != LockOption::Type::Choice) {
    j["minimum"] = schema_number(o.min);
    j["maximum"] = schema_number(o.max);
  }
  if (!o.default_value.is_null()) j["default"] = o.default_value;
  j["description"] = o.meaning;
  return j;
}

// An option of some kinds only: given, `kind` must be one of them (and be given, when the
// default kind is not).
nlohmann::json kind_rule(const LockOption& o, const LockOption& kind) {
  nlohmann::json then = {{"properties", {{"kind", {{"enum", o.kinds}}}}}};
  if (!applies_to_kind(o, kind.default_value.get<std::string>())) then["required"] = {"kind"};
  return {{"if", {{"required", {o.name}}}}, {"then", then}};
}

nlohmann::json options_rule(const std::string& key, const std::string& name, const std::vector<LockOption>& table) {
  nlohmann::json props = nlohmann::json::object();
  nlohmann::json kinds = nlohmann::json::array();
  const auto kind = std::find_if(table.begin(), table.end(), [](const LockOption& o) { return o.name == "kind"; });
  for (const auto& o : table) {
    props[o.name] = option_schema(o);
    if (!o.kinds.empty()) kinds.push_back(kind_rule(o, *kind));
  }
  nlohmann::json options = {{"properties", props}, {"additionalProperties", false}};
  if (!kinds.empty()) options["allOf"] = kinds;
  return {{"if", {{"required", {key}}, {"properties", {{key, {{"const", name}}}}}}},
          {"then", {{"properties", {{"options", options}}}}}};
}

TEST(Scenario, SchemaOptionRulesAreTheOptionTables) {
  nlohmann::json rules = nlohmann::json::array();
  for (const auto& a : algorithms()) rules.push_back(options_rule("algorithm", a.name, a.options.value()));
  for (const auto& p : library_profiles()) rules.push_back(options_rule("profile", p.name, p.options.value()));
  const auto& lock = schema()["$defs"]["lock"];
  const nlohmann::json names = algorithm_names();
  // On a mismatch the expected rules are written out, ready to paste into the schema.
  const auto out = std::filesystem::temp_directory_path() / "lockstep-schema-lock-rules.json";
  if (!lock.contains("allOf") || lock["allOf"] != rules || schema()["$defs"]["algorithm_name"]["enum"] != names)
    std::ofstream(out) << nlohmann::json{{"allOf", rules}, {"enum", names}}.dump(2) << "\n";
  EXPECT_EQ(lock.value("allOf", nlohmann::json()), rules) << "expected $defs.lock.allOf written to " << out;
  EXPECT_EQ(schema()["$defs"]["algorithm_name"]["enum"], names) << "expected enum written to " << out;
}

TEST(Scenario, WrittenScenarioUsesOnlyKeysTheParserKnows) {
  std::map<std::string, std::vector<std::string>> known(scenario_keys().begin(), scenario_keys().end());
  std::function<void(const nlohmann::ordered_json&, const std::string&)> check = [&](const auto& j, const auto& pattern) {
    if (pattern == "$.lock.options") return;
    if (j.is_object()) {
      ASSERT_TRUE(known.count(pattern)) << pattern;
      for (const auto& [k, v] : j.items()) {
        EXPECT_TRUE(std::count(known[pattern].begin(), known[pattern].end(), k)) << pattern << "." << k;
        check(v, pattern + "." + k);
      }
    } else if (j.is_array() && pattern != "$.faults[].groups") {
      for (const auto& v : j) check(v, pattern + "[]");
    }
  };
  check(to_json(load_good("every_fault.json")), "$");
}

// --- Whatever the input, the reader answers with a scenario or one line of error. ---

void expect_graceful(const std::string& text) {
  auto r = parse_scenario(text, "f.json");
  if (auto* e = std::get_if<ScenarioError>(&r)) {
    RC_ASSERT(e->message().find('\n') == std::string::npos);
    RC_ASSERT(e->message().rfind("f.json: $", 0) == 0);
  } else {
    const Scenario& s = std::get<Scenario>(r);
    auto again = parse_scenario(to_json(s).dump(), "f.json");
    RC_ASSERT(std::holds_alternative<Scenario>(again));
    RC_ASSERT(std::get<Scenario>(again) == s);
  }
}

RC_GTEST_PROP(ScenarioProperty, ArbitraryTextNeverCrashes, (const std::string& text)) { expect_graceful(text); }

// Replacing one value of a valid file with arbitrary JSON: either still valid (then it
// round-trips) or one precise line.
RC_GTEST_PROP(ScenarioProperty, MutatedFilesNeverCrash, ()) {
  static const nlohmann::json kBase = [] {
    std::ifstream in(kData + "good_scenarios/every_fault.json");
    return nlohmann::json::parse(in);
  }();
  nlohmann::json j = kBase;
  std::vector<nlohmann::json::json_pointer> pointers;
  const nlohmann::json flat = j.flatten();
  for (const auto& [ptr, v] : flat.items()) {
    nlohmann::json::json_pointer p(ptr);
    for (; !p.empty(); p = p.parent_pointer()) pointers.push_back(p);
  }
  auto target = *rc::gen::elementOf(pointers);
  auto replacement = *rc::gen::oneOf(
      rc::gen::map(rc::gen::arbitrary<int64_t>(), [](int64_t v) { return nlohmann::json(v); }),
      rc::gen::map(rc::gen::arbitrary<double>(), [](double v) { return nlohmann::json(v); }),
      rc::gen::map(rc::gen::arbitrary<std::string>(), [](std::string v) { return nlohmann::json(v); }),
      rc::gen::map(rc::gen::arbitrary<bool>(), [](bool v) { return nlohmann::json(v); }),
      rc::gen::just(nlohmann::json()), rc::gen::just(nlohmann::json::array()),
      rc::gen::just(nlohmann::json::object()));
  j[target] = replacement;
  expect_graceful(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

}  // namespace
}  // namespace lockstep::runner
