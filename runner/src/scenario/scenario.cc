// Reading scenario files. The reader stops at the first mistake: one precise message
// beats a cascade of follow-on errors from a single typo.
#include "lockstep/runner/scenario.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <optional>
#include <set>
#include <string_view>

#include "scenario/json_reader.h"
#include "lockstep/algorithms.h"
#include "lockstep/checker/properties.h"
#include "lockstep/live/control.h"
#include "lockstep/profiles.h"
#include "lockstep/text.h"
#include "scenario/profile_spec.h"

namespace lockstep::runner {
namespace {

using namespace json_reader;

// ms values are converted to ns (int64) later; 1e9 ms keeps every sum of a few of them
// far from overflow.
constexpr int64_t kMaxMs = 1'000'000'000;
// A drift of -1e6 ppm would stop a clock; ±10% already covers absurdly bad hardware.
constexpr double kMaxDriftPpm = 100'000;

const std::vector<std::string> kWorkloadKinds = {"stock", "external"};

struct Shape {
  std::string kind;
  std::vector<std::string> keys;  // the keys this kind takes besides the discriminator
};

// The fault plan's table of kinds, as shapes.
const std::vector<Shape>& fault_shapes() {
  static const std::vector<Shape> kShapes = [] {
    std::vector<Shape> out;
    // Any fault may wait for an event ("on") instead of a time.
    for (const auto& k : fault_kinds()) {
      out.push_back({k.name, k.keys});
      out.back().keys.push_back("on");
    }
    return out;
  }();
  return kShapes;
}

const std::vector<Shape>& latency_shapes() {
  static const std::vector<Shape> kShapes = {
      {"constant", {"ms"}},
      {"uniform", {"min_ms", "max_ms"}},
      {"normal", {"mean_ms", "stddev_ms"}},
      {"long-tail", {"ms", "tail_ms", "tail_probability"}},
  };
  return kShapes;
}

std::vector<std::string> kinds_of(const std::vector<Shape>& shapes) {
  std::vector<std::string> out;
  for (const auto& s : shapes) out.push_back(s.kind);
  return out;
}

const Shape& shape_of(const std::vector<Shape>& shapes, const std::string& kind) {
  return *std::find_if(shapes.begin(), shapes.end(), [&](const Shape& s) { return s.kind == kind; });
}

// The union of all kinds' keys, in first-seen order, after the discriminator.
std::vector<std::string> union_keys(const std::string& discriminator, const std::vector<Shape>& shapes) {
  std::vector<std::string> out = {discriminator};
  for (const auto& s : shapes)
    for (const auto& k : s.keys)
      if (std::find(out.begin(), out.end(), k) == out.end()) out.push_back(k);
  return out;
}

const std::vector<std::string>& keys_of(const std::string& pattern) {
  for (const auto& [p, keys] : scenario_keys())
    if (p == pattern) return keys;
  static const std::vector<std::string> kNone;
  return kNone;
}

// Names of processes, checked against the topology and workload read so far.
class Processes {
 public:
  Processes(int clients, int nodes, int replicas, int zk_servers = 0, bool mysql = false)
      : clients_(clients), nodes_(nodes), replicas_(replicas), zk_servers_(zk_servers), mysql_(mysql) {}

  void check(const json& v, const std::string& path, bool master_only = false) const {
    const std::string form = master_only ? "a master node-N"
                             : mysql_    ? "a process name (client-N, node-N, node-N-replica-M or mysql-1)"
                                         : "a process name (client-N, node-N or node-N-replica-M)";
    if (!v.is_string()) fail(path, form, describe(v));
    auto name = v.get<std::string>();
    if (name == "mysql-1" && !master_only) {
      if (!mysql_) fail(path, "a process of the topology (mysql-1 needs topology.mysql)", describe(v));
      return;
    }
    if (std::string_view zk = name; !master_only && eat(zk, "zk-")) {
      const int n = number(zk);
      if (n == 0 || !zk.empty()) fail(path, form, describe(v));
      if (n > zk_servers_) {
        fail(path, zk_servers_ == 0 ? "a process of the topology (topology.zookeeper has no servers)"
                                    : "an existing ZooKeeper server (" + range("zk-", zk_servers_) + ")",
             describe(v));
      }
      return;
    }
    auto p = parse(name);
    if (!p || (master_only && (p->client || p->replica))) fail(path, form, describe(v));
    if (p->client && p->n > clients_) fail(path, "an existing client (" + range("client-", clients_) + ")", describe(v));
    if (!p->client && p->n > nodes_) fail(path, "an existing node (" + range("node-", nodes_) + ")", describe(v));
    if (p->replica > replicas_) fail(path, "an existing replica (" + replica_range() + ")", describe(v));
  }

 private:
  struct Name {
    bool client = false;
    int n = 0;
    int replica = 0;  // 0: not a replica
  };

  // A positive decimal without leading zeros, at the front of s; 0 if none.
  static int number(std::string_view& s) {
    size_t len = 0;
    while (len < s.size() && len < 7 && std::isdigit(static_cast<unsigned char>(s[len]))) ++len;
    if (len == 0 || s[0] == '0') return 0;
    int n = std::stoi(std::string(s.substr(0, len)));
    s.remove_prefix(len);
    return n;
  }

  static bool eat(std::string_view& s, std::string_view prefix) {
    if (s.substr(0, prefix.size()) != prefix) return false;
    s.remove_prefix(prefix.size());
    return true;
  }

  static std::optional<Name> parse(std::string_view s) {
    Name out;
    out.client = eat(s, "client-");
    if (!out.client && !eat(s, "node-")) return std::nullopt;
    if ((out.n = number(s)) == 0) return std::nullopt;
    if (!out.client && eat(s, "-replica-") && (out.replica = number(s)) == 0) return std::nullopt;
    if (!s.empty()) return std::nullopt;
    return out;
  }

