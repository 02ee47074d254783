// Redis Cluster in the live world, against real `redis-server --cluster-enabled yes`
// processes the tests start themselves: the cluster forms with the simulator's slot
// ranges and names every member by its fault-proxy port; a LiveEnv cluster client and a
// simulated one get the same replies, byte for byte, for the same commands; a master
// paused past node_timeout is failed over by the cluster itself; every server goes at the
// end. Nothing here waits on a fixed time: setup waits for cluster_state:ok, faults fire
// on the scenario's events.
#include <gtest/gtest.h>
#include <signal.h>

#include <cerrno>
#include <filesystem>
#include <memory>
#include <optional>

#include "lockstep/cluster_slot.h"
#include "lockstep/live/cluster.h"
#include "lockstep/live/live_world.h"
#include "lockstep/live/redis_server.h"
#include "lockstep/runner/live_runner.h"
#include "lockstep/runner/sim_runner.h"
#include "lockstep/sim/world.h"
#include "live_support.h"
#include "sim_harness.h"
#include "scenario_files.h"

namespace lockstep {
namespace {

using Cmds = std::vector<std::vector<std::string>>;

using live_support::has_redis;

using live_support::expect_all_gone;

Task<std::vector<Reply>> run_all(Env& env, Cmds cmds) {
  std::vector<Reply> out;
  for (auto& c : cmds) out.push_back(co_await env.node(0).call(std::move(c), Millis(2000)));
  co_return out;
}

// Keys in all three masters' slots, a hash tag, a multi-key command in one slot and
// across slots, scripts touching a local and a remote key, and WAIT after a write.
const Cmds kCommands = {
    {"SET", "foo", "1"},
    {"SET", "bar", "2"},
    {"SET", "lock", "3"},
    {"INCR", "lock"},
    {"SET", "{user1000}.following", "a"},
    {"SET", "{user1000}.followers", "b"},
    {"MGET", "{user1000}.following", "{user1000}.followers"},
    {"MGET", "foo", "bar"},
    {"DEL", "foo", "bar"},
    {"GET", "lock"},
    {"EVAL", "return redis.call('GET', KEYS[1])", "1", "bar"},
    {"EVAL", "return redis.call('GET', 'foo')", "1", "bar"},
    {"CLUSTER", "KEYSLOT", "lock"},
    {"SET", "stock", "10"},
    {"WAIT", "1", "2000"},
    {"DEL", "foo"},
    {"GET", "foo"},
};

// The same commands through a simulated cluster client of three masters with a replica.
std::vector<Reply> in_sim() {
  sim::World world(testing::SimHarness::options(1));
  for (int i = 1; i <= 3; ++i) world.add_node("node-" + std::to_string(i), sim::Clock());
  world.enable_cluster();
  for (int i = 1; i <= 3; ++i) world.add_replica(i - 1, "node-" + std::to_string(i) + "-replica-1", sim::Clock());
  const int client = world.add_client("client-1", 1, sim::Clock());
  auto out = std::make_shared<std::optional<std::vector<Reply>>>();
  world.scheduler().at(0, [&world, client, out] {
    Env& env = world.env(client);
    env.spawn([](Env& e, std::shared_ptr<std::optional<std::vector<Reply>>> o) -> Task<void> {
      o->emplace(co_await run_all(e, kCommands));
    }(env, out));
  });
  world.scheduler().run_until(10'000 * testing::kMs);
  return out->value_or(std::vector<Reply>{});
}

class LiveClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!has_redis()) GTEST_SKIP() << "redis-server not installed: live tests need it";
    started_before = live::started_server_pids().size();
    world = std::make_unique<live::LiveWorld>(11);
    cluster = std::make_unique<live::Cluster>(*world);
    live::ClusterSpec spec;
    spec.nodes = 3;
    spec.replicas = 1;
    spec.cluster_node_timeout_ms = 2000;
    spec.run_ms = 10'000;
    ASSERT_EQ(cluster->start(spec), "");
  }
  void TearDown() override {
    if (!world) return;
    world->stop_all();
    cluster.reset();
    world.reset();
    const std::vector<pid_t> all = live::started_server_pids();
    ASSERT_EQ(all.size() - started_before, 6u);
    expect_all_gone(std::vector<pid_t>(all.begin() + static_cast<long>(started_before), all.end()));
  }

