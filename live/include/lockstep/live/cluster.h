// A Cluster is the server side of one live run: the redis-server masters and replicas,
// the fault proxy every client and replica reaches them through (which also gives
// replication its lag), the redis-sentinels and the follower that re-points clients when
// Sentinel fails a master over. It is the live counterpart of the
// topology half of the simulator's World (add_node, add_replica, failover, the failure
// detector), and it plays the server faults a WorldControl asks for. With
// ClusterSpec::cluster_node_timeout_ms the masters and replicas form a Redis Cluster
// instead (docs/cluster.md): every member announces its fault-proxy port, and the
// cluster fails masters over itself while this only watches the members' roles.
//
// Invariants:
//  - Every server and sentinel is one lockstep started (ServerFarm's safety rules), or,
//    with use_server(), the one server the user named, which is never faulted.
//  - Replicas start in sync: linked to their master and holding the seeded keys, before
//    any client starts. Sentinels know every replica and each other before then too.
//  - A fault on node-N hits the process first started as node-N, whatever its role now.
//  - Everything runs on the LiveWorld's loop thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "lockstep/live/fault_proxy.h"
#include "lockstep/live/live_world.h"
#include "lockstep/live/mariadb_server.h"
#include "lockstep/live/redis_server.h"
#include "lockstep/live/sentinel_follower.h"

namespace lockstep::live {

struct ClusterSpec {
  int nodes = 1;
  int replicas = 0;  // per master
  Persistence persistence = Persistence::None;
  int64_t replication_lag_ms = 0;
  int min_replicas_to_write = 0;
  int64_t maxmemory_bytes = 0;  // on every server, as ServerConfig's
  EvictionPolicy maxmemory_policy = EvictionPolicy::NoEviction;
  int maxmemory_samples = 5;
  int sentinels = 0;
  int64_t down_after_ms = 0;
  // > 0: the masters and replicas form a Redis Cluster with this cluster-node-timeout
  // (docs/cluster.md): the masters split the slots as in the simulator, and the cluster
  // fails a master over itself.
  int64_t cluster_node_timeout_ms = 0;
  // How long the run lasts: Sentinel must not rewire a lagged replica before it ends.
  int64_t run_ms = 0;
  // Servers started with lockstep's clock library (their wall clock can be moved), with
  // the offset and drift each starts with.
  struct ShiftedClock {
    std::string server;
    Nanos offset{0};
    double drift_ppm = 0;
  };
  std::vector<ShiftedClock> shifted_clocks;
  // Every message through the fault proxy waits a draw from this (the scenario's
  // network latency).
  Latency latency{Latency::Kind::Constant, 0, 0, 0.0};
  // Keys written before the clients start (the protected resource): on node-1, or in a
  // cluster on the master of the key's slot.
  std::vector<std::pair<std::string, std::string>> seed;
  // A MariaDB server as mysql-1 (topology.mysql), with these globals.
  std::optional<MariaDbSettings> mysql;
};

class Cluster {
 public:
  explicit Cluster(LiveWorld& world);
  ~Cluster();
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;

  // Starts every server and sentinel of `spec`, seeds node-1, and waits until replicas
  // and sentinels are ready. Returns "" or why it could not.
  std::string start(const ClusterSpec& spec);
  // The user's own server as node-1 (lockstep live --redis): checked to answer, seeded,
  // never faulted.
  std::string use_server(const NodeAddress& address, const ClusterSpec& spec);

  bool own_servers() const { return farm_ != nullptr; }
  FaultProxy& proxy() { return proxy_; }
  // The name of the server listening at `a` ("node-1" for a user's server).
  std::string server_name(const NodeAddress& a);
  RedisServer* server(const std::string& name) { return farm_ ? farm_->find(name) : nullptr; }
  // mysql-1, when the spec asked for it and it started.
  MariaDbServer* mysql() { return mysql_.get(); }
  static constexpr const char* kMysqlName = "mysql-1";

  // Server faults, by the name the server was started under.
  void pause(const std::string& name, bool paused);
  void kill(const std::string& name);
  void restart(const std::string& name);
  void jump_clock(const std::string& name, Nanos by);
  void drift_clock(const std::string& name, double drift_ppm);
  // Promotes node `n`'s first replica: through the sentinels if there are any (they
  // announce the switch and the follower re-points the clients), else by REPLICAOF NO
  // ONE and re-pointing the clients here.
  void fail_over(int n);

  // The failover as it happened or was asked for: {value, node}.
  std::function<void(bool requested, nlohmann::json value, int node)> on_failover;
  // Node `n` now answers from another server: keys there may vanish with the old one.
  std::function<void(int node)> on_moved;

  // A keyed command from the control plane (seeding, reading the resource at the end):
  // to node-1, or in a cluster to the master of the key's slot.
  Reply command(const std::vector<std::string>& argv, Nanos timeout);

  // The end of a run: every server resumed and answering again (a late restart may
  // still be loading its AOF), Sentinel's own log collected.
  void finish();

  nlohmann::json servers_json() const;
  int64_t relay_dropped_bytes() const { return proxy_.dropped_bytes(); }
  const std::string& sentinel_timers() const { return sentinel_timers_; }
  const nlohmann::json& sentinel_events() const { return sentinel_events_; }

  // The logical node a seeded key is written on.
  int seed_node(const std::string& key) const;

 private:
  live::ServerConfig config(const std::string& name, std::optional<NodeAddress> replica_of) const;
  std::string start_servers();
  std::string seed();
  std::string await_replicas();
  std::string start_sentinels();
  std::string form_cluster();
  bool cluster() const { return spec_.cluster_node_timeout_ms > 0; }
  // A keyed command from the control plane, sent to the server of the key's slot.
  Reply keyed_command(const std::vector<std::string>& argv, Nanos timeout);
  // Every 100 ms: a member that became master of its shard (the cluster failed it over)
  // is where that logical node is now.
  static bool is_master(RedisServer* sv);
  static int64_t config_epoch(RedisServer* sv);
  void watch_roles();
  bool wait_for(const std::function<bool()>& check, Nanos limit);
  void switched(int n, const NodeAddress& from, const NodeAddress& to);
  RedisServer* server_at(const NodeAddress& a);
  void collect_sentinel_events();

  LiveWorld& world_;
  ClusterSpec spec_;
  std::unique_ptr<ServerFarm> farm_;
  std::unique_ptr<MariaDbServer> mysql_;
  FaultProxy proxy_;
  std::unique_ptr<SentinelFollower> follower_;
  std::vector<RedisServer*> masters_;
  std::vector<std::pair<int, RedisServer*>> replicas_;  // (node index, server)
  std::vector<RedisServer*> sentinels_;
  std::vector<ClusterMember> members_;
  std::vector<RedisServer*> member_servers_;  // as members_
  std::vector<int> bus_ports_;                // as members_: the proxy's port to each bus
  EventLoop::TimerId role_timer_ = 0;
  std::string sentinel_timers_;
  nlohmann::json sentinel_events_ = nlohmann::json::object();
};

}  // namespace lockstep::live
