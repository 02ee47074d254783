// RedisNode: exact replies of the keyspace commands (texts checked against
// redis-server 7.0.15), lazy and active expiry on the node's own clock, observer events
// and writers, transactions, pub/sub, replication stream and snapshots.
#include "lockstep/sim/redis_node.h"
#include "reply_print.h"

#include <gtest/gtest.h>

namespace lockstep::sim {
namespace {

using Args = std::vector<std::string>;

class RedisNodeTest : public ::testing::Test {
 protected:
  Reply run(const Args& argv, int64_t now = 1000) { return node.execute(client, argv, now); }
  Reply run_as(ClientState& c, const Args& argv, int64_t now = 1000) {
    return node.execute(c, argv, now);
  }

  RedisNode node;
  ClientState client;
};

using reply_short::bulk;
using reply_short::err;
using reply_short::num;

TEST_F(RedisNodeTest, SetAndGet) {
  EXPECT_EQ(run({"SET", "k", "v"}), Reply::ok());
  EXPECT_EQ(run({"GET", "k"}), bulk("v"));
  EXPECT_EQ(run({"get", "nokey"}), Reply::nil());
  EXPECT_EQ(run({"STRLEN", "k"}), num(1));
  EXPECT_EQ(run({"STRLEN", "nokey"}), num(0));
  EXPECT_EQ(run({"TYPE", "k"}), Reply::status("string"));
  EXPECT_EQ(run({"TYPE", "nokey"}), Reply::status("none"));
}

TEST_F(RedisNodeTest, SetNxXxGet) {
  EXPECT_EQ(run({"SET", "k", "a", "NX"}), Reply::ok());
  EXPECT_EQ(run({"SET", "k", "b", "NX"}), Reply::nil());
  EXPECT_EQ(run({"SET", "x", "b", "XX"}), Reply::nil());
  EXPECT_EQ(run({"SET", "k", "c", "XX"}), Reply::ok());
  EXPECT_EQ(run({"SET", "k", "d", "GET"}), bulk("c"));
  EXPECT_EQ(run({"SET", "k", "e", "NX", "GET"}), bulk("d"));  // aborted, old value
  EXPECT_EQ(run({"SET", "new", "e", "GET"}), Reply::nil());
  EXPECT_EQ(run({"GET", "k"}), bulk("d"));
  EXPECT_EQ(run({"SETNX", "k", "z"}), num(0));
  EXPECT_EQ(run({"SETNX", "k2", "z"}), num(1));
  EXPECT_EQ(run({"GET", "k2"}), bulk("z"));
}

TEST_F(RedisNodeTest, SetSyntaxErrors) {
  EXPECT_EQ(run({"SET", "k"}), err("ERR wrong number of arguments for 'set' command"));
  EXPECT_EQ(run({"SET", "k", "v", "NX", "XX"}), err("ERR syntax error"));
  EXPECT_EQ(run({"SET", "k", "v", "PX"}), err("ERR syntax error"));
  EXPECT_EQ(run({"SET", "k", "v", "KEEPTTL", "EX", "10"}), err("ERR syntax error"));
  EXPECT_EQ(run({"SET", "k", "v", "EX", "10", "PX", "10"}), err("ERR syntax error"));
  EXPECT_EQ(run({"SET", "k", "v", "FOO"}), err("ERR syntax error"));
  EXPECT_EQ(run({"SET", "k", "v", "PX", "abc"}),
            err("ERR value is not an integer or out of range"));
  EXPECT_EQ(run({"SET", "k", "v", "PX", "0"}), err("ERR invalid expire time in 'set' command"));
  EXPECT_EQ(run({"SET", "k", "v", "EX", "-1"}), err("ERR invalid expire time in 'set' command"));
  EXPECT_EQ(run({"SET", "k", "v", "EXAT", "0"}), err("ERR invalid expire time in 'set' command"));
  EXPECT_EQ(run({"SET", "k", "v", "EX", "9223372036854775807"}),
            err("ERR invalid expire time in 'set' command"));
  EXPECT_EQ(run({"SET", "k", "v", "PX", "9223372036854775807"}),
            err("ERR invalid expire time in 'set' command"));
  EXPECT_EQ(node.key_count(), 0u);
}

TEST_F(RedisNodeTest, SetExpiryOptions) {
  EXPECT_EQ(run({"SET", "a", "v", "PX", "1500"}), Reply::ok());
  EXPECT_EQ(run({"PTTL", "a"}), num(1500));
  EXPECT_EQ(run({"TTL", "a"}), num(2));  // rounded: (1500 + 500) / 1000
  EXPECT_EQ(run({"SET", "b", "v", "EX", "10"}), Reply::ok());
  EXPECT_EQ(run({"PTTL", "b"}), num(10000));
  EXPECT_EQ(run({"SET", "c", "v", "PXAT", "5000"}), Reply::ok());
  EXPECT_EQ(run({"PTTL", "c"}), num(4000));
  EXPECT_EQ(run({"SET", "d", "v", "EXAT", "5"}), Reply::ok());
  EXPECT_EQ(run({"PTTL", "d"}), num(4000));
  EXPECT_EQ(run({"SET", "a", "w", "KEEPTTL"}), Reply::ok());
  EXPECT_EQ(run({"PTTL", "a"}), num(1500));
  EXPECT_EQ(run({"SET", "a", "w"}), Reply::ok());
  EXPECT_EQ(run({"PTTL", "a"}), num(-1));
  EXPECT_EQ(run({"PTTL", "zz"}), num(-2));
  EXPECT_EQ(run({"TTL", "zz"}), num(-2));
}

// Redis compares now > expire: at the exact expiry millisecond the key still exists with
// PTTL 0; one millisecond later it is gone.
TEST_F(RedisNodeTest, LazyExpiryOnNodeClock) {
  EXPECT_EQ(run({"SET", "k", "v", "PX", "100"}, 1000), Reply::ok());
  EXPECT_EQ(run({"GET", "k"}, 1099), bulk("v"));
  EXPECT_EQ(run({"PTTL", "k"}, 1100), num(0));
  EXPECT_EQ(run({"GET", "k"}, 1101), Reply::nil());
  EXPECT_EQ(node.key_count(), 0u);
}

TEST_F(RedisNodeTest, ClockJumpExpiresEarly) {
  run({"SET", "lock", "me", "PX", "30000"}, 1000);
  EXPECT_EQ(run({"EXISTS", "lock"}, 1000 + 5000), num(1));
  EXPECT_EQ(run({"SET", "lock", "you", "NX", "PX", "30000"}, 1000 + 60000), Reply::ok());
  EXPECT_EQ(run({"GET", "lock"}, 61000), bulk("you"));
}

TEST_F(RedisNodeTest, ExpiredKeyStaysUntilTouched) {
  run({"SET", "k", "v", "PX", "10"}, 1000);
  EXPECT_EQ(node.key_count(), 1u);
  EXPECT_EQ(node.peek_string("k"), "v");  // introspection never expires
  EXPECT_EQ(run({"DBSIZE"}, 5000), num(1));
  EXPECT_EQ(run({"EXISTS", "k"}, 5000), num(0));
  EXPECT_EQ(run({"DBSIZE"}, 5000), num(0));
}

TEST_F(RedisNodeTest, ActiveExpiry) {
  for (int i = 0; i < 50; ++i) run({"SET", "k" + std::to_string(i), "v", "PX", "10"}, 1000);
  run({"SET", "keep", "v", "PX", "100000"}, 1000);
  run({"SET", "forever", "v"}, 1000);
  Rng rng(7, "expire");
  node.active_expire_cycle(1005, rng);
  EXPECT_EQ(node.key_count(), 52u);  // nothing due yet
  node.active_expire_cycle(2000, rng);
  EXPECT_EQ(node.key_count(), 2u);
  EXPECT_EQ(node.peek_string("keep"), "v");
  EXPECT_EQ(node.peek_string("forever"), "v");
}

TEST_F(RedisNodeTest, DelExistsMultiKey) {
  run({"SET", "a", "1"});
  run({"SET", "b", "2"});
  EXPECT_EQ(run({"EXISTS", "a", "b", "c", "a"}), num(3));
  EXPECT_EQ(run({"DEL", "a", "b", "c"}), num(2));
  EXPECT_EQ(run({"DEL", "a"}), num(0));
  EXPECT_EQ(run({"DEL"}), err("ERR wrong number of arguments for 'del' command"));
}

TEST_F(RedisNodeTest, ExpireCommands) {
  EXPECT_EQ(run({"EXPIRE", "k", "10"}), num(0));
  run({"SET", "k", "v"});
  EXPECT_EQ(run({"EXPIRE", "k", "10"}), num(1));
  EXPECT_EQ(run({"PTTL", "k"}), num(10000));
  EXPECT_EQ(run({"PEXPIRE", "k", "500"}), num(1));
  EXPECT_EQ(run({"PTTL", "k"}), num(500));
  EXPECT_EQ(run({"PEXPIRE", "k", "100", "GT"}), num(0));
  EXPECT_EQ(run({"PEXPIRE", "k", "100", "LT"}), num(1));
  EXPECT_EQ(run({"PEXPIRE", "k", "900", "NX"}), num(0));
  EXPECT_EQ(run({"PEXPIRE", "k", "900", "XX"}), num(1));
  EXPECT_EQ(run({"EXPIRE", "k", "abc"}), err("ERR value is not an integer or out of range"));
  EXPECT_EQ(run({"EXPIRE", "k", "10", "foo"}), err("ERR Unsupported option foo"));
  EXPECT_EQ(run({"EXPIRE", "k", "10", "nx", "xx"}),
            err("ERR NX and XX, GT or LT options at the same time are not compatible"));
  EXPECT_EQ(run({"EXPIRE", "k", "10", "gt", "lt"}),
            err("ERR GT and LT options at the same time are not compatible"));
  EXPECT_EQ(run({"EXPIRE", "k", "9223372036854775807"}),
            err("ERR invalid expire time in 'expire' command"));
  EXPECT_EQ(run({"PEXPIRE", "k", "0"}), num(1));  // in the past: deleted at once
  EXPECT_EQ(run({"EXISTS", "k"}), num(0));
}

TEST_F(RedisNodeTest, IncrDecr) {
  EXPECT_EQ(run({"INCR", "n"}), num(1));
  EXPECT_EQ(run({"INCRBY", "n", "10"}), num(11));
  EXPECT_EQ(run({"DECR", "n"}), num(10));
  EXPECT_EQ(run({"DECRBY", "n", "20"}), num(-10));
  EXPECT_EQ(run({"GET", "n"}), bulk("-10"));
  EXPECT_EQ(run({"INCRBY", "n", "1.5"}), err("ERR value is not an integer or out of range"));
  run({"SET", "s", "abc"});
  EXPECT_EQ(run({"INCR", "s"}), err("ERR value is not an integer or out of range"));
  run({"SET", "z", "007"});
  EXPECT_EQ(run({"INCR", "z"}), err("ERR value is not an integer or out of range"));
  run({"SET", "big", "9223372036854775807"});
  EXPECT_EQ(run({"INCR", "big"}), err("ERR increment or decrement would overflow"));
  EXPECT_EQ(run({"DECRBY", "x", "-9223372036854775808"}), err("ERR decrement would overflow"));
  run({"SET", "t", "5", "PX", "1000"});
  EXPECT_EQ(run({"INCR", "t"}), num(6));
  EXPECT_EQ(run({"PTTL", "t"}), num(1000));  // INCR keeps the TTL
}

TEST_F(RedisNodeTest, WrongType) {
  run({"LPUSH", "l", "a"});
  const Reply wrongtype = err("WRONGTYPE Operation against a key holding the wrong kind of value");
  EXPECT_EQ(run({"GET", "l"}), wrongtype);
  EXPECT_EQ(run({"INCR", "l"}), wrongtype);
  EXPECT_EQ(run({"STRLEN", "l"}), wrongtype);
  EXPECT_EQ(run({"SET", "l", "v", "GET"}), wrongtype);
  EXPECT_EQ(run({"SET", "l", "v"}), Reply::ok());  // plain SET overwrites any type
  EXPECT_EQ(run({"TYPE", "l"}), Reply::status("string"));
}

TEST_F(RedisNodeTest, ConnectionAndServerCommands) {
  EXPECT_EQ(run({"PING"}), Reply::status("PONG"));
  EXPECT_EQ(run({"PING", "hi"}), bulk("hi"));
  EXPECT_EQ(run({"PING", "a", "b"}), err("ERR wrong number of arguments for 'ping' command"));
  EXPECT_EQ(run({"ECHO", "x"}), bulk("x"));
  EXPECT_EQ(run({"ECHO"}), err("ERR wrong number of arguments for 'echo' command"));
  run({"SET", "a", "1"});
  EXPECT_EQ(run({"DBSIZE"}), num(1));
  EXPECT_EQ(run({"DBSIZE", "x"}), err("ERR wrong number of arguments for 'dbsize' command"));
  EXPECT_EQ(run({"FLUSHALL", "x"}), err("ERR syntax error"));
  EXPECT_EQ(run({"FLUSHALL", "ASYNC"}), Reply::ok());
  EXPECT_EQ(run({"DBSIZE"}), num(0));
}

// An observer with a gate sees exactly the changes made while the gate is open, and the
// one it sees after a closed stretch describes that change, not an earlier one.
TEST_F(RedisNodeTest, ObserverGateDecidesWhichChangesAreDescribed) {
  std::vector<KeyChange> events;
  bool open = false;
  node.set_observer([&](const KeyChange& c) { events.push_back(c); }, [&] { return open; });
  ClientState p1;
  p1.process = 1;
  run_as(p1, {"SET", "a", "1"}, 1000);
  run_as(p1, {"DEL", "a"}, 1000);
  EXPECT_TRUE(events.empty());
  open = true;
  run_as(p1, {"SET", "b", "2"}, 1000);
  open = false;
  run_as(p1, {"SET", "c", "3"}, 1000);
  open = true;
  run_as(p1, {"DEL", "c"}, 1000);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].kind, KeyChange::Kind::Set);
  EXPECT_EQ(events[0].key, "b");
  EXPECT_EQ(events[0].value, "2");
  EXPECT_EQ(events[1].kind, KeyChange::Kind::Del);
  EXPECT_EQ(events[1].key, "c");
  EXPECT_EQ(events[1].value, "3");
  EXPECT_EQ(events[1].by_process, 1);
}

