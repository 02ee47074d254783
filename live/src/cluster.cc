#include "lockstep/live/cluster.h"

#include <cstdlib>
#include <deque>
#include <fstream>
#include <sstream>

#include "lockstep/cluster_client.h"
#include "lockstep/cluster_slot.h"

namespace lockstep::live {
namespace {

// Bounds on setting up replication and Sentinel before the clients start.
constexpr Nanos kSetupLimit = Millis(15000);
// The name the fault proxy gives whoever opens a link to a member's cluster bus.
constexpr const char* kClusterBus = "cluster-bus";
// How much later than sentinel-1 the other sentinels see a master down (start_sentinels).
constexpr int64_t kFollowerGraceMs = 1000;
// Sentinel's own timer periods, shortened (SENTINEL DEBUG) so that setting up takes well
// under a second and a failover about down_after_ms plus one or two seconds:
//  - info-period 200 (default 10 s): replicas are discovered through the master's INFO
//    and must have answered INFO recently to be promoted.
//  - publish-period 200 (default 2 s): sentinels find each other, and learn a new
//    configuration, from each other's hello messages.
//  - ping-period 250 (default 1 s): after +switch-master a sentinel reconnects to the
//    new master at most once per ping period while its down-after clock already runs, so
//    a period as long as a short down_after_ms would make it see the master it just
//    promoted as down. Sentinel promotes a replica only if its INFO is younger than five
//    ping periods and refreshes it every second once the master is down: 1.25 s suffices.
// ask-period stays at 1 s; Detection itself is untouched: down-after-milliseconds is the
// scenario's (see start_sentinels for who acts on it first).
const std::vector<std::string> kSentinelTimers = {"SENTINEL",       "DEBUG", "info-period", "200",
                                                  "publish-period", "200",   "ping-period", "250"};

std::string node_name(int n) { return "node-" + std::to_string(n + 1); }

// How many instances a SENTINEL replicas/sentinels reply lists with exactly these flags
// (no s_down, no disconnected) and, for replicas, whose own INFO the sentinel has read
// (it says the link to the master is ok): Sentinel promotes no other replica.
int healthy(RedisServer* sentinel, std::vector<std::string> argv, const std::string& flags, bool informed = false) {
  Reply r = sync_command(sentinel->address(), argv, Millis(500));
  if (r.type != Reply::Type::Array) return 0;
  int n = 0;
  for (const auto& instance : r.elements) {
    bool flags_match = false, link_ok = false;
    for (size_t i = 0; i + 1 < instance.elements.size(); i += 2) {
      const std::string& field = instance.elements[i].str;
      flags_match = flags_match || (field == "flags" && instance.elements[i + 1].str == flags);
      link_ok = link_ok || (field == "master-link-status" && instance.elements[i + 1].str == "ok");
    }
    if (flags_match && (link_ok || !informed)) ++n;
  }
  return n;
}

}  // namespace

Cluster::Cluster(LiveWorld& world) : world_(world), proxy_(world.loop(), world.seed()) {}

Cluster::~Cluster() {
  // The follower and the role watch run on the world's loop: they go before the servers.
  follower_.reset();
  if (role_timer_) world_.loop().cancel(role_timer_);
}

std::string Cluster::server_name(const NodeAddress& a) {
  if (RedisServer* sv = server_at(a)) return sv->config().name;
  return farm_ ? a.text() : "node-1";
}

std::string Cluster::use_server(const NodeAddress& address, const ClusterSpec& spec) {
  spec_ = spec;
  proxy_.set_latency(spec.latency);
  std::vector<std::string> ping{"PING"};
  Reply r = sync_command(address, ping, Millis(1000));
  if (r.type != Reply::Type::Status) return "cannot reach " + address.text() + ": " + to_short_text(r);
  world_.add_node(address);
  return seed();
}

std::string Cluster::start(const ClusterSpec& spec) {
  spec_ = spec;
  proxy_.set_latency(spec.latency);
  if (auto err = start_servers(); !err.empty()) return err;
  if (spec.mysql) {
    mysql_ = std::make_unique<MariaDbServer>();
    if (auto err = mysql_->start(*spec.mysql); !err.empty()) return "mysql-1: " + err;
    world_.set_mysql(mysql_->address());
  }
  if (cluster()) {
    if (auto err = form_cluster(); !err.empty()) return err;
  }
  if (auto err = seed(); !err.empty()) return err;
  if (auto err = await_replicas(); !err.empty()) return err;
  if (auto err = start_sentinels(); !err.empty()) return err;
  // Drift counts from the moment the clients may start.
  for (const auto& k : spec_.shifted_clocks) {
    if (k.drift_ppm != 0) drift_clock(k.server, k.drift_ppm);
  }
  return "";
}

ServerConfig Cluster::config(const std::string& name, std::optional<NodeAddress> replica_of) const {
  ServerConfig c;
  c.name = name;
  c.persistence = spec_.persistence;
  c.min_replicas_to_write = spec_.min_replicas_to_write;
  c.maxmemory_bytes = spec_.maxmemory_bytes;
  c.maxmemory_policy = spec_.maxmemory_policy;
  c.maxmemory_samples = spec_.maxmemory_samples;
  c.replica_of = std::move(replica_of);
  c.cluster_node_timeout_ms = spec_.cluster_node_timeout_ms;
  for (const auto& k : spec_.shifted_clocks) {
    if (k.server != name) continue;
    c.shifted_clock = true;
    c.initial_clock_offset = k.offset;
  }
  return c;
}

std::string Cluster::start_servers() {
  farm_ = std::make_unique<ServerFarm>();
  if (!farm_->error().empty()) return farm_->error();
  // A cluster member's own connections (its bus links, its replication) come from a
  // loopback address of its own, so the proxy knows whose they are.
  int members = 0;
  auto member_config = [&](const std::string& name) {
    ServerConfig c = config(name, std::nullopt);
    if (cluster()) {
      c.source_addr = "127.0.0." + std::to_string(2 + members++);
      proxy_.name_source(c.source_addr, name);
    }
    return c;
  };
  for (int i = 0; i < spec_.nodes; ++i) {
    RedisServer* master = farm_->start(member_config(node_name(i)));
    if (!master) return farm_->error();
    masters_.push_back(master);
    world_.add_node(master->address());
    for (int r = 1; r <= spec_.replicas; ++r) {
      // Replication goes through the proxy too: it holds the stream for the lag, and a
      // partition can cut a replica off its master.
      const std::string name = node_name(i) + "-replica-" + std::to_string(r);
      if (cluster()) {
        // CLUSTER REPLICATE makes it a replica once the cluster is formed.
        RedisServer* replica = farm_->start(member_config(name));
        if (!replica) return farm_->error();
        replicas_.push_back({i, replica});
        continue;
      }
      NodeAddress upstream;
      FaultProxy::LinkSpec link{name, node_name(i), i, master->address(), FaultProxy::Framing::Bytes,
                                Millis(spec_.replication_lag_ms)};
      if (auto err = proxy_.route(link, upstream); !err.empty()) return err;
      RedisServer* replica = farm_->start(config(name, upstream));
      if (!replica) return farm_->error();
      replicas_.push_back({i, replica});
    }
  }
  return "";
}

std::string Cluster::seed() {
  for (const auto& [key, value] : spec_.seed) {
    std::vector<std::string> set{"SET", key, value};
    Reply r = command(set, Millis(2000));
    if (!r.is_ok()) return "cannot seed " + key + ": " + to_short_text(r);
  }
  return "";
}

// Runs the loop (relays need it) until check() holds, asking at most every 20 ms.
bool Cluster::wait_for(const std::function<bool()>& check, Nanos limit) {
  Nanos next{0};
  return world_.loop().run_until(
      [&] {
        if (mono_clock() < next) return false;
        next = mono_clock() + Millis(20);
        return check();
      },
      limit);
}

// Replicas start in sync, as in the simulator: linked to their master and holding what
// was seeded there.
std::string Cluster::await_replicas() {
  for (const auto& [node, replica] : replicas_) {
    auto synced = [&, node = node, replica = replica] {
      std::vector<std::string> info{"INFO", "replication"};
      Reply r = sync_command(replica->address(), info, Millis(500));
      if (r.type != Reply::Type::Bulk || r.str.find("master_link_status:up") == std::string::npos) return false;
      if (cluster()) {
        // A cluster replica redirects reads to its master: it holds what was seeded once
        // it has applied everything its master has sent.
        auto offset = [](const Reply& info, const std::string& field) -> int64_t {
          const auto at = info.str.find(field + ":");
          return at == std::string::npos ? -1 : std::atoll(info.str.c_str() + at + field.size() + 1);
        };
        Reply m = sync_command(masters_[static_cast<size_t>(node)]->address(), info, Millis(500));
        const int64_t sent = offset(m, "master_repl_offset");
        return sent >= 0 && offset(r, "slave_repl_offset") >= sent;
      }
      bool holds_seed = false;
      for (const auto& kv : spec_.seed) holds_seed = holds_seed || seed_node(kv.first) == node;
      if (!holds_seed) return true;
      for (const auto& [key, value] : spec_.seed) {
        if (seed_node(key) != node) continue;
        std::vector<std::string> get{"GET", key};
        if (sync_command(replica->address(), get, Millis(500)) != Reply::bulk(value)) return false;
      }
      return true;
    };
    if (!wait_for(synced, kSetupLimit)) return replica->config().name + " did not sync with its master";
  }
  return "";
}

// Sentinels watch every master. The clients start only once each sentinel knows every
// replica and every other sentinel: a master lost before that could not be failed over.
//
// Sentinels that reach objective down in the same instant each vote for themselves, and
// a split vote blocks the next try for 2 * failover-timeout, which here is past the end
// of the run: the failover would not happen at all. So sentinel-1 is the one that acts
// after down_after_ms: its quorum is 1, and the others see the master down only
// kFollowerGraceMs later, so they are still waiting when its vote request arrives and
// vote for it (a sentinel votes for the first candidate of an epoch whatever it thinks
// of the master). Every sentinel reaches the servers directly, so they would all agree
// anyway; the others still vote, and still fail over if sentinel-1 cannot.
std::string Cluster::start_sentinels() {
  const int count = spec_.sentinels;
  if (count == 0) return "";
  std::vector<MonitoredMaster> monitors;
  std::vector<std::string> names;
  for (int n = 0; n < static_cast<int>(masters_.size()); ++n) {
    MonitoredMaster m;
    m.name = node_name(n);
    m.address = masters_[n]->address();
    m.quorum = count / 2 + 1;
    m.down_after_ms = spec_.down_after_ms + kFollowerGraceMs;
    // Sentinel rewires a replica that replicates through a lag relay to the master itself
    // once failover-timeout has passed (+fix-slave-config); past the end of the run, the
    // lag stays what the scenario says.
    m.failover_timeout_ms = spec_.run_ms + 10'000;
    monitors.push_back(m);
    names.push_back(m.name);
  }
  std::vector<NodeAddress> addresses;
  for (int k = 1; k <= count; ++k) {
    ServerConfig c;
    c.name = "sentinel-" + std::to_string(k);
    c.monitors = monitors;
    if (k == 1) {
      for (auto& m : c.monitors) {
        m.quorum = 1;
        m.down_after_ms = spec_.down_after_ms;
      }
    }
    RedisServer* sentinel = farm_->start(c);
    if (!sentinel) return farm_->error();
    Reply r = sync_command(sentinel->address(), kSentinelTimers, Millis(1000));
    sentinel_timers_ = r.is_ok() ? "shortened" : "defaults (" + to_short_text(r) + ")";
    sentinels_.push_back(sentinel);
    addresses.push_back(sentinel->address());
  }
  auto ready = [&] {
    for (auto* sentinel : sentinels_) {
      for (const auto& name : names) {
        if (healthy(sentinel, {"SENTINEL", "replicas", name}, "slave", true) < spec_.replicas) return false;
        if (healthy(sentinel, {"SENTINEL", "sentinels", name}, "sentinel") < count - 1) return false;
      }
    }
    return true;
  };
  if (!wait_for(ready, kSetupLimit)) return "the sentinels did not discover every replica and each other in time";
  follower_ = std::make_unique<SentinelFollower>(world_, names);
  follower_->on_switch = [this](int node, const NodeAddress& from, const NodeAddress& to) { switched(node, from, to); };
  if (auto err = follower_->follow(addresses); !err.empty()) return err;
  if (!wait_for([&] { return follower_->subscribed(); }, kSetupLimit))
    return "could not subscribe to the sentinels' +switch-master";
  return "";
}

// SIGSTOP/SIGCONT, and the replication the server had sent into a lag stops with it.
void Cluster::pause(const std::string& name, bool paused) {
  if (mysql_ && name == kMysqlName) {
    paused ? mysql_->pause() : mysql_->resume();
    proxy_.hold_from(name, paused);
    return;
  }
  RedisServer* sv = server(name);
  if (!sv) return;
  paused ? sv->pause() : sv->resume();
  proxy_.hold_from(name, paused);
}

void Cluster::kill(const std::string& name) {
  if (mysql_ && name == kMysqlName) mysql_->kill();
  if (auto* sv = server(name)) sv->kill();
}

// Not waited for: clients see refused connections until it listens, as they would after
// a real restart.
void Cluster::restart(const std::string& name) {
  if (mysql_ && name == kMysqlName) mysql_->restart(false);
  if (auto* sv = server(name)) sv->restart(false);
}

void Cluster::jump_clock(const std::string& name, Nanos by) {
  if (auto* sv = server(name)) sv->set_clock_offset(sv->clock_offset() + by);
}

void Cluster::drift_clock(const std::string& name, double drift_ppm) {
  if (auto* sv = server(name)) sv->set_clock_drift(drift_ppm);
}

void Cluster::fail_over(int n) {
  if (n < 0 || !farm_) return;
  if (cluster()) {
    // The replica takes the slots over with a new epoch, without its master's agreement
    // (it may be paused); watch_roles re-points the node when the replica says master.
    RedisServer* replica = farm_->find(node_name(n) + "-replica-1");
    if (!replica) return;
    std::vector<std::string> takeover{"CLUSTER", "FAILOVER", "TAKEOVER"};
    Reply r = sync_command(replica->address(), takeover, Millis(500));
    if (on_failover) on_failover(true, {{"promoted", replica->config().name}, {"reply", to_short_text(r)}}, n);
    return;
  }
  if (!sentinels_.empty()) {
    std::vector<std::string> ask{"SENTINEL", "FAILOVER", node_name(n)};
    Reply r = sync_command(sentinels_.front()->address(), ask, Millis(500));
    if (on_failover) on_failover(true, {{"sentinel", sentinels_.front()->config().name}, {"reply", to_short_text(r)}}, n);
    return;
  }
  RedisServer* replica = farm_->find(node_name(n) + "-replica-1");
  if (!replica) return;
  std::vector<std::string> promote{"REPLICAOF", "NO", "ONE"};
  Reply r = sync_command(replica->address(), promote, Millis(500));
  if (on_failover) on_failover(false, {{"promoted", replica->config().name}, {"reply", to_short_text(r)}}, n);
  masters_[n] = replica;
  world_.set_node_address(n, replica->address());
  if (on_moved) on_moved(n);
}

// Sentinel announced a new master for node `n`; the follower has re-pointed the clients.
void Cluster::switched(int n, const NodeAddress& from, const NodeAddress& to) {
  RedisServer* promoted = server_at(to);
  RedisServer* old = server_at(from);
  if (on_failover) {
    on_failover(false,
                {{"from", old ? old->config().name : from.text()},
                 {"to", promoted ? promoted->config().name : to.text()},
                 {"by", "sentinel"}},
                n);
  }
  if (on_moved) on_moved(n);
  if (promoted) masters_[n] = promoted;
}

RedisServer* Cluster::server_at(const NodeAddress& a) {
  if (!farm_) return nullptr;
  for (auto& sv : farm_->servers()) {
    if (!sv->config().sentinel() && sv->address().port == a.port) return sv.get();
  }
  return nullptr;
}

// Sentinel's own account (+sdown, +odown, +elected-leader, -failover-abort-..., +switch-
// master), so a report can say why a failover did or did not happen.
void Cluster::collect_sentinel_events() {
  constexpr size_t kLinesMax = 60;
  for (auto* sentinel : sentinels_) {
    std::ifstream log(sentinel->log_file());
    std::deque<std::string> events;
    std::string line;
    while (std::getline(log, line)) {
      // "<pid>:X <day> <month> <year> <hh:mm:ss.mmm> # +sdown master node-1 127.0.0.1 6379"
      const auto mark = line.find(" # ");
      if (mark == std::string::npos || mark + 3 >= line.size()) continue;
      const char sign = line[mark + 3];
      if (sign != '+' && sign != '-') continue;
      const auto clock = line.rfind(' ', mark - 1);
      events.push_back(line.substr(clock + 1, mark - clock - 1) + " " + line.substr(mark + 3));
      if (events.size() > kLinesMax) events.pop_front();
    }
    sentinel_events_[sentinel->config().name] = nlohmann::json(std::vector<std::string>(events.begin(), events.end()));
  }
}

int Cluster::seed_node(const std::string& key) const {
  return cluster() ? slot_master(spec_.nodes, key_hash_slot(key)) : 0;
}

Reply Cluster::command(const std::vector<std::string>& argv, Nanos timeout) {
  if (!cluster()) return sync_command(world_.node_address(0), argv, timeout);
  return keyed_command(argv, timeout);
}

// Sent to the current master of the key's logical node; a MOVED (a failover not yet
// seen) is followed, to the member it names.
Reply Cluster::keyed_command(const std::vector<std::string>& argv, Nanos timeout) {
  NodeAddress target = world_.node_address(argv.size() > 1 ? seed_node(argv[1]) : 0);
  Reply r;
  for (int hop = 0; hop <= ClusterRouter::kRedirectsMax; ++hop) {  // bounded
    r = sync_command(target, argv, timeout);
    const auto redirect = r.is_error() ? parse_redirect(r.str) : std::nullopt;
    if (!redirect) return r;
    bool found = false;
    for (const auto& m : members_) {
      if (m.announced.port != redirect->port) continue;
      target = m.server;
      found = true;
    }
    if (!found) return r;
  }
  return r;
}

// The cluster as redis-cli --cluster create builds it, step by step and through the
// proxy: every member announces the port of a proxy link to itself (which carries a
// replica's stream with the scenario's lag, and which MOVED and CLUSTER SLOTS name), each
// member takes a config epoch of its own, the members meet, the masters take the
// simulator's slot ranges, the replicas follow their masters. Clients start once every
// member agrees the cluster is ok, knows every replica and every epoch, and every replica
// is linked.
std::string Cluster::form_cluster() {
  std::vector<std::vector<RedisServer*>> shards(masters_.size());
  for (size_t n = 0; n < masters_.size(); ++n) shards[n].push_back(masters_[n]);
  for (const auto& [node, replica] : replicas_) shards[static_cast<size_t>(node)].push_back(replica);
  auto run = [](RedisServer* sv, const std::vector<std::string>& argv) { return sync_command(sv->address(), argv, Millis(2000)); };
  for (size_t n = 0; n < shards.size(); ++n) {
    for (size_t k = 0; k < shards[n].size(); ++k) {
      RedisServer* sv = shards[n][k];
      // The link's other end is who replicates from this member: its master's first
      // replica while it is the master, the master once it is a replica (after a failover).
      const std::string peer = (k == 0 ? shards[n].size() > 1 ? shards[n][1] : shards[n][0] : shards[n][0])->config().name;
      NodeAddress announced;
      FaultProxy::LinkSpec link{peer, sv->config().name, static_cast<int>(n), sv->address(), FaultProxy::Framing::Bytes,
                                Millis(spec_.replication_lag_ms)};
      if (auto err = proxy_.route(link, announced); !err.empty()) return err;
      sv->set_announce_port(announced.port);
      Reply r = run(sv, {"CONFIG", "SET", "cluster-announce-port", std::to_string(announced.port)});
      if (!r.is_ok()) return sv->config().name + ": cannot announce its proxy port: " + to_short_text(r);
      // The cluster bus too: whoever connects to a member's bus reaches it through a link
      // named for the member, so a delay or jitter of that member slows the PINGs the
      // others send it and its PONGs, and the others' failure detection sees it as in the
      // simulator. The connecting member is not known when a link opens: "cluster-bus".
      NodeAddress bus;
      FaultProxy::LinkSpec bus_link{kClusterBus, sv->config().name, static_cast<int>(n),
                                    NodeAddress{sv->address().host, sv->bus_port()}, FaultProxy::Framing::Bytes, Nanos(0)};
      if (auto err = proxy_.route(bus_link, bus); !err.empty()) return err;
      sv->set_announce_bus_port(bus.port);
      r = run(sv, {"CONFIG", "SET", "cluster-announce-bus-port", std::to_string(bus.port)});
      if (!r.is_ok()) return sv->config().name + ": cannot announce its bus proxy port: " + to_short_text(r);
      members_.push_back({announced, sv->address(), static_cast<int>(n)});
      member_servers_.push_back(sv);
      bus_ports_.push_back(bus.port);
    }
  }
  // A config epoch of its own for every member before they meet, as redis-cli does:
  // left at 0, the members settle their collisions one bump at a time after the run has
  // begun, and a replica told to take over with a current epoch not yet caught up could
  // claim its master's slots with an epoch its master already had, and lose them back.
  for (size_t i = 0; i < member_servers_.size(); ++i) {
    Reply r = run(member_servers_[i], {"CLUSTER", "SET-CONFIG-EPOCH", std::to_string(i + 1)});
    if (!r.is_ok()) return member_servers_[i]->config().name + ": CLUSTER SET-CONFIG-EPOCH: " + to_short_text(r);
  }
  RedisServer* first = member_servers_.front();
  for (size_t i = 1; i < member_servers_.size(); ++i) {
    Reply r = run(member_servers_[i], {"CLUSTER", "MEET", "127.0.0.1", std::to_string(first->address().port),
                                       std::to_string(bus_ports_.front())});
    if (!r.is_ok()) return member_servers_[i]->config().name + ": CLUSTER MEET: " + to_short_text(r);
  }
  std::vector<int> slot_first, slot_last;
  split_slots(static_cast<int>(masters_.size()), slot_first, slot_last);
  for (size_t n = 0; n < masters_.size(); ++n) {
    Reply r = run(masters_[n], {"CLUSTER", "ADDSLOTSRANGE", std::to_string(slot_first[n]), std::to_string(slot_last[n])});
    if (!r.is_ok()) return masters_[n]->config().name + ": CLUSTER ADDSLOTSRANGE: " + to_short_text(r);
  }
  // How many members a member's CLUSTER NODES lists, and how many of them as replicas,
  // counting only settled entries (no handshake, no failure suspected).
  auto census = [&](RedisServer* sv, int& known, int& replicas) {
    known = replicas = 0;
    Reply r = run(sv, {"CLUSTER", "NODES"});
    std::istringstream lines(r.str);
    std::string line;
    while (std::getline(lines, line)) {
      std::istringstream fields(line);
      std::string id, address, flags;
      fields >> id >> address >> flags;
      if (flags.empty() || flags.find("handshake") != std::string::npos || flags.find("fail") != std::string::npos ||
          flags.find("noaddr") != std::string::npos)
        continue;
      ++known;
      if (flags.find("slave") != std::string::npos) ++replicas;
    }
  };
  const int total = static_cast<int>(member_servers_.size());
  const int replica_count = static_cast<int>(replicas_.size());
  auto all_known = [&] {
    for (auto* sv : member_servers_) {
      int known = 0, replicas = 0;
      census(sv, known, replicas);
      if (known < total) return false;
    }
    return true;
  };
  if (!wait_for(all_known, kSetupLimit)) return "the cluster's members did not all meet in time";
  for (const auto& [node, replica] : replicas_) {
    Reply id = run(masters_[static_cast<size_t>(node)], {"CLUSTER", "MYID"});
    Reply r = run(replica, {"CLUSTER", "REPLICATE", id.str});
    if (!r.is_ok()) return replica->config().name + ": CLUSTER REPLICATE: " + to_short_text(r);
  }
  const std::string settled_epoch = "cluster_current_epoch:" + std::to_string(member_servers_.size()) + "\r\n";
  auto ready = [&] {
    for (auto* sv : member_servers_) {
      Reply info = run(sv, {"CLUSTER", "INFO"});
      if (info.str.rfind("cluster_state:ok", 0) != 0) return false;
      if (info.str.find(settled_epoch) == std::string::npos) return false;  // every epoch heard of
      int known = 0, replicas = 0;
      census(sv, known, replicas);
      if (known < total || replicas < replica_count) return false;
    }
    for (const auto& entry : replicas_) {
      Reply r = run(entry.second, {"INFO", "replication"});
      if (r.str.find("master_link_status:up") == std::string::npos) return false;
    }
    return true;
  };
  if (!wait_for(ready, kSetupLimit)) return "the cluster did not reach cluster_state:ok with every replica in time";
  world_.set_cluster(members_);
  watch_roles();
  return "";
}

bool Cluster::is_master(RedisServer* sv) {
  std::vector<std::string> role{"ROLE"};
  const Reply r = sync_command(sv->address(), role, Millis(50));
  return r.type == Reply::Type::Array && !r.elements.empty() && r.elements[0].str == "master";
}

// A cluster member's config epoch (cluster_my_epoch, a replica's master's), -1 if it
// does not answer.
int64_t Cluster::config_epoch(RedisServer* sv) {
  std::vector<std::string> info{"CLUSTER", "INFO"};
  const Reply r = sync_command(sv->address(), info, Millis(50));
  const std::string field = "cluster_my_epoch:";
  const size_t at = r.str.find(field);
  if (r.type != Reply::Type::Bulk || at == std::string::npos) return -1;
  return std::atoll(r.str.c_str() + at + field.size());
}

void Cluster::watch_roles() {
  role_timer_ = world_.loop().after(Millis(100), [this] {
    role_timer_ = 0;
    for (size_t i = 0; i < member_servers_.size(); ++i) {
      RedisServer* sv = member_servers_[i];
      const int n = members_[i].node;
      if (sv == masters_[static_cast<size_t>(n)] || !sv->running() || sv->paused()) continue;
      if (!is_master(sv)) continue;
      RedisServer* old = masters_[static_cast<size_t>(n)];
      // An old master cut off by a delay still calls itself master until it hears of the
      // election: of two that do, the one with the newer config epoch is the shard's.
      if (old->running() && !old->paused() && is_master(old) && config_epoch(sv) <= config_epoch(old)) continue;
      masters_[static_cast<size_t>(n)] = sv;
      if (on_failover)
        on_failover(false, {{"from", old->config().name}, {"to", sv->config().name}, {"by", "cluster"}}, n);
      world_.set_node_address(n, sv->address());
      if (on_moved) on_moved(n);
    }
    watch_roles();
  });
}

void Cluster::finish() {
  collect_sentinel_events();
  if (mysql_) {
    mysql_->resume();
    if (mysql_->running()) mysql_->wait_ready(Millis(5000));
  }
  if (!farm_) return;
  for (auto& sv : farm_->servers()) pause(sv->config().name, false);
  for (auto& sv : farm_->servers()) {
    if (sv->running()) sv->wait_ready(Millis(3000));
  }
}

nlohmann::json Cluster::servers_json() const {
  nlohmann::json out = nlohmann::json::array();
  if (!farm_) return out;
  for (const auto& sv : farm_->servers()) out.push_back({{"name", sv->config().name}, {"port", sv->address().port}});
  if (mysql_) out.push_back({{"name", kMysqlName}, {"port", mysql_->address().port}, {"server", "mariadbd"}});
  return out;
}


}  // namespace lockstep::live
