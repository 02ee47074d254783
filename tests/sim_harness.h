// A small simulated world for tests: one or more nodes and a few clients, with helpers
// to run a coroutine in a client and read its result after the world has run.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lockstep/sim/world.h"
#include "lockstep/sim/zk_ensemble.h"

namespace lockstep::testing {

constexpr int64_t kMs = 1'000'000;

struct SimHarness {
  explicit SimHarness(int clients = 2, int nodes = 1, int64_t latency_ms = 1, int64_t replication_lag_ms = 0)
      : world(options(latency_ms, replication_lag_ms)) {
    for (int i = 1; i <= nodes; ++i) world.add_node("node-" + std::to_string(i), sim::Clock());
    for (int i = 1; i <= clients; ++i) client.push_back(world.add_client("client-" + std::to_string(i), i, sim::Clock()));
  }

  // Clients only, in a world of the given options (its seed, its latency).
  SimHarness(const sim::WorldOptions& o, int clients) : world(o) {
    for (int i = 1; i <= clients; ++i) client.push_back(world.add_client("client-" + std::to_string(i), i, sim::Clock()));
  }

  static sim::WorldOptions options(int64_t latency_ms, int64_t replication_lag_ms = 0) {
    sim::WorldOptions o;
    o.replication_lag_ns = replication_lag_ms * kMs;
    o.latency = sim::Latency{sim::Latency::Kind::Constant, latency_ms * kMs, 0, 0};
    return o;
  }

  Env& env(int i) { return world.env(client[i]); }

  // Starts `make(env)` in client i at time t_ms; the result lands in *out when it ends.
  template <typename T, typename F>
  void start(int i, int64_t t_ms, std::shared_ptr<std::optional<T>> out, F make) {
    world.scheduler().at(t_ms * kMs, [this, i, out, make] {
      Env& e = env(i);
      e.spawn([](Env& e, std::shared_ptr<std::optional<T>> out, F make) -> Task<void> {
        out->emplace(co_await make(e));
      }(e, out, make));
    });
  }

  void run_until_ms(int64_t t_ms) { world.scheduler().run_until(t_ms * kMs); }

  sim::World world;
  std::vector<int> client;
};

// Which way a cut between a client and the ZooKeeper servers loses messages.
enum class ZkCut { Requests, Answers, Both };

// Cuts client process `client_pid` off from every server of the world's ZooKeeper
// ensemble (delta +1) or heals that cut (delta -1).
inline void cut_from_zookeeper(sim::World& world, int client_pid, int delta, ZkCut which = ZkCut::Both) {
  for (int server : world.zookeeper()->server_pids()) {
    if (which != ZkCut::Answers) world.network().block(client_pid, server, delta);
    if (which != ZkCut::Requests) world.network().block(server, client_pid, delta);
  }
}

template <typename T>
std::shared_ptr<std::optional<T>> slot() {
  return std::make_shared<std::optional<T>>();
}

// One command to the first node, from a client's coroutine.
inline Task<Reply> command(Env& env, std::vector<std::string> argv, Nanos timeout = std::chrono::seconds(1)) {
  co_return co_await env.node(0).call(std::move(argv), timeout);
}

}  // namespace lockstep::testing
