// RedisServer and ServerFarm: real redis-server processes that lockstep starts, faults
// and removes itself.
//
// Safety invariants (they are the point of this file):
//  - A server is always a child process forked here, bound to 127.0.0.1 on a port the
//    kernel just reported free, with its files in a private mkdtemp directory. No fixed
//    or well-known port is ever used, and no server this process did not start is ever
//    signalled.
//  - Every started server is killed and reaped: by its owner's destructor, by the
//    SIGINT/SIGTERM handler installed with the first start (it SIGKILLs every live
//    child, then lets the signal take its usual course), and by the kernel if lockstep
//    itself dies (PR_SET_PDEATHSIG in the child).
//  - Every wait is bounded.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lockstep/topology.h"
#include "lockstep/env.h"
#include "lockstep/live/clock_file.h"
#include "lockstep/live/live_world.h"

namespace lockstep::live {

// The redis-server binary: $LOCKSTEP_REDIS_SERVER, else the first redis-server on PATH.
// Empty if there is none.
std::string find_redis_server();
// The redis-sentinel binary: $LOCKSTEP_REDIS_SENTINEL, else the first redis-sentinel on
// PATH. Empty if there is none (redis-server --sentinel is used then).
std::string find_redis_sentinel();
// lockstep's clock library (liblockstep_clock.so), preloaded into a server whose wall
// clock a scenario moves: $LOCKSTEP_CLOCK_LIBRARY, else the one built with this program,
// else the one next to the running executable. Empty if none is found.
std::string find_clock_library();
// "" if redis-server starts with the clock library preloaded here, else why not. Probed
// once (bounded to 3 s) and remembered.
const std::string& shifted_clock_unusable_reason();

// Every pid this process ever started as a server or sentinel, for tests that check
// nothing was left behind.
std::vector<pid_t> started_server_pids();

// A master a sentinel watches, under the name clients ask Sentinel about.
struct MonitoredMaster {
  std::string name;  // "node-1"
  NodeAddress address;
  int quorum = 1;
  int64_t down_after_ms = 30000;
  int64_t failover_timeout_ms = 180000;
};

struct ServerConfig {
  std::string name;                  // "node-1", "node-1-replica-1", "sentinel-1"
  Persistence persistence = Persistence::None;
  std::optional<NodeAddress> replica_of;
  int min_replicas_to_write = 0;  // Redis's min-replicas-to-write; 0 leaves it off
  // Redis's maxmemory (0 leaves it off), maxmemory-policy and maxmemory-samples.
  int64_t maxmemory_bytes = 0;
  EvictionPolicy maxmemory_policy = EvictionPolicy::NoEviction;
  int maxmemory_samples = 5;
  bool shifted_clock = false;  // preload the clock library so the wall clock can be moved
  Nanos initial_clock_offset{0};
  // Non-empty: the process is a redis-sentinel watching these masters (persistence,
  // replica_of and the clock settings do not apply).
  std::vector<MonitoredMaster> monitors;
  bool sentinel() const { return !monitors.empty(); }
  // > 0: a Redis Cluster node (--cluster-enabled yes) with this cluster-node-timeout, its
  // bus on a second kernel-picked port and its nodes.conf in its own directory.
  int64_t cluster_node_timeout_ms = 0;
  bool cluster() const { return cluster_node_timeout_ms > 0; }
  // Non-empty: Redis's bind-source-addr, a loopback address of its own its outgoing
  // connections come from, by which the fault proxy tells whose a cluster bus link is.
  std::string source_addr;
};

class RedisServer {
 public:
  // `binary` is redis-server, or for a sentinel redis-sentinel or redis-server.
  RedisServer(std::string binary, std::string dir, ServerConfig config);
  ~RedisServer();
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  // Starts on a fresh free port and waits (bounded) until PING answers PONG. Returns ""
  // or why it failed; a port taken by someone else in between is retried with a new one.
  std::string start();
  // SIGKILL and reap; the server's files stay (a restart reads its AOF).
  void kill();
  // Starts again on the same port and directory. With wait=false it returns once the
  // process runs (clients meanwhile see refused connections, as after a real restart).
  std::string restart(bool wait);
  void pause();   // SIGSTOP
  void resume();  // SIGCONT
  // Sets the server's wall clock to real time + offset (needs config.shifted_clock); the
  // running server sees it at its next clock read.
  bool set_clock_offset(Nanos offset);
  // From now on the server's wall clock runs drift_ppm fast (negative: slow) relative to
  // real time, on top of its offset (needs config.shifted_clock).
  bool set_clock_drift(double drift_ppm);

  bool running() const { return pid_ > 0; }
  bool paused() const { return paused_; }
  pid_t pid() const { return pid_; }
  NodeAddress address() const { return NodeAddress{"127.0.0.1", port_}; }
  // A cluster node's bus port (0 otherwise).
  int bus_port() const { return bus_port_; }
  // The port a cluster node tells the others and its clients to reach it at (the fault
  // proxy's), kept across restarts.
  void set_announce_port(int port) { announce_port_ = port; }
  // The same for the cluster bus.
  void set_announce_bus_port(int port) { announce_bus_port_ = port; }
  const ServerConfig& config() const { return config_; }
  Nanos clock_offset() const { return clock_.wall_offset(); }
  // Waits until PING answers or `limit` passes.
  bool wait_ready(Nanos limit);
  // Where the process writes its log (stdout and stderr).
  std::string log_file() const { return dir_ + "/redis.log"; }

 private:
  std::string spawn();
  std::vector<std::string> args() const;
  std::string write_sentinel_config() const;
  std::string sentinel_file() const { return dir_ + "/sentinel.conf"; }

  std::string binary_;
  std::string dir_;
  ServerConfig config_;
  int port_ = 0;
  int bus_port_ = 0;
  int announce_port_ = 0;
  int announce_bus_port_ = 0;
  pid_t pid_ = -1;
  bool paused_ = false;
  ClockFile clock_;  // used with config.shifted_clock
};

// All servers and sentinels of one run, in one temporary directory removed at the end.
class ServerFarm {
 public:
  ServerFarm();
  ~ServerFarm();
  ServerFarm(const ServerFarm&) = delete;
  ServerFarm& operator=(const ServerFarm&) = delete;

  // "" when ready; otherwise why not (no redis-server, no temp dir).
  const std::string& error() const { return error_; }
  const std::string& dir() const { return dir_; }

  // Adds and starts a server (a sentinel if config.monitors is set); nullptr (and
  // error()) on failure.
  RedisServer* start(const ServerConfig& config);
  RedisServer* find(const std::string& name);
  std::vector<std::unique_ptr<RedisServer>>& servers() { return servers_; }
  // Kills every server (also done by the destructor).
  void stop_all();

 private:
  std::string error_;
  std::string binary_;
  std::string sentinel_binary_;
  std::string dir_;
  std::vector<std::unique_ptr<RedisServer>> servers_;
};

}  // namespace lockstep::live
