// Redis Cluster: the key-to-slot mapping, the simulated node in cluster mode (MOVED,
// CROSSSLOT, CLUSTERDOWN, the CLUSTER command, the checks on what a script touches),
// with reply texts checked against redis-server 7.0.15 --cluster-enabled yes.
#include "lockstep/cluster_slot.h"
#include "lockstep/sim/redis_node.h"
#include "reply_print.h"

#include <gtest/gtest.h>

namespace lockstep::sim {
namespace {

using Args = std::vector<std::string>;

TEST(ClusterSlot, KnownValues) {
  // Values from CLUSTER KEYSLOT of redis-server 7.0.15.
  EXPECT_EQ(key_hash_slot("foo"), 12182);
  EXPECT_EQ(key_hash_slot("bar"), 5061);
  EXPECT_EQ(key_hash_slot("hello"), 866);
  EXPECT_EQ(key_hash_slot("lock"), 8718);
  EXPECT_EQ(key_hash_slot("stock"), 3902);
  EXPECT_EQ(key_hash_slot(""), 0);
  EXPECT_EQ(crc16_xmodem("123456789"), 0x31C3);  // the CRC's check value
}

TEST(ClusterSlot, HashTags) {
  EXPECT_EQ(key_hash_slot("{user1000}.following"), 3443);
  EXPECT_EQ(key_hash_slot("{user1000}.followers"), 3443);
  EXPECT_EQ(key_hash_slot("{lock}"), key_hash_slot("lock"));
  EXPECT_EQ(key_hash_slot("redisson_lock_queue:{lock}"), key_hash_slot("lock"));
  EXPECT_EQ(key_hash_slot("foo{}{bar}"), 8363);     // an empty tag: the whole key
  EXPECT_EQ(key_hash_slot("foo{{bar}}zap"), 4015);  // the tag is "{bar"
  EXPECT_EQ(key_hash_slot("foo{bar}{zap}"), 5061);  // the first tag only
  EXPECT_EQ(key_hash_slot("foo{bar"), crc16_xmodem("foo{bar") & 16383);  // unclosed: the whole key
}

// Three masters with the slot ranges redis-cli --cluster create gives, one replica each.
ClusterLayout three_masters() {
  ClusterLayout l;
  l.slot_first = {0, 5461, 10923};
  l.slot_last = {5460, 10922, 16383};
  for (int i = 0; i < 6; ++i) {
    ClusterLayout::Member m;
    m.id = std::string(39, '0') + std::to_string(i);
    m.host = i < 3 ? "node-" + std::to_string(i + 1) : "node-" + std::to_string(i - 2) + "-replica-1";
    m.shard = i % 3;
    m.master = i < 3;
    m.config_epoch = i < 3 ? static_cast<uint64_t>(i + 1) : 0;
    l.members.push_back(m);
  }
  l.current_epoch = 3;
  return l;
}

class ClusterNodeTest : public ::testing::Test {
 protected:
  // node-2: slots 5461-10922 ("bar" 5061 is node-1's, "lock" 8718 its own, "foo" 12182 node-3's).
  ClusterNodeTest() { node.set_cluster(three_masters(), 1); }
  Reply run(const Args& argv) { return node.execute(client, argv, 1000); }

