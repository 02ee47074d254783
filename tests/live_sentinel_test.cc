// Failover through redis-sentinel in the live world, against real redis-server and
// redis-sentinel processes started on free loopback ports: clients follow Sentinel's
// +switch-master; the catalogue's failover race loses the lock live and
// its counterpart stays safe; nothing the suite started is left running, not even when
// a run is interrupted.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>

#include "lockstep/live/live_world.h"
#include "lockstep/live/redis_server.h"
#include "lockstep/live/sentinel_follower.h"
#include "lockstep/runner/live_runner.h"
#include "live_support.h"
#include "scenario_files.h"

namespace lockstep {
namespace {

using Argv = std::vector<std::string>;
using live::NodeAddress;

using live_support::has_redis;
using live_support::run_until;
using live_support::server_config;

using live_support::sync;

using live_support::expect_all_gone;

TEST(LiveSentinel, ClientsFollowSwitchMasterToThePromotedReplica) {
  if (!has_redis()) GTEST_SKIP() << "redis-server not installed: live tests need it";
  std::vector<pid_t> pids;
  {
    live::ServerFarm farm;
    live::RedisServer* master = farm.start(server_config("node-1"));
    ASSERT_NE(master, nullptr) << farm.error();
    live::RedisServer* replica = farm.start(server_config("node-1-replica-1", master->address()));
    ASSERT_NE(replica, nullptr) << farm.error();
    live::LiveWorld world(1);
    ASSERT_TRUE(sync(master->address(), {"SET", "stock", "7"}).is_ok());
    // A linked replica may still wait for its first ACK before the master streams to it.
    ASSERT_TRUE(run_until(
        world.loop(), [&] { return sync(replica->address(), {"GET", "stock"}) == Reply::bulk("7"); }, Millis(10000)));

    live::ServerConfig sc = server_config("sentinel-1");
    sc.monitors = {{"node-1", master->address(), 1, 5000, 60000}};
    live::RedisServer* sentinel = farm.start(sc);
    ASSERT_NE(sentinel, nullptr) << farm.error();
    EXPECT_EQ(sync(sentinel->address(), {"SENTINEL", "get-master-addr-by-name", "node-1"}),
              Reply::array({Reply::bulk("127.0.0.1"), Reply::bulk(std::to_string(master->address().port))}));
    // Sentinel learns of the replica from the master's INFO, then reads the replica's
    // own INFO; only then can it promote it.
    ASSERT_TRUE(run_until(
        world.loop(),
        [&] {
          Reply r = sync(sentinel->address(), {"SENTINEL", "replicas", "node-1"});
          if (r.type != Reply::Type::Array || r.elements.size() != 1) return false;
          const auto& fields = r.elements[0].elements;
          bool connected = false, informed = false;
          for (size_t i = 0; i + 1 < fields.size(); i += 2) {
            connected = connected || (fields[i].str == "flags" && fields[i + 1].str == "slave");
            informed = informed || (fields[i].str == "master-link-status" && fields[i + 1].str == "ok");
          }
          return connected && informed;
        },
        Millis(10000)));

    world.add_node(master->address());
    const int client = world.add_client("client-1", 1);
    live::SentinelFollower follower(world, {"node-1"});
    std::optional<std::pair<NodeAddress, NodeAddress>> seen;
    follower.on_switch = [&](int node, const NodeAddress& from, const NodeAddress& to) {
      EXPECT_EQ(node, 0);
      seen.emplace(from, to);
    };
    ASSERT_EQ(follower.follow({sentinel->address()}), "");
    ASSERT_TRUE(world.loop().run_until([&] { return follower.subscribed(); }, Millis(3000)));

    const Reply asked = sync(sentinel->address(), {"SENTINEL", "FAILOVER", "node-1"});
    EXPECT_TRUE(asked.is_ok()) << to_short_text(asked);
    ASSERT_TRUE(world.loop().run_until([&] { return seen.has_value(); }, Millis(10000)))
        << "no +switch-master from the sentinel";
    EXPECT_EQ(seen->first.port, master->address().port);
    EXPECT_EQ(seen->second.port, replica->address().port);
    EXPECT_EQ(world.node_address(0).port, replica->address().port);

    // The client's next call reaches the promoted replica, which now takes writes.
    std::optional<Reply> got;
    auto body = [](live::LiveEnv& env, Argv argv, std::optional<Reply>& slot) -> Task<void> {
      slot = co_await env.node(0).call(std::move(argv), Millis(1000));
    };
    world.spawn(client, body(world.env(client), {"INCRBY", "stock", "-1"}, got));
    world.loop().run_until([&] { return got.has_value(); }, Millis(3000));
    EXPECT_EQ(got, Reply::integer_of(6));
    for (auto& s : farm.servers()) pids.push_back(s->pid());
  }
  ASSERT_EQ(pids.size(), 3u);
  expect_all_gone(pids);
}

using scenario_files::load;

const checker::Event* find(const checker::History& h, const std::string& f) {
  for (const auto& e : h.events) {
    if (e.type == checker::EventType::Truth && e.f == f) return &e;
  }
  return nullptr;
}

TEST(LiveSentinel, FailoverLosesTheLockLive) {
  if (!has_redis()) GTEST_SKIP() << "redis-server not installed: live tests need it";
  const size_t started_before = live::started_server_pids().size();
  runner::RunOutcome o = runner::run_live(load("12-failover-loses-lock.json"));
  ASSERT_FALSE(o.report.stats.contains("error")) << o.report.stats.dump();
  EXPECT_EQ(o.report.found_violations(),
            (std::set<std::string>{"linearizability", "lost-update", "mutual-exclusion"}))
      << o.report.stats.dump() << "\n" << o.history_jsonl;
  EXPECT_TRUE(o.report.as_expected());
  // Sentinel, not lockstep, moved the clients, and the lock went with the old master.
  const checker::Event* failover = find(o.history, "failover");
  ASSERT_NE(failover, nullptr) << o.report.stats.dump();
  EXPECT_EQ(failover->value["by"], "sentinel");
  EXPECT_EQ(failover->value["from"], "node-1");
  EXPECT_EQ(failover->value["to"], "node-1-replica-1");
  bool lost_with_master = false;
  for (const auto& e : o.history.events)
    lost_with_master = lost_with_master || (e.f == "key-del" && e.extra.value("cause", "") == "failover" &&
                                            e.extra.value("owner", -1) == 1);
  EXPECT_TRUE(lost_with_master) << o.history_jsonl;
  EXPECT_GT(o.report.stats["replication"]["dropped_bytes"], 0);

  // A master, a replica and three sentinels were started, and all are gone.
  const std::vector<pid_t> all = live::started_server_pids();
  ASSERT_EQ(all.size() - started_before, 5u);
  expect_all_gone(all);
}

TEST(LiveSentinel, FailoverAfterReplicationIsSafeLive) {
  if (!has_redis()) GTEST_SKIP() << "redis-server not installed: live tests need it";
  runner::RunOutcome o = runner::run_live(load("13-failover-after-replication.json"));
  ASSERT_FALSE(o.report.stats.contains("error")) << o.report.stats.dump();
  EXPECT_EQ(o.report.verdict, "safe") << o.report.stats.dump() << "\n" << o.history_jsonl;
  EXPECT_EQ(o.report.stats["sales"], 2);
  // Safe after a real failover, not for want of one: client-2 took the lock on the
  // promoted replica, after client-1 released it there.
  const checker::Event* failover = find(o.history, "failover");
  ASSERT_NE(failover, nullptr) << o.report.stats.dump();
  EXPECT_EQ(failover->value["by"], "sentinel");
  int64_t acquired_by_2 = -1;
  for (const auto& e : o.history.events) {
    if (e.type == checker::EventType::Ok && e.f == "acquire" && e.process == 2) acquired_by_2 = e.time_ns;
  }
  EXPECT_GT(acquired_by_2, failover->time_ns);
  expect_all_gone(live::started_server_pids());
}

// The processes whose parent is `parent`, from /proc.
std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> out;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string line;
    std::getline(stat, line);
    // "pid (comm) state ppid ...": comm may hold spaces, so read after the last ')'.
    const auto close = line.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 1));
    char state = 0;
    pid_t ppid = 0;
    rest >> state >> ppid;
    if (ppid == parent) out.push_back(static_cast<pid_t>(std::stol(name)));
  }
  return out;
}

