#include <gtest/gtest.h>

#include <algorithm>

#include "lockstep/sim/zk_ensemble.h"
#include "lockstep/zookeeper.h"
#include "sim_harness.h"

namespace lockstep::testing {
namespace {

// Three servers, a 100 ms tick and a 1 s session: the clients' sessions ask for 1 s.
struct ZkHarness : SimHarness {
  explicit ZkHarness(int clients = 2) : SimHarness(clients, 0, 1) {
    sim::ZkOptions o;
    o.tick_ns = 100 * kMs;
    o.session_timeout_ns = 1000 * kMs;
    world.enable_zookeeper(o);
  }
  ZooKeeper& zk(int i) { return *env(i).zookeeper(); }
  int server(int n) { return world.zookeeper()->server_pids()[n]; }
};

Task<ZkCreated> make_lock_node(ZooKeeper& zk) {
  std::string dir = "/locks";
  std::string empty;
  co_await zk.create(std::move(dir), std::move(empty), ZkCreateMode{});
  std::string prefix = "/locks/n-";
  std::string data;
  co_return co_await zk.create(std::move(prefix), std::move(data), ZkCreateMode{.ephemeral = true, .sequential = true});
}

Task<ZkCreated> make_node(ZooKeeper& zk, std::string path) {
  std::string empty;
  co_return co_await zk.create(std::move(path), std::move(empty), ZkCreateMode{});
}

TEST(ZooKeeperSim, NoEnsembleMeansNoSession) {
  SimHarness h(1);
  EXPECT_EQ(h.env(0).zookeeper(), nullptr);
}

TEST(ZooKeeperSim, SequentialNodesAreNumberedInCommitOrderWithRisingZxids) {
  ZkHarness h;
  auto a = slot<ZkCreated>();
  auto b = slot<ZkCreated>();
  h.start<ZkCreated>(0, 0, a, [&h](Env&) { return make_lock_node(h.zk(0)); });
  h.start<ZkCreated>(1, 50, b, [&h](Env&) { return make_lock_node(h.zk(1)); });
  h.run_until_ms(2000);
  ASSERT_TRUE(a->has_value() && b->has_value());
  EXPECT_EQ((*a)->error, ZkError::Ok);
  EXPECT_EQ((*a)->path, "/locks/n-0000000000");
  EXPECT_EQ((*b)->path, "/locks/n-0000000001");
  EXPECT_GT((*b)->czxid, (*a)->czxid);
  EXPECT_EQ((*a)->czxid >> 32, 1);  // the leader's epoch
  EXPECT_EQ(h.world.zookeeper()->children("/locks"), (std::vector<std::string>{"n-0000000000", "n-0000000001"}));
  EXPECT_EQ(h.zk(0).state(), ZkState::Connected);
  EXPECT_NE(h.zk(0).session_id(), h.zk(1).session_id());
}

// One follower down: writes go on. Two down: a write waits for a majority (the client's
// answer is lost), and commits once a follower is back.
TEST(ZooKeeperSim, AWriteNeedsAMajority) {
  ZkHarness h(1);
  auto one_down = slot<ZkCreated>();
  auto two_down = slot<ZkCreated>();
  h.world.scheduler().at(0, [&h] { h.world.crash(h.server(2)); });
  h.start<ZkCreated>(0, 10, one_down, [&h](Env&) { return make_node(h.zk(0), "/a"); });
  h.world.scheduler().at(1500 * kMs, [&h] { h.world.crash(h.server(1)); });
  h.start<ZkCreated>(0, 1600, two_down, [&h](Env&) { return make_node(h.zk(0), "/b"); });
  std::vector<std::string> while_down;
  h.world.scheduler().at(2900 * kMs, [&] { while_down = h.world.zookeeper()->children("/"); });
  h.world.scheduler().at(3000 * kMs, [&h] { h.world.restart(h.server(1)); });
  h.run_until_ms(4000);
  ASSERT_TRUE(one_down->has_value() && two_down->has_value());
  EXPECT_EQ((*one_down)->error, ZkError::Ok);
  EXPECT_EQ((*two_down)->error, ZkError::ConnectionLoss);
  EXPECT_EQ(while_down, (std::vector<std::string>{"a"}));
  EXPECT_EQ(h.world.zookeeper()->children("/"), (std::vector<std::string>{"a", "b"}));
}

// The paused owner's session expires on the leader's clock: its ephemeral znode is deleted
// (the other client's one-shot watch fires) while it is still paused, and it learns of the
// expiry only once it runs again and reaches a server.
TEST(ZooKeeperSim, APauseLongerThanTheSessionExpiresItAndDeletesItsEphemerals) {
  ZkHarness h;
  auto created = slot<ZkCreated>();
  auto watched = slot<ZkEvent>();
  auto fired_at = std::make_shared<int64_t>(0);
  std::vector<ZkState> states;
  h.start<ZkCreated>(0, 0, created, [&h, &states](Env&) {
    h.zk(0).on_state = [&states](ZkState s) { states.push_back(s); };
    return make_lock_node(h.zk(0));
  });
  h.start<ZkEvent>(1, 500, watched, [&h, fired_at](Env&) -> Task<ZkEvent> {
    std::string path = "/locks/n-0000000000";
    ZkExists e = co_await h.zk(1).exists(std::move(path), true);
    if (!e.exists) co_return ZkEvent::TimedOut;
    ZkEvent ev = co_await e.watch->wait(10s);
    *fired_at = h.world.now();
    co_return ev;
  });
  h.world.scheduler().at(600 * kMs, [&h] { h.world.pause(h.client[0], 3000 * kMs); });
  std::vector<ZkState> during_pause;
  h.world.scheduler().at(3500 * kMs, [&] { during_pause = states; });
  h.run_until_ms(6000);
  ASSERT_TRUE(watched->has_value());
  EXPECT_EQ(**watched, ZkEvent::Deleted);
  // Expired a session timeout after the last ping the leader heard, long before the
  // pause ends.
  EXPECT_GE(*fired_at, 1000 * kMs);
  EXPECT_LT(*fired_at, 2000 * kMs);
  EXPECT_TRUE(h.world.zookeeper()->children("/locks").empty());
  EXPECT_EQ(during_pause, (std::vector<ZkState>{ZkState::Connected}));
  EXPECT_EQ(states.back(), ZkState::Expired);
  EXPECT_EQ(h.zk(0).state(), ZkState::Expired);
}

// Cut off from every server, a client suspends after its read timeout and, back within the
// session timeout, resumes the same session with its znode.
TEST(ZooKeeperSim, AShortPartitionSuspendsAndResumesTheSession) {
  ZkHarness h(1);
  auto created = slot<ZkCreated>();
  std::vector<ZkState> states;
  h.start<ZkCreated>(0, 0, created, [&h, &states](Env&) {
    h.zk(0).on_state = [&states](ZkState s) { states.push_back(s); };
    return make_lock_node(h.zk(0));
  });
  auto cut = [&h](int delta) { cut_from_zookeeper(h.world, h.client[0], delta); };
  int64_t session = 0;
  h.world.scheduler().at(500 * kMs, [&] {
    session = h.zk(0).session_id();
    cut(+1);
  });
  h.world.scheduler().at(1300 * kMs, [&] { cut(-1); });
  h.run_until_ms(4000);
  EXPECT_EQ(states, (std::vector<ZkState>{ZkState::Connected, ZkState::Suspended, ZkState::Connected}));
  EXPECT_EQ(h.zk(0).session_id(), session);
  EXPECT_EQ(h.world.zookeeper()->children("/locks"), (std::vector<std::string>{"n-0000000000"}));
}

TEST(ZooKeeperSim, ALongPartitionEndsInExpiry) {
  ZkHarness h(1);
  auto created = slot<ZkCreated>();
  std::vector<ZkState> states;
  h.start<ZkCreated>(0, 0, created, [&h, &states](Env&) {
    h.zk(0).on_state = [&states](ZkState s) { states.push_back(s); };
    return make_lock_node(h.zk(0));
  });
  h.world.scheduler().at(500 * kMs, [&h] { cut_from_zookeeper(h.world, h.client[0], +1, ZkCut::Requests); });
  h.world.scheduler().at(4000 * kMs, [&h] { cut_from_zookeeper(h.world, h.client[0], -1, ZkCut::Requests); });
  h.run_until_ms(7000);
  EXPECT_EQ(states, (std::vector<ZkState>{ZkState::Connected, ZkState::Suspended, ZkState::Expired}));
  EXPECT_TRUE(h.world.zookeeper()->children("/locks").empty());
}

// Retries a create while its answer is lost (a client looking for a serving server), as a
// caller with a retry policy does; the last answer.
Task<ZkCreated> create_retrying(ZooKeeper& zk, Env& env, std::string path, ZkCreateMode mode = {}) {
  ZkCreated c;
  for (int attempt = 0; attempt < 40; ++attempt) {
    std::string p = path;
    std::string empty;
    c = co_await zk.create(std::move(p), std::move(empty), mode);
    if (c.error != ZkError::ConnectionLoss) co_return c;
    co_await env.sleep(100ms);
  }
  co_return c;
}

// The leader crashes: the followers stop hearing it (sync_limit, 500 ms), elect the one
// with the highest id (their logs are alike) in a new epoch, and writes go on there; what
// the old leader committed is kept.
TEST(ZooKeeperSim, ACrashedLeaderIsReplacedAndCommittedZnodesAreKept) {
  ZkHarness h(1);
  auto before = slot<ZkCreated>();
  auto after = slot<ZkCreated>();
  h.start<ZkCreated>(0, 0, before, [&h](Env&) { return make_node(h.zk(0), "/a"); });
  h.world.scheduler().at(300 * kMs, [&h] { h.world.crash(h.server(0)); });
  int during = 0;
  int elected = -1;
  h.world.scheduler().at(700 * kMs, [&] { during = h.world.zookeeper()->leader(); });
  h.world.scheduler().at(1200 * kMs, [&] { elected = h.world.zookeeper()->leader(); });
  h.start<ZkCreated>(0, 400, after, [&h](Env& env) { return create_retrying(h.zk(0), env, "/b"); });
  h.run_until_ms(5000);
  ASSERT_TRUE(before->has_value() && after->has_value());
  EXPECT_EQ((*before)->error, ZkError::Ok);
  EXPECT_EQ((*before)->czxid >> 32, 1);
  EXPECT_EQ(during, -1);  // no leader between the crash and the election
  EXPECT_EQ(elected, 2);  // zk-3, within a few ticks of the followers giving up
  EXPECT_EQ((*after)->error, ZkError::Ok);
  EXPECT_EQ((*after)->czxid >> 32, 2);  // the new epoch
  EXPECT_EQ(h.world.zookeeper()->epoch(), 2);
  EXPECT_EQ(h.world.zookeeper()->children("/"), (std::vector<std::string>{"a", "b"}));
}

// The leader is cut off from both followers. A client that reaches only the old leader has
// its write taken but never committed (no majority acks it) and is dropped once the old
// leader steps down; the majority elects a new leader that takes writes. Healed, the old
// leader follows the new one and its uncommitted write is gone.
TEST(ZooKeeperSim, ALeaderCutOffFromTheMajorityStopsServingWritesAndTheMajorityElects) {
  ZkHarness h(2);
  auto setup = slot<ZkCreated>();
  auto stranded = slot<ZkCreated>();
  auto majority = slot<ZkCreated>();
  std::vector<ZkState> stranded_states;
  h.start<ZkCreated>(0, 0, setup, [&h, &stranded_states](Env&) {
    h.zk(0).on_state = [&stranded_states](ZkState s) { stranded_states.push_back(s); };
    return make_node(h.zk(0), "/a");
  });
  auto split = [&h](int delta) {
    for (int f : {1, 2}) {
      h.world.network().block(h.server(0), h.server(f), delta);
      h.world.network().block(h.server(f), h.server(0), delta);
      // client-1 reaches zk-1 only.
      h.world.network().block(h.client[0], h.server(f), delta);
      h.world.network().block(h.server(f), h.client[0], delta);
    }
  };
  h.world.scheduler().at(200 * kMs, [&] { split(+1); });
  h.start<ZkCreated>(0, 300, stranded, [&h](Env&) { return make_node(h.zk(0), "/stranded"); });
  h.start<ZkCreated>(1, 300, majority, [&h](Env& env) { return create_retrying(h.zk(1), env, "/b"); });
  int elected = -1;
  std::vector<std::string> majority_view;
  h.world.scheduler().at(1500 * kMs, [&] {
    elected = h.world.zookeeper()->leader();
    majority_view = h.world.zookeeper()->children("/");
  });
  h.world.scheduler().at(3000 * kMs, [&] { split(-1); });
  h.run_until_ms(5000);
  ASSERT_TRUE(stranded->has_value() && majority->has_value());
  EXPECT_EQ((*stranded)->error, ZkError::ConnectionLoss);
  EXPECT_EQ(stranded_states.at(0), ZkState::Connected);
  EXPECT_EQ(stranded_states.at(1), ZkState::Suspended);
  EXPECT_EQ(elected, 2);
  EXPECT_EQ((*majority)->error, ZkError::Ok);
  EXPECT_EQ((*majority)->czxid >> 32, 2);
  EXPECT_EQ(majority_view, (std::vector<std::string>{"a", "b"}));
  // After the heal: one leader, the same data everywhere, the stranded write dropped.
  EXPECT_EQ(h.world.zookeeper()->leader(), 2);
  EXPECT_EQ(h.world.zookeeper()->children("/"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(h.world.zookeeper()->children_on(0, "/"), (std::vector<std::string>{"a", "b"}));
}

// An election shorter than the session timeout: the session and its ephemeral znode
// survive, since the new leader restarts every session's expiry clock and the client
// finds a serving server in time.
TEST(ZooKeeperSim, AnEphemeralZnodeSurvivesAReElectionShorterThanItsSession) {
  ZkHarness h(1);
  auto created = slot<ZkCreated>();
  std::vector<ZkState> states;
  h.start<ZkCreated>(0, 0, created, [&h, &states](Env&) {
    h.zk(0).on_state = [&states](ZkState s) { states.push_back(s); };
    return make_lock_node(h.zk(0));
  });
  int64_t session = 0;
  h.world.scheduler().at(300 * kMs, [&] {
    session = h.zk(0).session_id();
    h.world.crash(h.server(0));
  });
  h.run_until_ms(4000);
  ASSERT_TRUE(created->has_value());
  EXPECT_EQ((*created)->error, ZkError::Ok);
  EXPECT_EQ(h.world.zookeeper()->leader(), 2);
  EXPECT_EQ(h.zk(0).session_id(), session);
  EXPECT_EQ(h.zk(0).state(), ZkState::Connected);
  EXPECT_EQ(std::count(states.begin(), states.end(), ZkState::Expired), 0);
  EXPECT_EQ(h.world.zookeeper()->children("/locks"), (std::vector<std::string>{"n-0000000000"}));
}

// The leader stops (a GC pause) for longer than sync_limit: the followers elect another.
// Back, the old leader finds it has not heard a majority, steps down and follows the new
// leader; a write it took before the pause is not lost if a majority logged it, and the
// ensemble converges on one copy.
TEST(ZooKeeperSim, APausedLeaderIsReplacedAndFollowsTheNewOneWhenItResumes) {
  ZkHarness h(1);
  auto before = slot<ZkCreated>();
  auto after = slot<ZkCreated>();
  h.start<ZkCreated>(0, 0, before, [&h](Env&) { return make_node(h.zk(0), "/a"); });
  h.world.scheduler().at(300 * kMs, [&h] { h.world.pause(h.server(0), 1500 * kMs); });
  int during = -1;
  h.world.scheduler().at(1700 * kMs, [&] { during = h.world.zookeeper()->leader(); });
  h.start<ZkCreated>(0, 400, after, [&h](Env& env) { return create_retrying(h.zk(0), env, "/b"); });
  h.run_until_ms(5000);
  ASSERT_TRUE(before->has_value() && after->has_value());
  EXPECT_EQ(during, 2);  // elected while zk-1 was still paused
  EXPECT_EQ((*after)->error, ZkError::Ok);
  EXPECT_EQ(h.world.zookeeper()->leader(), 2);
  EXPECT_EQ(h.world.zookeeper()->epoch(), 2);
  EXPECT_EQ(h.world.zookeeper()->children("/"), (std::vector<std::string>{"a", "b"}));
  for (int n = 0; n < 3; ++n) EXPECT_EQ(h.world.zookeeper()->children_on(n, "/"), (std::vector<std::string>{"a", "b"})) << n;
}

// Two followers crash: the leader, hearing no majority, steps down, and a lone server
// never elects itself — writes wait. One follower back, and two servers elect.
TEST(ZooKeeperSim, AMinorityNeverElects) {
  ZkHarness h(1);
  auto before = slot<ZkCreated>();
  auto during = slot<ZkCreated>();
  auto after = slot<ZkCreated>();
  h.start<ZkCreated>(0, 0, before, [&h](Env&) { return make_node(h.zk(0), "/a"); });
  h.world.scheduler().at(200 * kMs, [&h] {
    h.world.crash(h.server(1));
    h.world.crash(h.server(2));
  });
  h.start<ZkCreated>(0, 1500, during, [&h](Env&) { return make_node(h.zk(0), "/lost"); });
  int leader_alone = 0;
  h.world.scheduler().at(4900 * kMs, [&] { leader_alone = h.world.zookeeper()->leader(); });
  h.world.scheduler().at(5000 * kMs, [&h] { h.world.restart(h.server(1)); });
  h.start<ZkCreated>(0, 5000, after, [&h](Env& env) { return create_retrying(h.zk(0), env, "/b"); });
  h.run_until_ms(9000);
  ASSERT_TRUE(before->has_value() && during->has_value() && after->has_value());
  EXPECT_EQ((*before)->error, ZkError::Ok);
  EXPECT_EQ((*during)->error, ZkError::ConnectionLoss);
  EXPECT_EQ(leader_alone, -1);
  EXPECT_GE(h.world.zookeeper()->leader(), 0);
  EXPECT_EQ(h.world.zookeeper()->epoch(), 2);
  EXPECT_EQ((*after)->error, ZkError::Ok);
  EXPECT_EQ(h.world.zookeeper()->children("/"), (std::vector<std::string>{"a", "b"}));
}

}  // namespace
}  // namespace lockstep::testing
