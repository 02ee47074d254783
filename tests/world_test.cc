#include "lockstep/sim/world.h"

#include <gtest/gtest.h>

#include "lockstep/sim/control.h"

#include "sim_harness.h"

namespace lockstep::testing {
namespace {

Task<int64_t> sleep_then_time(Env& env, Nanos d, sim::World& w) {
  co_await env.sleep(d);
  co_return w.now();
}

TEST(World, PauseDefersTimersUntilItEnds) {
  SimHarness h(1);
  auto woke = slot<int64_t>();
  h.start<int64_t>(0, 0, woke, [&h](Env& e) { return sleep_then_time(e, 10ms, h.world); });
  h.world.scheduler().at(5 * kMs, [&h] { h.world.pause(h.client[0], 100 * kMs); });
  h.run_until_ms(1000);
  ASSERT_TRUE(woke->has_value());
  EXPECT_EQ(**woke, 105 * kMs);
}

TEST(World, CrashDestroysEveryCoroutineOfTheProcess) {
  SimHarness h(1);
  auto woke = slot<int64_t>();
  h.start<int64_t>(0, 0, woke, [&h](Env& e) { return sleep_then_time(e, 10ms, h.world); });
  h.world.scheduler().at(5 * kMs, [&h] { h.world.crash(h.client[0]); });
  bool restarted = false;
  h.world.on_client_restart = [&](int) { restarted = true; };
  h.world.scheduler().at(50 * kMs, [&h] { h.world.restart(h.client[0]); });
  h.run_until_ms(1000);
  EXPECT_FALSE(woke->has_value());
  EXPECT_TRUE(h.world.process(h.client[0]).tasks.empty());
  EXPECT_TRUE(restarted);
}


TEST(World, CommandsRoundTripWithLatency) {
  SimHarness h(1, 1, 3);
  auto r = slot<Reply>();
  auto at = slot<int64_t>();
  h.start<Reply>(0, 0, r, [](Env& e) { return command(e, {"SET", "k", "v"}); });
  h.start<int64_t>(0, 0, at, [&h](Env& e) -> Task<int64_t> {
    std::vector<std::string> ping{"PING"};
    co_await e.node(0).call(std::move(ping), 1s);
    co_return h.world.now();
  });
  h.run_until_ms(100);
  ASSERT_TRUE(r->has_value());
  EXPECT_TRUE((*r)->is_ok());
  EXPECT_EQ(**at, 6 * kMs);  // 3 ms there, 3 ms back
  EXPECT_EQ(h.world.redis(0).peek_string("k"), "v");
}

// The simulator reports each key's change through its WorldControl: who set it, who
// deleted whose value, and an expiry by nobody, as the runner's ground truth records them.
TEST(World, TheControlReportsEveryKeyChangeWithItsCause) {
  SimHarness h(2, 1, 1);
  sim::Control control(h.world);
  struct Seen {
    KeyChange::Kind kind;
    std::string key, value;
    int64_t process, owner;
    int64_t at_ms;
  };
  std::vector<Seen> seen;
  control.on_key_change = [&](const KeyChange& c) {
    seen.push_back({c.kind, std::string(c.key), std::string(c.value), c.process, c.owner, h.world.now() / kMs});
    EXPECT_FALSE(c.at) << "the simulator reports a change as it happens";
  };
  auto r = slot<Reply>();
  h.start<Reply>(0, 0, r, [](Env& e) { return command(e, {"SET", "lock", "a", "PX", "100"}); });
  h.start<Reply>(1, 10, r, [](Env& e) { return command(e, {"DEL", "lock"}); });
  h.start<Reply>(1, 20, r, [](Env& e) { return command(e, {"SET", "lock", "b", "PX", "50"}); });
  h.run_until_ms(500);
  using K = KeyChange::Kind;
  ASSERT_EQ(seen.size(), 4u);
  EXPECT_EQ(seen[0].kind, K::Set);
  EXPECT_EQ(seen[0].value, "a");
  EXPECT_EQ(seen[0].process, 1);  // client-1, as history records number it
  EXPECT_EQ(seen[1].kind, K::Del);
  EXPECT_EQ(seen[1].process, 2);  // client-2 deleted client-1's value
  EXPECT_EQ(seen[1].owner, 1);
  EXPECT_EQ(seen[2].kind, K::Set);
  EXPECT_EQ(seen[2].process, 2);
  EXPECT_EQ(seen[3].kind, K::Expire);
  EXPECT_EQ(seen[3].process, -1);
  EXPECT_EQ(seen[3].owner, 2);
  EXPECT_EQ(seen[3].value, "b");
  EXPECT_GE(seen[3].at_ms, 71);  // set at 21 ms with a 50 ms lease
}

// An answered call takes its timeout off the schedule: a busy client does not leave one
// stale event per call behind for the length of its timeout.
TEST(World, AnsweredCallsLeaveNoTimeoutBehind) {
  SimHarness h(1, 1, 1);
  auto r = slot<Reply>();
  // Active expiry is the node's one recurring event; nothing of the call may remain.
  const size_t idle = h.world.scheduler().pending();
  h.start<Reply>(0, 0, r, [](Env& e) { return command(e, {"SET", "k", "v"}); });
  h.run_until_ms(10);
  ASSERT_TRUE(r->has_value());
  EXPECT_EQ(h.world.scheduler().pending(), idle);
}

// The caller's timeout is only put on the schedule when the reply might miss it; it must
// still win every race it would have won: a reply due exactly at the deadline, a node
// paused past it, a reply lost on the way back.
TEST(World, TimeoutsWinEveryRaceTheyShould) {
  SimHarness h(3, 1, 5);
  auto on_time = slot<Reply>(), tie = slot<Reply>(), paused = slot<Reply>();
  auto call = [](Nanos timeout) {
    return [timeout](Env& e) -> Task<Reply> {
      std::vector<std::string> ping{"PING"};
      co_return co_await e.node(0).call(std::move(ping), timeout);
    };
  };
  h.start<Reply>(0, 0, on_time, call(11ms));
  h.start<Reply>(1, 0, tie, call(10ms));  // the reply arrives at the deadline: too late
  h.start<Reply>(2, 20, paused, call(50ms));
  h.world.scheduler().at(21 * kMs, [&h] { h.world.pause(h.world.node_process(0), 100 * kMs); });
  h.run_until_ms(1000);
  ASSERT_TRUE(on_time->has_value() && tie->has_value() && paused->has_value());
  EXPECT_EQ((*on_time)->type, Reply::Type::Status);
  EXPECT_EQ((*tie)->type, Reply::Type::Timeout);
  EXPECT_EQ((*paused)->type, Reply::Type::Timeout);
}

// A command still on its way when the call ends (its timeout came first) or when the
// caller dies (a crash destroys the frame holding the argv) still runs as it was sent:
// the caller changes or frees its argv right after.
TEST(World, KeptCommandsRunAsSentAfterTheirCallerMovedOn) {
  SimHarness h(2, 1, 5);
  auto timed_out = slot<Reply>();
  h.start<Reply>(0, 0, timed_out, [](Env& e) -> Task<Reply> {
    std::vector<std::string> argv{"SET", "late", "sent"};
    Reply r = co_await e.node(0).call(argv, 2ms);  // the command lands at 5 ms
    argv[2] = "changed after the call";
    co_return r;
  });
  h.start<Reply>(1, 0, slot<Reply>(), [](Env& e) -> Task<Reply> {
    auto argv = std::make_unique<std::vector<std::string>>(std::vector<std::string>{"SET", "crashed", "sent"});
    co_return co_await e.node(0).call(*argv, 1s);
  });
  h.world.scheduler().at(1 * kMs, [&h] { h.world.crash(h.client[1]); });
  h.run_until_ms(100);
  ASSERT_TRUE(timed_out->has_value());
  EXPECT_EQ((*timed_out)->type, Reply::Type::Timeout);
  EXPECT_EQ(h.world.redis(0).peek_string("late"), "sent");
  EXPECT_EQ(h.world.redis(0).peek_string("crashed"), "sent");
}

// A shared Command is read in place, and stays alive in the request as long as the world
// needs it: a command still on its way after its caller let go of it runs as it was sent.
TEST(World, ASharedCommandOutlivesItsCallerUntilItRuns) {
  SimHarness h(1, 1, 5);
  auto timed_out = slot<Reply>();
  h.start<Reply>(0, 0, timed_out, [](Env& e) -> Task<Reply> {
    Command set = make_command("SET", "shared", "sent");
    Reply r = co_await e.node(0).call(set, 2ms);  // the command lands at 5 ms
    set.reset();
    co_return r;
  });
  h.run_until_ms(100);
  ASSERT_TRUE(timed_out->has_value());
  EXPECT_EQ((*timed_out)->type, Reply::Type::Timeout);
  EXPECT_EQ(h.world.redis(0).peek_string("shared"), "sent");
}

TEST(World, PartitionTurnsACallIntoATimeout) {
  SimHarness h(1);
  h.world.network().block(h.client[0], h.world.node_process(0), +1);
  auto r = slot<Reply>();
  h.start<Reply>(0, 0, r, [](Env& e) { return command(e, {"PING"}); });
  h.run_until_ms(2000);
  ASSERT_TRUE(r->has_value());
  EXPECT_EQ((*r)->type, Reply::Type::Timeout);
}

TEST(World, CrashedNodeRefusesAndRestartsEmpty) {
  SimHarness h(1);
  auto set = slot<Reply>(), refused = slot<Reply>(), reset = slot<Reply>(), after = slot<Reply>();
  h.start<Reply>(0, 0, set, [](Env& e) { return command(e, {"SET", "k", "v"}); });
  h.world.scheduler().at(10 * kMs, [&h] { h.world.crash(h.world.node_process(0)); });
  h.start<Reply>(0, 20, refused, [](Env& e) { return command(e, {"GET", "k"}); });
  h.world.scheduler().at(30 * kMs, [&h] { h.world.restart(h.world.node_process(0)); });
  h.start<Reply>(0, 40, reset, [](Env& e) { return command(e, {"GET", "k"}); });
  h.start<Reply>(0, 50, after, [](Env& e) { return command(e, {"GET", "k"}); });
  h.run_until_ms(100);
  EXPECT_TRUE((*set)->is_ok());
  EXPECT_EQ((*refused)->type, Reply::Type::IoError);
  EXPECT_EQ((*reset)->type, Reply::Type::IoError);  // the old connection died with the node
  EXPECT_TRUE((*after)->is_nil());                  // reconnected; the keyspace is empty
}

TEST(World, NodeClockJumpExpiresKeysEarly) {
  SimHarness h(1);
  auto set = slot<Reply>(), get = slot<Reply>();
  h.start<Reply>(0, 0, set, [](Env& e) { return command(e, {"SET", "k", "v", "PX", "10000"}); });
  h.world.scheduler().at(10 * kMs, [&h] { h.world.process(h.world.node_process(0)).clock.jump_wall(20'000 * kMs); });
  h.start<Reply>(0, 20, get, [](Env& e) { return command(e, {"GET", "k"}); });
  h.run_until_ms(100);
  EXPECT_TRUE((*set)->is_ok());
  EXPECT_TRUE((*get)->is_nil());
}

TEST(World, ClientClockJumpMovesOnlyItsWallClock) {
  SimHarness h(2);
  const Nanos wall1 = h.env(0).now_wall(), mono1 = h.env(0).now_mono();
  h.world.process(h.client[0]).clock.jump_wall(5'000 * kMs);
  EXPECT_EQ(h.env(0).now_wall() - wall1, 5s);
  EXPECT_EQ(h.env(0).now_mono(), mono1);
  EXPECT_EQ(h.env(1).now_wall(), wall1);
}

TEST(World, EachProcessHasItsOwnRandomStream) {
  SimHarness a(2), b(3);
  // Adding a client does not change what the others draw.
  EXPECT_EQ(a.env(0).random(), b.env(0).random());
  EXPECT_EQ(a.env(1).random(), b.env(1).random());
  EXPECT_NE(a.env(0).random(), a.env(1).random());
}

}  // namespace
}  // namespace lockstep::testing