  size_t started_before = 0;
  std::unique_ptr<live::LiveWorld> world;
  std::unique_ptr<live::Cluster> cluster;
};

// node-N serves the slots it serves in the simulator, and CLUSTER SLOTS names each member
// by its proxy port, never its own: a client that follows the cluster goes through the
// proxy.
TEST_F(LiveClusterTest, FormsWithTheSimulatorsSlotsBehindTheProxy) {
  const auto& members = world->cluster_members();
  ASSERT_EQ(members.size(), 6u);
  for (const auto& m : members) EXPECT_NE(m.announced.port, m.server.port);
  std::vector<int> first, last;
  split_slots(3, first, last);
  const Reply slots = live::sync_command(world->node_address(0), {"CLUSTER", "SLOTS"}, Millis(2000));
  ASSERT_EQ(slots.type, Reply::Type::Array) << to_short_text(slots);
  ASSERT_EQ(slots.elements.size(), 3u);
  for (const Reply& range : slots.elements) {
    // first, last, master, and the replica once it has reported a replication offset
    ASSERT_GE(range.elements.size(), 3u) << to_short_text(range);
    int node = -1;
    for (int n = 0; n < 3; ++n) node = range.elements[0].integer == first[static_cast<size_t>(n)] ? n : node;
    ASSERT_GE(node, 0) << to_short_text(range);
    EXPECT_EQ(range.elements[1].integer, last[static_cast<size_t>(node)]);
    const int master_port = static_cast<int>(range.elements[2].elements[1].integer);
    // Members are listed shard by shard, master first.
    EXPECT_EQ(master_port, members[static_cast<size_t>(2 * node)].announced.port);
    if (range.elements.size() > 3) {
      EXPECT_EQ(range.elements[3].elements[1].integer, members[static_cast<size_t>(2 * node + 1)].announced.port);
    }
  }
  const Reply moved = live::sync_command(world->node_address(0), {"GET", "lock"}, Millis(2000));
  EXPECT_EQ(moved, Reply::error("MOVED 8718 127.0.0.1:" + std::to_string(members[2].announced.port)));
}

