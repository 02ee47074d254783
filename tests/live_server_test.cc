// Server faults on real redis-server processes: SIGSTOP makes calls time out and SIGCONT
// brings them back; a crash and restart keeps the lock key with aof-always and loses it
// without persistence; a failover re-points clients to the promoted replica; a server
// clock jump (lockstep's clock library preloaded) expires keys early. Every server is gone afterwards.
#include <gtest/gtest.h>
#include <signal.h>

#include <optional>
#include <thread>

#include "lockstep/live/live_world.h"
#include "lockstep/live/redis_server.h"
#include "live_support.h"

namespace lockstep::live {
namespace {

using Argv = std::vector<std::string>;

using live_support::persisted_config;

class LiveServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (find_redis_server().empty()) GTEST_SKIP() << "redis-server not installed: live tests need it";
    farm = std::make_unique<ServerFarm>();
    ASSERT_EQ(farm->error(), "");
  }
  void TearDown() override {
    std::vector<pid_t> mine;
    if (farm) {
      for (auto& s : farm->servers()) mine.push_back(s->pid());
    }
    world.reset();
    farm.reset();
    for (pid_t pid : mine) {
      if (pid > 0) {
        EXPECT_EQ(::kill(pid, 0), -1) << "server " << pid << " left running";
      }
    }
  }

  RedisServer* start(ServerConfig c) {
    RedisServer* s = farm->start(c);
    EXPECT_NE(s, nullptr) << farm->error();
    return s;
  }

  void make_world(const NodeAddress& a) {
    world = std::make_unique<LiveWorld>(1);
    world->add_node(a);
    client = world->add_client("client-1", 1);
  }

  std::optional<Reply> call(Argv argv, Nanos timeout = Millis(1000)) {
    auto out = std::make_shared<std::optional<Reply>>();
    auto body = [](LiveEnv& env, Argv argv, Nanos timeout, auto slot) -> Task<void> {
      slot->emplace(co_await env.node(0).call(std::move(argv), timeout));
    };
    world->spawn(client, body(world->env(client), std::move(argv), timeout, out));
    world->loop().run_until([&] { return out->has_value(); }, timeout + Millis(3000));
    return *out;
  }

  static Reply sync(const RedisServer& s, Argv argv) { return sync_command(s.address(), argv, Millis(2000)); }

  std::unique_ptr<ServerFarm> farm;
  std::unique_ptr<LiveWorld> world;
  int client = 0;
};

TEST_F(LiveServerTest, PausedServerTimesOutAndRecoversAfterSigcont) {
  RedisServer* s = start(persisted_config("node-1"));
  ASSERT_NE(s, nullptr);
  make_world(s->address());
  EXPECT_EQ(call({"PING"}), Reply::status("PONG"));
  s->pause();
  EXPECT_EQ(call({"SET", "k", "v"}, Millis(200)), Reply::timeout());
  s->resume();
  // The late reply to SET is discarded; the next call gets its own answer.
  EXPECT_EQ(call({"GET", "k"}, Millis(2000)), Reply::bulk("v"));
}

TEST_F(LiveServerTest, CrashAndRestartKeepsTheKeyWithAofAlways) {
  RedisServer* s = start(persisted_config("node-1", Persistence::AofAlways));
  ASSERT_NE(s, nullptr);
  EXPECT_TRUE(sync(*s, {"SET", "lock", "token", "PX", "60000"}).is_ok());
  s->kill();
  EXPECT_FALSE(s->running());
  ASSERT_EQ(s->restart(true), "");
  EXPECT_EQ(sync(*s, {"GET", "lock"}), Reply::bulk("token"));
}

TEST_F(LiveServerTest, CrashAndRestartLosesTheKeyWithoutPersistence) {
  RedisServer* s = start(persisted_config("node-1", Persistence::None));
  ASSERT_NE(s, nullptr);
  const int port = s->address().port;
  EXPECT_TRUE(sync(*s, {"SET", "lock", "token", "PX", "60000"}).is_ok());
  s->kill();
  ASSERT_EQ(s->restart(true), "");
  EXPECT_EQ(s->address().port, port);
  EXPECT_EQ(sync(*s, {"GET", "lock"}), Reply::nil());
}

