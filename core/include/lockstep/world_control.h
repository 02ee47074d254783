// WorldControl is what a run's fault plan may do to a world: the second, small interface
// both worlds implement, beside the Env that lock code sees. The simulator implements it
// over its scheduler and simulated processes (sim::Control); the live world over real
// redis-server processes, its event loop and its client coroutines (live::Control).
//
// What a WorldControl promises:
//  - One timeline: now() is the run's true time (the scheduler's clock in the simulator,
//    the monotonic clock since the clients may start live), the clock every history
//    record is stamped with; at(t, fn) runs fn on the world's one thread at t, in the
//    order calls were made for equal t. A fault is never applied from inside lock code.
//  - Processes are named as scenarios name them: client-N, node-N, node-N-replica-M. A
//    name the world does not know is nullopt, never a crash. A fault on node-N after a
//    failover still hits the process first started as node-N, in both worlds.
//  - A world that cannot do something says so in capabilities() with the reason in
//    words, so a runner never asks which world it is in; the plan refuses a scenario
//    that needs what the world lacks before anything runs.
//  - Faults are idempotent where the world is: pausing a paused process extends the pause
//    only if the new one ends later; crashing a crashed one does nothing; restarting a
//    running one does nothing.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "lockstep/env.h"
#include "lockstep/reply.h"

namespace lockstep {

// What a world can do. Server means any Redis process (master or replica). The first
// group is what a scenario's topology and workload ask of a world; the rest are faults.
enum class Capability {
  ExternalClients,         // the clients are the user's own programs
  SeveralServers,          // more than one redis-server (several nodes, or replicas)
  BuiltInFailureDetector,  // down_after_ms without Sentinel processes: the world promotes
  Cluster,                 // a Redis Cluster (topology.cluster)
  ClusterPartition,        // a partition inside a Redis Cluster
  Sentinel,                // redis-sentinel processes (topology.sentinels)
  ReconfigureServers,      // a memory limit set, memory filled by a cache writer
  PauseClient,
  PauseServer,
  CrashClient,
  CrashServer,
  ClockJumpClient,
  ClockJumpServer,
  ClockDriftClient,
  ClockDriftServer,
  LinkDelay,
  LinkJitter,
  Partition,
  Failover,
  MysqlServer,             // a MySQL server (topology.mysql)
  ClockMysqlServer,        // a clock fault or offset on the MySQL server
  ClockZooKeeperServer,    // a clock fault or offset on a ZooKeeper server
  kCount,
};

// A set of capabilities, and for each one missing, why (for the user's error message).
// A capability may depend on a check that costs something (starting a server to see
// whether it takes lockstep's clock library): it runs the first time it is asked about.
class Capabilities {
 public:
  Capabilities& allow(Capability c) {
    slot(c) = Slot{};
    return *this;
  }
  Capabilities& deny(Capability c, std::string why) {
    slot(c) = Slot{std::move(why), nullptr};
    return *this;
  }
  // Allowed if `check` returns "", else denied for the reason it returns.
  Capabilities& allow_if(Capability c, std::function<std::string()> check) {
    slot(c) = Slot{"", std::move(check)};
    return *this;
  }
  bool has(Capability c) const { return why_not(c).empty(); }
  // "" when the world has it.
  const std::string& why_not(Capability c) const {
    Slot& s = const_cast<Capabilities*>(this)->slot(c);
    if (s.check) s.why_not = std::exchange(s.check, nullptr)();
    return s.why_not;
  }

  // Everything, to deny from.
  static Capabilities all() { return Capabilities(); }

 private:
  struct Slot {
    std::string why_not;
    std::function<std::string()> check;
  };
  Slot& slot(Capability c) { return slots_[static_cast<int>(c)]; }