TEST_F(RedisNodeTest, UnknownCommand) {
  EXPECT_EQ(run({"foo", "a", "b"}),
            err("ERR unknown command 'foo', with args beginning with: 'a' 'b' "));
  EXPECT_EQ(run({"FOO"}), err("ERR unknown command 'FOO', with args beginning with: "));
  EXPECT_EQ(run({"GET"}), err("ERR wrong number of arguments for 'get' command"));
}

TEST_F(RedisNodeTest, ObserverSeesSetDelExpireWithWriters) {
  std::vector<KeyChange> events;
  node.set_observer([&](const KeyChange& c) { events.push_back(c); });
  ClientState p1, p2;
  p1.process = 1;
  p2.process = 2;
  run_as(p1, {"SET", "lock", "t1", "PX", "100"}, 1000);
  EXPECT_EQ(node.writer_of("lock"), 1);
  run_as(p2, {"SET", "lock", "t2", "NX"}, 1050);  // refused: no event
  run_as(p2, {"GET", "lock"}, 1200);              // lazy expiry
  run_as(p2, {"SET", "lock", "t2"}, 1200);
  run_as(p1, {"DEL", "lock"}, 1300);
  EXPECT_EQ(node.writer_of("lock"), -1);
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[0].kind, KeyChange::Kind::Set);
  EXPECT_EQ(events[0].value, "t1");
  EXPECT_EQ(events[0].writer, 1);
  EXPECT_EQ(events[0].by_process, 1);
  EXPECT_EQ(events[1].kind, KeyChange::Kind::Expire);
  EXPECT_EQ(events[1].value, "t1");
  EXPECT_EQ(events[1].writer, 1);
  EXPECT_EQ(events[1].by_process, -1);
  EXPECT_EQ(events[2].kind, KeyChange::Kind::Set);
  EXPECT_EQ(events[2].writer, 2);
  EXPECT_EQ(events[3].kind, KeyChange::Kind::Del);
  EXPECT_EQ(events[3].value, "t2");
  EXPECT_EQ(events[3].writer, 2);
  EXPECT_EQ(events[3].by_process, 1);
}

