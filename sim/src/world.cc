#include "lockstep/sim/world.h"

#include <algorithm>
#include <cassert>
#include <cctype>
#include <set>

#include "lockstep/sim/zk_ensemble.h"
#include "world_internal.h"

namespace lockstep::sim {

World::World(const WorldOptions& options)
    : cluster_rng_(options.seed, "cluster"),
      seed_(options.seed),
      options_(options),
      net_(options.seed, options.latency, options.loss) {}

// Coroutine frames are destroyed before the processes (and connections) they point into.
World::~World() {
  for (auto& p : procs_) p->tasks.clear();
}

std::unique_ptr<Process> World::new_process(const std::string& name, Clock clock) const {
  auto p = std::make_unique<Process>();
  p->id = static_cast<int>(procs_.size());
  p->name = name;
  p->clock = clock;
  p->rng = Rng(seed_, name);  // named streams: adding a process shifts no one else's draws
  return p;
}

int World::add_redis(const std::string& name, Clock clock, Persistence persistence, int shard) {
  auto p = new_process(name, clock);
  p->is_node = true;
  p->redis = std::make_unique<RedisNode>();
  p->redis->set_random(Rng(seed_, name + "/evict"));  // apart from active expiry's draws
  p->node_index = static_cast<int>(redis_pids_.size());
  p->shard = shard;
  p->persistence = persistence;
  p->master_link.is_master_link = true;
  const int index = p->node_index;
  const int pid = p->id;
  // Asked first, so that a world nobody watches copies no key and value per change.
  p->redis->set_observer([this, index](const KeyChange& c) { on_key_change(index, c); },
                         [this] { return static_cast<bool>(on_key_change); });
  p->redis->set_publisher([this, pid](ClientState& target, const std::string& channel, const std::string& msg) {
    publish(pid, target, channel, msg);
  });
  p->redis->set_propagator([this, pid](const std::vector<std::string>& argv) { replicate(pid, argv); });
  p->redis->set_placeholder_propagator([this, pid](size_t n) { replicate_placeholders(pid, n); });
  // Until its shard has a replica, no one could apply what a node streams: it streams
  // placeholders, which keep the offsets (and a lagging buffer's sends) as they were.
  // Anything streamed before a replica joins is in the copy the replica starts from.
  p->redis->set_stream_contents(false);
  procs_.push_back(std::move(p));
  redis_pids_.push_back(pid);
  schedule_active_expire(pid);
  if (persistence == Persistence::AofEverysec) schedule_fsync(pid);
  return pid;
}

int World::add_node(const std::string& name, Clock clock, Persistence persistence) {
  const int shard = static_cast<int>(shards_.size());
  shards_.push_back({});
  const int pid = add_redis(name, clock, persistence, shard);
  shards_[shard].members.push_back(pid);
  shards_[shard].master = pid;
  return pid;
}

int World::add_replica(int shard, const std::string& name, Clock clock, Persistence persistence) {
  const int pid = add_redis(name, clock, persistence, shard);
  shards_[shard].members.push_back(pid);
  for (int member : shards_[shard].members) procs_[member]->redis->set_stream_contents(true);
  procs_[pid]->redis->set_replica(true);
  resync(pid, shards_[shard].master);
  if (cluster_) {
    add_cluster_member(pid);
    push_cluster(-1);
  }
  return pid;
}

int World::add_client(const std::string& name, int64_t history_id, Clock clock) {
  auto p = new_process(name, clock);
  p->history_id = history_id;
  procs_.push_back(std::move(p));
  const int pid = procs_.back()->id;
  procs_.back()->env = std::make_unique<SimEnv>(*this, pid);
  return pid;
}

int World::add_zookeeper_server(const std::string& name) {
  const int pid = add_client(name, -1, Clock());
  procs_[pid]->zookeeper_server = true;
  return pid;
}

void World::enable_zookeeper(const ZkOptions& options) { zk_ = std::make_unique<ZkEnsemble>(*this, options); }

int World::find(const std::string& name) const {
  for (const auto& p : procs_) {
    if (p->name == name) return p->id;
  }
  return -1;
}

int64_t World::node_wall_ms(int node_pid) const {
  return procs_[node_pid]->clock.wall_ns(sched_.now()) / 1'000'000;
}

World::Admit World::admit(int pid, uint64_t epoch) const {
  const Process& p = *procs_[pid];
  if (p.epoch != epoch || p.crashed) return Admit::Drop;
  return sched_.now() < p.paused_until_ns ? Admit::Hold : Admit::Run;
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
  if (p.mysql) {
    crash_mysql(pid);
    return;
  }
  if (p.is_node) {
    // Whatever was fsynced survives; the memory does not. Reporting the loss as deletes
    // keeps the ground truth honest while the node is down.
    if (p.persistence == Persistence::AofAlways) p.durable = p.redis->snapshot();
    p.redis->flush_all();
    waiters_.erase(pid);
    return;
  }
  // Destroying the frames cancels every in-flight call, sleep and watchdog at once.
  p.tasks.clear();
  p.env->reset_connections();
}

void World::restart(int pid) {
  Process& p = *procs_[pid];
  if (!p.crashed) return;
  p.crashed = false;
  if (p.mysql) return;  // the committed rows survived in the crash; nothing else did
  if (p.zookeeper_server) return;  // its data was logged; the ensemble carries on with it
  if (!p.is_node) {
    if (on_client_restart) on_client_restart(pid);
    return;
  }
  if (p.persistence != Persistence::None) p.redis->restore(p.durable);
  p.repl_offset = 0;
  p.acked.clear();
  const int master = shards_[p.shard].master;
  if (master != pid) {
    // A failed-over master, or a replica: it rejoins the current master and takes its
    // data, dropping whatever it had that the master never saw.
    p.redis->set_replica(true);
    p.master_link = ClientState{};
    p.master_link.is_master_link = true;
    resync(pid, master);
  }
  if (cluster_) cluster_rejoined(pid);
  schedule_active_expire(pid);
  if (p.persistence == Persistence::AofEverysec) schedule_fsync(pid);
  if (on_node_reloaded) on_node_reloaded(pid);
}

void World::schedule_fsync(int pid) {
  post(pid, sched_.now() + options_.fsync_period_ns, [this, pid] {
    procs_[pid]->durable = procs_[pid]->redis->snapshot();
    schedule_fsync(pid);
  });
}

void World::resync(int replica_pid, int master_pid) {
  Process& r = *procs_[replica_pid];
  Process& m = *procs_[master_pid];
  r.master_pid = master_pid;
  r.redis->restore(m.redis->snapshot());
  r.applied = m.repl_offset;
  m.acked[replica_pid] = m.repl_offset;
}

void World::replicate(int master_pid, const std::vector<std::string>& argv) {
  const uint64_t offset = ++procs_[master_pid]->repl_offset;
  if (options_.replication_lag_ns <= 0) {
    send_replicated(master_pid, offset, argv);
    return;
  }
  // The lag is time the write spends in the master's replication buffer: a master that
  // crashes within it takes the write with it, which is how a failover loses a lock.
  post(master_pid, sched_.now() + options_.replication_lag_ns,
       [this, master_pid, offset, argv] { send_replicated(master_pid, offset, argv); });
}

// Placeholders come from a master whose shard has no replica (add_redis): without a lag
// each only moves the offset, as send_replicated would find no one to send it to; with
// one, each still takes its turn in the master's buffer, as a write with contents does.
void World::replicate_placeholders(int master_pid, size_t n) {
  if (options_.replication_lag_ns <= 0) {
    procs_[master_pid]->repl_offset += n;
    return;
  }
  static const std::vector<std::string> kNone;
  for (size_t i = 0; i < n; ++i) replicate(master_pid, kNone);
}

void World::send_replicated(int master_pid, uint64_t offset, const std::vector<std::string>& argv) {
  Process& m = *procs_[master_pid];
  for (int r : shards_[m.shard].members) {
    Process& rp = *procs_[r];
    if (r == master_pid || rp.master_pid != master_pid || rp.crashed) continue;
    auto arrival = net_.transit(master_pid, r, sched_.now());
    if (!arrival) continue;  // the replica will be behind; WAIT will say so
    post(r, *arrival, [this, r, master_pid, offset, argv] { apply_replicated(r, master_pid, offset, argv); });
  }
}

void World::apply_replicated(int replica_pid, int master_pid, uint64_t offset, const std::vector<std::string>& argv) {
  Process& r = *procs_[replica_pid];
  if (r.master_pid != master_pid || offset <= r.applied) return;  // re-pointed, or stale
  r.redis->execute(r.master_link, argv, node_wall_ms(replica_pid));
  r.applied = offset;
  auto arrival = net_.transit(replica_pid, master_pid, sched_.now());
  if (!arrival) return;
  post(master_pid, *arrival, [this, replica_pid, master_pid, offset] {
    uint64_t& acked = procs_[master_pid]->acked[replica_pid];
    acked = std::max(acked, offset);
    check_waits(master_pid);
  });
}

bool World::failover(int shard) {
  Shard& sh = shards_[shard];
  const int old_master = sh.master;
  int best = -1;
  for (int r : sh.members) {
    const Process& p = *procs_[r];
    if (r == old_master || p.crashed || p.master_pid != old_master) continue;
    if (best < 0 || p.applied > procs_[best]->applied) best = r;
  }
  if (best < 0) return false;
  Process& nm = *procs_[best];
  nm.redis->set_replica(false);
  nm.master_pid = -1;
  nm.repl_offset = 0;
  nm.acked.clear();
  sh.master = best;
  for (int r : sh.members) {
    if (r == best || r == old_master || procs_[r]->crashed) continue;
    resync(r, best);
    if (on_node_reloaded) on_node_reloaded(r);
  }
  Process& om = *procs_[old_master];
  om.master_pid = best;
  waiters_.erase(old_master);
  if (cluster_) cluster_failed_over(shard, old_master, best);
  if (!om.crashed) {
    // Sentinel reconfigures the old master once it can reach it: after a pause, only
    // when the pause is over — what it accepted meanwhile is thrown away then. A cluster
    // node learns the same from the bus at the same moment.
    post(old_master, sched_.now(), [this, old_master, best] {
      procs_[old_master]->redis->set_replica(true);
      if (cluster_) cluster_rejoined(old_master);
      resync(old_master, best);
      if (on_node_reloaded) on_node_reloaded(old_master);
    });
  }
  if (on_failover) on_failover(shard, old_master, best);
  return true;
}

void World::schedule_active_expire(int pid) {
  post(pid, sched_.now() + options_.active_expire_period_ns, [this, pid] {
    Process& p = *procs_[pid];
    p.redis->active_expire_cycle(node_wall_ms(pid), p.rng);
    schedule_active_expire(pid);
  });
}

[[gnu::noinline]] void RequestRef::release(World::Request* r) {
  if (--r->refs == 0) World::Request::finished(r);
}

namespace {
// Finished requests kept for reuse, per thread (worlds run on many threads in a fuzz
// campaign, never one world on two). Bounded: a burst of concurrent commands beyond it
// is freed as usual.
struct RequestList {
  static constexpr size_t kKept = 1024;
  std::vector<World::Request*> free;
  RequestList() = default;
  RequestList(const RequestList&) = delete;
  RequestList& operator=(const RequestList&) = delete;
  ~RequestList() {
    for (World::Request* r : free) {
      pool_hands_out(r, sizeof(World::Request));
      delete r;
    }
  }
};
RequestList& request_list() {
  thread_local RequestList list;
  return list;
}
}  // namespace

#if defined(__x86_64__) && defined(__GLIBCXX__)
// A field added to Request changes its size: reset it in finished() and check it in
// as_new(), then change the size here.
static_assert(sizeof(World::Request) == 288, "a new field of World::Request must be reset in finished()");
#endif

bool World::Request::as_new() const {
  return client_pid == 0 && client_epoch == 0 && node_pid == 0 && !shared && !conn && !pending.done &&
         pending.reply.type == Reply::Type::Nil && !pending.waiter && pending.scheduler == nullptr &&
         answer.type == Reply::Type::Nil && answer.str.empty() && answer.elements.empty() && deadline_ns == 0 &&
         !timeout_armed && refs == 0;
}

World::Request* World::Request::make() {
  if constexpr (kFastPaths) {
    RequestList& list = request_list();
    if (!list.free.empty()) {
      Request* r = list.free.back();
      list.free.pop_back();
      pool_hands_out(r, sizeof(Request));
      assert(r->as_new());
      return r;
    }
  }
  return new Request;
}

void World::Request::finished(Request* r) {
  RequestList& list = request_list();
  if (kFastPaths && list.free.size() < RequestList::kKept) {
    // Everything back to a new request's state but argv, which the next sender replaces.
    r->client_pid = 0;
    r->client_epoch = 0;
    r->node_pid = 0;
    r->shared.reset();
    r->conn.reset();
    r->pending.reset();
    clear_keeping_buffers(r->answer);
    r->deadline_ns = 0;
    r->timeout_ticket = Scheduler::Ticket{};
    r->timeout_armed = false;
    list.free.push_back(r);
    pool_keeps(r, sizeof(Request));
    return;
  }
  delete r;
}

void World::send_request(const RequestRef& req) {
  if (on_command && on_command(req->client_pid, req->args(), false)) {
    // A fault this send starts acts first: the message leaves in the client's next turn,
    // which a pause may hold past the deadline.
    post(req->client_pid, sched_.now(), [this, r = RequestRef(req)] { transmit(r); });
    req->timeout_ticket = sched_.reserve();
    arm_timeout(req);
    return;
  }
  const bool in_time = transmit(req);
  req->timeout_ticket = sched_.reserve();
  // Lost (the caller's timeout decides), or arriving too late to be answered in time.
  if (!in_time) arm_timeout(req);
}

bool World::transmit(const RequestRef& req) {
  auto arrival = net_.transit(req->client_pid, req->node_pid, sched_.now());
  if (arrival) {
    // Captures are initialised copies, not `req` itself: a copy of a const reference is a
    // const member, which a move would copy (and count) instead of moving.
    sched_.at(*arrival, [this, req = RequestRef(req)] {
      Process& node = *procs_[req->node_pid];
      if (node.crashed) {
        reply_to_client(req, Reply::io_error("connection refused"), sched_.now());
        return;
      }
      const int pid = req->node_pid;
      // A paused node answers when the pause ends, which may be after the deadline.
      if (admit(pid, node.epoch) == Admit::Hold) arm_timeout(req);
      auto execute = [this, r = req] { execute_on_node(r); };
      run_in(pid, node.epoch, execute);
    });
  }
  return arrival && *arrival < req->deadline_ns;
}

void World::arm_timeout(const RequestRef& req) {
  if (req->timeout_armed || req->pending.done) return;
  req->timeout_armed = true;
  req->pending.scheduler = &sched_;
  req->pending.timeout = post_epoch(req->client_pid, req->client_epoch, req->deadline_ns, req->timeout_ticket,
                                    [r = req] { r->pending.finish(Reply::timeout()); });
}

void World::execute_on_node(const RequestRef& req) {
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
  if (try_wait(req) || refuse_write(req)) return;
  Reply reply = node.redis->execute(conn.state, req->args(), node_wall_ms(req->node_pid));
  reply_to_client(req, std::move(reply), sched_.now());
}

// The reply travels in the request itself (a request is answered exactly once), which
// keeps the delivery event small enough to need no allocation of its own. A reply that
// arrives before the deadline always beats the timeout (a pause of the client holds both
// in order), so the timeout is only scheduled when it might not.
void World::reply_to_client(const RequestRef& req, Reply&& reply, int64_t send_ns) {
  auto arrival = net_.transit(req->node_pid, req->client_pid, send_ns);
  if (!arrival || *arrival >= req->deadline_ns) arm_timeout(req);
  if (!arrival) return;
  req->answer = std::move(reply);
  post_epoch(req->client_pid, req->client_epoch, *arrival, [this, r = req] { deliver(r); });
}

void World::deliver(const RequestRef& req) {
  const bool fault = on_command && on_command(req->client_pid, req->args(), true);
  if (fault) {
    // A fault this reply starts acts before the client sees the reply.
    post_epoch(req->client_pid, req->client_epoch, sched_.now(), [r = req] { r->pending.finish(std::move(r->answer)); });
    return;
  }
  req->pending.finish(std::move(req->answer));
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

namespace lockstep::sim {

namespace {
bool parse_i64(const std::string& s, int64_t& out) {
  if (s.empty() || s.size() > 18) return false;
  size_t i = s[0] == '-' ? 1 : 0;
  if (i == s.size()) return false;
  for (size_t k = i; k < s.size(); ++k) {
    if (s[k] < '0' || s[k] > '9') return false;
  }
  out = std::stoll(s);
  return true;
}

bool is_wait(const std::vector<std::string>& argv) {
  if (argv.size() != 3 || argv[0].size() != 4) return false;
  std::string name = argv[0];
  for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name == "wait";
}
}  // namespace

// WAIT blocks the client until enough replicas confirmed every write the master had
// propagated when WAIT arrived, or the timeout passes; either way it answers with the
// number that confirmed. Malformed calls, WAIT inside MULTI and WAIT on a replica are
// left to the node, which answers them as Redis does.
bool World::try_wait(const RequestRef& req) {
  Process& m = *procs_[req->node_pid];
  int64_t replicas_min = 0, timeout_ms = 0;
  const std::vector<std::string>& argv = req->args();
  if (!is_wait(argv) || req->conn->state.in_multi || m.redis->is_replica()) return false;
  if (!parse_i64(argv[1], replicas_min) || !parse_i64(argv[2], timeout_ms) || timeout_ms < 0) return false;
  auto w = std::make_shared<Waiter>(Waiter{req, replicas_min, m.repl_offset});
  arm_timeout(req);  // answered when replicas confirm: maybe after the caller's deadline
  waiters_[req->node_pid].push_back(w);
  check_waits(req->node_pid);
  if (!w->done && timeout_ms > 0) {
    const int master = req->node_pid;
    post(master, sched_.now() + timeout_ms * 1'000'000, [this, master, w] {
      if (w->done) return;
      w->done = true;
      int64_t acks = 0;
      for (const auto& [r, off] : procs_[master]->acked) acks += off >= w->offset ? 1 : 0;
      reply_to_client(w->req, Reply::integer_of(acks), sched_.now());
    });
  }
  return true;
}

void World::check_waits(int master_pid) {
  auto it = waiters_.find(master_pid);
  if (it == waiters_.end()) return;
  const auto& acked = procs_[master_pid]->acked;
  for (auto& w : it->second) {
    if (w->done) continue;
    int64_t acks = 0;
    for (const auto& [r, off] : acked) acks += off >= w->offset ? 1 : 0;
    if (acks < w->replicas_min) continue;
    w->done = true;
    reply_to_client(w->req, Reply::integer_of(acks), sched_.now());
  }
  std::erase_if(it->second, [](const auto& w) { return w->done; });
}

namespace {
// Commands that change data; scripts count as writes (Redis 7 would refuse at the
// script's first write instead: the same outcome for the lock scripts, which all write).
bool is_write(const std::vector<std::string>& argv) {
  static const std::set<std::string> kWrites = {
      "set",    "setnx",   "del",  "expire", "pexpire", "expireat", "pexpireat", "persist", "incr",  "decr",
      "incrby", "decrby",  "hset", "hsetnx", "hincrby", "hdel",     "lpush",     "rpush",   "lpop",  "rpop",
      "lrem",   "zadd",    "zrem", "zincrby", "getdel", "eval",     "evalsha"};
  if (argv.empty()) return false;
  std::string name = argv[0];
  for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return kWrites.count(name) > 0;
}
}  // namespace

// A replica is good while it replicates from this master, is up, is not paused, and
// the link between them is not cut — Redis's "connected, lag below max-lag".
bool World::refuse_write(const RequestRef& req) {
  Process& m = *procs_[req->node_pid];
  if (options_.min_replicas_to_write <= 0 || m.redis->is_replica() || req->conn->state.in_multi) return false;
  if (!is_write(req->args())) return false;
  int good = 0;
  for (int r : shards_[m.shard].members) {
    const Process& rp = *procs_[r];
    if (r == m.id || rp.master_pid != m.id || rp.crashed || sched_.now() < rp.paused_until_ns) continue;
    if (net_.blocked(m.id, r) || net_.blocked(r, m.id)) continue;
    ++good;
  }
  if (good >= options_.min_replicas_to_write) return false;
  reply_to_client(req, Reply::error("NOREPLICAS Not enough good replicas to write."), sched_.now());
  return true;
}

}  // namespace lockstep::sim