  static std::string range(const std::string& prefix, int n) {
    return n == 1 ? prefix + "1" : prefix + "1 to " + prefix + std::to_string(n);
  }
  std::string replica_range() const {
    if (replicas_ == 0) return "topology.replicas is 0";
    return "node-1-replica-1 to node-" + std::to_string(nodes_) + "-replica-" + std::to_string(replicas_);
  }

  int clients_, nodes_, replicas_, zk_servers_;
  bool mysql_;
};

std::string default_name(const std::string& file) {
  std::string name = std::filesystem::path(file).filename().string();
  constexpr std::string_view kExt = ".json";
  if (name.size() > kExt.size() && name.ends_with(kExt)) name.resize(name.size() - kExt.size());
  return name;
}

// The workload's kind decides how the lock and worlds are read: an external workload
// names no algorithm of lockstep's and runs live only.
bool external_workload(const Obj& top) {
  const json* w = top.find("workload");
  return w && w->is_object() && w->contains("kind") && (*w)["kind"] == "external";
}

std::vector<World> read_worlds(const Obj& top, bool external) {
  if (!top.find("worlds")) return {external ? World::Live : World::Sim};
  const json& arr = top.array("worlds", "a non-empty array of worlds (sim, live)");
  if (arr.empty()) fail(top.at("worlds"), "a non-empty array of worlds (sim, live)", "an empty array");
  std::vector<World> out;
  for (size_t i = 0; i < arr.size(); ++i) {
    std::string path = child(top.at("worlds"), i);
    out.push_back(*world_named(read_choice(arr[i], path, world_names())));
    if (std::count(out.begin(), out.end(), out.back()) > 1) fail(path, "a world not listed before", describe(arr[i]));
    if (external && out.back() == World::Sim)
      fail(path, "\"live\" only (an external workload runs your own program, which only the live world starts)",
           describe(arr[i]));
  }
  return out;
}

// The cluster decides the masters and replicas; nodes and replicas may repeat them (as
// a written scenario does) but not contradict them, and a cluster watches itself.
void read_cluster(const Obj& o, const Obj& topology, TopologySpec& t) {
  ClusterSpec& c = t.cluster;
  c.masters = static_cast<int>(o.integer("masters", 3, 9, 3));
  c.replicas_per_master = static_cast<int>(o.integer("replicas_per_master", 0, 4, c.replicas_per_master));
  c.node_timeout_ms = o.integer("node_timeout_ms", 1, kMaxMs, c.node_timeout_ms);
  const auto mirror = [&](const char* key, int value, const std::string& source) {
    const json* v = topology.find(key);
    if (v && *v != value)
      fail(topology.at(key), std::to_string(value) + " (topology.cluster." + source + ") or nothing", describe(*v));
  };
  mirror("nodes", c.masters, "masters");
  mirror("replicas", c.replicas_per_master, "replicas_per_master");
  for (const char* key : {"down_after_ms", "sentinels"}) {
    const json* v = topology.find(key);
    if (v && *v != 0)
      fail(topology.at(key), "0 or nothing with topology.cluster (cluster nodes detect failures themselves: node_timeout_ms)",
           describe(*v));
  }
  t.nodes = c.masters;
  t.replicas = c.replicas_per_master;
}

ZooKeeperSpec read_zookeeper(const Obj& o) {
  ZooKeeperSpec z;
  z.servers = static_cast<int>(o.integer("servers", 1, 7, 3));
  z.tick_ms = o.integer("tick_ms", 1, kMaxMs, z.tick_ms);
  z.session_timeout_ms = o.integer("session_timeout_ms", 1, kMaxMs, z.session_timeout_ms);
  return z;
}

MysqlSpec read_mysql(const Obj& o) {
  MysqlSpec m;
  m.enabled = true;
  m.wait_timeout_s = o.integer("wait_timeout_s", 1, 31'536'000, m.wait_timeout_s);
  m.innodb_lock_wait_timeout_s = o.integer("innodb_lock_wait_timeout_s", 1, 1'073'741'824, m.innodb_lock_wait_timeout_s);
  return m;
}

TopologySpec read_topology(const Obj& top) {
  TopologySpec t;
  const json* v = top.find("topology");
  if (!v) return t;
  Obj o(*v, top.at("topology"), keys_of("$.topology"));
  t.nodes = static_cast<int>(o.integer("nodes", 1, 9, t.nodes));
  t.replicas = static_cast<int>(o.integer("replicas", 0, 4, t.replicas));
  t.persistence = *persistence_named(o.choice("persistence", persistence_names(), to_string(t.persistence)));
  t.replication_lag_ms = o.integer("replication_lag_ms", 0, kMaxMs, t.replication_lag_ms);
  t.down_after_ms = o.integer("down_after_ms", 0, kMaxMs, t.down_after_ms);
  t.min_replicas_to_write = static_cast<int>(o.integer("min_replicas_to_write", 0, 4, t.min_replicas_to_write));
  t.sentinels = static_cast<int>(o.integer("sentinels", 0, 5, t.sentinels));
  t.maxmemory_bytes = o.integer("maxmemory_bytes", 0, int64_t{1} << 40, t.maxmemory_bytes);
  t.maxmemory_policy =
      *eviction_policy_named(o.choice("maxmemory_policy", eviction_policy_names(), to_string(t.maxmemory_policy)));
  t.maxmemory_samples = static_cast<int>(o.integer("maxmemory_samples", 1, 64, t.maxmemory_samples));
  if (const json* c = o.find("cluster")) read_cluster(Obj(*c, o.at("cluster"), keys_of("$.topology.cluster")), o, t);
  if (const json* z = o.find("zookeeper")) t.zookeeper = read_zookeeper(Obj(*z, o.at("zookeeper"), keys_of("$.topology.zookeeper")));
  if (const json* m = o.find("mysql")) t.mysql = read_mysql(Obj(*m, o.at("mysql"), keys_of("$.topology.mysql")));
  // A Sentinel with nothing to promote, or without a down-after, could only watch.
  if (t.sentinels > 0 && t.replicas == 0)
    fail(o.at("sentinels"), "0 while topology.replicas is 0 (Sentinel needs a replica to promote)",
         describe(*o.find("sentinels")));
  if (t.sentinels > 0 && t.down_after_ms == 0)
    fail(o.at("sentinels"), "0 unless topology.down_after_ms is set (it is Sentinel's down-after-milliseconds)",
         describe(*o.find("sentinels")));
  return t;
}

LatencySpec read_latency(const Obj& network) {
  LatencySpec l;
  const json* v = network.find("latency");
  if (!v) return l;
  Obj o(*v, network.at("latency"), keys_of("$.network.latency"));
  std::string dist = o.choice("dist", kinds_of(latency_shapes()), std::nullopt);
  o.only(union_keys("dist", {shape_of(latency_shapes(), dist)}), "a " + dist + " latency");
  const std::string ms = "a number of milliseconds from 0 to 1000000000";
  auto millis = [&](const std::string& key) { return o.number(key, 0, kMaxMs, ms, std::nullopt); };
  if (dist == "constant") {
    l.kind = LatencySpec::Kind::Constant;
    l.ms = millis("ms");
  } else if (dist == "uniform") {
    l.kind = LatencySpec::Kind::Uniform;
    l.min_ms = millis("min_ms");
    l.max_ms = millis("max_ms");
    if (l.max_ms < l.min_ms)
      fail(o.at("max_ms"), "a number at least min_ms (" + describe(*o.find("min_ms")) + ")", describe(*o.find("max_ms")));
  } else if (dist == "normal") {
    l.kind = LatencySpec::Kind::Normal;
    l.mean_ms = millis("mean_ms");
    l.stddev_ms = millis("stddev_ms");
  } else {
    l.kind = LatencySpec::Kind::LongTail;
    l.ms = millis("ms");
    l.tail_ms = millis("tail_ms");
    l.tail_probability = o.number("tail_probability", 0, 1, "a probability from 0 to 1", std::nullopt);
  }
  return l;
}

NetworkSpec read_network(const Obj& top) {
  NetworkSpec n;
  const json* v = top.find("network");
  if (!v) return n;
  Obj o(*v, top.at("network"), keys_of("$.network"));
  n.latency = read_latency(o);
  // Loss 1 would cut every link for the whole run: no experiment left to observe.
  n.loss = o.number("loss", 0, std::nextafter(1.0, 0.0), "a probability from 0 up to (not including) 1", n.loss);
  return n;
}

RetrySpec read_retry(const Obj& lock) {
  RetrySpec r;
  const json* v = lock.find("retry");
  if (!v) return r;
  Obj o(*v, lock.at("retry"), keys_of("$.lock.retry"));
  r.count_max = static_cast<int>(o.integer("count_max", 0, 1'000'000, r.count_max));
  r.delay_ms = o.integer("delay_ms", 0, kMaxMs, r.delay_ms);
  r.jitter_ms = o.integer("jitter_ms", 0, kMaxMs, r.jitter_ms);
  return r;
}

LockSpec read_lock(const Obj& top, bool external) {
  LockSpec l;
  Obj o(top.need("lock", "an object with at least an algorithm"), top.at("lock"), keys_of("$.lock"));
  // "profile" is the older spelling of "algorithm" for a library's lock: one field names
  // any lock of the registry.
  if (o.find("profile") && o.find("algorithm"))
    fail(o.at("profile"), "no profile beside lock.algorithm (both name the lock; write it once)", "a second name");
  const std::string field = o.find("profile") ? "profile" : "algorithm";
  if (!external) {
    const json* n = o.find(field);
    const LockInfo* info = n && n->is_string() ? find_lock(n->get<std::string>()) : nullptr;
    if (field == "profile" || (info && info->library_options())) return read_profile_lock(o, field);
  }
  const std::string expected = "one of the algorithms " + join(algorithm_names());
  if (external) {
    l.algorithm = o.string("algorithm", "external");  // the program's lock, by any name
  } else {
    const json& alg = o.need(field, expected);
    if (!alg.is_string()) fail(o.at(field), expected, describe(alg));
    l.algorithm = alg.get<std::string>();
    if (!is_algorithm(l.algorithm))
      fail(o.at(field), expected + did_you_mean(l.algorithm, lock_names()), describe(alg));
  }
  l.key = o.string("key", l.key);
  if (const json* keys = o.find("keys")) {
    const std::string expected = "a non-empty array of keys or globs (the keys your program's lock writes)";
    if (!external) fail(o.at("keys"), "no keys (lockstep's own locks use lock.key)", describe(*keys));
    if (!keys->is_array() || keys->empty()) fail(o.at("keys"), expected, describe(*keys));
    for (size_t i = 0; i < keys->size(); ++i) {
      const json& k = (*keys)[i];
      if (!k.is_string() || k.get<std::string>().empty()) fail(child(o.at("keys"), i), "a non-empty string", describe(k));
      l.keys.push_back(k.get<std::string>());
    }
  }
  l.lease_ms = o.integer("lease_ms", 1, kMaxMs, l.lease_ms);
  l.retry = read_retry(o);
  l.command_timeout_ms = o.integer("command_timeout_ms", 1, kMaxMs, l.command_timeout_ms);
  if (const json* opts = o.find("options")) {
    // An external program has its own settings; lockstep passes it none.
    if (external && !(opts->is_object() && opts->empty()))
      fail(o.at("options"), "no options for an external workload's lock (your program configures its own lock)",
           describe(*opts));
    // A registered algorithm without an option table takes whatever object it is given.
    if (const AlgorithmInfo* info = find_algorithm(l.algorithm); !external && info && info->options)
      check_lock_options(*info->options, l.algorithm, *opts, o.at("options"));
    else if (!opts->is_object())
      fail(o.at("options"), "an object", describe(*opts));
    l.options = *opts;
  }
  return l;
}

// An external workload's program: a non-empty argv of non-empty strings.
std::vector<std::string> read_command(const Obj& o) {
  const std::string expected = "a non-empty array of strings: the program and its arguments";
  const json& arr = o.array("command", expected);
  if (arr.empty()) fail(o.at("command"), expected, "an empty array");
  std::vector<std::string> out;
  for (size_t i = 0; i < arr.size(); ++i) {
    if (!arr[i].is_string() || arr[i].get<std::string>().empty())
      fail(child(o.at("command"), i), "a non-empty string", describe(arr[i]));
    out.push_back(arr[i].get<std::string>());
  }
  return out;
}

CacheSpec read_cache(const Obj& o) {
  CacheSpec c;
  c.writers = static_cast<int>(o.integer("writers", 0, 16, c.writers));
  c.node = static_cast<int>(o.integer("node", 1, 9, c.node));
  c.keys = static_cast<int>(o.integer("keys", 1, 1'000'000, c.keys));
  c.value_bytes = o.integer("value_bytes", 1, 64 << 20, c.value_bytes);
  c.ttl_fraction = o.number("ttl_fraction", 0.0, 1.0, "a number from 0 to 1", c.ttl_fraction);
  c.ttl_ms = o.integer("ttl_ms", 1, kMaxMs, c.ttl_ms);
  c.rate_per_s = o.integer("rate_per_s", 1, 100'000, c.rate_per_s);
  c.start_ms = o.integer("start_ms", 0, kMaxMs, c.start_ms);
  c.writes = o.integer("writes", 0, 100'000'000, c.writes);
  return c;
}

const std::vector<std::string> kAfterWrite = {"delete", "overwrite"};
const std::vector<std::string> kCacheAsideLocks = {"none", "read-write"};

CacheAsideSpec read_cache_aside(const Obj& o, const LockSpec& lock) {
  CacheAsideSpec c;
  c.writers = static_cast<int>(o.integer("writers", 0, 1000, c.writers));
  c.readers = static_cast<int>(o.integer("readers", 0, 1000, c.readers));
  if (!c.enabled()) fail(o.at("writers"), "at least one writer or reader", "0 writers and 0 readers");
  c.keys = static_cast<int>(o.integer("keys", 1, 100'000, c.keys));
  c.ops = static_cast<int>(o.integer("ops", 1, 1'000'000, c.ops));
  c.after_write = o.choice("after_write", kAfterWrite, c.after_write);
  c.ttl_ms = o.integer("ttl_ms", 1, kMaxMs, c.ttl_ms);
  c.max_stale_ms = o.integer("max_stale_ms", 0, kMaxMs, c.max_stale_ms);
  c.cache_node = static_cast<int>(o.integer("cache_node", 1, 9, c.cache_node));
  c.db_node = static_cast<int>(o.integer("db_node", 1, 9, c.db_node));
  if (c.db_node == c.cache_node) fail(o.at("db_node"), "a node other than cache_node", std::to_string(c.db_node));
  c.lock = o.choice("lock", kCacheAsideLocks, c.lock);
  if (c.lock == "read-write" && !is_read_write_algorithm(lock.algorithm))
    fail(o.at("lock"), "\"none\" (lock algorithm " + quote(lock.algorithm) + " has no read side; redisson-rw has)",
         "\"read-write\"");
  c.writer_start_ms = o.integer("writer_start_ms", 0, kMaxMs, c.writer_start_ms);
  c.reader_start_ms = o.integer("reader_start_ms", 0, kMaxMs, c.reader_start_ms);
  c.op_interval_ms = o.integer("op_interval_ms", 0, kMaxMs, c.op_interval_ms);
  return c;
}

WorkloadSpec read_workload(const Obj& top, const LockSpec& lock, const std::string& file) {
  WorkloadSpec w;
  const json* v = top.find("workload");
  if (!v) return w;
  Obj o(*v, top.at("workload"), keys_of("$.workload"));
  w.kind = o.choice("kind", kWorkloadKinds, w.kind);
  if (w.external()) {
    w.command = read_command(o);
    w.command_dir = file.empty() ? "" : std::filesystem::path(file).parent_path().string();
    for (const char* key : {"fencing", "readers"})
      if (const json* v = o.find(key))
        fail(o.at(key), std::string("no ") + key + " in an external workload (the program reports what its store did)",
             describe(*v));
  } else if (const json* c = o.find("command")) {
    fail(o.at("command"), "no command in a stock workload (kind \"external\" runs one)", describe(*c));
  }
  w.clients = static_cast<int>(o.integer("clients", 1, 1000, w.clients));
  w.initial_stock = o.integer("initial_stock", 0, kMaxMs, w.initial_stock);
  w.attempts_per_client = static_cast<int>(o.integer("attempts_per_client", 1, 1'000'000, w.attempts_per_client));
  w.hold_ms = o.integer("hold_ms", 0, kMaxMs, w.hold_ms);
  w.wait_ms = o.integer("wait_ms", 0, kMaxMs, w.wait_ms);
  w.start_stagger_ms = o.integer("start_stagger_ms", 0, kMaxMs, w.start_stagger_ms);
  w.start_after_hold = o.boolean("start_after_hold", w.start_after_hold);
  // The built-in workloads start on time in both worlds; only a program's start-up is slow.
  if (w.start_after_hold && !w.external())
    fail(o.at("start_after_hold"), "false (only an external workload's programs start after a hold)", "true");
  w.stock_key = o.string("stock_key", w.stock_key);
  w.fencing = o.boolean("fencing", w.fencing);
  // A fencing store without tokens would check nothing: the run would look fenced and
  // be exactly the unfenced one.
  if (w.fencing && !lock_hands_out_tokens(lock)) {
    const std::string name = lock.library() ? "library profile " + quote(lock.algorithm)
                                            : "lock algorithm " + quote(lock.algorithm);
    fail(o.at("fencing"), "false (" + name + " hands out no fencing token; redisson-fenced does)", "true");
  }
  w.readers = static_cast<int>(o.integer("readers", 0, w.clients, w.readers));
  if (w.readers > 0 && !is_read_write_algorithm(lock.algorithm))
    fail(o.at("readers"), "0 (lock algorithm " + quote(lock.algorithm) + " has no read side; redisson-rw has)",
         std::to_string(w.readers));
  // Sharing the key would make the stock update clobber the lock itself.
  if (w.stock_key == lock.key) fail(o.at("stock_key"), "a key other than lock.key", quote(w.stock_key));
  w.extend_every_ms = o.integer("extend_every_ms", 0, kMaxMs, w.extend_every_ms);
  w.reentrant_hold_ms = o.integer("reentrant_hold_ms", 0, kMaxMs, w.reentrant_hold_ms);
  w.hold_for_validity = o.boolean("hold_for_validity", w.hold_for_validity);
  w.retry_until_wait = o.boolean("retry_until_wait", w.retry_until_wait);
  check_profile_workload(o, lock, w);
  if (const json* c = o.find("cache")) {
    if (w.external())
      fail(o.at("cache"), "no cache in an external workload (lockstep starts only your program)", describe(*c));
    w.cache = read_cache(Obj(*c, o.at("cache"), keys_of("$.workload.cache")));
  }
  if (const json* c = o.find("cache_aside")) {
    if (w.external())
      fail(o.at("cache_aside"), "no cache_aside in an external workload (lockstep starts only your program)",
           describe(*c));
    w.cache_aside = read_cache_aside(Obj(*c, o.at("cache_aside"), keys_of("$.workload.cache_aside")), lock);
    // The clients are the writers and the readers: "clients" may say so, or be left out.
    const int n = w.cache_aside.writers + w.cache_aside.readers;
    if (o.find("clients") && w.clients != n)
      fail(o.at("clients"), "the cache_aside writers plus readers, " + std::to_string(n) + " (or leave it out)",
           std::to_string(w.clients));
    w.clients = n;
    if (w.readers > 0) fail(o.at("readers"), "0 (cache_aside has its own readers)", std::to_string(w.readers));
  }
  return w;
}

std::vector<ClockSpec> read_clocks(const Obj& top, const Processes& procs) {
  std::vector<ClockSpec> out;
  if (!top.find("clocks")) return out;
  const json& arr = top.array("clocks", "an array of clock objects");
  for (size_t i = 0; i < arr.size(); ++i) {
    Obj o(arr[i], child(top.at("clocks"), i), keys_of("$.clocks[]"));
    ClockSpec c;
    const json& p = o.need("process", "a process name (client-N, node-N or node-N-replica-M)");
    procs.check(p, o.at("process"));
    c.process = p.get<std::string>();
    for (const auto& earlier : out)
      if (earlier.process == c.process) fail(o.at("process"), "a process without an earlier clock entry", describe(p));
    c.offset_ms = o.integer("offset_ms", -kMaxMs, kMaxMs, c.offset_ms);
    c.drift_ppm = o.number("drift_ppm", -kMaxDriftPpm, kMaxDriftPpm, "a number from -100000 to 100000", c.drift_ppm);
    out.push_back(c);
  }
  return out;
}

std::vector<std::vector<std::string>> read_groups(const Obj& o, const Processes& procs) {
  const std::string expected = "two non-empty arrays of process names";
  const json& arr = o.array("groups", expected);
  if (arr.size() != 2)
    fail(o.at("groups"), expected, "an array of " + std::to_string(arr.size()) + (arr.size() == 1 ? " group" : " groups"));
  std::vector<std::vector<std::string>> out;
  for (size_t g = 0; g < arr.size(); ++g) {
    std::string gpath = child(o.at("groups"), g);
    if (!arr[g].is_array() || arr[g].empty()) fail(gpath, "a non-empty array of process names", describe(arr[g]));
    out.emplace_back();
    for (size_t i = 0; i < arr[g].size(); ++i) {
      procs.check(arr[g][i], child(gpath, i));
      std::string name = arr[g][i].get<std::string>();
      bool seen = contains(out[0], name) || (g == 1 && contains(out[1], name));
      if (seen) fail(child(gpath, i), "a process not already in a group", describe(arr[g][i]));
      out[g].push_back(name);
    }
  }
  return out;
}

FaultTrigger read_trigger(const Obj& fault, const Processes& procs) {
  Obj o(*fault.find("on"), fault.at("on"), keys_of("$.faults[].on"));
  FaultTrigger t;
  const json& p = o.need("process", "a process name (client-N or node-N)");
  procs.check(p, o.at("process"));
  t.process = p.get<std::string>();
  const auto& events = trigger_event_names();
  std::vector<std::string> given;
  for (const auto& e : events) {
    if (o.find(e)) given.push_back(e);
  }
  if (given.size() != 1)
    fail(o.at(given.empty() ? "process" : given[1]), "exactly one event: one of " + join(events),
         given.empty() ? "none" : join(given));
  const std::string& event = given[0];
  t.event = static_cast<FaultTrigger::Event>(std::find(events.begin(), events.end(), event) - events.begin());
  using E = FaultTrigger::Event;
  const bool on_node = t.event == E::Sets || t.event == E::Deletes;
  const bool command = t.event == E::Sends || t.event == E::Receives;
  if (on_node != (t.process.rfind("node-", 0) == 0))
    fail(o.at("process"), on_node ? "a node (node-N) for " + event : "a client (client-N) for " + event, quote(t.process));
  if (t.event == E::Enters || t.event == E::Leaves) {
    t.what = o.choice(event, {"critical-section"}, std::nullopt);
  } else {
    t.what = o.string(event, "");
    if (t.what.empty()) fail(o.at(event), command ? "a command name" : "a key", "nothing");
  }
  if (o.find("key") && !command) fail(o.at("key"), "no key for " + event + " (it names its key itself)", "a key");
  t.key = o.string("key", "");
  t.nth = static_cast<int>(o.integer("nth", 1, 1'000'000, 1));
  t.delay_ms = o.integer("delay_ms", 0, kMaxMs, 0);
  return t;
}

FaultSpec read_fault(const json& j, const std::string& path, int64_t run_ms, const Processes& procs) {
  Obj o(j, path, keys_of("$.faults[]"));
  FaultSpec f;
  const std::string kind = o.choice("kind", fault_kind_names(), std::nullopt);
  f.kind = *fault_kind_named(kind);
  const auto& keys = kind_info(f.kind).keys;
  o.only(union_keys("kind", {shape_of(fault_shapes(), kind)}), "a " + kind + " fault");
  if (contains(keys, "target")) {
    const json& t = o.need("target", "a process name (client-N, node-N or node-N-replica-M)");
    procs.check(t, o.at("target"), kind_info(f.kind).target == FaultTarget::Master);
    f.target = t.get<std::string>();
  }
  if (contains(keys, "groups")) f.groups = read_groups(o, procs);
  if (o.find("on")) {
    if (o.find("at_ms")) fail(o.at("at_ms"), "either at_ms or on, not both", describe(*o.find("at_ms")));
    f.on = read_trigger(o, procs);
  } else if (o.find("at_ms")) {
    f.at_ms = o.integer("at_ms", 0, kMaxMs, std::nullopt);
  } else {
    fail(o.at("at_ms"), "a start time in ms, or an event to wait for (on)", "nothing");
  }
  if (f.at_ms >= run_ms) fail(o.at("at_ms"), "a time before duration_ms (" + std::to_string(run_ms) + ")", std::to_string(f.at_ms));
  if (contains(keys, "duration_ms")) f.duration_ms = o.integer("duration_ms", 1, kMaxMs, std::nullopt);
  if (const json* r = o.find("restart_after_ms")) f.restart_after_ms = read_int(*r, o.at("restart_after_ms"), 0, kMaxMs);
  if (contains(keys, "jump_ms")) f.jump_ms = o.integer("jump_ms", -kMaxMs, kMaxMs, std::nullopt);
  if (contains(keys, "drift_ppm"))
    f.drift_ppm = o.number("drift_ppm", -kMaxDriftPpm, kMaxDriftPpm, "a number from -100000 to 100000", std::nullopt);
  if (contains(keys, "delay_ms")) f.delay_ms = o.integer("delay_ms", 0, kMaxMs, std::nullopt);
  if (contains(keys, "jitter_ms")) f.jitter_ms = o.integer("jitter_ms", 0, kMaxMs, std::nullopt);
  f.one_way = o.boolean("one_way", false);
  return f;
}

void check_failover_possible(const FaultSpec& f, const std::string& path, int replicas) {
  if (kind_info(f.kind).target == FaultTarget::Master && replicas == 0)
    fail(path + ".target", "a master with replicas to fail over to (topology.replicas is 0)", quote(f.target));
}

std::vector<FaultSpec> read_faults(const Obj& top, int64_t run_ms, const Processes& procs, int replicas) {
  std::vector<FaultSpec> out;
  if (!top.find("faults")) return out;
  const json& arr = top.array("faults", "an array of fault objects");
  for (size_t i = 0; i < arr.size(); ++i) {
    std::string path = child(top.at("faults"), i);
    out.push_back(read_fault(arr[i], path, run_ms, procs));
    check_failover_possible(out.back(), path, replicas);
  }
  return out;
}

reports::Expectation read_expect(const Obj& top) {
  // Required so that "expected safe" is always a statement, never an omission.
  const std::string example = "an object such as {\"violations\": []}";
  Obj o(top.need("expect", example), top.at("expect"), keys_of("$.expect"));
  int forms = 0;
  for (const char* k : {"violations", "exactly", "verdict"}) forms += o.find(k) ? 1 : 0;
  if (forms != 1) {
    fail(top.at("expect"),
         "exactly one of \"violations\" (at least these), \"exactly\" (this set and no other) or \"verdict\"",
         forms == 0 ? "none of them" : std::to_string(forms) + " of them");
  }
  if (o.find("verdict")) {
    const std::string v = o.choice("verdict", {"safe", "violation", "unknown"}, std::nullopt);
    if (v == "unknown") return reports::Expectation::unknown();
    return v == "safe" ? reports::Expectation::safe() : reports::Expectation::at_least({});
  }
  // A list of at-least names may name a severity class ("two-holders": some violation of
  // that class); an exact list names properties only, since classes overlap them.
  const bool exact = o.find("exactly") != nullptr;
  const std::string key = exact ? "exactly" : "violations";
  std::vector<std::string> names = property_names();
  if (!exact) {
    for (const auto& c : checker::severity_names()) names.push_back(c);
  }
  const std::string expected =
      exact ? "an array of property names (" + join(property_names()) + ")"
            : "an array of property names (" + join(property_names()) + ") or severity classes (" +
                  join(checker::severity_names()) + ")";
  const json& arr = o.array(key, expected);
  std::set<std::string> out;
  for (size_t i = 0; i < arr.size(); ++i) {
    std::string path = child(o.at(key), i);
    if (!out.insert(read_choice(arr[i], path, names)).second) fail(path, "a name not listed before", describe(arr[i]));
  }
  if (out.empty()) return reports::Expectation::safe();
  return exact ? reports::Expectation::exactly(std::move(out)) : reports::Expectation::at_least(std::move(out));
}

void read_checks(const Obj& top, Scenario& s) {
  const json* v = top.find("checks");
  if (!v) return;
  Obj o(*v, top.at("checks"), keys_of("$.checks"));
  s.deadlock_bound_ms = o.integer("deadlock_bound_ms", 1, kMaxMs, s.deadlock_bound_ms);
  if (o.find("fairness")) s.check_fairness = o.boolean("fairness", false);
}

// A lock of another service than Redis needs that service in the topology.
void check_services(const Obj& top, const Scenario& s) {
  const bool zookeeper = s.topology.zookeeper.servers > 0, mysql = s.topology.mysql.enabled;
  if (const LockInfo* info = find_lock(s.lock.algorithm); info && info->service != LockService::Redis) {
    const bool present = info->service == LockService::ZooKeeper ? zookeeper : mysql;
    const std::string needs = info->service == LockService::ZooKeeper ? "a ZooKeeper ensemble" : "a MySQL server";
    if (!present)
      fail(top.at("lock") + ".algorithm", "a lock of the topology's services (" + s.lock.algorithm + " needs " + needs +
           ": topology." + topology_field(info->service) + ")", quote(s.lock.algorithm));
  }
  if (mysql && s.topology.cluster_enabled())
    fail(child(top.at("topology"), "mysql"), "no topology.mysql with topology.cluster", "topology.mysql");
}

Scenario read_scenario(const json& j, const std::string& file) {
  Obj top(j, "$", keys_of("$"));
  Scenario s;
  s.file = file;
  // An empty name is allowed: it is what a scenario read from a string gets by default,
  // and to_json must be able to write that scenario back.
  s.name = top.string("name", default_name(file), false);
  s.description = top.string("description", "", false);
  if (const json* seed = top.find("seed")) {
    if (!seed->is_number_integer() || !seed->is_number_unsigned()) fail(top.at("seed"), "a non-negative integer", describe(*seed));
    s.seed = seed->get<uint64_t>();
  }
  s.duration_ms = top.integer("duration_ms", 1, kMaxMs, s.duration_ms);
  const bool external = external_workload(top);
  s.worlds = read_worlds(top, external);
  s.topology = read_topology(top);
  if (s.topology.cluster_enabled() && external)
    fail(top.at("topology"), "no topology.cluster with an external workload (its programs reach each node by address, not as cluster clients)",
         "topology.cluster");
  s.network = read_network(top);
  s.lock = read_lock(top, external);
  check_services(top, s);
  s.workload = read_workload(top, s.lock, file);
  if (s.workload.cache.node > s.topology.nodes)
    fail("$.workload.cache.node", int_expected(1, s.topology.nodes, false), std::to_string(s.workload.cache.node));
  if (s.workload.cache_aside.enabled()) {
    const CacheAsideSpec& c = s.workload.cache_aside;
    // A cluster client reaches every node through one connection, so "the database's node"
    // would be whichever master serves its slot: not a database beside the cache.
    if (s.topology.cluster_enabled())
      fail("$.workload.cache_aside", "no cache_aside with topology.cluster (the cache and the database are single nodes)",
           "a cache_aside workload");
    if (c.cache_node > s.topology.nodes)
      fail("$.workload.cache_aside.cache_node", int_expected(1, s.topology.nodes, false), std::to_string(c.cache_node));
    if (c.db_node > s.topology.nodes)
      fail("$.workload.cache_aside.db_node", int_expected(1, s.topology.nodes, false) + " (topology.nodes counts the database)",
           std::to_string(c.db_node));
  }
  Processes procs(s.workload.clients, s.topology.nodes, s.topology.replicas, s.topology.zookeeper.servers,
                  s.topology.mysql.enabled);
  s.clocks = read_clocks(top, procs);
  s.faults = read_faults(top, s.duration_ms, procs, s.topology.replicas);
  if (s.topology.cluster_enabled()) {
    // Live, the cluster bus passes the fault proxy, so a delay or jitter of a member
    // reaches the others' failure detection; a cut would hold the bus's bytes in the
    // proxy, which a real cluster's failure detection was not checked against.
    const bool partition = std::any_of(s.faults.begin(), s.faults.end(),
                                       [](const FaultSpec& f) { return f.kind == FaultKind::Partition; });
    for (size_t i = 0; i < s.worlds.size(); ++i) {
      if (s.worlds[i] == World::Live && partition)
        fail(child(top.at("worlds"), i),
             "\"sim\" only (" + live::live_capabilities(true).why_not(Capability::ClusterPartition) + ")", "\"live\"");
    }
  }
  s.expect = read_expect(top);
  read_checks(top, s);
  return s;
}

bool blank(const std::string& text) {
  return std::all_of(text.begin(), text.end(), [](char c) { return std::isspace(static_cast<unsigned char>(c)); });
}

// "syntax error at line 3, column 7: while parsing object - ..." from nlohmann's
// "[json.exception.parse_error.101] parse error at line 3, column 7: syntax error while ...".
std::string syntax_error(const json::parse_error& e) {
  std::string what = e.what();
  std::string detail = what;
  if (auto col = what.find(", column "); col != std::string::npos) {
    if (auto colon = what.find(": ", col); colon != std::string::npos) detail = what.substr(colon + 2);
  }
  constexpr std::string_view kPrefix = "syntax error ";
  if (detail.starts_with(kPrefix)) detail = detail.substr(kPrefix.size());
  auto line_start = what.find("at line ");
  auto colon = what.find(": ", line_start == std::string::npos ? 0 : line_start);
  std::string where = (line_start != std::string::npos && colon != std::string::npos)
                          ? what.substr(line_start, colon - line_start)
                          : "at byte " + std::to_string(e.byte);
  return "syntax error " + where + ": " + detail;
}

// Messages must stay on one line of UTF-8 whatever the input held: a syntax error
// quotes the bytes it stopped at, and a report that prints the message may be JSON.
std::string one_line(std::string s) {
  std::replace_if(s.begin(), s.end(), [](char c) { return c == '\n' || c == '\r'; }, ' ');
  return printable_utf8(s);
}

}  // namespace

std::string lock_in_use(const Scenario& s) {
  const CacheAsideSpec& c = s.workload.cache_aside;
  return c.enabled() && c.lock == "none" ? "none" : s.lock.algorithm;
}

Scenario with_external_client(const Scenario& s, const std::vector<std::string>& command, const std::string& directory) {
  Scenario out = s;
  out.worlds = {World::Live};
  out.lock.algorithm = "external";
  out.workload.kind = "external";
  out.workload.command = command;
  out.workload.command_dir = directory;
  out.workload.fencing = false;  // the program's store is its own business
  out.workload.readers = 0;
  return out;
}

bool lock_promises_arrival_order(const LockSpec& lock) {
  const LockInfo* info = lock.info();
  return info && lock_is_fair(*info, lock.options);
}

bool lock_hands_out_tokens(const LockSpec& lock) {
  const LockInfo* info = lock.info();
  return info && info->fencing_tokens;
}

const std::vector<std::string>& property_names() {
  static const std::vector<std::string> kNames = checker::property_names();
  return kNames;
}

const std::vector<std::pair<std::string, std::vector<std::string>>>& scenario_keys() {
  static const std::vector<std::pair<std::string, std::vector<std::string>>> kKeys = {
      {"$",
       {"name", "description", "seed", "duration_ms", "worlds", "topology", "network", "clocks", "lock", "workload",
        "faults", "expect", "checks"}},
      {"$.topology", {"nodes", "replicas", "persistence", "replication_lag_ms", "down_after_ms",
                      "min_replicas_to_write", "sentinels", "maxmemory_bytes", "maxmemory_policy",
                      "maxmemory_samples", "cluster", "zookeeper", "mysql"}},
      {"$.topology.zookeeper", {"servers", "tick_ms", "session_timeout_ms"}},
      {"$.topology.mysql", {"wait_timeout_s", "innodb_lock_wait_timeout_s"}},
      {"$.topology.cluster", {"masters", "replicas_per_master", "node_timeout_ms"}},
      {"$.network", {"latency", "loss"}},
      {"$.network.latency", union_keys("dist", latency_shapes())},
      {"$.clocks[]", {"process", "offset_ms", "drift_ppm"}},
      {"$.lock", {"algorithm", "profile", "key", "keys", "lease_ms", "retry", "command_timeout_ms", "options"}},
      {"$.lock.retry", {"count_max", "delay_ms", "jitter_ms"}},
      {"$.workload",
       {"kind", "clients", "initial_stock", "attempts_per_client", "hold_ms", "wait_ms", "start_stagger_ms",
         "start_after_hold", "stock_key", "fencing", "readers", "extend_every_ms", "reentrant_hold_ms", "hold_for_validity", "retry_until_wait", "command", "cache", "cache_aside"}},
      {"$.workload.cache",
       {"writers", "node", "keys", "value_bytes", "ttl_fraction", "ttl_ms", "rate_per_s", "start_ms", "writes"}},
      {"$.workload.cache_aside",
       {"writers", "readers", "keys", "ops", "after_write", "ttl_ms", "max_stale_ms", "cache_node", "db_node", "lock",
        "writer_start_ms", "reader_start_ms", "op_interval_ms"}},
      {"$.faults[]", union_keys("kind", fault_shapes())},
      {"$.faults[].on", [] {
         std::vector<std::string> keys = {"process"};
         for (const auto& e : trigger_event_names()) keys.push_back(e);
         keys.insert(keys.end(), {"key", "nth", "delay_ms"});
         return keys;
       }()},
      {"$.expect", {"violations", "exactly", "verdict"}},
      {"$.checks", {"deadlock_bound_ms", "fairness"}},
  };
  return kKeys;
}

std::string ScenarioError::message() const {
  return one_line(file + ": " + path + ": expected " + expected + ", found " + found);
}

ScenarioResult parse_scenario(const std::string& text, const std::string& file) {
  try {
    if (blank(text)) return ScenarioError{file, "$", "a JSON object", "an empty file"};
    json j;
    try {
      j = json::parse(text);
    } catch (const json::parse_error& e) {
      return ScenarioError{file, "$", "valid JSON", syntax_error(e)};
    } catch (const json::exception& e) {
      return ScenarioError{file, "$", "valid JSON", e.what()};
    }
    return read_scenario(j, file);
  } catch (const Failure& f) {
    return ScenarioError{file, f.path, f.expected, f.found};
  } catch (const std::exception& e) {
    return ScenarioError{file, "$", "a readable scenario", std::string("an internal error: ") + e.what()};
  } catch (...) {
    return ScenarioError{file, "$", "a readable scenario", "an unknown internal error"};
  }
}

ScenarioResult load_scenario_file(const std::string& path) {
  try {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) return ScenarioError{path, "$", "a readable file", std::string("cannot read file: ") + std::strerror(errno)};
    std::string text;
    char buf[1 << 16];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
    int err = std::ferror(f) ? errno : 0;
    std::fclose(f);
    if (err) return ScenarioError{path, "$", "a readable file", std::string("cannot read file: ") + std::strerror(err)};
    return parse_scenario(text, path);
  } catch (...) {
    return ScenarioError{path, "$", "a readable file", "cannot read file: out of memory"};
  }
}

}  // namespace lockstep::runner