TEST_F(RedisNodeTest, ActiveExpiryFiresExpireEvents) {
  std::vector<KeyChange> events;
  node.set_observer([&](const KeyChange& c) { events.push_back(c); });
  client.process = 4;
  run({"SET", "k", "v", "PX", "5"}, 1000);
  Rng rng(1, "x");
  node.active_expire_cycle(2000, rng);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1].kind, KeyChange::Kind::Expire);
  EXPECT_EQ(events[1].writer, 4);
}

TEST_F(RedisNodeTest, FlushAllForgetsEverything) {
  run({"SET", "a", "1"});
  run({"LPUSH", "l", "x"});
  node.flush_all();
  EXPECT_EQ(node.key_count(), 0u);
  EXPECT_EQ(node.peek_string("a"), std::nullopt);
}

// ---- Step 2: aggregates ----------------------------------------------------------------

TEST_F(RedisNodeTest, Hashes) {
  EXPECT_EQ(run({"HSET", "h", "b", "1", "a", "2"}), num(2));
  EXPECT_EQ(run({"HSET", "h", "b", "3"}), num(0));
  EXPECT_EQ(run({"HGETALL", "h"}),
            Reply::array({bulk("b"), bulk("3"), bulk("a"), bulk("2")}));  // insertion order
  EXPECT_EQ(run({"HGET", "h", "a"}), bulk("2"));
  EXPECT_EQ(run({"HGET", "h", "zz"}), Reply::nil());
  EXPECT_EQ(run({"HMGET", "h", "a", "zz"}), Reply::array({bulk("2"), Reply::nil()}));
  EXPECT_EQ(run({"HINCRBY", "h", "a", "5"}), num(7));
  EXPECT_EQ(run({"HINCRBY", "h", "a", "x"}), err("ERR value is not an integer or out of range"));
  EXPECT_EQ(run({"HSETNX", "h", "a", "9"}), num(0));
  EXPECT_EQ(run({"HSETNX", "h", "c", "9"}), num(1));
  EXPECT_EQ(run({"HEXISTS", "h", "c"}), num(1));
  EXPECT_EQ(run({"HLEN", "h"}), num(3));
  EXPECT_EQ(run({"HDEL", "h", "a", "b", "c", "zz"}), num(3));
  EXPECT_EQ(run({"EXISTS", "h"}), num(0));  // an empty hash is no key
  EXPECT_EQ(run({"HSET", "h", "a"}), err("ERR wrong number of arguments for 'hset' command"));
  run({"SET", "s", "v"});
  EXPECT_EQ(run({"HGET", "s", "a"}),
            err("WRONGTYPE Operation against a key holding the wrong kind of value"));
  run({"HSET", "h", "n", "abc"});
  EXPECT_EQ(run({"HINCRBY", "h", "n", "1"}), err("ERR hash value is not an integer"));
}