  RedisNode node;
  ClientState client;
};

TEST_F(ClusterNodeTest, ServesItsOwnSlots) {
  EXPECT_EQ(run({"SET", "lock", "a"}), Reply::ok());
  EXPECT_EQ(run({"SET", "{lock}:owner", "b"}), Reply::ok());  // same slot through the tag
  EXPECT_EQ(run({"MGET", "lock", "{lock}:owner"}), Reply::array({Reply::bulk("a"), Reply::bulk("b")}));
  EXPECT_EQ(run({"PING"}), Reply::status("PONG"));  // no keys: any node
}

TEST_F(ClusterNodeTest, MovedToTheSlotsMaster) {
  EXPECT_EQ(run({"GET", "foo"}), Reply::error("MOVED 12182 node-3:6379"));
  EXPECT_EQ(run({"SET", "bar", "1"}), Reply::error("MOVED 5061 node-1:6379"));
  EXPECT_EQ(node.key_count(), 0u);
}

TEST_F(ClusterNodeTest, CrossSlot) {
  const Reply cross = Reply::error("CROSSSLOT Keys in request don't hash to the same slot");
  EXPECT_EQ(run({"MGET", "lock", "foo"}), cross);
  EXPECT_EQ(run({"DEL", "foo", "bar"}), cross);
  EXPECT_EQ(run({"MSET", "lock", "1", "stock", "2"}), cross);
  EXPECT_EQ(run({"EVAL", "return 1", "2", "lock", "stock"}), cross);
  EXPECT_EQ(run({"EVAL", "return 1", "2", "lock", "redisson_lock_queue:{lock}"}), Reply::integer_of(1));
  EXPECT_EQ(run({"MSET", "{lock}a", "1", "{lock}b", "2"}), Reply::ok());
}

TEST_F(ClusterNodeTest, ScriptsTouchOnlyLocalKeys) {
  // Reply text up to the script's sha, which the bridge appends as for every script error.
  Reply r = run({"EVAL", "return redis.call('get','foo')", "0"});
  ASSERT_TRUE(r.is_error());
  EXPECT_EQ(r.str.rfind("ERR Script attempted to access a non local key in a cluster node script: ", 0), 0u) << r.str;
  // Undeclared keys of another slot served here are fine in 7.0.15.
  EXPECT_EQ(run({"EVAL", "redis.call('set','lock','1'); return redis.call('get','{lock}x')", "1", "lock"}),
            Reply::nil());
}

TEST_F(ClusterNodeTest, TransactionsAreRedirectedAsAWhole) {
  EXPECT_EQ(run({"MULTI"}), Reply::ok());
  EXPECT_EQ(run({"SET", "lock", "1"}), Reply::status("QUEUED"));
  EXPECT_EQ(run({"GET", "foo"}), Reply::error("MOVED 12182 node-3:6379"));
  EXPECT_EQ(run({"EXEC"}).str.rfind("EXECABORT", 0), 0u);
  EXPECT_EQ(run({"MULTI"}), Reply::ok());
  EXPECT_EQ(run({"SET", "lock", "1"}), Reply::status("QUEUED"));
  EXPECT_EQ(run({"SET", "{lock}2", "1"}), Reply::status("QUEUED"));
  EXPECT_EQ(run({"EXEC"}), Reply::array({Reply::ok(), Reply::ok()}));
}

TEST_F(ClusterNodeTest, ReplicaRedirectsToItsMaster) {
  RedisNode replica;
  replica.set_cluster(three_masters(), 4);
  replica.set_replica(true);
  ClientState c;
  EXPECT_EQ(replica.execute(c, {"GET", "lock"}, 1000), Reply::error("MOVED 8718 node-2:6379"));
}

TEST_F(ClusterNodeTest, DownWhileAMasterIsFlaggedFail) {
  ClusterLayout l = three_masters();
  l.members[2].failed = true;
  node.set_cluster(l, 1);
  EXPECT_EQ(run({"GET", "lock"}), Reply::error("CLUSTERDOWN The cluster is down"));
  EXPECT_EQ(run({"PING"}), Reply::status("PONG"));
  Reply info = run({"CLUSTER", "INFO"});
  EXPECT_EQ(info.str.rfind("cluster_state:fail\r\n", 0), 0u) << info.str;
}

TEST_F(ClusterNodeTest, ClusterCommand) {
  EXPECT_EQ(run({"CLUSTER", "KEYSLOT", "foo"}), Reply::integer_of(12182));
  EXPECT_EQ(run({"CLUSTER", "KEYSLOT"}), Reply::error("ERR wrong number of arguments for 'cluster|keyslot' command"));
  EXPECT_EQ(run({"CLUSTER", "NOSUCH"}), Reply::error("ERR unknown subcommand 'NOSUCH'. Try CLUSTER HELP."));
  EXPECT_EQ(run({"CLUSTER", "MYID"}), Reply::bulk(std::string(39, '0') + "1"));
  const Reply slots = run({"CLUSTER", "SLOTS"});
  ASSERT_EQ(slots.elements.size(), 3u);
  EXPECT_EQ(slots.elements[1].elements[0], Reply::integer_of(5461));
  EXPECT_EQ(slots.elements[1].elements[1], Reply::integer_of(10922));
  EXPECT_EQ(slots.elements[1].elements[2].elements[0], Reply::bulk("node-2"));
  EXPECT_EQ(slots.elements[1].elements[3].elements[0], Reply::bulk("node-2-replica-1"));
  const Reply info = run({"CLUSTER", "INFO"});
  EXPECT_NE(info.str.find("cluster_state:ok\r\ncluster_slots_assigned:16384\r\n"), std::string::npos) << info.str;
  EXPECT_NE(info.str.find("cluster_known_nodes:6\r\ncluster_size:3\r\ncluster_current_epoch:3\r\ncluster_my_epoch:2\r\n"),
            std::string::npos)
      << info.str;
  EXPECT_EQ(run({"CLUSTER", "SHARDS"}).elements.size(), 3u);
}

TEST(ClusterDisabled, ClusterCommandSaysSo) {
  RedisNode node;
  ClientState c;
  EXPECT_EQ(node.execute(c, {"CLUSTER", "KEYSLOT", "foo"}, 0),
            Reply::error("ERR This instance has cluster support disabled"));
  EXPECT_EQ(node.execute(c, {"MGET", "foo", "bar"}, 0), Reply::array({Reply::nil(), Reply::nil()}));
}

}  // namespace
}  // namespace lockstep::sim

