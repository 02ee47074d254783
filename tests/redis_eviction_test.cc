// RedisNode under maxmemory: the memory model's figures, each eviction policy's choice of
// victim, the OOM refusals of redis-server 7.0.15 (commands, MULTI, scripts), CONFIG
// GET/SET replies, INFO fields, evictions replicated as DEL and reported to the observer.
#include <gtest/gtest.h>

#include "lockstep/sim/redis_node.h"
#include "reply_print.h"

namespace lockstep::sim {
namespace {

using Args = std::vector<std::string>;

constexpr const char* kOom = "OOM command not allowed when used memory > 'maxmemory'.";
constexpr int64_t kT0 = 1'700'000'000'000;

class EvictionTest : public ::testing::Test {
 protected:
  Reply run(const Args& argv) { return node.execute(client, argv, now); }
  // Caps memory `room` bytes above what the node uses now.
  void cap(int64_t room, const std::string& policy) {
    ASSERT_EQ(run({"CONFIG", "SET", "maxmemory-policy", policy}), Reply::ok());
    ASSERT_EQ(run({"CONFIG", "SET", "maxmemory", std::to_string(node.used_memory() + room)}), Reply::ok());
  }
  std::string value(size_t n) { return std::string(n, 'x'); }

  RedisNode node;
  ClientState client;
  int64_t now = kT0;
};

TEST_F(EvictionTest, AFreshNodeStartsWhereAFreshServerDoes) {
  // A fresh redis-server 7.0.15 tells its first client 914,704 to 914,896 bytes; each
  // command's first run then adds its latency histogram, INFO's own after it answers.
  EXPECT_EQ(node.used_memory(), 914'800);
  EXPECT_NE(run({"INFO", "memory"}).str.find("used_memory:914800\r\n"), std::string::npos);
  EXPECT_NE(run({"INFO", "memory"}).str.find("used_memory:939488\r\n"), std::string::npos);
  run({"PING"});
  run({"PING"});
  EXPECT_EQ(node.used_memory(), 914'800 + 2 * 24'688);
}

TEST_F(EvictionTest, AStringKeyGrowsUsedMemoryAsOnTheServer) {
  // Deltas measured on redis-server 7.0.15: MEMORY USAGE ("a" 64, 44 bytes 96 as an
  // embstr, 45 bytes 112 raw, 100 bytes 160) plus 8 for the dictEntry's 32-byte class;
  // an integer of 0..9999 is a shared object and costs its key alone.
  run({"SET", "warm", "up"});
  run({"FLUSHALL"});
  const int64_t base = node.used_memory();
  auto cost = [&](const std::string& key, const std::string& v) {
    const int64_t before = node.used_memory();
    run({"SET", key, v});
    return node.used_memory() - before;
  };
  // The first key also brings the main dict's table of 4 buckets.
  EXPECT_EQ(cost("k1", "a"), 64 + 8 + 32);
  EXPECT_EQ(cost("k2", "12345"), 48 + 8);
  EXPECT_EQ(cost("k3", "90"), 48 + 8 - 16);
  EXPECT_EQ(cost("lock", value(44)), 96 + 8);
  const int64_t before = node.used_memory();
  run({"SET", "k1", value(100)});
  EXPECT_EQ(node.used_memory() - before, 160 - 64);
  run({"FLUSHALL"});
  EXPECT_EQ(node.used_memory(), base);
}

TEST_F(EvictionTest, NoevictionRefusesWritesThatGrowMemoryOnly) {
  run({"SET", "k", "v"});
  run({"RPUSH", "l", "a"});
  ASSERT_EQ(run({"CONFIG", "SET", "maxmemory", "1"}), Reply::ok());
  for (const Args& a : std::vector<Args>{{"SET", "k", "w"}, {"SETNX", "n", "v"}, {"INCR", "c"}, {"HSET", "h", "f", "v"},
                                         {"LPUSH", "l", "b"}, {"ZADD", "z", "1", "m"}, {"MSET", "a", "b"}})
    EXPECT_EQ(run(a), Reply::error(kOom)) << a[0];
  EXPECT_EQ(run({"GET", "k"}), Reply::bulk("v"));
  EXPECT_EQ(run({"PEXPIRE", "k", "100000"}), Reply::integer_of(1));
  EXPECT_EQ(run({"LPOP", "l"}), Reply::bulk("a"));
  EXPECT_EQ(run({"DEL", "k"}), Reply::integer_of(1));
  EXPECT_EQ(node.evicted_keys(), 0);
}

TEST_F(EvictionTest, InsideMultiEverythingButExecAndDiscardIsRefused) {
  ASSERT_EQ(run({"CONFIG", "SET", "maxmemory", "1"}), Reply::ok());
  EXPECT_EQ(run({"MULTI"}), Reply::ok());
  EXPECT_EQ(run({"GET", "a"}), Reply::error(kOom));
  EXPECT_EQ(run({"EXEC"}), Reply::error("EXECABORT Transaction discarded because of previous errors."));
  // Memory ran out between queueing and EXEC: EXEC itself is refused.
  ASSERT_EQ(run({"CONFIG", "SET", "maxmemory", "0"}), Reply::ok());
  EXPECT_EQ(run({"MULTI"}), Reply::ok());
  EXPECT_EQ(run({"SET", "a", "b"}), Reply::status("QUEUED"));
  ClientState other;
  ASSERT_EQ(node.execute(other, {"CONFIG", "SET", "maxmemory", "1"}, now), Reply::ok());
  EXPECT_EQ(run({"EXEC"}),
            Reply::error("EXECABORT Transaction discarded because of: OOM command not allowed when used memory > "
                         "'maxmemory'."));
  EXPECT_EQ(run({"MULTI"}), Reply::ok());
  EXPECT_EQ(run({"DISCARD"}), Reply::ok());
}

TEST_F(EvictionTest, ScriptsAreRefusedAtTheirFirstWriteThatGrowsMemory) {
  ASSERT_EQ(run({"CONFIG", "SET", "maxmemory", "1"}), Reply::ok());
  const std::string sha = "ee5bed0f6963e93a14eebfb64f07c299c1b4313f";
  EXPECT_EQ(run({"EVAL", "return redis.call('set', KEYS[1], 'x')", "1", "k"}),
            Reply::error(std::string(kOom) + " script: " + sha + ", on @user_script:1."));
  EXPECT_EQ(run({"EVAL", "return redis.pcall('set', KEYS[1], 'x')", "1", "k"}), Reply::error(kOom));
  // Once a script has written anything it runs to the end.
  EXPECT_EQ(run({"EVAL", "redis.call('del', 'z') return redis.call('set', KEYS[1], 'x')", "1", "k"}), Reply::ok());
  EXPECT_EQ(run({"EVAL", "return redis.call('get', KEYS[1])", "1", "k"}), Reply::bulk("x"));
}

TEST_F(EvictionTest, VolatilePoliciesEvictOnlyKeysWithATtlThenRefuse) {
  for (int i = 0; i < 10; ++i) run({"SET", "p" + std::to_string(i), value(1000)});
  run({"SET", "lock", "owner", "PX", "100000"});
  cap(500, "volatile-lru");
  // Eviction runs before a command: the write that overshoots runs, the next one evicts.
  EXPECT_EQ(run({"SET", "big", value(1000)}), Reply::ok());
  EXPECT_EQ(run({"EXISTS", "lock"}), Reply::integer_of(0));
  EXPECT_EQ(node.evicted_keys(), 1);
  EXPECT_EQ(run({"SET", "big2", value(1000)}), Reply::error(kOom));  // nothing volatile left
  EXPECT_EQ(run({"DBSIZE"}), Reply::integer_of(11));
}

TEST_F(EvictionTest, VolatileTtlEvictsTheNearestExpiryFirst) {
  std::vector<std::string> gone;
  node.set_observer([&](const KeyChange& k) {
    if (k.kind == KeyChange::Kind::Evict) gone.push_back(k.key);
  });
  for (int i = 0; i < 20; ++i) run({"SET", "c" + std::to_string(i), value(500), "PX", std::to_string(3'600'000 - i)});
  run({"SET", "lock", "owner", "PX", "20000"});
  run({"SET", "persistent", value(500)});
  cap(100, "volatile-ttl");
  ASSERT_EQ(run({"CONFIG", "SET", "maxmemory-samples", "30"}), Reply::ok());  // sees every key: exact order
  run({"SET", "n", value(1600)});
  run({"PING"});
  EXPECT_EQ(gone, (std::vector<std::string>{"lock", "c19", "c18", "c17"}));
}

TEST_F(EvictionTest, AllkeysLruEvictsTheLeastRecentlyUsed) {
  for (int i = 0; i < 8; ++i) {
    run({"SET", "k" + std::to_string(i), value(1000)});
    now += 2000;  // the LRU clock counts seconds
  }
  for (int i = 1; i < 8; ++i) run({"GET", "k" + std::to_string(i)});
  now += 2000;
  run({"GET", "k0"});  // k0 becomes the most recent; k1 the oldest
  cap(500, "allkeys-lru");
  ASSERT_EQ(run({"CONFIG", "SET", "maxmemory-samples", "10"}), Reply::ok());  // sees every key
  run({"SET", "new", value(1000)});
  run({"PING"});  // eviction runs before the command after the one that overshot
  EXPECT_FALSE(node.peek_string("k1"));
  EXPECT_TRUE(node.peek_string("k0"));
}

TEST_F(EvictionTest, AllkeysLfuEvictsTheLeastFrequentlyUsed) {
  ASSERT_EQ(run({"CONFIG", "SET", "maxmemory-policy", "allkeys-lfu"}), Reply::ok());
  for (int i = 0; i < 8; ++i) run({"SET", "k" + std::to_string(i), value(1000)});
  ASSERT_EQ(run({"CONFIG", "SET", "maxmemory", "1000000000"}), Reply::ok());  // accesses count from here
  for (int n = 0; n < 200; ++n)
    for (int i = 0; i < 8; ++i)
      if (i != 5) run({"GET", "k" + std::to_string(i)});
  cap(500, "allkeys-lfu");
  ASSERT_EQ(run({"CONFIG", "SET", "maxmemory-samples", "10"}), Reply::ok());
  run({"SET", "new", value(1000)});
  run({"PING"});
  EXPECT_FALSE(node.peek_string("k5"));
  EXPECT_EQ(node.evicted_keys(), 1);
}

TEST_F(EvictionTest, RandomPoliciesDrawFromTheNodesStream) {
  auto victims = [](uint64_t seed, const char* policy) {
    RedisNode n;
    n.set_random(Rng(seed, "node-1/evict"));
    ClientState c;
    std::vector<std::string> gone;
    n.set_observer([&](const KeyChange& k) {
      if (k.kind == KeyChange::Kind::Evict) gone.push_back(k.key);
    });
    for (int i = 0; i < 30; ++i) n.execute(c, {"SET", "k" + std::to_string(i), std::string(500, 'x'), "PX", "100000"}, kT0);
    n.execute(c, {"CONFIG", "SET", "maxmemory-policy", policy}, kT0);
    n.execute(c, {"CONFIG", "SET", "maxmemory", std::to_string(n.used_memory() - 3000)}, kT0);
    n.execute(c, {"GET", "k0"}, kT0);
    return gone;
  };
  for (const char* policy : {"allkeys-random", "volatile-random"}) {
    const auto a = victims(1, policy);
    EXPECT_GE(a.size(), 5u) << policy;
    EXPECT_EQ(a, victims(1, policy)) << policy;
    EXPECT_NE(a, victims(2, policy)) << policy;
  }
}

TEST_F(EvictionTest, EvictionIsReportedWithItsOwnerAndReplicatedAsDel) {
  std::vector<KeyChange> changes;
  std::vector<Args> stream;
  node.set_observer([&](const KeyChange& k) { changes.push_back(k); });
  node.set_propagator([&](const Args& a) { stream.push_back(a); });
  ClientState holder;
  holder.process = 7;
  node.execute(holder, {"SET", "lock", "tok-7", "PX", "100000"}, now);
  for (int i = 0; i < 5; ++i) run({"SET", "c" + std::to_string(i), value(1000)});
  cap(100, "volatile-lru");
  client.process = 3;
  run({"SET", "c9", value(1000)});
  stream.clear();
  changes.clear();
  EXPECT_EQ(run({"GET", "c9"}).type, Reply::Type::Bulk);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].kind, KeyChange::Kind::Evict);
  EXPECT_EQ(changes[0].key, "lock");
  EXPECT_EQ(changes[0].value, "tok-7");
  EXPECT_EQ(changes[0].writer, 7);
  EXPECT_EQ(changes[0].by_process, -1);
  EXPECT_EQ(stream, (std::vector<Args>{{"DEL", "lock"}}));
}

TEST_F(EvictionTest, ReplicaNeverEvictsItself) {
  node.set_replica(true);
  ClientState link;
  link.is_master_link = true;
  node.execute(link, {"SET", "lock", "x", "PX", "100000"}, now);
  node.execute(link, {"CONFIG", "SET", "maxmemory", "1"}, now);
  node.execute(link, {"CONFIG", "SET", "maxmemory-policy", "allkeys-random"}, now);
  EXPECT_EQ(node.execute(link, {"SET", "k", "v"}, now), Reply::ok());
  EXPECT_EQ(node.key_count(), 2u);
}

TEST_F(EvictionTest, ConfigGetAndSetReplyAsRedisServer) {
  EXPECT_EQ(run({"CONFIG", "GET", "maxmemory-policy"}),
            Reply::array({Reply::bulk("maxmemory-policy"), Reply::bulk("noeviction")}));
  EXPECT_EQ(run({"CONFIG", "SET", "maxmemory-policy", "ALLKEYS-LRU"}), Reply::ok());
  EXPECT_EQ(run({"config", "get", "MAXMEMORY-POLICY"}),
            Reply::array({Reply::bulk("MAXMEMORY-POLICY"), Reply::bulk("allkeys-lru")}));
  EXPECT_EQ(run({"CONFIG", "SET", "maxmemory", "1kb"}), Reply::ok());
  EXPECT_EQ(run({"CONFIG", "GET", "maxmemory"}), Reply::array({Reply::bulk("maxmemory"), Reply::bulk("1024")}));
  EXPECT_EQ(run({"CONFIG", "SET", "maxmemory", "2G"}), Reply::ok());
  EXPECT_EQ(run({"CONFIG", "GET", "maxmemory"}), Reply::array({Reply::bulk("maxmemory"), Reply::bulk("2000000000")}));
  EXPECT_EQ(run({"CONFIG", "SET", "maxmemory", "1.5mb"}),
            Reply::error("ERR CONFIG SET failed (possibly related to argument 'maxmemory') - argument must be a "
                         "memory value"));
  EXPECT_EQ(run({"CONFIG", "SET", "maxmemory-policy", "bogus"}),
            Reply::error("ERR CONFIG SET failed (possibly related to argument 'maxmemory-policy') - argument(s) "
                         "must be one of the following: volatile-lru, volatile-lfu, volatile-random, volatile-ttl, "
                         "allkeys-lru, allkeys-lfu, allkeys-random, noeviction"));
  EXPECT_EQ(run({"CONFIG", "SET", "maxmemory-samples", "007"}),
            Reply::error("ERR CONFIG SET failed (possibly related to argument 'maxmemory-samples') - argument "
                         "couldn't be parsed into an integer"));
  EXPECT_EQ(run({"CONFIG", "SET", "lfu-log-factor", "-1"}),
            Reply::error("ERR CONFIG SET failed (possibly related to argument 'lfu-log-factor') - argument must be "
                         "between 0 and 2147483647 inclusive"));
  EXPECT_EQ(run({"CONFIG", "SET", "maxmemory-samples", "5", "maxmemory-samples", "6"}),
            Reply::error("ERR CONFIG SET failed (possibly related to argument 'maxmemory-samples') - duplicate "
                         "parameter"));
  EXPECT_EQ(run({"CONFIG", "SET", "nosuch", "1"}),
            Reply::error("ERR Unknown option or number of arguments for CONFIG SET - 'nosuch'"));
  EXPECT_EQ(run({"CONFIG", "SET", "maxmemory-samples"}),
            Reply::error("ERR wrong number of arguments for 'config|set' command"));
  EXPECT_EQ(run({"CONFIG", "bogus"}), Reply::error("ERR unknown subcommand 'bogus'. Try CONFIG HELP."));
  EXPECT_EQ(run({"CONFIG", "GET", "nosuch"}), Reply::array({}));
  // A bad pair leaves the good ones before it unapplied.
  EXPECT_EQ(run({"CONFIG", "SET", "maxmemory-samples", "9", "maxmemory", "x"}).is_error(), true);
  EXPECT_EQ(run({"CONFIG", "GET", "maxmemory-samples"}),
            Reply::array({Reply::bulk("maxmemory-samples"), Reply::bulk("5")}));
}

TEST_F(EvictionTest, InfoShowsTheModelsFields) {
  run({"CONFIG", "SET", "maxmemory", "10mb"});
  run({"CONFIG", "SET", "maxmemory-policy", "volatile-ttl"});
  const int64_t used = node.used_memory();
  const Reply memory = run({"INFO", "memory"});
  EXPECT_NE(memory.str.find("used_memory:" + std::to_string(used) + "\r\n"), std::string::npos);
  EXPECT_NE(memory.str.find("maxmemory:10485760\r\nmaxmemory_human:10.00M\r\nmaxmemory_policy:volatile-ttl\r\n"),
            std::string::npos);
  run({"SET", "k", "v", "PX", "1"});
  now += 10;
  run({"GET", "k"});
  EXPECT_NE(run({"INFO", "stats"}).str.find("expired_keys:1\r\nevicted_keys:0\r\n"), std::string::npos);
  EXPECT_EQ(run({"INFO", "keyspace"}), Reply::bulk(""));
  // redis-server 7.0.15 prints maxmemory with %lld and its human form unsigned.
  run({"CONFIG", "SET", "maxmemory", "18446744073709551615"});
  EXPECT_NE(run({"INFO", "memory"}).str.find("maxmemory:-1\r\nmaxmemory_human:18446744073709551615B\r\n"),
            std::string::npos);
}

}  // namespace
}  // namespace lockstep::sim