TEST_F(RedisNodeTest, Lists) {
  EXPECT_EQ(run({"RPUSH", "l", "a", "b", "c"}), num(3));
  EXPECT_EQ(run({"LPUSH", "l", "x", "y"}), num(5));
  EXPECT_EQ(run({"LRANGE", "l", "0", "-1"}),
            Reply::array({bulk("y"), bulk("x"), bulk("a"), bulk("b"), bulk("c")}));
  EXPECT_EQ(run({"LRANGE", "l", "-2", "100"}), Reply::array({bulk("b"), bulk("c")}));
  EXPECT_EQ(run({"LRANGE", "l", "3", "1"}), Reply::array({}));
  EXPECT_EQ(run({"LINDEX", "l", "-1"}), bulk("c"));
  EXPECT_EQ(run({"LINDEX", "l", "9"}), Reply::nil());
  EXPECT_EQ(run({"LLEN", "l"}), num(5));
  EXPECT_EQ(run({"LPOP", "l"}), bulk("y"));
  EXPECT_EQ(run({"RPOP", "l", "2"}), Reply::array({bulk("c"), bulk("b")}));
  EXPECT_EQ(run({"LPOP", "nolist", "2"}), Reply::nil_array());
  EXPECT_EQ(run({"LPOP", "nolist"}), Reply::nil());
  run({"RPUSH", "r", "a", "b", "a", "c", "a"});
  EXPECT_EQ(run({"LREM", "r", "-2", "a"}), num(2));
  EXPECT_EQ(run({"LRANGE", "r", "0", "-1"}), Reply::array({bulk("a"), bulk("b"), bulk("c")}));
  EXPECT_EQ(run({"LREM", "r", "0", "zz"}), num(0));
  EXPECT_EQ(run({"LPOP", "r", "-1"}), err("ERR value is out of range, must be positive"));
}

