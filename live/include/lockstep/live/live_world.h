// A LiveWorld is the client side of one live run: the event loop, the addresses of the
// Redis nodes, and the live client processes, each with its own LiveEnv. It plays the
// part the simulator's World plays for clients, against real servers.
//
// What LiveEnv promises (beyond Env's contract):
//  - Single-threaded: everything runs on the EventLoop's thread.
//  - now_mono() is CLOCK_MONOTONIC and never jumps. now_wall() is CLOCK_REALTIME plus a
//    per-client offset: a scenario's clock jump on a client moves only that client's own
//    view of the wall clock (the machine's clock is not touched). A drift moves both of
//    the client's clocks at its rate, from the moment it is set.
//  - call() returns the server's reply, Reply::timeout() when none came in time (the late
//    reply is then discarded), or Reply::io_error() when the connection failed or broke;
//    the next call reconnects.
//  - A paused client (GC) runs nothing: replies, timer expiries and messages that arrive
//    while it is paused are held back and handed to it in arrival order when the pause
//    ends, exactly as the simulator does. Its sockets stay open; the server keeps
//    answering into them.
//  - A crashed client loses every coroutine and connection at once; work still in flight
//    for the old incarnation is dropped. restart() hands the client to on_client_restart.
//  - random() is a per-client stream seeded from (seed, client name).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lockstep/env.h"
#include "lockstep/live/event_loop.h"
#include "lockstep/random.h"

namespace lockstep::live {

struct NodeAddress {
  std::string host = "127.0.0.1";
  int port = 0;
  std::string text() const { return host + ":" + std::to_string(port); }
};

// Parses "HOST:PORT"; returns false on anything else.
bool parse_address(const std::string& text, NodeAddress& out);

// One command as a client sends it, and (for replies) what came back. The hook sees a
// command just before it leaves and a reply the moment it arrives, whether or not the
// client is paused: they describe what the server did, not what the client knows.
struct CommandNote {
  int client = 0;
  int node = 0;
  const std::vector<std::string>* argv = nullptr;
  const Reply* reply = nullptr;  // null for "sent"
};

// A Redis Cluster node as cluster clients find it: the address the cluster names it by
// (announced: in CLUSTER SLOTS, MOVED and ASK), the server's own address, and the
// logical node (shard) it was started in.
struct ClusterMember {
  NodeAddress announced;
  NodeAddress server;
  int node = 0;
};

class LiveEnv;

class LiveWorld {
 public:
  explicit LiveWorld(uint64_t seed);
  ~LiveWorld();
  LiveWorld(const LiveWorld&) = delete;
  LiveWorld& operator=(const LiveWorld&) = delete;

  EventLoop& loop() { return loop_; }
  uint64_t seed() const { return seed_; }

  int add_node(NodeAddress address);
  int node_count() const { return static_cast<int>(nodes_.size()); }
  const NodeAddress& node_address(int node) const { return nodes_[node].address; }
  // Points node `node` at another server (a failover): every client's connection to it
  // is closed (in-flight calls fail with an I/O error) and the next call connects anew.
  void set_node_address(int node, NodeAddress address);
  uint64_t node_generation(int node) const { return nodes_[node].generation; }

  // The nodes form a Redis Cluster: a client's Env then has one node, a cluster
  // connection that routes by slot and follows redirections (ClusterRouter), except for a
  // direct client, which reaches each logical node's address as without a cluster.
  void set_cluster(std::vector<ClusterMember> members) { cluster_ = std::move(members); }
  const std::vector<ClusterMember>& cluster_members() const { return cluster_; }
  void set_direct(int client) { clients_[client]->direct = true; }
  bool cluster_client(int client) const { return !cluster_.empty() && !clients_[client]->direct; }

  // Returns the client's index (0-based); history_id is its number in histories.
  int add_client(const std::string& name, int64_t history_id);
  int client_count() const { return static_cast<int>(clients_.size()); }
  LiveEnv& env(int client);
  const std::string& client_name(int client) const { return clients_[client]->name; }
  int64_t history_id(int client) const { return clients_[client]->history_id; }

  // Faults on clients.
  void pause(int client, Nanos d);
  bool is_paused(int client) const;
  void crash(int client);
  bool is_crashed(int client) const { return clients_[client]->crashed; }
  void restart(int client);
  void jump_wall_clock(int client, Nanos by) { clients_[client]->wall_offset += by; }
  Nanos wall_offset(int client) const { return clients_[client]->wall_offset; }
  // From now on both of the client's clocks run drift_ppm fast (negative: slow).
  void set_clock_drift(int client, double drift_ppm);
  // How far the client's clocks have drifted from the machine's by monotonic time `now`.
  Nanos drift(int client, Nanos now) const;

