// A World is one simulated universe: the scheduler that owns true time, the network,
// and a set of processes — Redis nodes and client processes — each with its own clock
// and random stream. Client processes run lock code through a SimEnv; nodes run a
// RedisNode that executes each command atomically when its request arrives.
//
// Faults act on processes:
//   pause   nothing of the process runs; its timers and inbound messages wait and are
//           handled, in order, when the pause ends (a GC pause, SIGSTOP);
//   crash   the process loses all state: a client's coroutines are destroyed, a node's
//           keyspace is gone and its connections reset; messages in flight to or from
//           the old incarnation are dropped;
//   restart a node comes back empty (persistence comes from the caller); a client comes
//           back with nothing and the on_client_restart hook decides what it does.
//
// Determinism: everything runs from scheduler events ordered by (time, sequence); every
// random draw comes from a stream named after its component.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string_view>
#include <string>
#include <vector>

#include "lockstep/topology.h"
#include "lockstep/env.h"
#include "lockstep/sim/callback.h"
#include "lockstep/sim/clock.h"
#include "lockstep/sim/network.h"
#include "lockstep/random.h"
#include "lockstep/sim/mysql_server.h"
#include "lockstep/sim/redis_node.h"
#include "lockstep/sim/scheduler.h"

namespace lockstep::sim {

class SimEnv;
class World;
class ZkEnsemble;
struct ZkOptions;
class RequestRef;

// How a node persists: the scenario vocabulary's own (lockstep/topology.h).
using Persistence = lockstep::Persistence;

struct Process {
  int id = 0;
  std::string name;
  bool is_node = false;
  int64_t history_id = -1;  // clients: the process number histories use
  Clock clock;
  Rng rng;
  bool crashed = false;
  uint64_t epoch = 0;          // bumped at every crash: work of an older epoch is dropped
  int64_t paused_until_ns = 0;  // paused while now < this
  std::vector<Callback> deferred;  // what arrived while paused, in order

  bool zookeeper_server = false;  // a server of the ZooKeeper ensemble (zk_ensemble.h)

  // Client processes.
  std::unique_ptr<SimEnv> env;
  std::vector<Task<void>> tasks;

  // Node processes.
  std::unique_ptr<RedisNode> redis;
  int node_index = -1;   // among all Redis processes, in creation order
  int shard = -1;        // which logical node (master and its replicas) it belongs to
  int master_pid = -1;   // replicas: whom they replicate from
  Persistence persistence = Persistence::None;
  Snapshot durable;      // what survives a crash (the fsynced AOF)
  uint64_t repl_offset = 0;             // master: writes propagated so far
  std::map<int, uint64_t> acked;        // master: replica pid -> offset it confirmed
  uint64_t applied = 0;                 // replica: offset applied from its master
  ClientState master_link;              // replica: the replication connection
  bool demote_on_restart = false;       // failed over while down: returns as a replica

  // The MySQL server process (mysql_world.cc); is_node is set, node_index stays -1.
  std::unique_ptr<MysqlServer> mysql;
};

struct WorldOptions {
  uint64_t seed = 1;
  Latency latency;
  double loss = 0.0;
  int64_t active_expire_period_ns = 100'000'000;  // Redis's default hz 10
  int64_t replication_lag_ns = 0;                  // buffered at the master before sending
  int64_t fsync_period_ns = 1'000'000'000;         // appendfsync everysec
  int min_replicas_to_write = 0;                   // Redis's min-replicas-to-write
};

class World {
 public:
  explicit World(const WorldOptions& options);
  ~World();
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  Scheduler& scheduler() { return sched_; }
  Network& network() { return net_; }
  int64_t now() const { return sched_.now(); }
  uint64_t seed() const { return seed_; }

  // A master: a logical node of its own (index = node count so far).
  int add_node(const std::string& name, Clock clock, Persistence persistence = Persistence::None);
  // A replica of logical node `shard`'s current master; starts as a full copy.
  int add_replica(int shard, const std::string& name, Clock clock, Persistence persistence = Persistence::None);
  int add_client(const std::string& name, int64_t history_id, Clock clock);
  Process& process(int id) { return *procs_[id]; }
  const Process& process(int id) const { return *procs_[id]; }
  int process_count() const { return static_cast<int>(procs_.size()); }
  int find(const std::string& name) const;  // -1 if none
  // The current master of logical node `shard` (changes at failover).
  int node_process(int shard) const { return shards_[shard].master; }
  int node_count() const { return static_cast<int>(shards_.size()); }
  const std::vector<int>& shard_members(int shard) const { return shards_[shard].members; }
  SimEnv& env(int client_pid) { return *procs_[client_pid]->env; }
  RedisNode& redis(int shard) { return *procs_[shards_[shard].master]->redis; }
  int64_t node_wall_ms(int node_pid) const;