TEST_F(RedisNodeTest, SortedSets) {
  EXPECT_EQ(run({"ZADD", "z", "1.1", "a", "2", "b", "inf", "c"}), num(3));
  EXPECT_EQ(run({"ZSCORE", "z", "a"}), bulk("1.1000000000000001"));
  EXPECT_EQ(run({"ZRANGE", "z", "0", "-1", "WITHSCORES"}),
            Reply::array({bulk("a"), bulk("1.1000000000000001"), bulk("b"), bulk("2"),
                          bulk("c"), bulk("inf")}));
  EXPECT_EQ(run({"ZINCRBY", "z", "0.5", "b"}), bulk("2.5"));
  EXPECT_EQ(run({"ZADD", "z", "nan", "x"}), err("ERR value is not a valid float"));
  EXPECT_EQ(run({"ZADD", "z", "XX", "NX", "1", "a"}),
            err("ERR XX and NX options at the same time are not compatible"));
  EXPECT_EQ(run({"ZADD", "z", "GT", "LT", "1", "a"}),
            err("ERR GT, LT, and/or NX options at the same time are not compatible"));
  EXPECT_EQ(run({"ZADD", "z", "INCR", "1", "a", "2", "b"}),
            err("ERR INCR option supports a single increment-element pair"));
  EXPECT_EQ(run({"ZINCRBY", "z", "-inf", "c"}),
            err("ERR resulting score is not a number (NaN)"));
  EXPECT_EQ(run({"ZADD", "z", "CH", "GT", "5", "a", "0", "b"}), num(1));
  EXPECT_EQ(run({"ZRANGEBYSCORE", "z", "(2.5", "+inf"}), Reply::array({bulk("a"), bulk("c")}));
  EXPECT_EQ(run({"ZRANGE", "z", "-inf", "(5", "BYSCORE", "WITHSCORES"}),
            Reply::array({bulk("b"), bulk("2.5")}));
  EXPECT_EQ(run({"ZRANK", "z", "c"}), num(2));
  EXPECT_EQ(run({"ZRANK", "z", "q"}), Reply::nil());
  EXPECT_EQ(run({"ZCARD", "z"}), num(3));
  EXPECT_EQ(run({"ZREM", "z", "a", "q"}), num(1));
  EXPECT_EQ(run({"ZADD", "z", "INCR", "1", "b"}), bulk("3.5"));
  EXPECT_EQ(run({"ZADD", "z", "NX", "INCR", "1", "b"}), Reply::nil());
}

