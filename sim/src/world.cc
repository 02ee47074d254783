#include "lockstep/sim/world.h"

#include "world_internal.h"

namespace lockstep::sim {

World::World(const WorldOptions& options)
    : seed_(options.seed), options_(options), net_(options.seed, options.latency, options.loss) {}

// Coroutine frames are destroyed before the processes (and connections) they point into.
World::~World() {
  for (auto& p : procs_) p->tasks.clear();
}

int World::add_node(const std::string& name, Clock clock) {
  auto p = std::make_unique<Process>();
  p->id = static_cast<int>(procs_.size());
  p->name = name;
  p->is_node = true;
  p->clock = clock;
  p->rng = Rng(seed_, name);
  p->redis = std::make_unique<RedisNode>();
  p->node_index = static_cast<int>(node_pids_.size());
  const int index = p->node_index;
  const int pid = p->id;
  p->redis->set_observer([this, index](const KeyChange& c) {
    if (on_key_change) on_key_change(index, c);
  });
  p->redis->set_publisher([this, pid](ClientState& target, const std::string& channel, const std::string& msg) {
    publish(pid, target, channel, msg);
  });
  procs_.push_back(std::move(p));
  node_pids_.push_back(pid);
  schedule_active_expire(pid);
  return pid;
}

int World::add_client(const std::string& name, int64_t history_id, Clock clock) {
  auto p = std::make_unique<Process>();
  p->id = static_cast<int>(procs_.size());
  p->name = name;
  p->history_id = history_id;
  p->clock = clock;
  p->rng = Rng(seed_, name);
  procs_.push_back(std::move(p));
  const int pid = procs_.back()->id;
  procs_.back()->env = std::make_unique<SimEnv>(*this, pid);
  return pid;
}

int World::find(const std::string& name) const {
  for (const auto& p : procs_) {
    if (p->name == name) return p->id;
  }
  return -1;
}

int64_t World::node_wall_ms(int node_pid) const {
  return procs_[node_pid]->clock.wall_ns(sched_.now()) / 1'000'000;
}

void World::post_epoch(int pid, uint64_t epoch, int64_t t_ns, std::function<void()> fn) {
  sched_.at(t_ns, [this, pid, epoch, fn = std::move(fn)]() mutable { run_in(pid, epoch, std::move(fn)); });
}

void World::run_in(int pid, uint64_t epoch, std::function<void()> fn) {
  Process& p = *procs_[pid];
  if (p.epoch != epoch || p.crashed) return;
  if (sched_.now() < p.paused_until_ns) {
    p.deferred.push_back(std::move(fn));
    return;
  }
  fn();
}

void World::pause(int pid, int64_t duration_ns) {
  Process& p = *procs_[pid];
  const int64_t until = sched_.now() + duration_ns;
  if (until <= p.paused_until_ns) return;
  p.paused_until_ns = until;
  sched_.at(until, [this, pid] { end_pause(pid); });
}

void World::end_pause(int pid) {
  Process& p = *procs_[pid];
  if (sched_.now() < p.paused_until_ns) return;  // a longer pause overlapped this one
  auto waiting = std::move(p.deferred);
  p.deferred.clear();
  // Everything that piled up during the pause runs now, in arrival order.
  for (auto& fn : waiting) post(pid, sched_.now(), std::move(fn));
}

void World::crash(int pid) {
  Process& p = *procs_[pid];
  if (p.crashed) return;
  p.crashed = true;
  ++p.epoch;
  p.paused_until_ns = 0;
  p.deferred.clear();
  if (p.is_node) return;
  // Destroying the frames cancels every in-flight call, sleep and watchdog at once.
  p.tasks.clear();
  p.env->reset_connections();
}

void World::restart(int pid) {
  Process& p = *procs_[pid];
  if (!p.crashed) return;
  p.crashed = false;
  if (p.is_node) {
    p.redis->flush_all();
    schedule_active_expire(pid);
    return;
  }
  if (on_client_restart) on_client_restart(pid);
}

void World::schedule_active_expire(int pid) {
  post(pid, sched_.now() + options_.active_expire_period_ns, [this, pid] {
    Process& p = *procs_[pid];
    p.redis->active_expire_cycle(node_wall_ms(pid), p.rng);
    schedule_active_expire(pid);
  });
}

void World::send_request(std::shared_ptr<Request> req) {
  auto arrival = net_.transit(req->client_pid, req->node_pid, sched_.now());
  if (!arrival) return;  // lost: the caller's timeout decides
  sched_.at(*arrival, [this, req = std::move(req)]() mutable {
    Process& node = *procs_[req->node_pid];
    if (node.crashed) {
      reply_to_client(req, Reply::io_error("connection refused"), sched_.now());
      return;
    }
    uint64_t epoch = node.epoch;
    run_in(req->node_pid, epoch, [this, req] { execute_on_node(req); });
  });
}

void World::execute_on_node(std::shared_ptr<Request> req) {
  Process& node = *procs_[req->node_pid];
  ConnState& conn = *req->conn;
  if (conn.node_epoch != node.epoch) {
    // The server this connection was talking to died; the client reconnects.
    conn.node_epoch = node.epoch;
    conn.state = ClientState{};
    conn.state.process = procs_[req->client_pid]->history_id;
    reply_to_client(req, Reply::io_error("connection reset by peer"), sched_.now());
    return;
  }
  Reply reply = node.redis->execute(conn.state, req->argv, node_wall_ms(req->node_pid));
  reply_to_client(req, std::move(reply), sched_.now());
}

void World::reply_to_client(const std::shared_ptr<Request>& req, Reply reply, int64_t send_ns) {
  auto arrival = net_.transit(req->node_pid, req->client_pid, send_ns);
  if (!arrival) return;
  post_epoch(req->client_pid, req->client_epoch, *arrival,
             [pending = req->pending, reply = std::move(reply)]() mutable { pending->finish(std::move(reply)); });
}

uint64_t World::register_subscriber(std::function<void(std::string, std::string)> deliver, int client_pid,
                                    ClientState* state) {
  const uint64_t id = next_subscriber_id_++;
  subscribers_[id] = Subscriber{std::move(deliver), client_pid};
  subscriber_by_state_[state] = id;
  return id;
}

void World::unregister_subscriber(uint64_t id) {
  subscribers_.erase(id);
  for (auto it = subscriber_by_state_.begin(); it != subscriber_by_state_.end(); ++it) {
    if (it->second == id) {
      subscriber_by_state_.erase(it);
      break;
    }
  }
}

void World::publish(int node_pid, ClientState& target, const std::string& channel, const std::string& msg) {
  auto it = subscriber_by_state_.find(&target);
  if (it == subscriber_by_state_.end()) return;
  const uint64_t id = it->second;
  const int client_pid = subscribers_[id].client_pid;
  auto arrival = net_.transit(node_pid, client_pid, sched_.now());
  if (!arrival) return;
  post(client_pid, *arrival, [this, id, channel, msg] {
    auto sub = subscribers_.find(id);
    if (sub != subscribers_.end()) sub->second.deliver(channel, msg);
  });
}

}  // namespace lockstep::sim