// ---- Scenarios: the topology.cluster field and simulated cluster runs ------------------

#include "lockstep/runner/scenario.h"
#include "lockstep/runner/sim_runner.h"
#include "scenario_files.h"

namespace lockstep::runner {
namespace {

using scenario_files::load;

int failovers(const RunOutcome& o) {
  int n = 0;
  for (const auto& e : o.history.events) n += e.type == checker::EventType::Truth && e.f == "failover";
  return n;
}

TEST(ClusterScenario, ClusterFieldReadsAndWritesBack) {
  const Scenario s = load("52-cluster-paused-master-loses-lock.json");
  EXPECT_EQ(s.topology.cluster.masters, 3);
  EXPECT_EQ(s.topology.cluster.replicas_per_master, 1);
  EXPECT_EQ(s.topology.cluster.node_timeout_ms, 2000);
  EXPECT_EQ(s.topology.nodes, 3);
  EXPECT_EQ(s.topology.replicas, 1);
  auto back = parse_scenario(to_json(s).dump(), s.file);
  ASSERT_TRUE(std::holds_alternative<Scenario>(back));
  EXPECT_EQ(std::get<Scenario>(back), s);
}

TEST(ClusterScenario, BadClusterFieldsAreRejectedWithTheirPath) {
  const auto path_of = [](const char* text) {
    auto r = parse_scenario(text, "t.json");
    return std::holds_alternative<ScenarioError>(r) ? std::get<ScenarioError>(r).path : std::string("accepted");
  };
  EXPECT_EQ(path_of(R"({"topology": {"cluster": {"masters": 2}}, "lock": {"algorithm": "redisson"}})"),
            "$.topology.cluster.masters");
  EXPECT_EQ(path_of(R"({"topology": {"cluster": {"master": 3}}, "lock": {"algorithm": "redisson"}})"),
            "$.topology.cluster.master");
  EXPECT_EQ(path_of(R"({"topology": {"nodes": 2, "cluster": {}}, "lock": {"algorithm": "redisson"}})"),
            "$.topology.nodes");
  EXPECT_EQ(path_of(R"({"topology": {"down_after_ms": 500, "cluster": {}}, "lock": {"algorithm": "redisson"}})"),
            "$.topology.down_after_ms");
  // Live, a partition of a cluster is not played; a delay is (the bus passes the proxy).
  EXPECT_EQ(path_of(R"({"worlds": ["sim", "live"], "topology": {"cluster": {}}, "lock": {"algorithm": "redisson"},
                        "faults": [{"kind": "partition", "groups": [["node-2"], ["node-1"]], "at_ms": 10, "duration_ms": 10}]})"),
            "$.worlds[1]");
  EXPECT_EQ(path_of(R"({"worlds": ["sim", "live"], "topology": {"cluster": {}}, "lock": {"algorithm": "redisson"},
                        "faults": [{"kind": "delay", "target": "node-2", "at_ms": 10, "duration_ms": 10, "delay_ms": 5}],
                        "expect": {"violations": []}})"), "accepted");
  EXPECT_EQ(path_of(R"({"worlds": ["live"], "topology": {"cluster": {}}, "lock": {"algorithm": "redisson"},
                        "expect": {"violations": []}})"), "accepted");
  EXPECT_EQ(path_of(R"({"topology": {"cluster": {}}, "workload": {"kind": "external", "command": "true"}})"),
            "$.topology");
}

TEST(ClusterScenario, MasterPausedPastNodeTimeoutLosesTheLock) {
  const RunOutcome o = run_in_sim(load("52-cluster-paused-master-loses-lock.json"));
  EXPECT_EQ(failovers(o), 1);
  EXPECT_EQ(o.report.found_violations(), (std::set<std::string>{"linearizability", "lost-update", "mutual-exclusion"}));
}

TEST(ClusterScenario, WaitForTheReplicaKeepsItSafe) {
  const RunOutcome o = run_in_sim(load("53-cluster-paused-master-wait-replicas.json"));
  EXPECT_EQ(failovers(o), 1);
  EXPECT_EQ(o.report.verdict, "safe");
}

TEST(ClusterScenario, PauseBelowNodeTimeoutFailsNothingOver) {
  const RunOutcome o = run_in_sim(load("54-cluster-pause-below-node-timeout.json"));
  EXPECT_EQ(failovers(o), 0);
  EXPECT_EQ(o.report.verdict, "safe");
  EXPECT_EQ(o.report.stats.value("sales", -1), 2);
}

TEST(ClusterScenario, CrossSlotStoreScriptFailsEveryWrite) {
  const RunOutcome o = run_in_sim(load("55-cluster-fenced-store-crossslot.json"));
  int failed_writes = 0, ok_writes = 0;
  for (const auto& e : o.history.events) {
    if (e.f != "write") continue;
    failed_writes += e.type == checker::EventType::Fail;
    ok_writes += e.type == checker::EventType::Ok;
  }
  EXPECT_EQ(ok_writes, 0);
  EXPECT_EQ(failed_writes, 2);
  EXPECT_EQ(o.report.stats.value("sales", -1), 0);
}

// Jitter below node_timeout is only slowness; above it, a failover of a node that never
// stopped, before the slowed stream brought the lock to its replica.
TEST(ClusterScenario, JitterFailsOverOnlyAboveNodeTimeout) {
  const RunOutcome below = run_in_sim(load("56-cluster-jitter-below-node-timeout.json"));
  EXPECT_EQ(failovers(below), 0);
  EXPECT_EQ(below.report.verdict, "safe");
  const RunOutcome above = run_in_sim(load("57-cluster-jitter-above-node-timeout.json"));
  EXPECT_EQ(failovers(above), 1);
  EXPECT_EQ(above.report.found_violations(),
            (std::set<std::string>{"linearizability", "lost-update", "mutual-exclusion"}));
}

// Redisson's fair and read-write locks name their helper keys after the lock so that every
// key of a script shares the lock's slot, whether or not the name carries its own hash tag.
TEST(ClusterScenario, FairAndReadWriteLocksKeepEveryScriptKeyInTheLocksSlot) {
  for (const char* algorithm : {"redisson-fair", "redisson-rw"}) {
    for (const char* key : {"lock", "{order}:lock"}) {
      SCOPED_TRACE(std::string(algorithm) + " on " + key);
      const std::string text = std::string(R"({"seed": 7, "duration_ms": 10000, "worlds": ["sim"],
        "topology": {"cluster": {"masters": 3, "replicas_per_master": 0}},
        "lock": {"algorithm": ")") + algorithm + R"(", "key": ")" + key + R"(", "lease_ms": 5000},
        "workload": {"clients": 3, "initial_stock": 10, "hold_ms": 50, "wait_ms": 8000},
        "expect": {"violations": []}})";
      auto parsed = parse_scenario(text, "tagged.json");
      ASSERT_TRUE(std::holds_alternative<Scenario>(parsed)) << std::get<ScenarioError>(parsed).message();
      const RunOutcome o = run_in_sim(std::get<Scenario>(parsed));
      EXPECT_EQ(o.report.verdict, "safe");
      EXPECT_EQ(o.report.stats.value("sales", -1), 3);
      EXPECT_EQ(o.history_jsonl.find("CROSSSLOT"), std::string::npos);
    }
  }
}