TEST_F(RedisNodeTest, SortedSetLexRanges) {
  run({"ZADD", "zl", "0", "a", "0", "b", "0", "c", "0", "d"});
  EXPECT_EQ(run({"ZRANGEBYLEX", "zl", "[b", "(d"}), Reply::array({bulk("b"), bulk("c")}));
  EXPECT_EQ(run({"ZRANGE", "zl", "+", "-", "BYLEX", "REV", "LIMIT", "1", "2"}),
            Reply::array({bulk("c"), bulk("b")}));
  EXPECT_EQ(run({"ZRANGEBYLEX", "zl", "b", "d"}),
            err("ERR min or max not valid string range item"));
  EXPECT_EQ(run({"ZRANGE", "zl", "-", "+", "BYLEX", "WITHSCORES"}),
            err("ERR syntax error, WITHSCORES not supported in combination with BYLEX"));
}

// ---- Transactions ----------------------------------------------------------------------

TEST_F(RedisNodeTest, MultiExec) {
  EXPECT_EQ(run({"MULTI"}), Reply::ok());
  EXPECT_EQ(run({"MULTI"}), err("ERR MULTI calls can not be nested"));
  EXPECT_EQ(run({"SET", "a", "1"}), Reply::status("QUEUED"));
  EXPECT_EQ(run({"INCR", "a"}), Reply::status("QUEUED"));
  EXPECT_EQ(run({"LPUSH", "a", "x"}), Reply::status("QUEUED"));
  EXPECT_EQ(run({"EXEC"}),
            Reply::array({Reply::ok(), num(2),
                          err("WRONGTYPE Operation against a key holding the wrong kind of "
                              "value")}));
  EXPECT_EQ(run({"EXEC"}), err("ERR EXEC without MULTI"));
  EXPECT_EQ(run({"DISCARD"}), err("ERR DISCARD without MULTI"));
}

TEST_F(RedisNodeTest, ExecAbortAfterQueueError) {
  run({"MULTI"});
  EXPECT_EQ(run({"GET"}), err("ERR wrong number of arguments for 'get' command"));
  EXPECT_EQ(run({"SET", "a", "b"}), Reply::status("QUEUED"));
  EXPECT_EQ(run({"EXEC"}), err("EXECABORT Transaction discarded because of previous errors."));
  EXPECT_EQ(run({"EXISTS", "a"}), num(0));
}

TEST_F(RedisNodeTest, WatchIsSpoiledByOtherClient) {
  ClientState other;
  run({"SET", "k", "1"});
  EXPECT_EQ(run({"WATCH", "k"}), Reply::ok());
  run_as(other, {"SET", "k", "2"});
  run({"MULTI"});
  run({"SET", "k", "3"});
  EXPECT_EQ(run({"EXEC"}), Reply::nil_array());
  EXPECT_EQ(run({"GET", "k"}), bulk("2"));
  // Unspoiled watch: EXEC runs.
  run({"WATCH", "k"});
  run({"MULTI"});
  EXPECT_EQ(run({"WATCH", "k"}), err("ERR WATCH inside MULTI is not allowed"));
  run({"SET", "k", "3"});
  EXPECT_EQ(run({"EXEC"}), Reply::array({Reply::ok()}));
}

TEST_F(RedisNodeTest, WatchSpoiledByExpiryAndFlushAll) {
  run({"SET", "k", "1", "PX", "100"}, 1000);
  run({"WATCH", "k"}, 1000);
  run({"MULTI"}, 1000);
  run({"GET", "k"}, 1000);
  EXPECT_EQ(run({"EXEC"}, 2000), Reply::nil_array());  // expired since WATCH
  run({"SET", "k", "1"});
  run({"WATCH", "k"});
  ClientState other;
  run_as(other, {"FLUSHALL"});
  run({"MULTI"});
  EXPECT_EQ(run({"EXEC"}), Reply::nil_array());
}

