// SimEnv and SimConnection: the Env interface on top of a World. Everything a lock does
// through them becomes scheduler events of its process, so pauses, crashes and network
// faults reach lock code exactly where a real process would feel them.
#include <deque>
#include <map>
#include <type_traits>
#include <utility>

#include "lockstep/cluster_client.h"
#include "lockstep/cluster_slot.h"
#include "lockstep/sim/world.h"
#include "lockstep/sim/zk_ensemble.h"
#include "world_internal.h"

namespace lockstep::sim {
namespace {

struct SleepAwaiter {
  World& world;
  int pid;
  int64_t until_ns;
  bool await_ready() const noexcept { return false; }
  void await_suspend(std::coroutine_handle<> h) {
    world.post(pid, until_ns, [h] { h.resume(); });
  }
  void await_resume() const noexcept {}
};

// Messages for one subscription, kept apart from the Subscription object so that a
// delivery event that outlives it finds nothing rather than freed memory.
struct Mailbox {
  std::deque<Message> queue;
  std::shared_ptr<PendingCall> waiter;  // reused: finish() carries the message as a Reply
};

class SimSubscription : public Subscription {
 public:
  SimSubscription(World& world, int pid, std::shared_ptr<ConnState> conn, std::shared_ptr<Mailbox> box,
                  uint64_t id, int node_pid)
      : world_(world), pid_(pid), conn_(std::move(conn)), box_(std::move(box)), id_(id), node_pid_(node_pid) {}
  ~SimSubscription() override {
    world_.unregister_subscriber(id_);
    world_.process(node_pid_).redis->disconnect(conn_->state);
  }

  Task<Message> next(Nanos timeout) override {
    if (!box_->queue.empty()) {
      Message m = std::move(box_->queue.front());
      box_->queue.pop_front();
      co_return m;
    }
    auto pending = std::make_shared<PendingCall>();
    box_->waiter = pending;
    pending->scheduler = &world_.scheduler();
    pending->timeout = world_.post(pid_, world_.now() + timeout.count(), [pending] { pending->finish(Reply::timeout()); });
    Reply r = co_await PendingAwaiter{pending.get()};
    box_->waiter.reset();
    if (r.type == Reply::Type::Timeout) co_return Message{true, {}, {}};
    co_return Message{false, r.str, r.elements.empty() ? std::string() : r.elements[0].str};
  }

 private:
  World& world_;
  int pid_;
  std::shared_ptr<ConnState> conn_;
  std::shared_ptr<Mailbox> box_;
  uint64_t id_;
  int node_pid_;
};

class SimConnection : public Connection {
 public:
  SimConnection(World& world, int client_pid, int shard)
      : world_(world), client_pid_(client_pid), shard_(shard), conn_(new_conn()) {}

  Task<Reply> call(std::vector<std::string> argv, Nanos timeout) override {
    // The frame owns the request; events hold it too, for as long as they may need it.
    RequestRef req = issue(conn_, std::move(argv), timeout);
    co_return co_await PendingAwaiter{&req->pending};
  }

  // Read in place: the request keeps the command alive as long as any event needs it.
  Task<Reply> call(Command command, Nanos timeout) override {
    RequestRef req = issue(conn_, std::move(command), timeout);
    co_return co_await PendingAwaiter{&req->pending};
  }