// The live cluster client and the simulator's follow the cluster alike: the same replies,
// byte for byte, for keys on every master, redirected scripts and CROSSSLOT.
TEST_F(LiveClusterTest, ClusterClientAnswersAsInTheSimulatorLive) {
  const std::vector<Reply> sim = in_sim();
  ASSERT_EQ(sim.size(), kCommands.size());
  const int client = world->add_client("client-1", 1);
  world->route = [this](int c, int node, const live::NodeAddress& a) {
    live::NodeAddress via;
    live::FaultProxy::LinkSpec link{world->client_name(c), cluster->server_name(a), node, a,
                                    live::FaultProxy::Framing::Resp, Nanos(0)};
    return cluster->proxy().route(link, via).empty() ? via : a;
  };
  int proxied = 0;
  cluster->proxy().on_message = [&proxied](const live::ProxyMessage& m) { proxied += m.reply ? 1 : 0; };
  ASSERT_EQ(world->env(client).node_count(), 1);
  auto out = std::make_shared<std::optional<std::vector<Reply>>>();
  world->spawn(client, [](Env& e, std::shared_ptr<std::optional<std::vector<Reply>>> o) -> Task<void> {
    o->emplace(co_await run_all(e, kCommands));
  }(world->env(client), out));
  ASSERT_TRUE(world->loop().run_until([&] { return out->has_value(); }, Millis(20'000)));
  const std::vector<Reply>& live = **out;
  for (size_t i = 0; i < kCommands.size(); ++i) {
    EXPECT_EQ(to_short_text(live[i]), to_short_text(sim[i])) << "command " << i << ": " << kCommands[i][0];
  }
  // Every reply crossed the proxy: the client never reached a server directly.
  EXPECT_GE(proxied, static_cast<int>(kCommands.size()));
}

// Scenario 52 live: the cluster, not lockstep, elects node-2's replica after node_timeout,
// and the lock goes with the paused master.
TEST(LiveClusterScenario, PausedMasterIsFailedOverByTheClusterLive) {
  if (!has_redis()) GTEST_SKIP() << "redis-server not installed: live tests need it";
  auto r = runner::load_scenario_file(std::string(LOCKSTEP_SOURCE_DIR) + "/scenarios/52-cluster-paused-master-loses-lock.json");
  ASSERT_TRUE(std::holds_alternative<runner::Scenario>(r));
  const size_t started_before = live::started_server_pids().size();
  runner::RunOutcome o = runner::run_live(std::get<runner::Scenario>(r));
  ASSERT_FALSE(o.report.stats.contains("error")) << o.report.stats.dump();
  EXPECT_EQ(o.report.found_violations(), (std::set<std::string>{"linearizability", "lost-update", "mutual-exclusion"}))
      << o.history_jsonl;
  const checker::Event* failover = nullptr;
  bool lost_with_master = false;
  for (const auto& e : o.history.events) {
    if (e.type == checker::EventType::Truth && e.f == "failover" && !failover) failover = &e;
    lost_with_master = lost_with_master || (e.f == "key-del" && e.extra.value("cause", "") == "failover" &&
                                            e.extra.value("owner", -1) == 1);
  }
  ASSERT_NE(failover, nullptr) << o.history_jsonl;
  EXPECT_EQ(failover->value["by"], "cluster");
  EXPECT_EQ(failover->value["from"], "node-2");
  EXPECT_EQ(failover->value["to"], "node-2-replica-1");
  // Past node_timeout after the pause (at about 0.1 s), before client-2 arrives (5.5 s).
  EXPECT_GT(failover->time_ns, 2'000'000'000);
  EXPECT_LT(failover->time_ns, 5'500'000'000);
  EXPECT_TRUE(lost_with_master) << o.history_jsonl;
  const std::vector<pid_t> all = live::started_server_pids();
  ASSERT_EQ(all.size() - started_before, 6u);
  expect_all_gone(std::vector<pid_t>(all.begin() + static_cast<long>(started_before), all.end()));
}

// A requested failover in a cluster is the replica's CLUSTER FAILOVER TAKEOVER, 100 ms
// after the lock was set and before the 300 ms replication lag passed: the replica takes
// the slots without the lock, in both worlds.
TEST(LiveClusterScenario, RequestedFailoverIsATakeoverLive) {
  if (!has_redis()) GTEST_SKIP() << "redis-server not installed: live tests need it";
  auto r = runner::parse_scenario(R"({
    "seed": 7, "duration_ms": 6000, "worlds": ["sim", "live"],
    "topology": {"cluster": {"masters": 3, "replicas_per_master": 1, "node_timeout_ms": 2000}, "replication_lag_ms": 300},
    "lock": {"algorithm": "redisson", "lease_ms": 20000, "retry": {"count_max": 2000, "delay_ms": 10, "jitter_ms": 10}},
    "workload": {"clients": 2, "initial_stock": 10, "hold_ms": 3000, "wait_ms": 5000, "start_stagger_ms": 1500},
    "faults": [{"kind": "failover", "target": "node-2", "on": {"process": "node-2", "sets": "lock", "delay_ms": 100}}],
    "expect": {"violations": ["linearizability", "lost-update", "mutual-exclusion"]}})",
                                  "takeover.json");
  ASSERT_TRUE(std::holds_alternative<runner::Scenario>(r)) << std::get<runner::ScenarioError>(r).message();
  const runner::Scenario& s = std::get<runner::Scenario>(r);
  const runner::RunOutcome sim = runner::run_in_sim(s);
  const runner::RunOutcome live = runner::run_live(s);
  ASSERT_FALSE(live.report.stats.contains("error")) << live.report.stats.dump();
  scenario_files::expect_shipped_verdict(sim.report, s);
  scenario_files::expect_shipped_verdict(live.report, s, live.history_jsonl);
  bool by_cluster = false;
  for (const auto& e : live.history.events)
    by_cluster = by_cluster || (e.f == "failover" && e.value.value("by", "") == "cluster" && e.value.value("to", "") == "node-2-replica-1");
  EXPECT_TRUE(by_cluster) << live.history_jsonl;
}

}  // namespace
}  // namespace lockstep