TEST_F(RedisNodeTest, WatchOfAlreadyExpiredKeySurvivesItsDeletion) {
  run({"SET", "k", "1", "PX", "10"}, 1000);
  run({"WATCH", "k"}, 2000);
  ClientState other;
  run_as(other, {"GET", "k"}, 2000);  // lazy expiry deletes it: no logical change
  run({"MULTI"}, 2000);
  EXPECT_EQ(run({"EXEC"}, 2000), Reply::array({}));
}

TEST_F(RedisNodeTest, WatchIgnoresNoOps) {
  ClientState other;
  run({"WATCH", "z"});
  run_as(other, {"DEL", "z"});  // deleting a missing key changes nothing
  run({"MULTI"});
  EXPECT_EQ(run({"EXEC"}), Reply::array({}));
  run({"WATCH", "z"});
  run_as(other, {"FLUSHALL"});  // FLUSHALL only touches keys that exist
  run({"MULTI"});
  EXPECT_EQ(run({"EXEC"}), Reply::array({}));
  run({"WATCH", "q"});
  run_as(other, {"SET", "q", "1", "PXAT", "1"});
  run({"MULTI"});
  EXPECT_EQ(run({"EXEC"}), Reply::nil_array());
}

TEST_F(RedisNodeTest, RejectedExecAbortsTheTransaction) {
  EXPECT_EQ(run({"EXEC", "1"}),
            err("EXECABORT Transaction discarded because of: wrong number of arguments for "
                "'exec' command"));
  run({"MULTI"});
  run({"SET", "a", "1"});
  EXPECT_EQ(run({"EXEC", "x"}),
            err("EXECABORT Transaction discarded because of: wrong number of arguments for "
                "'exec' command"));
  EXPECT_EQ(run({"EXEC"}), err("ERR EXEC without MULTI"));
  EXPECT_EQ(run({"EXISTS", "a"}), num(0));
}

TEST_F(RedisNodeTest, PropagationWrapsTransactionsAndPublishes) {
  std::vector<Args> stream;
  node.set_propagator([&](const Args& a) { stream.push_back(a); });
  run({"MULTI"});
  run({"SET", "a", "1"});
  run({"GET", "a"});
  run({"RPUSH", "l", "x"});
  run({"EXEC"});
  run({"PUBLISH", "c", "m"});
  run({"PEXPIRE", "a", "0"});  // a time in the past replicates as DEL
  EXPECT_EQ(stream, (std::vector<Args>{{"MULTI"},
                                       {"SET", "a", "1"},
                                       {"RPUSH", "l", "x"},
                                       {"EXEC"},
                                       {"PUBLISH", "c", "m"},
                                       {"DEL", "a"}}));
}

TEST_F(RedisNodeTest, ReplicaRefusesScriptWrites) {
  node.set_replica(true);
  EXPECT_EQ(run({"EVAL", "return redis.call('set', 'a', 'b')", "0"}),
            err("READONLY You can't write against a read only replica. script: "
                "1ec5c8569e0cb2caa15ae94d564a56e22a60ce3e, on @user_script:1."));
}

// ---- Pub/Sub ---------------------------------------------------------------------------

TEST_F(RedisNodeTest, PublishSubscribe) {
  std::vector<std::pair<int64_t, std::string>> delivered;
  node.set_publisher([&](ClientState& to, const std::string& ch, const std::string& msg) {
    delivered.push_back({to.process, ch + ":" + msg});
  });
  ClientState s1, s2;
  s1.process = 1;
  s2.process = 2;
  EXPECT_EQ(run_as(s2, {"SUBSCRIBE", "c"}),
            Reply::array({bulk("subscribe"), bulk("c"), num(1)}));
  EXPECT_EQ(run_as(s1, {"SUBSCRIBE", "c", "d"}),
            Reply::array({Reply::array({bulk("subscribe"), bulk("c"), num(1)}),
                          Reply::array({bulk("subscribe"), bulk("d"), num(2)})}));
  EXPECT_EQ(run_as(s1, {"GET", "a"}),
            err("ERR Can't execute 'get': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / "
                "QUIT / RESET are allowed in this context"));
  EXPECT_EQ(run_as(s1, {"PING"}), Reply::array({bulk("pong"), bulk("")}));
  EXPECT_EQ(run({"PUBLISH", "c", "hello"}), num(2));
  EXPECT_EQ(delivered, (std::vector<std::pair<int64_t, std::string>>{{2, "c:hello"},
                                                                      {1, "c:hello"}}));
  node.disconnect(s2);
  EXPECT_EQ(run({"PUBLISH", "c", "x"}), num(1));
  EXPECT_EQ(run_as(s1, {"UNSUBSCRIBE", "c"}),
            Reply::array({bulk("unsubscribe"), bulk("c"), num(1)}));
  EXPECT_EQ(run({"PUBLISH", "c", "x"}), num(0));
  EXPECT_EQ(run({"PUBLISH", "nobody", "x"}), num(0));
}