TEST_F(LiveServerTest, FailoverRepointsClientsToThePromotedReplica) {
  RedisServer* master = start(persisted_config("node-1"));
  ASSERT_NE(master, nullptr);
  ServerConfig rc = persisted_config("node-1-replica-1");
  rc.replica_of = master->address();
  RedisServer* replica = start(rc);
  ASSERT_NE(replica, nullptr);
  make_world(master->address());
  EXPECT_EQ(call({"SET", "stock", "7"}), Reply::ok());
  // Replication is asynchronous: wait (bounded) until the replica has the key.
  for (int i = 0; i < 100 && sync(*replica, {"GET", "stock"}) != Reply::bulk("7"); ++i)
    std::this_thread::sleep_for(Millis(20));
  EXPECT_TRUE(sync(*replica, {"REPLICAOF", "NO", "ONE"}).is_ok());
  world->set_node_address(0, replica->address());
  EXPECT_EQ(call({"SET", "after", "1"}), Reply::ok());  // a replica would refuse writes
  EXPECT_EQ(sync(*replica, {"GET", "stock"}), Reply::bulk("7"));
  EXPECT_EQ(sync(*master, {"GET", "after"}), Reply::nil());
}

// min-replicas-to-write reaches the real server: a master without its replica refuses a
// lock write with NOREPLICAS, as the simulated node does, and takes it once the replica
// is connected.
TEST_F(LiveServerTest, MinReplicasToWriteRefusesWritesUntilAReplicaIsConnected) {
  ServerConfig mc = persisted_config("node-1");
  mc.min_replicas_to_write = 1;
  RedisServer* master = start(mc);
  ASSERT_NE(master, nullptr);
  Reply refused = sync(*master, {"SET", "lock", "token", "NX", "PX", "30000"});
  ASSERT_TRUE(refused.is_error()) << to_short_text(refused);
  EXPECT_EQ(refused.str.rfind("NOREPLICAS", 0), 0u) << refused.str;
  ServerConfig rc = persisted_config("node-1-replica-1");
  rc.replica_of = master->address();
  ASSERT_NE(start(rc), nullptr);
  Reply r = refused;
  for (int i = 0; i < 150 && r.is_error(); ++i) {
    std::this_thread::sleep_for(Millis(20));
    r = sync(*master, {"SET", "lock", "token", "NX", "PX", "30000"});
  }
  EXPECT_EQ(r, Reply::ok());
}

TEST_F(LiveServerTest, ServerClockJumpExpiresKeysEarly) {
  ASSERT_EQ(shifted_clock_unusable_reason(), "");
  ServerConfig c = persisted_config("node-1");
  c.shifted_clock = true;
  RedisServer* s = start(c);
  ASSERT_NE(s, nullptr);
  EXPECT_TRUE(sync(*s, {"SET", "lock", "token", "PX", "30000"}).is_ok());
  ASSERT_TRUE(s->set_clock_offset(Millis(60'000)));
  // The server's wall clock is now a minute ahead: the 30 s lease has run out for it.
  std::optional<Reply> seen;
  for (int i = 0; i < 100; ++i) {
    seen = sync(*s, {"GET", "lock"});
    if (*seen == Reply::nil()) break;
    std::this_thread::sleep_for(Millis(20));
  }
  EXPECT_EQ(seen, Reply::nil());
}

TEST(LiveServerSafety, StartedServersAreChildrenOnDistinctFreePortsAndGoAway) {
  if (find_redis_server().empty()) GTEST_SKIP() << "redis-server not installed: live tests need it";
  std::vector<pid_t> pids;
  {
    ServerFarm farm;
    RedisServer* a = farm.start(persisted_config("node-1"));
    RedisServer* b = farm.start(persisted_config("node-2"));
    ASSERT_NE(a, nullptr);
    ASSERT_NE(b, nullptr);
    EXPECT_NE(a->address().port, b->address().port);
    EXPECT_NE(a->address().port, 6379);
    pids = {a->pid(), b->pid()};
    b->pause();  // a stopped server must be removed too
  }
  for (pid_t pid : pids) EXPECT_EQ(::kill(pid, 0), -1) << "server " << pid << " left running";
}

}  // namespace
}  // namespace lockstep::live