  Slot slots_[static_cast<int>(Capability::kCount)];
};

// One process of a world, as the fault plan addresses it and as history records name it.
struct ProcessRef {
  int id = -1;              // the world's own handle
  std::string name;         // "client-2", "node-1-replica-1"
  bool server = false;      // a Redis process
  int64_t history_id = -1;  // the process number history records use; -1 for servers
  int64_t truth_node = -1;  // the node field of truth records about it; -1 for clients
};

// Ground-truth records the fault plan and the worlds write about faults (the runner
// writes them into the history under checker::truth's names).
enum class Truth {
  FaultStart,         // value: the fault's record
  FaultEnd,           // value: the fault's record
  Crash,              // value: the process's name
  Restart,            // value: the process's name
  Failover,           // value: which server took over from which
  FailoverRequested,  // value: whom the failover was asked of, and the answer
};
using TruthSink =
    std::function<void(Truth kind, int64_t process, nlohmann::json value, int64_t node, nlohmann::json extra)>;

// Something a process did that an event-triggered fault may wait for (FaultTrigger).
struct WorldEvent {
  enum class Kind { Sends, Receives, Enters, Leaves, Sets, Deletes };
  Kind kind = Kind::Sends;
  std::string_view process;  // client-N for sends/receives/enters/leaves, node-N for sets/deletes
  std::string_view what;     // the command; "critical-section"; or the key set or deleted
  std::string_view key;      // sends/receives: the command's first key, "" if none
};

// A change to a key on a node, as the world saw it: the ground truth of who held a lock.
// The simulator reports every change as it happens; the live world reconstructs them from
// its polls and the replies its proxy passed, so a change may be reported after the fact
// (`at`) and its process may be unknown (-1). The views are valid during the call only.
struct KeyChange {
  enum class Kind { Set, Del, Expire, Evict };
  Kind kind = Kind::Set;
  int node = 0;                // the logical node (node-N is N-1)
  std::string_view key;
  std::string_view value;      // Set: the new value; removals: the value removed
  int64_t process = -1;        // Set: who wrote it; Del: whose command removed it
  int64_t owner = -1;          // removals: who had written the value removed
  std::string_view cause;      // a removal nobody is named for: "failover", "unknown"
  bool reloaded = false;       // Set: found so after the node reloaded its keyspace whole
  std::optional<Nanos> at;     // when it happened, if before now
};

class WorldControl {
 public:
  virtual ~WorldControl() = default;

  virtual const Capabilities& capabilities() const = 0;

  // The run's timeline.
  virtual Nanos now() const = 0;
  virtual void at(Nanos t, std::function<void()> fn) = 0;

  virtual std::optional<ProcessRef> process(std::string_view name) const = 0;

  // Nothing of the process runs for `d`: a client's timers and replies wait and are
  // handled in order afterwards (a GC pause); a server is stopped (SIGSTOP live).
  virtual void pause(const ProcessRef& p, Nanos d) = 0;
  // The process loses everything it had in memory; a client's coroutines are gone.
  virtual void crash(const ProcessRef& p) = 0;
  // A crashed process comes back: a server with what its persistence kept, a client with
  // nothing (on_client_restart decides what it does).
  virtual void restart(const ProcessRef& p) = 0;
  // Steps the process's wall clock (its monotonic clock never jumps).
  virtual void jump_wall_clock(const ProcessRef& p, Nanos by) = 0;
  // From now on both of the process's clocks run at (1 + ppm / 1e6) of true speed.
  virtual void set_clock_drift(const ProcessRef& p, double drift_ppm) = 0;
  // Adds (or, negative, takes back) delay or jitter on every link of the process.
  virtual void add_link_delay(const ProcessRef& p, Nanos extra) = 0;
  virtual void add_link_jitter(const ProcessRef& p, Nanos extra) = 0;
  // Cuts (+1) or restores (-1) the link from one process to another; cuts nest.
  virtual void block_link(const ProcessRef& from, const ProcessRef& to, int delta) = 0;
  // Promotes a replica of master node-N, as Sentinel would, and points clients at it.
  virtual void fail_over(const ProcessRef& master) = 0;

  // The runner's own channel to the servers, outside the scenario: setting the stage
  // before the run and reading what is left after it, the same way in both worlds. It is
  // not a client: no fault, link or latency applies and nothing reaches the history.
  // `node` is a logical node (node-N is N-1), answered by its current master; a server
  // that cannot answer gives an error reply, never a hang.
  virtual Reply admin(int node, const std::vector<std::string>& argv) = 0;
  // The logical node that holds `key`: its cluster shard, else node 0.
  virtual int node_of_key(const std::string& key) const = 0;
  virtual int node_count() const = 0;

  // Client processes run the workload: their Env, and what a restarted client does.
  virtual Env& env(const ProcessRef& client) = 0;
  std::function<void(const ProcessRef& client)> on_client_restart;

  // Where the plan and the world write ground truth about faults; set by the runner.
  TruthSink on_truth;
  // Where the world reports changes to keys (KeyChange); set by the runner, which keeps
  // those of the lock's key as the history's ground truth.
  std::function<void(const KeyChange&)> on_key_change;

  // Set by the fault plan when a fault waits for an event; the world (and the runner, for
  // events it records itself) call it as each event happens. It returns true when a
  // fault was scheduled for this very instant: the world then lets the event's
  // consequence in that process (the command leaving, the reply reaching the code that
  // waits for it) happen only as the process's next step after that fault, so a crash
  // or pause lands between the two.
  std::function<bool(const WorldEvent&)> on_event;
  bool event(const WorldEvent& e) { return on_event && on_event(e); }

 protected:
  void truth(Truth kind, int64_t process, nlohmann::json value, int64_t node, nlohmann::json extra = nullptr) {
    if (on_truth) on_truth(kind, process, std::move(value), node, std::move(extra));
  }
  friend class FaultPlayer;
};

}  // namespace lockstep