  // Starts a top-level task of the client on the next loop turn.
  void spawn(int client, Task<void> t);
  // True when every task the client was given has finished (or it crashed).
  bool idle(int client) const;
  // Destroys every client's tasks and connections without marking a crash: the end of a
  // run. Safe to call more than once.
  void stop_all();

  // Runs fn as part of `client`'s incarnation `epoch`: dropped if the client has crashed
  // since, held back while it is paused. Never runs inside the caller.
  void post(int client, uint64_t epoch, std::function<void()> fn);
  uint64_t epoch(int client) const { return clients_[client]->epoch; }

  std::function<void(int client)> on_client_restart;
  // Returning true for a command defers its sending to the client's next step, after
  // work deferred meanwhile (an event-triggered fault): a crash then drops it, a pause
  // holds it. A reply always reaches the client as its next step.
  std::function<bool(const CommandNote&)> on_command;
  // Where client `client`'s connection to node `node` at `address` should go instead
  // (the fault proxy); unset: straight to the server.
  std::function<NodeAddress(int client, int node, const NodeAddress& address)> route;

  // The ZooKeeper ensemble, when the run has one: the connect string client `client`
  // reaches it by (its own proxy links) and the session timeout its sessions ask for.
  std::function<std::string(int client)> zk_connect;
  Nanos zk_session_timeout = Millis(10000);
  // The world's MySQL server (topology.mysql): every client's SQL session connects to it,
  // through mysql_route when set (the fault proxy).
  void set_mysql(NodeAddress address) { mysql_ = std::move(address); }
  bool has_mysql() const { return mysql_.has_value(); }
  std::optional<NodeAddress> mysql_address(int client) const {
    if (!mysql_) return std::nullopt;
    return mysql_route ? mysql_route(client, *mysql_) : *mysql_;
  }
  std::function<NodeAddress(int client, const NodeAddress& address)> mysql_route;

  // Used by LiveEnv's connections.
  bool closing() const { return closing_; }

 private:
  struct Node {
    NodeAddress address;
    uint64_t generation = 0;
  };
  struct Client {
    std::string name;
    int64_t history_id = 0;
    Rng rng;
    Nanos wall_offset{0};
    int64_t drift_ppb = 0;
    Nanos drift_base{0};   // monotonic time the current rate counts from
    Nanos drift_before{0};  // drift accumulated at earlier rates
    bool crashed = false;
    bool direct = false;
    uint64_t epoch = 0;
    Nanos paused_until{0};
    std::vector<std::function<void()>> held;  // arrived while paused, in order
    std::unique_ptr<LiveEnv> env;
    std::vector<Task<void>> tasks;
  };
  friend class LiveEnv;

  void run_in(int client, uint64_t epoch, std::function<void()> fn);
  void end_pause(int client);

  uint64_t seed_;
  EventLoop loop_;
  bool closing_ = false;
  std::vector<Node> nodes_;
  std::optional<NodeAddress> mysql_;
  std::vector<ClusterMember> cluster_;
  std::vector<std::unique_ptr<Client>> clients_;
};

// The Env of one live client process.
class LiveEnv : public Env {
 public:
  LiveEnv(LiveWorld& world, int client);
  ~LiveEnv() override;

  Nanos now_wall() override;
  Nanos now_mono() override;
  Task<void> sleep(Nanos d) override;
  void spawn(Task<void> t) override;
  uint64_t random() override;
  int node_count() const override;
  Connection& node(int index) override;
  std::string process_name() const override;
  ZooKeeper* zookeeper() override;
  // A session with the world's MySQL server over libmariadb (NoSqlServer without one).
  std::unique_ptr<SqlSession> sql_session() override;

  // Closes every connection; calls in flight fail with an I/O error. After a crash.
  void close_connections();
  // Closes the connection to one node (it reconnects on the next call).
  void close_node(int node);

 private:
  LiveWorld& world_;
  int client_;
  std::vector<std::unique_ptr<Connection>> connections_;
  std::unique_ptr<Connection> cluster_connection_;
  std::shared_ptr<ZooKeeper> zookeeper_;
};

// A client's session with the run's real ZooKeeper ensemble (zk_client.cc).
std::shared_ptr<ZooKeeper> make_live_zookeeper(LiveWorld& world, int client);
// Sessions are closed on threads of their own (closing waits for the server): whether
// any is still closing, and waiting for them all.
bool zookeeper_closers_running();
void join_zookeeper_closers();

// Converts a hiredis reply. hiredis 0.14 reports a null array (*-1) as a nil, so live
// replies never carry Reply::Type::NilArray; is_nil() treats both alike.
Reply reply_from_hiredis(const void* redis_reply);

// A blocking one-shot command for the control plane (seeding keys, reading results,
// promoting a replica): never used by lock code, never on a client's behalf.
Reply sync_command(const NodeAddress& address, const std::vector<std::string>& argv, Nanos timeout);

}  // namespace lockstep::live