// ---- Replication and persistence -------------------------------------------------------

TEST_F(RedisNodeTest, ReplicaNeverExpiresOnItsOwn) {
  RedisNode replica;
  replica.set_replica(true);
  ClientState link, reader;
  link.is_master_link = true;
  EXPECT_EQ(replica.execute(link, {"SET", "k", "v", "PXAT", "1100"}, 1000), Reply::ok());
  EXPECT_EQ(replica.execute(reader, {"GET", "k"}, 2000), Reply::nil());
  EXPECT_EQ(replica.key_count(), 1u);  // still there until the master's DEL
  EXPECT_EQ(replica.execute(link, {"GET", "k"}, 2000), bulk("v"));
  EXPECT_EQ(replica.execute(reader, {"SET", "x", "1"}, 2000),
            err("READONLY You can't write against a read only replica."));
  Rng rng(3, "r");
  replica.active_expire_cycle(5000, rng);
  EXPECT_EQ(replica.key_count(), 1u);
  EXPECT_EQ(replica.execute(link, {"DEL", "k"}, 2000), num(1));
  EXPECT_EQ(replica.key_count(), 0u);
}

TEST_F(RedisNodeTest, PropagationRewritesToAbsoluteTimes) {
  std::vector<Args> stream;
  node.set_propagator([&](const Args& a) { stream.push_back(a); });
  run({"SET", "a", "1", "EX", "10"}, 1000);
  run({"EXPIRE", "a", "5"}, 1000);
  run({"SET", "b", "1", "NX"}, 1000);
  run({"SET", "b", "2", "NX"}, 1000);  // no effect, not propagated
  run({"GET", "a"}, 9000);             // lazy expiry replicates as DEL
  run({"INCR", "n"}, 9000);
  run({"DEL", "zz"}, 9000);
  EXPECT_EQ(stream, (std::vector<Args>{{"SET", "a", "1", "PXAT", "11000"},
                                       {"PEXPIREAT", "a", "6000"},
                                       {"SET", "b", "1"},
                                       {"DEL", "a"},
                                       {"INCR", "n"}}));
}

TEST_F(RedisNodeTest, ReplicaFedByPropagationEndsIdentical) {
  RedisNode replica;
  replica.set_replica(true);
  ClientState link;
  link.is_master_link = true;
  int64_t now = 1000;
  node.set_propagator([&](const Args& a) { replica.execute(link, a, now); });
  run({"SET", "lock", "t", "PX", "100"}, now);
  run({"RPUSH", "l", "a", "b"}, now);
  run({"EVAL", "redis.call('incr', KEYS[1]); redis.call('hset', KEYS[2], 'f', 'v'); return 1",
       "2", "n", "h"},
      now);
  run({"MULTI"}, now);
  run({"LPOP", "l"}, now);
  run({"ZADD", "z", "1", "m"}, now);
  run({"EXEC"}, now);
  now = 5000;
  run({"GET", "lock"}, now);
  EXPECT_EQ(node.key_count(), replica.key_count());
  EXPECT_EQ(replica.execute(link, {"LRANGE", "l", "0", "-1"}, now), Reply::array({bulk("b")}));
  EXPECT_EQ(replica.execute(link, {"GET", "n"}, now), bulk("1"));
  EXPECT_EQ(replica.execute(link, {"HGET", "h", "f"}, now), bulk("v"));
  EXPECT_EQ(replica.execute(link, {"ZSCORE", "z", "m"}, now), bulk("1"));
  EXPECT_EQ(replica.peek_string("lock"), std::nullopt);
}

TEST_F(RedisNodeTest, SnapshotAndRestore) {
  client.process = 9;
  run({"SET", "a", "1", "PX", "500"});
  run({"HSET", "h", "f", "v"});
  const Snapshot snap = node.snapshot();
  run({"DEL", "a", "h"});
  EXPECT_EQ(node.key_count(), 0u);
  node.restore(snap);
  EXPECT_EQ(node.key_count(), 2u);
  EXPECT_EQ(run({"PTTL", "a"}), num(500));
  EXPECT_EQ(node.writer_of("a"), 9);
  EXPECT_EQ(run({"HGET", "h", "f"}), bulk("v"));
}

}  // namespace
}  // namespace lockstep::sim
