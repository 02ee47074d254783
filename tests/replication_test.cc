// Replication, WAIT, failover and persistence in the simulated world.
#include <gtest/gtest.h>

#include "sim_harness.h"

namespace lockstep::testing {
namespace {

struct Replicated : SimHarness {
  Replicated() : SimHarness(0, 1, 1, 50) {
    replica = world.add_replica(0, "node-1-replica-1", sim::Clock());
    client = {world.add_client("client-1", 1, sim::Clock())};
  }
  sim::RedisNode& replica_node() { return *world.process(replica).redis; }
  int master() { return world.node_process(0); }
  int replica = -1;
};

TEST(Replication, ReplicaCatchesUpAfterTheLag) {
  Replicated h;
  auto set = slot<Reply>();
  h.start<Reply>(0, 0, set, [](Env& e) { return command(e, {"SET", "k", "v"}); });
  h.run_until_ms(30);
  EXPECT_FALSE(h.replica_node().peek_string("k"));
  h.run_until_ms(100);
  EXPECT_EQ(h.replica_node().peek_string("k"), "v");
}

TEST(Replication, WaitCountsReplicasThatConfirmed) {
  Replicated h;
  auto wait = slot<Reply>(), wait_short = slot<Reply>();
  h.start<Reply>(0, 0, wait_short, [](Env& e) -> Task<Reply> {
    std::vector<std::string> set{"SET", "a", "1"}, w{"WAIT", "1", "10"};
    co_await e.node(0).call(std::move(set), 1s);
    co_return co_await e.node(0).call(std::move(w), 1s);  // 10 ms < 50 ms lag: nobody yet
  });
  h.start<Reply>(0, 200, wait, [](Env& e) -> Task<Reply> {
    std::vector<std::string> set{"SET", "b", "1"}, w{"WAIT", "1", "1000"};
    co_await e.node(0).call(std::move(set), 1s);
    co_return co_await e.node(0).call(std::move(w), 2s);
  });
  h.run_until_ms(1000);
  EXPECT_TRUE((*wait_short)->is_integer(0));
  EXPECT_TRUE((*wait)->is_integer(1));
}

TEST(Replication, FailoverLosesWhatWasStillBuffered) {
  Replicated h;
  auto set = slot<Reply>(), get = slot<Reply>();
  h.start<Reply>(0, 0, set, [](Env& e) { return command(e, {"SET", "k", "v"}); });
  h.world.scheduler().at(10 * kMs, [&h] { h.world.crash(h.master()); });
  h.world.scheduler().at(20 * kMs, [&h] { ASSERT_TRUE(h.world.failover(0)); });
  h.start<Reply>(0, 30, get, [](Env& e) { return command(e, {"GET", "k"}); });
  h.run_until_ms(200);
  EXPECT_TRUE((*set)->is_ok());
  EXPECT_EQ(h.world.node_process(0), h.replica);
  EXPECT_TRUE((*get)->is_nil());  // acknowledged, then lost
}

TEST(Replication, OldMasterRejoinsAsAReplicaAndDropsDivergentWrites) {
  Replicated h;
  const int old_master = h.master();
  auto set = slot<Reply>(), after = slot<Reply>();
  h.start<Reply>(0, 0, set, [](Env& e) { return command(e, {"SET", "k", "old"}); });
  h.world.scheduler().at(10 * kMs, [&h] { h.world.crash(h.master()); });
  h.world.scheduler().at(20 * kMs, [&h] { h.world.failover(0); });
  h.start<Reply>(0, 30, after, [](Env& e) { return command(e, {"SET", "j", "new"}); });
  h.world.scheduler().at(100 * kMs, [&h, old_master] { h.world.restart(old_master); });
  h.run_until_ms(300);
  auto& old = *h.world.process(old_master).redis;
  EXPECT_TRUE(old.is_replica());
  EXPECT_FALSE(old.peek_string("k"));
  EXPECT_EQ(old.peek_string("j"), "new");
}

TEST(Replication, JitterShorterThanDownAfterCausesNoFailover) {
  Replicated h;
  h.world.start_failure_detector(500 * kMs, 100 * kMs, 5000 * kMs);
  const int master = h.master();
  // 150 ms more each way: every PONG is 300 ms late, well inside down_after.
  h.world.scheduler().at(1000 * kMs, [&h, master] { h.world.network().add_extra_delay(master, 150 * kMs); });
  h.world.scheduler().at(1400 * kMs, [&h, master] { h.world.network().add_extra_delay(master, -150 * kMs); });
  h.run_until_ms(5000);
  EXPECT_EQ(h.world.node_process(0), master);
}

TEST(Replication, SilenceLongerThanDownAfterFailsOver) {
  Replicated h;
  h.world.start_failure_detector(500 * kMs, 100 * kMs, 5000 * kMs);
  h.world.scheduler().at(1000 * kMs, [&h] { h.world.pause(h.master(), 2000 * kMs); });
  h.run_until_ms(5000);
  EXPECT_EQ(h.world.node_process(0), h.replica);
}

TEST(Replication, MinReplicasToWriteRefusesWritesWithoutAGoodReplica) {
  SimHarness h(0, 0);
  auto o = SimHarness::options(1);
  o.min_replicas_to_write = 1;
  sim::World w(o);
  w.add_node("node-1", sim::Clock());
  const int replica = w.add_replica(0, "node-1-replica-1", sim::Clock());
  const int c = w.add_client("client-1", 1, sim::Clock());
  auto before = slot<Reply>(), during = slot<Reply>(), read = slot<Reply>();
  auto start = [&](int64_t at_ms, std::shared_ptr<std::optional<Reply>> out, std::vector<std::string> argv) {
    w.scheduler().at(at_ms * kMs, [&w, c, out, argv] {
      w.env(c).spawn([](Env& e, std::shared_ptr<std::optional<Reply>> out, std::vector<std::string> argv) -> Task<void> {
        out->emplace(co_await e.node(0).call(std::move(argv), 1s));
      }(w.env(c), out, argv));
    });
  };
  start(0, before, {"SET", "k", "1"});
  w.scheduler().at(10 * kMs, [&w, replica] { w.crash(replica); });
  start(20, during, {"SET", "k", "2"});
  start(20, read, {"GET", "k"});
  w.scheduler().run_until(100 * kMs);
  EXPECT_TRUE((*before)->is_ok());
  EXPECT_EQ(**during, Reply::error("NOREPLICAS Not enough good replicas to write."));
  EXPECT_EQ(**read, Reply::bulk("1"));
}

struct Persisted {
  static std::optional<std::string> after_restart(sim::Persistence p, int64_t crash_ms) {
    SimHarness h(1, 0);
    h.world.add_node("node-1", sim::Clock(), p);
    auto set = slot<Reply>();
    h.start<Reply>(0, 0, set, [](Env& e) { return command(e, {"SET", "k", "v"}); });
    const int node = h.world.node_process(0);
    h.world.scheduler().at(crash_ms * kMs, [&h, node] { h.world.crash(node); });
    h.world.scheduler().at((crash_ms + 10) * kMs, [&h, node] { h.world.restart(node); });
    h.run_until_ms(crash_ms + 20);
    return h.world.redis(0).peek_string("k");
  }
};

TEST(Persistence, NoneRestartsEmpty) { EXPECT_FALSE(Persisted::after_restart(sim::Persistence::None, 500)); }
TEST(Persistence, AofAlwaysKeepsEveryWrite) {
  EXPECT_EQ(Persisted::after_restart(sim::Persistence::AofAlways, 5), "v");
}
TEST(Persistence, AofEverysecLosesTheLastSecond) {
  EXPECT_FALSE(Persisted::after_restart(sim::Persistence::AofEverysec, 500));
  EXPECT_EQ(Persisted::after_restart(sim::Persistence::AofEverysec, 1500), "v");
}

}  // namespace
}  // namespace lockstep::testing