  // The MySQL server (mysql_world.cc): one process beside the Redis nodes, reached by a
  // client's Env::sql_session(). A crash loses its sessions and what they had not
  // committed; a restart brings it back with the committed rows.
  int add_mysql(const std::string& name, Clock clock, MysqlServer::Settings settings = {});
  int mysql_process() const { return mysql_pid_; }  // -1 when the world has none
  MysqlServer& mysql() { return *procs_[mysql_pid_]->mysql; }

  // Faults.
  void pause(int pid, int64_t duration_ns);
  void crash(int pid);
  void restart(int pid);
  // Promotes the most up-to-date live replica of `shard` to master, as Sentinel does;
  // writes it had not received are lost. The old master comes back as a replica and
  // drops what diverged. Returns false when there is no replica to promote.
  bool failover(int shard);
  // Starts a Sentinel-like process that PINGs every master every period and fails it
  // over after down_after of silence. Runs until `until_ns`.
  void start_failure_detector(int64_t down_after_ns, int64_t period_ns, int64_t until_ns);

  // A ZooKeeper ensemble beside the Redis nodes (lockstep/sim/zk_ensemble.h): its servers
  // become processes zk-1..zk-N, and every client's Env reaches it through zookeeper().
  void enable_zookeeper(const ZkOptions& options);
  ZkEnsemble* zookeeper() { return zk_.get(); }
  // A server process of the ensemble: faults reach it like any process; a restart brings
  // it back with the data it had logged.
  int add_zookeeper_server(const std::string& name);

  // Redis Cluster over the nodes added so far and the replicas added later
  // (world_cluster.cc): every shard a master with its replicas, the 16384 slots split among the shards as redis-cli --cluster
  // create splits them. Clients added afterwards are cluster clients: their Env has one
  // node, a connection that routes each command by its key's slot and follows MOVED/ASK.
  void enable_cluster();
  bool cluster_enabled() const { return cluster_.has_value(); }
  // The shard serving `key` (0 without a cluster): where a runner seeds a resource.
  int shard_of_key(std::string_view key) const;
  // Cluster failure detection: a master silent for node_timeout is PFAIL, FAIL once a
  // majority of the masters can tell (only the other live masters count, so a cluster of
  // fewer than three masters never fails one over); its best replica then waits
  // 500 ms + random(0..500 ms) + rank x 1000 ms and takes over with a new config epoch.
  void start_cluster_failure_detector(int64_t node_timeout_ns, int64_t until_ns);
  // Whether enough other masters are alive to flag shard's master FAIL.
  bool cluster_majority_reachable(int shard) const;
  // Flags shard's master FAIL in every other node's view; the election delay of its best
  // replica (ns), or -1 when it has none alive.
  int64_t cluster_mark_failed(int shard);
  void cluster_clear_failed(int shard);

  // Runs fn in process pid at true time t, unless the process has crashed by then; while
  // the process is paused, fn waits for the pause to end. The id can cancel it.
  // (Templates so that fn and the process check share one event without a second
  // type-erased wrapper: this is the path of every simulated message.)
  template <typename F>
  Scheduler::EventId post(int pid, int64_t t_ns, F fn) {
    return post_epoch(pid, procs_[pid]->epoch, t_ns, std::move(fn));
  }
  // As post, but dropped if the process is no longer in incarnation `epoch`.
  template <typename F>
  Scheduler::EventId post_epoch(int pid, uint64_t epoch, int64_t t_ns, F fn) {
    return sched_.at(t_ns, [this, pid, epoch, fn = std::move(fn)]() mutable { run_in(pid, epoch, fn); });
  }
  // As post_epoch, in the place `ticket` took (Scheduler::reserve).
  template <typename F>
  Scheduler::EventId post_epoch(int pid, uint64_t epoch, int64_t t_ns, Scheduler::Ticket ticket, F fn) {
    return sched_.at(t_ns, ticket, [this, pid, epoch, fn = std::move(fn)]() mutable { run_in(pid, epoch, fn); });
  }

  // Hooks for the runner's ground truth.
  std::function<void(int node_index, const KeyChange&)> on_key_change;
  std::function<void(int client_pid)> on_client_restart;
  // A node's keyspace was replaced wholesale (restart from AOF, resync after failover).
  std::function<void(int node_pid)> on_node_reloaded;
  std::function<void(int shard, int old_master, int new_master)> on_failover;
  // A command leaving client `client_pid` (reply == false) or its reply reaching the
  // client (reply == true). Returning true defers what comes next — the command's
  // transmission, the reply's delivery — to the client's next step, after whatever was
  // scheduled for this instant (an event-triggered fault).
  std::function<bool(int client_pid, const std::vector<std::string>& argv, bool reply)> on_command;

  // Used by connections (sim_env.cc).
  struct Request;
  // Sends the request and takes the place of its timeout (deadline_ns) in the schedule.
  void send_request(const RequestRef& req);
  uint64_t register_subscriber(std::function<void(std::string, std::string)> deliver, int client_pid,
                               ClientState* state);
  void unregister_subscriber(uint64_t id);
  // Used by SQL sessions (mysql_world.cc): a statement on its way, and a client closing
  // its connection (the server ends the session when the close reaches it).
  struct SqlCall;
  void send_sql(const std::shared_ptr<SqlCall>& call);
  void close_sql(const std::shared_ptr<SqlCall>& last);

