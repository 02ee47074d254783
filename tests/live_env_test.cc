// LiveEnv against a real redis-server that the test starts on a free loopback port:
// replies convert faithfully (nested arrays, errors, nil), a late reply becomes Timeout
// and is discarded, sleeps and subscriptions work, and a paused or crashed client
// behaves as in the simulator. Timings are asserted loosely: the machine may be loaded.
#include <gtest/gtest.h>
#include <signal.h>

#include <cerrno>
#include <optional>

#include "lockstep/live/live_world.h"
#include "lockstep/live/redis_server.h"
#include "live_support.h"

namespace lockstep::live {
namespace {

using Argv = std::vector<std::string>;

using live_support::persisted_config;

// Every server this test binary started must be gone when the suite ends.
class NoServerLeftBehind : public ::testing::Environment {
 public:
  void TearDown() override {
    for (pid_t pid : started_server_pids()) {
      EXPECT_EQ(::kill(pid, 0), -1) << "redis-server pid " << pid << " is still running";
      EXPECT_EQ(errno, ESRCH);
    }
  }
};
[[maybe_unused]] auto* const kNoServerLeftBehind = ::testing::AddGlobalTestEnvironment(new NoServerLeftBehind);

class LiveEnvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (find_redis_server().empty()) GTEST_SKIP() << "redis-server not installed: live tests need it";
    farm = std::make_unique<ServerFarm>();
    server = farm->start(persisted_config("node-1"));
    ASSERT_NE(server, nullptr) << farm->error();
    world = std::make_unique<LiveWorld>(7);
    world->add_node(server->address());
    a = world->add_client("client-1", 1);
    b = world->add_client("client-2", 2);
  }
  void TearDown() override {
    world.reset();
    std::vector<pid_t> mine;
    if (server) mine.push_back(server->pid());
    farm.reset();
    for (pid_t pid : mine) EXPECT_EQ(::kill(pid, 0), -1) << "server " << pid << " left running";
  }

  // Runs `t` as a task of `client` until it finishes (bounded) and returns its result.
  template <typename T>
  std::optional<T> run(int client, Task<T> t, Nanos limit = Millis(5000)) {
    auto out = std::make_shared<std::optional<T>>();
    auto wrapper = [](Task<T> inner, std::shared_ptr<std::optional<T>> slot) -> Task<void> {
      slot->emplace(co_await std::move(inner));
    };
    world->spawn(client, wrapper(std::move(t), out));
    world->loop().run_until([&] { return out->has_value(); }, limit);
    return *out;
  }

  Task<Reply> call(int client, Argv argv, Nanos timeout = Millis(1000)) {
    return world->env(client).node(0).call(std::move(argv), timeout);
  }

  std::unique_ptr<ServerFarm> farm;
  RedisServer* server = nullptr;
  std::unique_ptr<LiveWorld> world;
  int a = 0, b = 0;
};

TEST_F(LiveEnvTest, CallRoundTripAndReplyConversion) {
  EXPECT_EQ(run(a, call(a, {"SET", "k", "v"})), Reply::ok());
  EXPECT_EQ(run(a, call(a, {"GET", "k"})), Reply::bulk("v"));
  EXPECT_EQ(run(a, call(a, {"GET", "missing"})), Reply::nil());
  EXPECT_EQ(run(a, call(a, {"INCR", "n"})), Reply::integer_of(1));
  auto err = run(a, call(a, {"INCR", "k"}));
  ASSERT_TRUE(err);
  EXPECT_TRUE(err->is_error());
  EXPECT_EQ(err->str, "ERR value is not an integer or out of range");
  auto nested = run(a, call(a, {"EVAL", "return {1, 'a', {2, {3}}, redis.status_reply('S'), false}", "0"}));
  Reply expected = Reply::array({Reply::integer_of(1), Reply::bulk("a"),
                                 Reply::array({Reply::integer_of(2), Reply::array({Reply::integer_of(3)})}),
                                 Reply::status("S"), Reply::nil()});
  EXPECT_EQ(nested, expected);
  auto script_err = run(a, call(a, {"EVAL", "return redis.error_reply('MINE boom')", "0"}));
  ASSERT_TRUE(script_err);
  EXPECT_EQ(*script_err, Reply::error("MINE boom"));
}

// The runtime's join in the live world: calls issued together complete together, each
// with its own reply, in the order they were given (RedLock's parallel round).
TEST_F(LiveEnvTest, WhenAllResumesOnceEveryReplyIsIn) {
  std::vector<Task<Reply>> calls;
  calls.push_back(call(a, {"SET", "j", "1"}));
  calls.push_back(call(a, {"BLPOP", "empty-list", "0.1"}));  // answers nil after 100 ms
  calls.push_back(call(a, {"INCR", "j"}));
  auto replies = run(a, when_all(std::move(calls)));
  ASSERT_TRUE(replies);
  ASSERT_EQ(replies->size(), 3u);
  EXPECT_EQ((*replies)[0], Reply::ok());
  EXPECT_TRUE((*replies)[1].is_nil());
  EXPECT_EQ((*replies)[2], Reply::integer_of(2));
}

TEST_F(LiveEnvTest, LateReplyIsATimeoutAndIsDiscarded) {
  // BLPOP answers nil after 1 s; the caller gave up after 100 ms.
  auto r = run(a, call(a, {"BLPOP", "nothing", "1"}, Millis(100)));
  EXPECT_EQ(r, Reply::timeout());
  // The connection still works, and the next reply is this command's, not BLPOP's nil.
  EXPECT_EQ(run(a, call(a, {"ECHO", "after"}, Millis(3000))), Reply::bulk("after"));
}

