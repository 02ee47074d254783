// The two worlds a lock runs in, behind one small interface, so a behaviour test is
// written once and runs against the simulator and against real redis-servers: clients
// with an Env each, work started at an offset from now, and time that passes.
//
// SimWorld's time is simulated and exact. LiveWorld starts its own redis-servers on free
// loopback ports and stops them when it is destroyed; its time is real, so tests leave
// generous margins (the machine may be loaded) and never assert speed.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lockstep/live/live_world.h"
#include "lockstep/lock.h"
#include "lockstep/live/redis_server.h"
#include "sim_harness.h"

namespace lockstep::testing {

class TestWorld {
 public:
  virtual ~TestWorld() = default;
  virtual Env& env(int client) = 0;
  virtual void spawn(int client, Task<void> t) = 0;
  // Lets `d` pass while every client's work runs.
  virtual void run_for(Nanos d) = 0;
  // A control-plane command on a node, outside any client (to read what the lock left).
  virtual Reply inspect(int node, const std::vector<std::string>& argv) = 0;

  // Runs make() in `client` after `at`; the result lands in the returned slot.
  template <typename T, typename F>
  std::shared_ptr<std::optional<T>> start(int client, Nanos at, F make) {
    auto out = std::make_shared<std::optional<T>>();
    spawn(client, [](Env& e, Nanos at, F make, std::shared_ptr<std::optional<T>> out) -> Task<void> {
      if (at > Nanos(0)) co_await e.sleep(at);
      out->emplace(co_await make());
    }(env(client), at, std::move(make), out));
    return out;
  }

  // Runs make() in `client` once `after` holds its result, then `delay` later: a step that
  // must follow another's outcome waits for that outcome, not for a time guessed in advance
  // (on a loaded machine a live acquisition may take a good part of a lease).
  template <typename T, typename U, typename F>
  std::shared_ptr<std::optional<T>> start_after(int client, std::shared_ptr<std::optional<U>> after, Nanos delay,
                                                F make) {
    auto out = std::make_shared<std::optional<T>>();
    spawn(client, [](Env& e, std::shared_ptr<std::optional<U>> after, Nanos delay, F make,
                     std::shared_ptr<std::optional<T>> out) -> Task<void> {
      while (!after->has_value()) co_await e.sleep(Millis(5));
      if (delay > Nanos(0)) co_await e.sleep(delay);
      out->emplace(co_await make());
    }(env(client), std::move(after), delay, std::move(make), out));
    return out;
  }

};

class SimTestWorld : public TestWorld {
 public:
  SimTestWorld(int clients, int nodes) : h_(clients, nodes) {}
  Env& env(int client) override { return h_.env(client); }
  void spawn(int client, Task<void> t) override { h_.env(client).spawn(std::move(t)); }
  void run_for(Nanos d) override { h_.world.scheduler().run_until(h_.world.now() + d.count()); }
  Reply inspect(int node, const std::vector<std::string>& argv) override {
    sim::ClientState c;
    return h_.world.redis(node).execute(c, argv, h_.world.node_wall_ms(h_.world.node_process(node)));
  }

 private:
  SimHarness h_;
};

class LiveTestWorld : public TestWorld {
 public:
  LiveTestWorld(int clients, int nodes) : world_(7) {
    if (live::find_redis_server().empty()) {
      error_ = "redis-server not installed: live tests need it";
      return;
    }
    for (int i = 1; i <= nodes; ++i) {
      live::ServerConfig c;
      c.name = "node-" + std::to_string(i);
      live::RedisServer* s = farm_.start(c);
      if (s == nullptr) {
        error_ = farm_.error();
        return;
      }
      world_.add_node(s->address());
    }
    for (int i = 1; i <= clients; ++i) world_.add_client("client-" + std::to_string(i), i);
  }
  ~LiveTestWorld() override { world_.stop_all(); }

  // "" when the servers are up; otherwise why the live world cannot run here.
  const std::string& error() const { return error_; }

  Env& env(int client) override { return world_.env(client); }
  void spawn(int client, Task<void> t) override { world_.spawn(client, std::move(t)); }
  void run_for(Nanos d) override { world_.loop().run_for(d); }
  Reply inspect(int node, const std::vector<std::string>& argv) override {
    return live::sync_command(world_.node_address(node), argv, Millis(1000));
  }

 private:
  live::ServerFarm farm_;  // destroyed after world_: clients disconnect before servers stop
  live::LiveWorld world_;
  std::string error_;
};

// Type parameters for TYPED_TEST: each builds its world, or says why it cannot.
struct Sim {
  static constexpr const char* kName = "sim";
  static std::unique_ptr<TestWorld> make(int clients, int nodes, std::string&) {
    return std::make_unique<SimTestWorld>(clients, nodes);
  }
};

struct Live {
  static constexpr const char* kName = "live";
  static std::unique_ptr<TestWorld> make(int clients, int nodes, std::string& why) {
    auto w = std::make_unique<LiveTestWorld>(clients, nodes);
    why = w->error();
    if (!why.empty()) return nullptr;
    return w;
  }
};

// What a two-worlds fixture over locks of type `L` (Lock or ProfileLock: both answer
// acquire(wait) and release()) shares: its world, and a handle's steps in it, each at a
// time or once another step has its outcome (and `delay` later).
template <typename L>
class LockSteps : public ::testing::Test {
 protected:
  // A lock and the process that holds the handle.
  struct Handle {
    int client;
    L* lock;
  };

  auto acquire(Handle h, Nanos at, Nanos wait) {
    L* l = h.lock;
    return world_->template start<AcquireOutcome>(h.client, at, [l, wait] { return l->acquire(wait); });
  }
  auto release(Handle h, Nanos at) {
    L* l = h.lock;
    return world_->template start<ReleaseOutcome>(h.client, at, [l] { return l->release(); });
  }
  template <typename U>
  auto acquire_after(Handle h, std::shared_ptr<std::optional<U>> prev, Nanos delay, Nanos wait) {
    L* l = h.lock;
    return world_->template start_after<AcquireOutcome>(h.client, std::move(prev), delay,
                                                        [l, wait] { return l->acquire(wait); });
  }
  template <typename U>
  auto release_after(Handle h, std::shared_ptr<std::optional<U>> prev, Nanos delay) {
    L* l = h.lock;
    return world_->template start_after<ReleaseOutcome>(h.client, std::move(prev), delay,
                                                        [l] { return l->release(); });
  }

  std::unique_ptr<TestWorld> world_;
};

// Names a TYPED_TEST's instances after their world: `.../sim`, `.../live`.
struct WorldName {
  template <typename W>
  static std::string GetName(int) {
    return W::kName;
  }
};

// The clients a two-worlds test drives, by role.
inline constexpr int kA = 0, kB = 1, kC = 2, kD = 3;

}  // namespace lockstep::testing