 private:
  void crash_mysql(int pid);
  void answer_sql(uint64_t session, SqlResult result);
  void reply_sql(const std::shared_ptr<SqlCall>& call, SqlResult result);
  enum class Admit { Run, Hold, Drop };
  // Whether work of process pid's incarnation `epoch` may run now, must wait for a pause
  // to end, or belongs to a crashed incarnation.
  Admit admit(int pid, uint64_t epoch) const;
  template <typename F>
  void run_in(int pid, uint64_t epoch, F& fn) {
    switch (admit(pid, epoch)) {
      case Admit::Run: fn(); break;
      case Admit::Hold: procs_[pid]->deferred.emplace_back(std::move(fn)); break;
      case Admit::Drop: break;
    }
  }
  void end_pause(int pid);
  void execute_on_node(const RequestRef& req);
  // Puts the request on the network; whether it will reach the node before its deadline.
  bool transmit(const RequestRef& req);
  void deliver(const RequestRef& req);
  void reply_to_client(const RequestRef& req, Reply&& reply, int64_t send_ns);
  // Puts the request's timeout on the schedule, at the place send_request took for it:
  // called as soon as the reply may not arrive before the deadline (lost, late, held by
  // a pause, waiting on replicas, held behind a fault its own send started). A reply
  // known to arrive first makes it unnecessary.
  void arm_timeout(const RequestRef& req);
  void schedule_active_expire(int pid);
  void publish(int node_pid, ClientState& target, const std::string& channel, const std::string& msg);
  std::unique_ptr<Process> new_process(const std::string& name, Clock clock) const;
  int add_redis(const std::string& name, Clock clock, Persistence persistence, int shard);
  void replicate(int master_pid, const std::vector<std::string>& argv);
  void replicate_placeholders(int master_pid, size_t n);
  void send_replicated(int master_pid, uint64_t offset, const std::vector<std::string>& argv);
  void apply_replicated(int replica_pid, int master_pid, uint64_t offset, const std::vector<std::string>& argv);
  void resync(int replica_pid, int master_pid);
  void schedule_fsync(int pid);
  // WAIT numreplicas timeout: answered here, since only the world sees replica acks.
  bool try_wait(const RequestRef& req);
  // min-replicas-to-write: true (and the NOREPLICAS reply sent) when refused.
  bool refuse_write(const RequestRef& req);
  void check_waits(int master_pid);

  struct Shard {
    std::vector<int> members;  // master first at creation; order never changes
    int master = -1;
  };
  struct Waiter;
  std::vector<Shard> shards_;
  // Cluster mode: the layout every node is handed a copy of, and the pid of each member.
  std::optional<ClusterLayout> cluster_;
  std::vector<int> cluster_pids_;
  Rng cluster_rng_;
  int cluster_member(int pid) const;
  void add_cluster_member(int pid);
  // Hands the current layout to every node but `except` (-1: all).
  void push_cluster(int except);
  void cluster_failed_over(int shard, int old_master, int new_master);
  void cluster_rejoined(int pid);
  std::map<int, std::vector<std::shared_ptr<Waiter>>> waiters_;  // master pid -> WAITs

  std::unique_ptr<ZkEnsemble> zk_;  // destroyed after the processes and the schedule
  uint64_t seed_;
  WorldOptions options_;
  Scheduler sched_;
  Network net_;
  std::vector<std::unique_ptr<Process>> procs_;
  std::vector<int> redis_pids_;
  int mysql_pid_ = -1;
  std::map<uint64_t, std::shared_ptr<SqlCall>> sql_calls_;  // session -> statement it runs
  struct Subscriber {
    std::function<void(std::string, std::string)> deliver;
    int client_pid;
  };
  uint64_t next_subscriber_id_ = 1;
  std::map<uint64_t, Subscriber> subscribers_;
  std::map<const ClientState*, uint64_t> subscriber_by_state_;
};

// The Env of one simulated client process.
class SimEnv : public Env {
 public:
  SimEnv(World& world, int pid);
  ~SimEnv() override;

  Nanos now_wall() override;
  Nanos now_mono() override;
  Task<void> sleep(Nanos d) override;
  void spawn(Task<void> t) override;
  uint64_t random() override;
  int node_count() const override;
  Connection& node(int index) override;
  std::string process_name() const override;
  std::unique_ptr<SqlSession> sql_session() override;
  ZooKeeper* zookeeper() override;

  // Drops every connection (their server-side state goes too): after a crash.
  void reset_connections();

 private:
  World& world_;
  int pid_;
  std::vector<std::unique_ptr<Connection>> connections_;
  std::shared_ptr<ZooKeeper> zookeeper_;
};

}  // namespace lockstep::sim