// Same scenario and seed: the same history, byte for byte.
TEST(ClusterScenario, RunsAreDeterministic) {
  const Scenario s = load("52-cluster-paused-master-loses-lock.json");
  EXPECT_EQ(run_in_sim(s).history_jsonl, run_in_sim(s).history_jsonl);
}

}  // namespace
}  // namespace lockstep::runner

// ---- The simulated world in cluster mode -----------------------------------------------

#include "lockstep/sim/world.h"
#include "sim_harness.h"

namespace lockstep::testing {
namespace {

// Three masters (replicas_per_master each) and one cluster client, client-1.
struct ClusterWorld {
  explicit ClusterWorld(int replicas_per_master) : world(SimHarness::options(1)) {
    for (int i = 1; i <= 3; ++i) world.add_node("node-" + std::to_string(i), sim::Clock());
    world.enable_cluster();
    for (int i = 1; i <= 3; ++i) {
      for (int r = 1; r <= replicas_per_master; ++r)
        world.add_replica(i - 1, "node-" + std::to_string(i) + "-replica-" + std::to_string(r), sim::Clock());
    }
    client = world.add_client("client-1", 1, sim::Clock());
  }
  template <typename F>
  void at_ms(int64_t t, F fn) {
    world.scheduler().at(t * kMs, std::move(fn));
  }
  std::string info(int shard) {
    sim::ClientState c;
    return world.redis(shard).execute(c, {"CLUSTER", "INFO"}, 0).str;
  }
  sim::World world;
  int client = -1;
};

Task<std::vector<Reply>> run_all(Env& env, std::vector<std::vector<std::string>> cmds) {
  std::vector<Reply> out;
  for (auto& c : cmds) out.push_back(co_await env.node(0).call(std::move(c), 1s));
  co_return out;
}

TEST(ClusterWorld, ClientsSeeOneNodeAndEveryKeyLandsOnItsSlotsMaster) {
  ClusterWorld w(1);
  Env& env = w.world.env(w.client);
  EXPECT_EQ(env.node_count(), 1);
  auto replies = std::make_shared<std::optional<std::vector<Reply>>>();
  using Cmds = std::vector<std::vector<std::string>>;
  Cmds cmds = {{"SET", "foo", "1"}, {"SET", "bar", "2"}, {"SET", "lock", "3"}, {"MGET", "foo", "bar"},
               {"WAIT", "1", "100"}};
  w.at_ms(0, [&] {
    env.spawn([](Env& e, std::shared_ptr<std::optional<std::vector<Reply>>> out, Cmds c) -> Task<void> {
      out->emplace(co_await run_all(e, std::move(c)));
    }(env, replies, cmds));
  });
  w.world.scheduler().run_until(1000 * kMs);
  ASSERT_TRUE(replies->has_value());
  const auto& r = **replies;
  EXPECT_EQ(r[0], Reply::ok());
  EXPECT_EQ(r[1], Reply::ok());
  EXPECT_EQ(r[2], Reply::ok());
  EXPECT_EQ(r[3], Reply::error("CROSSSLOT Keys in request don't hash to the same slot"));
  EXPECT_EQ(r[4], Reply::integer_of(1));  // on node-2, where the last keyed write went
  EXPECT_EQ(w.world.shard_of_key("bar"), 0);
  EXPECT_EQ(w.world.shard_of_key("lock"), 1);
  EXPECT_EQ(w.world.shard_of_key("foo"), 2);
  EXPECT_EQ(w.world.redis(0).peek_string("bar"), "2");
  EXPECT_EQ(w.world.redis(1).peek_string("lock"), "3");
  EXPECT_EQ(w.world.redis(2).peek_string("foo"), "1");
}

// Without a replica to elect, a master paused past node_timeout takes the cluster down
// (CLUSTERDOWN everywhere) until it answers again.
TEST(ClusterWorld, MasterWithoutReplicaBringsTheClusterDownUntilItReturns) {
  ClusterWorld w(0);
  w.world.start_cluster_failure_detector(500 * kMs, 5000 * kMs);
  w.at_ms(100, [&] { w.world.pause(w.world.node_process(0), 2000 * kMs); });
  std::string during, after;
  w.at_ms(1500, [&] { during = w.info(1); });
  w.at_ms(3000, [&] { after = w.info(1); });
  w.world.scheduler().run_until(3500 * kMs);
  EXPECT_EQ(during.rfind("cluster_state:fail", 0), 0u) << during;
  EXPECT_EQ(after.rfind("cluster_state:ok", 0), 0u) << after;
}

// The elected replica takes a new epoch; the old master rejoins as its replica and
// redirects to it.
TEST(ClusterWorld, ElectedReplicaTakesANewEpochAndTheOldMasterRedirects) {
  ClusterWorld w(1);
  w.world.start_cluster_failure_detector(500 * kMs, 5000 * kMs);
  const int old_master = w.world.node_process(1);
  w.at_ms(100, [&] { w.world.pause(old_master, 2000 * kMs); });
  w.world.scheduler().run_until(3000 * kMs);
  ASSERT_NE(w.world.node_process(1), old_master);
  EXPECT_NE(w.info(1).find("cluster_current_epoch:4\r\ncluster_my_epoch:4\r\n"), std::string::npos) << w.info(1);
  sim::ClientState c;
  EXPECT_EQ(w.world.process(old_master).redis->execute(c, {"GET", "lock"}, 0),
            Reply::error("MOVED 8718 node-2-replica-1:6379"));
}

}  // namespace
}  // namespace lockstep::testing
