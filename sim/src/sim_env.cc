// SimEnv and SimConnection: the Env interface on top of a World. Everything a lock does
// through them becomes scheduler events of its process, so pauses, crashes and network
// faults reach lock code exactly where a real process would feel them.
#include <deque>

#include "lockstep/sim/world.h"
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
  RequestRef issue(const std::shared_ptr<ConnState>& conn, std::vector<std::string> argv, Nanos timeout) {
    RequestRef req(new World::Request);
    req->client_pid = client_pid_;
    req->client_epoch = world_.process(client_pid_).epoch;
    if (conn->node_pid != world_.node_process(shard_)) {
      // The logical node failed over: like a Sentinel-aware client, reconnect to the
      // new master. Per-connection state (MULTI, WATCH) does not carry over.
      *conn = *new_conn();
    }
    req->node_pid = conn->node_pid;
    req->argv = std::move(argv);
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

SimEnv::SimEnv(World& world, int pid) : world_(world), pid_(pid) { reset_connections(); }
SimEnv::~SimEnv() = default;

void SimEnv::reset_connections() {
  connections_.clear();
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
int SimEnv::node_count() const { return world_.node_count(); }

Connection& SimEnv::node(int index) {
  // Nodes added after this client was created get connections lazily.
  while (static_cast<int>(connections_.size()) < world_.node_count()) {
    connections_.push_back(std::make_unique<SimConnection>(world_, pid_, static_cast<int>(connections_.size())));
  }
  return *connections_[index];
}

std::string SimEnv::process_name() const { return world_.process(pid_).name; }

}  // namespace lockstep::sim
