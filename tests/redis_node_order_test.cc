// RedisNode's hashed keyspace and its replication stream: whatever the node reports in
// an order (a flush's deletions, active expiry's sample) follows the keys' sorted order,
// never the order of a hash table, so two nodes that hold the same keys behave the same
// however the keys arrived; a key re-created in a deleted key's storage inherits nothing
// from it; a stream without contents counts the same effects.
#include <gtest/gtest.h>

#include <algorithm>

#include "lockstep/random.h"
#include "lockstep/sim/redis_node.h"

namespace lockstep::sim {
namespace {

using Args = std::vector<std::string>;

std::vector<std::string> some_keys() {
  std::vector<std::string> keys;
  for (int i = 0; i < 60; ++i) keys.push_back("key:" + std::to_string((i * 37) % 60));
  keys.push_back("a");
  keys.push_back("lock");
  return keys;
}

// The keys the observer saw removed, in the order it saw them.
std::vector<std::string> removed_keys(RedisNode& node, const std::vector<std::string>& keys, bool expire) {
  std::vector<std::string> seen;
  ClientState c;
  for (const auto& k : keys) node.execute(c, {"SET", k, "v", "PX", "10"}, 1000);
  node.set_observer([&](const KeyChange& ch) {
    if (ch.kind != KeyChange::Kind::Set) seen.push_back(ch.key);
  });
  if (expire) {
    Rng rng(7, "expire");
    node.active_expire_cycle(5000, rng);
  } else {
    node.flush_all();
  }
  return seen;
}

TEST(RedisNodeOrder, FlushReportsDeletionsInKeyOrder) {
  const std::vector<std::string> keys = some_keys();
  RedisNode node;
  std::vector<std::string> sorted = keys;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(removed_keys(node, keys, false), sorted);
}

TEST(RedisNodeOrder, ActiveExpiryDoesNotDependOnInsertionOrder) {
  const std::vector<std::string> keys = some_keys();
  std::vector<std::string> reversed(keys.rbegin(), keys.rend());
  RedisNode a, b;
  const auto first = removed_keys(a, keys, true);
  EXPECT_EQ(first.size(), keys.size());  // every sample was all expired: it went on
  EXPECT_EQ(removed_keys(b, reversed, true), first);
}

TEST(RedisNodeOrder, ReusedStorageCarriesNothingOver) {
  RedisNode node;
  ClientState a, b;
  a.process = 1;
  b.process = 2;
  auto run = [&](ClientState& c, const Args& argv) { return node.execute(c, argv, 1000); };
  for (int round = 0; round < 3; ++round) {
    run(a, {"SET", "old-string", std::string(40, 'x'), "PX", "100000"});
    run(a, {"HSET", "old-hash", "f", "v"});
    run(a, {"RPUSH", "old-list", "x"});
    run(a, {"DEL", "old-string", "old-hash", "old-list"});
    EXPECT_EQ(run(b, {"SET", "fresh", "7"}), Reply::ok());
    EXPECT_EQ(run(b, {"PTTL", "fresh"}), Reply::integer_of(-1));
    EXPECT_EQ(node.writer_of("fresh"), 2);
    EXPECT_EQ(run(b, {"STRLEN", "fresh"}), Reply::integer_of(1));
    EXPECT_EQ(run(b, {"INCR", "fresh"}), Reply::integer_of(8));
    EXPECT_EQ(run(b, {"HSET", "fresh-hash", "g", "w"}), Reply::integer_of(1));
    EXPECT_EQ(run(b, {"HGETALL", "fresh-hash"}), Reply::array({Reply::bulk("g"), Reply::bulk("w")}));
    EXPECT_EQ(run(b, {"LLEN", "fresh-list"}), Reply::integer_of(0));
    run(b, {"DEL", "fresh", "fresh-hash"});
  }
  EXPECT_EQ(node.key_count(), 0u);
}

TEST(RedisNodeOrder, StreamWithoutContentsCountsTheSameEffects) {
  const std::vector<Args> commands = {
      {"SET", "k", "v", "PX", "5"},
      {"MULTI"},
      {"SET", "a", "1"},
      {"RPUSH", "l", "x"},
      {"EXEC"},
      {"EVAL", "redis.call('set', 'b', '2') return redis.call('del', 'a')", "0"},
      {"EVAL", "return redis.call('incr', 'n')", "0"},
      {"PUBLISH", "c", "m"},
      {"GET", "k"},  // expired by now: streamed as DEL
  };
  auto stream_of = [&](bool contents) {
    RedisNode node;
    ClientState c;
    std::vector<Args> stream;
    node.set_propagator([&](const Args& a) { stream.push_back(a); });
    node.set_stream_contents(contents);
    int64_t now = 1000;
    for (const auto& argv : commands) node.execute(c, argv, now += 3);
    return stream;
  };
  const auto full = stream_of(true);
  const auto counted = stream_of(false);
  ASSERT_EQ(full.size(), 12u);  // SET; MULTI SET RPUSH EXEC; MULTI SET DEL EXEC; INCR; PUBLISH; DEL
  EXPECT_EQ(full.front(), (Args{"SET", "k", "v", "PXAT", "1008"}));
  EXPECT_EQ(full.back(), (Args{"DEL", "k"}));
  ASSERT_EQ(counted.size(), full.size());
  for (const auto& argv : counted) EXPECT_TRUE(argv.empty());
}

}  // namespace
}  // namespace lockstep::sim