  Task<std::unique_ptr<Subscription>> subscribe(std::string channel) override {
    // Like Redisson, subscriptions use a connection of their own: a subscribed
    // connection cannot send ordinary commands.
    auto conn = new_conn();
    auto box = std::make_shared<Mailbox>();
    uint64_t id = world_.register_subscriber(
        [box](std::string ch, std::string payload) {
          Message m{false, std::move(ch), std::move(payload)};
          if (box->waiter && !box->waiter->done) {
            Reply r = Reply::bulk(m.channel);
            r.elements.push_back(Reply::bulk(m.payload));
            box->waiter->finish(std::move(r));
          } else {
            box->queue.push_back(std::move(m));
          }
        },
        client_pid_, &conn->state);
    auto sub = std::make_unique<SimSubscription>(world_, client_pid_, conn, box, id, conn->node_pid);
    std::vector<std::string> argv{"SUBSCRIBE", channel};
    RequestRef req = issue(conn, std::move(argv), Nanos(1'000'000'000));
    co_await PendingAwaiter{&req->pending};
    co_return sub;
  }

 private:
  std::shared_ptr<ConnState> new_conn() {
    auto c = std::make_shared<ConnState>();
    c->state.process = world_.process(client_pid_).history_id;
    c->node_pid = world_.node_process(shard_);
    c->node_epoch = world_.process(c->node_pid).epoch;
    return c;
  }

  // Sends one command and arms the caller's timeout; the reply or the timeout completes
  // the request's PendingCall.
  // The argv is moved in, or a shared command held (a Command).
  template <typename Argv>
  RequestRef issue(const std::shared_ptr<ConnState>& conn, Argv argv, Nanos timeout) {
    RequestRef req(World::Request::make());
    req->client_pid = client_pid_;
    req->client_epoch = world_.process(client_pid_).epoch;
    if (conn->node_pid != world_.node_process(shard_)) {
      // The logical node failed over: like a Sentinel-aware client, reconnect to the
      // new master. Per-connection state (MULTI, WATCH) does not carry over.
      *conn = *new_conn();
    }
    req->node_pid = conn->node_pid;
    if constexpr (std::is_same_v<Argv, Command>) req->shared = std::move(argv);
    else req->argv = std::move(argv);
    req->conn = conn;
    req->deadline_ns = std::max(world_.now(), world_.now() + timeout.count());
    world_.send_request(req);
    return req;
  }

  World& world_;
  int client_pid_;
  int shard_;
  std::shared_ptr<ConnState> conn_;
};

// A cluster client's connection, as Redisson's or Lettuce's: ClusterRouter (shared with
// the live world) decides where each command goes; this sends it there.
class ClusterConnection : public Connection, private ClusterRouter {
 public:
  ClusterConnection(World& world, int client_pid) : ClusterRouter(seeds(world)), world_(world), client_pid_(client_pid) {}

  Task<Reply> call(std::vector<std::string> argv, Nanos timeout) override {
    co_return co_await ClusterRouter::call(std::move(argv), timeout);
  }

  // Messages of a channel come from the node serving its slot, where Redisson subscribes;
  // that subscription follows its shard's master as a Sentinel-aware one would.
  Task<std::unique_ptr<Subscription>> subscribe(std::string channel) override {
    const int shard = world_.shard_of_key(channel);
    while (static_cast<int>(per_shard_.size()) <= shard) {
      per_shard_.push_back(std::make_unique<SimConnection>(world_, client_pid_, static_cast<int>(per_shard_.size())));
    }
    co_return co_await per_shard_[shard]->subscribe(std::move(channel));
  }

 private:
  // Every node, in creation order.
  static std::vector<int> seeds(World& world) {
    std::vector<int> out;
    for (int shard = 0; shard < world.node_count(); ++shard) {
      for (int pid : world.shard_members(shard)) out.push_back(pid);
    }
    return out;
  }

  int64_t now_ns() override { return world_.now(); }
  int find(const std::string& host, int64_t) override { return world_.find(host); }

  Task<Reply> send(int pid, std::vector<std::string> argv, int64_t deadline) override {
    auto& conn = conns_[pid];
    if (!conn) {
      conn = std::make_shared<ConnState>();
      conn->state.process = world_.process(client_pid_).history_id;
      conn->node_pid = pid;
      conn->node_epoch = world_.process(pid).epoch;
    }
    RequestRef req(World::Request::make());
    req->client_pid = client_pid_;
    req->client_epoch = world_.process(client_pid_).epoch;
    req->node_pid = pid;
    req->argv = std::move(argv);
    req->conn = conn;
    req->deadline_ns = std::max(world_.now(), deadline);
    world_.send_request(req);
    co_return co_await PendingAwaiter{&req->pending};
  }

  World& world_;
  int client_pid_;
  std::map<int, std::shared_ptr<ConnState>> conns_;
  std::vector<std::unique_ptr<SimConnection>> per_shard_;
};

// The cluster bus's view of one master: PING it every 100 ms (clusterCron's pace); after
// node_timeout without a PONG it is PFAIL, FAIL once a majority of masters is there to
// agree, and after the election delay its best replica takes over.
Task<void> cluster_monitor(World& world, Env& env, int pid, int shard, int64_t timeout_ns, int64_t until_ns) {
  SimConnection conn(world, pid, shard);
  int64_t last_ok_ns = world.now();
  int master = world.node_process(shard);
  while (world.now() < until_ns) {  // bounded: every turn advances time by >= 100 ms
    co_await env.sleep(Nanos(100'000'000));
    std::vector<std::string> ping{"PING"};
    Reply r = co_await conn.call(std::move(ping), Nanos(timeout_ns));
    if (world.node_process(shard) != master || r.type == Reply::Type::Status) {
      if (r.type == Reply::Type::Status) world.cluster_clear_failed(shard);
      master = world.node_process(shard);
      last_ok_ns = world.now();
      continue;
    }
    if (world.now() - last_ok_ns < timeout_ns || !world.cluster_majority_reachable(shard)) continue;
    const int64_t delay_ns = world.cluster_mark_failed(shard);
    if (delay_ns < 0) continue;  // no replica: the cluster stays down until the master returns
    co_await env.sleep(Nanos(delay_ns));
    if (world.node_process(shard) == master) world.failover(shard);
    master = world.node_process(shard);
    last_ok_ns = world.now();
  }
}

// Sentinel's view of one master: PING it every period; after down_after without an
// answer, fail it over. Short jitter never adds up to down_after, so it never fails over.
Task<void> monitor(World& world, Env& env, int shard, int64_t down_after_ns, int64_t period_ns, int64_t until_ns) {
  int64_t last_ok_ns = world.now();
  int master = world.node_process(shard);
  while (world.now() < until_ns) {  // bounded: every turn advances time by >= period
    co_await env.sleep(Nanos(period_ns));
    std::vector<std::string> ping{"PING"};
    // A late PONG still proves the master alive, as with Sentinel: wait up to down_after.
    Reply r = co_await env.node(shard).call(std::move(ping), Nanos(down_after_ns));
    if (world.node_process(shard) != master) {
      master = world.node_process(shard);
      last_ok_ns = world.now();
      continue;
    }
    if (r.type == Reply::Type::Status) {
      last_ok_ns = world.now();
    } else if (world.now() - last_ok_ns >= down_after_ns && world.failover(shard)) {
      master = world.node_process(shard);
      last_ok_ns = world.now();
    }
  }
}

}  // namespace

void World::start_failure_detector(int64_t down_after_ns, int64_t period_ns, int64_t until_ns) {
  const int pid = add_client("sentinel", -1, Clock());
  for (int shard = 0; shard < node_count(); ++shard) {
    env(pid).spawn(monitor(*this, env(pid), shard, down_after_ns, period_ns, until_ns));
  }
}

void World::start_cluster_failure_detector(int64_t node_timeout_ns, int64_t until_ns) {
  const int pid = add_client("cluster-bus", -1, Clock());
  for (int shard = 0; shard < node_count(); ++shard) {
    env(pid).spawn(cluster_monitor(*this, env(pid), pid, shard, node_timeout_ns, until_ns));
  }
}

SimEnv::SimEnv(World& world, int pid) : world_(world), pid_(pid) { reset_connections(); }
SimEnv::~SimEnv() = default;

void SimEnv::reset_connections() {
  connections_.clear();
  zookeeper_.reset();  // the session is left to expire on the ensemble
  if (world_.cluster_enabled()) {
    connections_.push_back(std::make_unique<ClusterConnection>(world_, pid_));
    return;
  }
  for (int i = 0; i < world_.node_count(); ++i) {
    connections_.push_back(std::make_unique<SimConnection>(world_, pid_, i));
  }
}

Nanos SimEnv::now_wall() { return Nanos(world_.process(pid_).clock.wall_ns(world_.now())); }
Nanos SimEnv::now_mono() { return Nanos(world_.process(pid_).clock.mono_ns(world_.now())); }

Task<void> SimEnv::sleep(Nanos d) {
  co_await SleepAwaiter{world_, pid_, world_.now() + std::max<int64_t>(d.count(), 0)};
}

void SimEnv::spawn(Task<void> t) {
  auto& tasks = world_.process(pid_).tasks;
  std::erase_if(tasks, [](const Task<void>& x) { return x.done(); });
  auto h = t.handle();
  tasks.push_back(std::move(t));
  world_.post(pid_, world_.now(), [h] { h.resume(); });
}

uint64_t SimEnv::random() { return world_.process(pid_).rng.next(); }
int SimEnv::node_count() const { return world_.cluster_enabled() ? 1 : world_.node_count(); }

Connection& SimEnv::node(int index) {
  if (world_.cluster_enabled()) return *connections_[0];
  // Nodes added after this client was created get connections lazily.
  while (static_cast<int>(connections_.size()) < world_.node_count()) {
    connections_.push_back(std::make_unique<SimConnection>(world_, pid_, static_cast<int>(connections_.size())));
  }
  return *connections_[index];
}

std::string SimEnv::process_name() const { return world_.process(pid_).name; }

ZooKeeper* SimEnv::zookeeper() {
  if (!world_.zookeeper()) return nullptr;
  if (!zookeeper_) zookeeper_ = world_.zookeeper()->make_client(pid_);
  return zookeeper_.get();
}

}  // namespace lockstep::sim