// Gone, or a zombie waiting for whoever adopted it to reap it.
bool gone(pid_t pid) {
  if (::kill(pid, 0) == -1) return true;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  const auto close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'Z';
}

TEST(LiveSentinel, InterruptedRunLeavesNoServerOrSentinel) {
  if (!has_redis()) GTEST_SKIP() << "redis-server not installed: live tests need it";
  const std::string out_dir = ::testing::TempDir() + "/lockstep-live-interrupted";
  const std::string scenario = std::string(LOCKSTEP_SOURCE_DIR) + "/scenarios/12-failover-loses-lock.json";
  const pid_t lockstep = fork();
  ASSERT_GE(lockstep, 0);
  if (lockstep == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    const int devnull = ::open("/dev/null", O_WRONLY);
    ::dup2(devnull, STDOUT_FILENO);
    ::dup2(devnull, STDERR_FILENO);
    ::execl(LOCKSTEP_BINARY, LOCKSTEP_BINARY, "live", "--out", out_dir.c_str(), scenario.c_str(), nullptr);
    ::_exit(127);
  }
  // A master, a replica and three sentinels, then Ctrl-C in the middle of the run.
  std::vector<pid_t> started;
  for (int i = 0; i < 500 && started.size() < 5; ++i) {
    std::this_thread::sleep_for(Millis(20));
    started = children_of(lockstep);
  }
  EXPECT_EQ(started.size(), 5u);
  ::kill(lockstep, SIGINT);
  int status = 0;
  ASSERT_EQ(::waitpid(lockstep, &status, 0), lockstep);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT) << status;
  for (pid_t pid : started) {
    bool ok = false;
    for (int i = 0; i < 100 && !ok; ++i) {
      ok = gone(pid);
      if (!ok) std::this_thread::sleep_for(Millis(20));
    }
    EXPECT_TRUE(ok) << "pid " << pid << " outlived the interrupted run";
  }
}

TEST(LiveSentinel, AutomaticFailoverLiveNeedsSentinels) {
  runner::Scenario s = load("12-failover-loses-lock.json");
  EXPECT_EQ(runner::live_unsupported(s, {}), "");
  s.topology.sentinels = 0;
  EXPECT_NE(runner::live_unsupported(s, {}).find("topology.sentinels"), std::string::npos);
  runner::LiveOptions external;
  external.redis = "127.0.0.1:1";
  EXPECT_NE(runner::live_unsupported(load("12-failover-loses-lock.json"), external), "");
}

}  // namespace
}  // namespace lockstep
