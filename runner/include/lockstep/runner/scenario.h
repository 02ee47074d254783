// A Scenario is one experiment, read from a JSON file: which Redis topology, which lock
// algorithm with which parameters, which workload drives it, which faults happen when,
// how long it runs, the seed, and which properties the author expects to be violated
// (none = the lock should be safe here).
//
// Reading a file never crashes: any mistake comes back as a ScenarioError naming the
// file, the JSON path, what was expected there and what was found.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "lockstep/fault_plan.h"
#include "lockstep/locks.h"
#include "lockstep/topology.h"
#include "lockstep/reports/report.h"

namespace lockstep::runner {

// How long a message takes on a link.
struct LatencySpec {
  enum class Kind { Constant, Uniform, Normal, LongTail };
  Kind kind = Kind::Constant;
  double ms = 1.0;         // constant: the delay; long-tail: the usual delay
  double min_ms = 0.0;     // uniform
  double max_ms = 0.0;     // uniform
  double mean_ms = 0.0;    // normal
  double stddev_ms = 0.0;  // normal (draws below zero are clamped to zero)
  double tail_ms = 0.0;          // long-tail: mean extra delay of a slow message
  double tail_probability = 0.0; // long-tail: chance that a message is slow
  bool operator==(const LatencySpec&) const = default;
};

struct NetworkSpec {
  LatencySpec latency;
  double loss = 0.0;  // probability that a message is dropped
  bool operator==(const NetworkSpec&) const = default;
};

// A process's clock at the start: offset from true time and drift rate.
struct ClockSpec {
  std::string process;  // "client-1", "node-1", ...
  int64_t offset_ms = 0;
  double drift_ppm = 0.0;
  bool operator==(const ClockSpec&) const = default;
};

// Redis Cluster (docs/cluster.md): `masters` shards with replicas_per_master replicas
// each, the slots split among them; a master silent for node_timeout_ms is flagged FAIL by
// the other masters and its best replica elected. masters 0: no cluster.
struct ClusterSpec {
  int masters = 0;
  int replicas_per_master = 1;
  int64_t node_timeout_ms = 15000;
  bool operator==(const ClusterSpec&) const = default;
};

// A ZooKeeper ensemble beside the Redis nodes (docs/lock-services.md): servers zk-1 to
// zk-N, zk-1 the leader; tick_ms is the servers' tickTime (heartbeats, expiry checks,
// session timeouts held to 2..20 ticks) and session_timeout_ms what every client's session
// asks for (kazoo's default). servers 0: no ensemble.
struct ZooKeeperSpec {
  int servers = 0;
  int64_t tick_ms = 2000;
  int64_t session_timeout_ms = 10000;
  bool operator==(const ZooKeeperSpec&) const = default;
};

// The world's MySQL server, mysql-1 (docs/mysql.md): present when the topology names one.
// Its global settings, in MariaDB's units (whole seconds); a lock may still set its own
// session's values (the mysql-* locks' options).
struct MysqlSpec {
  bool enabled = false;
  int64_t wait_timeout_s = 28800;           // an idle session is ended after this long
  int64_t innodb_lock_wait_timeout_s = 50;  // a statement waits this long for a row lock
  bool operator==(const MysqlSpec&) const = default;
};

struct TopologySpec {
  int nodes = 1;     // independent masters (RedLock uses several)
  int replicas = 0;  // replicas per master
  Persistence persistence = Persistence::None;
  // Extra delay of the replication stream on top of the network's latency.
  int64_t replication_lag_ms = 0;
  // Sentinel-style failure detector: a master that has not answered a PING for this
  // long is replaced by its most up-to-date replica. 0 = no automatic failover.
  int64_t down_after_ms = 0;
  // A master refuses writes (NOREPLICAS) unless this many replicas are connected and
  // reachable: Redis's min-replicas-to-write. 0 = off.
  int min_replicas_to_write = 0;
  // Sentinel processes watching every master (live: real redis-sentinels with
  // down-after-milliseconds = down_after_ms and a majority quorum; needs replicas and
  // down_after_ms). The simulator's failure detector already stands for them: it fails
  // over after down_after_ms whatever this says.
  int sentinels = 0;
  // Redis's maxmemory on every node (bytes; 0 = no limit) and what happens when a write
  // would pass it: maxmemory-policy and maxmemory-samples (README, "Memory and eviction").
  int64_t maxmemory_bytes = 0;
  EvictionPolicy maxmemory_policy = EvictionPolicy::NoEviction;
  int maxmemory_samples = 5;
  // With a cluster, nodes and replicas mirror its masters and replicas_per_master.
  ClusterSpec cluster;
  bool cluster_enabled() const { return cluster.masters > 0; }
  ZooKeeperSpec zookeeper;
  MysqlSpec mysql;  // beside the Redis nodes, which still hold the workload's resource
  bool operator==(const TopologySpec&) const = default;
};

struct RetrySpec {
  int count_max = 100;   // attempts after the first
  int64_t delay_ms = 10;
  int64_t jitter_ms = 10;  // extra random delay in [0, jitter_ms]
  bool operator==(const RetrySpec&) const = default;
};

struct LockSpec {
  // A lock of the one registry (lockstep/locks.h): one of lockstep's recipes
  // ("set-px-lua") or a library profile ("redsync@4.17.0"); with an external workload,
  // any name for what the program uses (reports show it), "external" by default.
  std::string algorithm;
  std::string key = "lock";
  // External workloads: the keys (or globs) the program's library stores its lock under,
  // when they are not `key`; empty: learnt from what the first acquire writes.
  std::vector<std::string> keys;
  // A recipe's parameters; a library's lock takes its own, in `options`, instead.
  int64_t lease_ms = 10000;
  RetrySpec retry;
  int64_t command_timeout_ms = 1000;
  // A recipe's integer options, or a library's options spelled as it spells them.
  nlohmann::json options = nlohmann::json::object();
  // The registry's entry for it; nullptr for an external program's lock.
  const LockInfo* info() const { return find_lock(algorithm); }
  // The lock takes its library's own options (a library profile).
  bool library() const {
    const LockInfo* i = info();
    return i && i->library_options();
  }
  bool operator==(const LockSpec&) const = default;
};

// A cache sharing a node with the lock, the way applications put both in one Redis:
// each writer (process cache-N) SETs the keys cache:N:0 .. cache:N:(keys-1) in turn,
// `rate_per_s` writes a second from start_ms, `writes` in all. The first ttl_fraction of
// its keys are written with PX ttl_ms, the rest without a TTL: which ones a volatile-*
// policy may evict. It records nothing in the history: it only fills memory.
struct CacheSpec {
  int writers = 0;  // 0: no cache
  int node = 1;     // node-N it writes to
  int keys = 100;
  int64_t value_bytes = 1000;
  double ttl_fraction = 0.0;
  int64_t ttl_ms = 3'600'000;
  int64_t rate_per_s = 100;
  int64_t start_ms = 0;
  int64_t writes = 1000;
  bool operator==(const CacheSpec&) const = default;
};

// Cache-aside (docs/cache-consistency.md): an application keeps a value in a database and
// a copy of it in Redis. Writers (client-1 .. client-writers) write the database, then
// delete the cached copy ("delete") or write it ("overwrite"); readers (the next
// `readers` clients) read the cache and, on a miss, read the database and fill the cache
// with PX ttl_ms. Node db_node stands for the database (plain GET/SET on db:item:K);
// the cache keys are cache:item:K on cache_node. With lock "read-write" every operation
// runs under the scenario's read-write lock (the write side for writers, the read side for
// readers), on node-1 like any lock. When the run ends, a cache entry holding what the
// database no longer has, and living on past max_stale_ms after the database changed, is
// a stale-cache violation.
struct CacheAsideSpec {
  int writers = 0;  // 0 writers and 0 readers: no cache-aside workload
  int readers = 0;
  int keys = 1;
  int ops = 1;                          // operations per client, op_interval_ms apart
  std::string after_write = "delete";   // delete | overwrite
  int64_t ttl_ms = 60'000;              // the TTL of every cache entry written
  int64_t max_stale_ms = 1000;          // how long the cache may lag the database
  int cache_node = 1;
  int db_node = 2;
  std::string lock = "none";            // none | read-write
  int64_t writer_start_ms = 0;          // writer i starts at writer_start_ms + (i-1) * start_stagger_ms
  int64_t reader_start_ms = 0;          // reader i likewise from reader_start_ms
  int64_t op_interval_ms = 100;
  bool enabled() const { return writers + readers > 0; }
  bool operator==(const CacheAsideSpec&) const = default;
};

struct WorkloadSpec {
  std::string kind = "stock";
  int clients = 2;
  int64_t initial_stock = 10;
  int attempts_per_client = 1;
  int64_t hold_ms = 10;          // time between reading the stock and writing it back
  int64_t wait_ms = 5000;        // acquire wait budget per attempt
  int64_t start_stagger_ms = 0;  // client i starts at (i-1) * start_stagger_ms
  std::string stock_key = "stock";
  // The store checks fencing tokens: it remembers the highest token that wrote and
  // rejects writes carrying a lower one (needs a lock that hands out tokens).
  bool fencing = false;
  // The last `readers` clients take the read side of a read-write lock and only read
  // the stock (twice, hold_ms apart); the others sell under the write side.
  int readers = 0;
  // Profiles with an extend call: the holder works in steps of this many ms and extends
  // the lock after each one while work remains, stopping when an extension fails. 0: off.
  int64_t extend_every_ms = 0;
  // Reentrant profiles: halfway through the work the holder takes the lock again (a
  // helper that locks it too), holds it this long and releases it. 0: off.
  int64_t reentrant_hold_ms = 0;
  // The holder works for the validity its lock reported when acquire returned (RedLock's
  // rule: use the lock only within it) instead of hold_ms; for a lock that reports one.
  bool hold_for_validity = false;
  // A client whose acquire gives up calls it again until wait_ms more has passed since its
  // first call gave up: a worker waiting its turn with a library that gives up after a few tries.
  bool retry_until_wait = false;
  // kind "external": the user's own program, run once per client and reporting on its
  // stdout (docs/external-clients.md); live only. It runs in command_dir: the scenario
  // file's folder (the current folder for `lockstep live --client`).
  std::vector<std::string> command = {};
  std::string command_dir = "";
  // Client i starts start_stagger_ms after client i-1 first holds the lock (or its program
  // ends), instead of at (i-1) * start_stagger_ms: programs whose start-up or first
  // connection is slow on a loaded machine still take the lock in their order.
  bool start_after_hold = false;
  CacheSpec cache = {};
  CacheAsideSpec cache_aside = {};
  bool external() const { return kind == "external"; }
  bool operator==(const WorkloadSpec&) const = default;
};

struct Scenario {
  std::string name;  // defaults to the file name without .json
  std::string description;
  std::string file;  // where it was read from, "" if built in code
  uint64_t seed = 1;
  int64_t duration_ms = 10000;
  std::vector<World> worlds = {World::Sim};
  bool runs_in(World w) const { return std::find(worlds.begin(), worlds.end(), w) != worlds.end(); }
  TopologySpec topology;
  NetworkSpec network;
  std::vector<ClockSpec> clocks;
  LockSpec lock;
  WorkloadSpec workload;
  std::vector<FaultSpec> faults;
  reports::Expectation expect;  // what the author expects the checker to find
  int64_t deadlock_bound_ms = 5000;  // lock held by a dead/finished process this long
  // Judge the order clients are served in (the fairness property). Unset: only for a
  // lock that promises arrival order (lock_promises_arrival_order).
  std::optional<bool> check_fairness;
  bool operator==(const Scenario&) const = default;
};

// The lock the workload really takes, as reports name it: the algorithm, or "none" for a
// cache-aside workload without a lock (its lock section then only waits to be switched on).
std::string lock_in_use(const Scenario& s);

// The property names a scenario may expect (checker::properties(), in its order).
const std::vector<std::string>& property_names();

// The scenario with its clients replaced by the user's program (lockstep live --client):
// the same servers, faults, keys and timings, the program run once per client in
// `directory`. Its lock is the program's, judged as a mutex.
Scenario with_external_client(const Scenario& s, const std::vector<std::string>& command, const std::string& directory);

// Whether the lock promises to serve clients in the order they asked (a fair lock).
bool lock_promises_arrival_order(const LockSpec& lock);
// Whether the lock hands its holder a fencing token (Lock::fencing_token), which a
// fencing store needs.
bool lock_hands_out_tokens(const LockSpec& lock);

// The keys each object of the file format accepts, by path pattern: "$" for the top
// level, "$.lock", "$.network.latency", "$.faults[]" for every element of faults, ...
// The parser rejects any other key; $.lock.options alone is free-form. Which of a
// fault's (or a latency's) keys apply depends on its kind (dist); this is the union.
const std::vector<std::pair<std::string, std::vector<std::string>>>& scenario_keys();

struct ScenarioError {
  std::string file;
  std::string path;      // JSON path, e.g. $.faults[2].at_ms
  std::string expected;  // "a non-negative integer"
  std::string found;     // a short scalar's literal: -5, "pausee", 1.5, true; else
                         // "an object", "an array", "nothing" (missing), or what went
                         // wrong: "unknown key \"x\"", "syntax error at line 3, column 7: ..."
  // One line: "FILE: $.faults[2].at_ms: expected a non-negative integer, found -5"
  std::string message() const;
};

using ScenarioResult = std::variant<Scenario, ScenarioError>;

// Never throws. `file` names the source in errors and gives the default name; "" is fine.
ScenarioResult parse_scenario(const std::string& text, const std::string& file);
// Never throws; an unreadable file is a ScenarioError at path "$".
ScenarioResult load_scenario_file(const std::string& path);

// The scenario as JSON, in the file format, every field written (defaults too);
// parse_scenario(to_json(s).dump(), s.file) gives back s field for field.
nlohmann::ordered_json to_json(const Scenario& s);
// The same content as nlohmann::json (keys sorted), as a report carries it: equal to
// nlohmann::json(to_json(s)), without building the ordered one first.
nlohmann::json to_report_json(const Scenario& s);

}  // namespace lockstep::runner