TEST_F(LiveEnvTest, SleepWaitsAtLeastItsDuration) {
  auto sleeper = [](LiveEnv& env) -> Task<int64_t> {
    const Nanos t0 = env.now_mono();
    co_await env.sleep(Millis(50));
    co_return (env.now_mono() - t0).count();
  };
  auto slept = run(a, sleeper(world->env(a)));
  ASSERT_TRUE(slept);
  EXPECT_GE(*slept, 50'000'000);
}

TEST_F(LiveEnvTest, SubscriptionDeliversMessagesAndTimesOut) {
  auto listener = [](LiveEnv& env) -> Task<std::vector<Message>> {
    auto sub = co_await env.node(0).subscribe("ch");
    std::vector<Message> got;
    got.push_back(co_await sub->next(Millis(3000)));
    got.push_back(co_await sub->next(Millis(50)));
    co_return got;
  };
  auto out = std::make_shared<std::optional<std::vector<Message>>>();
  auto wrapper = [](Task<std::vector<Message>> t, auto slot) -> Task<void> { slot->emplace(co_await std::move(t)); };
  world->spawn(a, wrapper(listener(world->env(a)), out));
  // Publish until the subscriber has seen one (it may not be subscribed yet at first).
  for (int i = 0; i < 50 && !out->has_value(); ++i) {
    run(b, call(b, {"PUBLISH", "ch", "hello"}));
    world->loop().run_until([&] { return out->has_value(); }, Millis(50));
  }
  world->loop().run_until([&] { return out->has_value(); }, Millis(3000));
  ASSERT_TRUE(out->has_value());
  ASSERT_EQ((*out)->size(), 2u);
  EXPECT_FALSE((**out)[0].timed_out);
  EXPECT_EQ((**out)[0].channel, "ch");
  EXPECT_EQ((**out)[0].payload, "hello");
  // More "hello"s may be queued; either way next() returned something sensible.
  if ((**out)[1].timed_out) {
    EXPECT_TRUE((**out)[1].payload.empty());
  }
}

TEST_F(LiveEnvTest, PausedClientGetsItsReplyAfterThePauseEvenPastItsTimeout) {
  auto out = std::make_shared<std::optional<std::pair<Reply, int64_t>>>();
  auto body = [](LiveEnv& env, auto slot) -> Task<void> {
    const Nanos t0 = env.now_mono();
    Argv blpop{"BLPOP", "nothing", "0.2"};
    Reply r = co_await env.node(0).call(std::move(blpop), Millis(400));
    slot->emplace(std::move(r), (env.now_mono() - t0).count());
  };
  world->spawn(a, body(world->env(a), out));
  world->loop().run_for(Millis(20));
  world->pause(a, Millis(800));
  world->loop().run_until([&] { return out->has_value(); }, Millis(5000));
  ASSERT_TRUE(out->has_value());
  // The nil came at ~200 ms, before the 400 ms timeout fired: it wins, as in the sim.
  EXPECT_EQ((*out)->first, Reply::nil());
  EXPECT_GE((*out)->second, 800'000'000);
}

TEST_F(LiveEnvTest, CrashDestroysTasksAndRestartStartsAfresh) {
  int restarts = 0;
  world->on_client_restart = [&](int) { ++restarts; };
  auto finished = std::make_shared<bool>(false);
  auto body = [](LiveEnv& env, std::shared_ptr<bool> done) -> Task<void> {
    Argv blpop{"BLPOP", "nothing", "1"};
    co_await env.node(0).call(std::move(blpop), Millis(3000));
    *done = true;
  };
  world->spawn(a, body(world->env(a), finished));
  world->loop().run_for(Millis(50));
  world->crash(a);
  EXPECT_TRUE(world->idle(a));
  world->loop().run_for(Millis(1300));
  EXPECT_FALSE(*finished);
  world->restart(a);
  EXPECT_EQ(restarts, 1);
  EXPECT_EQ(run(a, call(a, {"PING"})), Reply::status("PONG"));
}

TEST_F(LiveEnvTest, ClientClockJumpMovesOnlyItsOwnWallClock) {
  const Nanos before = world->env(a).now_wall() - world->env(b).now_wall();
  world->jump_wall_clock(a, Millis(-60'000));
  const Nanos after = world->env(a).now_wall() - world->env(b).now_wall();
  EXPECT_NEAR(static_cast<double>((after - before).count()), -60e9, 1e8);
}

TEST_F(LiveEnvTest, RandomStreamsAreReproducibleAndPerClient) {
  LiveWorld other(7);
  other.add_node(server->address());
  int a2 = other.add_client("client-1", 1);
  EXPECT_EQ(world->env(a).random(), other.env(a2).random());
  EXPECT_NE(world->env(a).random(), world->env(b).random());
}

TEST_F(LiveEnvTest, ConnectionErrorsAreIoErrorsAndReconnect) {
  EXPECT_EQ(run(a, call(a, {"PING"})), Reply::status("PONG"));
  server->kill();
  auto down = run(a, call(a, {"PING"}));
  ASSERT_TRUE(down);
  EXPECT_EQ(down->type, Reply::Type::IoError) << to_short_text(*down);
  ASSERT_EQ(server->restart(true), "");
  EXPECT_EQ(run(a, call(a, {"PING"})), Reply::status("PONG"));
}

}  // namespace
}  // namespace lockstep::live
