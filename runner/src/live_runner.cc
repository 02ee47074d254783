#include "lockstep/runner/live_runner.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <deque>
#include <fstream>
#include <map>
#include <optional>
#include <set>

#include "lockstep/live/lag_relay.h"
#include "lockstep/live/live_world.h"
#include "lockstep/live/redis_server.h"
#include "lockstep/live/sentinel_follower.h"
#include "lockstep/runner/lock_checks.h"
#include "lockstep/runner/recorder.h"
#include "lockstep/runner/workload.h"

namespace lockstep::runner {
namespace {

using live::NodeAddress;
constexpr int64_t kMs = 1'000'000;
// How long a poll waits for its node; a paused node costs one such wait per round.
constexpr Nanos kPollTimeout = Millis(200);
// How long a key change may wait for the reply that says who caused it.
constexpr int64_t kAttributionWaitNs = 200 * kMs;
// Bounds on setting up replication and Sentinel before the clients start.
constexpr Nanos kSetupLimit = Millis(15000);
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
// ask-period stays at 1 s: it spreads the moments at which the sentinels agree that the
// master is down, so that one of them asks for votes first and wins the election; with
// all asking at once, each votes for itself and no failover happens for
// 2 * failover-timeout. Detection itself is untouched: down-after-milliseconds and the
// quorum are the scenario's.
const std::vector<std::string> kSentinelTimers = {"SENTINEL",       "DEBUG", "info-period", "200",
                                                  "publish-period", "200",   "ping-period", "250"};

// The lock key's state on a node in one atomic step: {type, value, pttl}. For a hash
// (Redisson-style locks) the value is its first field, which names the owner.
const char* kPollScript =
    "local t = redis.call('TYPE', KEYS[1]).ok\n"
    "if t == 'none' then return {t, false, -2} end\n"
    "local v = ''\n"
    "if t == 'string' then v = redis.call('GET', KEYS[1])\n"
    "elseif t == 'hash' then local f = redis.call('HKEYS', KEYS[1]); v = f[1] or '' end\n"
    "return {t, v, redis.call('PTTL', KEYS[1])}\n";

std::string upper(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

bool is_node(const std::string& name) { return name.rfind("node-", 0) == 0; }

// Turns polled states of the lock key, and the replies clients got, into the truth
// records the checker reads (key-set / key-del / key-expire). A change is attributed
// when the evidence allows: a value written by exactly one client names the writer; a
// delete reply of 1 that arrived after the key was last seen names the deleter. A change
// waits up to kAttributionWaitNs for such a reply and is then written at the time it was
// observed, so the history stays in time order.
class LockTruth {
 public:
  LockTruth(Recorder& rec, std::string key, int nodes) : rec_(rec), key_(std::move(key)), nodes_(nodes) {
    setters_.resize(nodes);
    deleters_.resize(nodes);
  }

  void sent(int64_t process, const std::vector<std::string>& argv) {
    const std::string cmd = upper(argv[0]);
    if ((cmd == "SET" || cmd == "SETNX") && argv.size() >= 3 && argv[1] == key_) tokens_[argv[2]].insert(process);
  }

  void replied(int64_t process, int node, const std::vector<std::string>& argv, const Reply& r, int64_t now) {
    const std::string cmd = upper(argv[0]);
    if (argv.size() >= 3 && argv[1] == key_ && ((cmd == "SET" && r.is_ok()) || (cmd == "SETNX" && r.is_integer(1)))) {
      setters_[node].push_back({process, now, false, std::nullopt});
    } else if (deletes_lock(cmd, argv) && r.type == Reply::Type::Integer && r.integer >= 1) {
      deleters_[node].push_back({process, now, false, script_token(cmd, argv)});
    }
  }

  // `sent` is when the poll left: the state it reports held at some moment after that,
  // so a change it reveals happened after the previous poll was sent, not answered (a
  // client's reply can be handled before the poll reply that preceded it on the server).
  void observe(int node, const Reply& r, int64_t sent, int64_t now) {
    if (r.type != Reply::Type::Array || r.elements.size() != 3) return;  // no news this round
    ++polls_;
    NodeState& st = nodes_[node];
    const bool present = r.elements[0].str != "none";
    const std::string value = r.elements[1].str;
    if (st.present && (!present || value != st.value)) {
      st.pending.push_back({true, now, st.value, st.last_present_ns, st.expires_at_ns, now + kAttributionWaitNs});
    }
    if (present && (!st.present || value != st.value)) {
      st.pending.push_back({false, now, value, st.present ? st.last_present_ns : st.last_absent_ns, -1,
                            now + kAttributionWaitNs});
    }
    st.present = present;
    st.value = value;
    if (present) {
      st.last_present_ns = sent;
      const int64_t pttl = r.elements[2].integer;
      st.expires_at_ns = pttl >= 0 ? now + pttl * kMs : -1;
    } else {
      st.last_absent_ns = sent;
    }
    settle(node, now, false);
  }

  // Node `node` now answers from another server (a failover): a key that vanishes there
  // from now on went with the old master, not by anyone's delete.
  void moved(int node, int64_t now) { nodes_[node].moved_at_ns = now; }

  void settle_all(int64_t now) {
    for (int n = 0; n < static_cast<int>(nodes_.size()); ++n) settle(n, now, true);
  }

  int64_t polls() const { return polls_; }
  int64_t unattributed_sets() const { return unattributed_sets_; }
  int64_t unattributed_dels() const { return unattributed_dels_; }

 private:
  struct Change {
    bool removal;
    int64_t at_ns;
    std::string value;
    int64_t window_start_ns;  // the change happened after this observation
    int64_t expires_at_ns;    // removal: when the key's TTL said it would expire; -1 none
    int64_t deadline_ns;
  };
  struct NodeState {
    bool present = false;
    std::string value;
    int64_t last_present_ns = 0;  // when the last poll that saw the key was sent
    int64_t last_absent_ns = 0;   // when the last poll that saw no key was sent
    int64_t expires_at_ns = -1;
    int64_t holder = -1;  // writer of the last emitted key-set
    int64_t moved_at_ns = -1;  // when the node last moved to another server
    std::deque<Change> pending;
  };
  struct Done {
    int64_t process;
    int64_t at_ns;
    bool used = false;
    std::optional<std::string> token;  // the value a compare-and-delete script removes
  };

  // A script's first ARGV is the owner token by the convention of lockstep's unlock
  // scripts; a plain DEL names no value.
  static std::optional<std::string> script_token(const std::string& cmd, const std::vector<std::string>& argv) {
    if (cmd != "EVAL") return std::nullopt;
    const size_t numkeys = static_cast<size_t>(std::max(0, std::atoi(argv[2].c_str())));
    if (3 + numkeys >= argv.size()) return std::nullopt;
    return argv[3 + numkeys];
  }

  bool deletes_lock(const std::string& cmd, const std::vector<std::string>& argv) const {
    if (cmd == "DEL" || cmd == "UNLINK") return std::find(argv.begin() + 1, argv.end(), key_) != argv.end();
    if (cmd != "EVAL" || argv.size() < 4) return false;
    // Only scripts that can delete: a renewal also answers 1 but removes nothing.
    if (upper(argv[1]).find("DEL") == std::string::npos) return false;
    const size_t numkeys = static_cast<size_t>(std::max(0, std::atoi(argv[2].c_str())));
    for (size_t i = 0; i < numkeys && 3 + i < argv.size(); ++i) {
      if (argv[3 + i] == key_) return true;
    }
    return false;
  }

  static Done* first_after(std::vector<Done>& v, int64_t t) {
    for (auto& d : v) {
      if (!d.used && d.at_ns >= t) return &d;
    }
    return nullptr;
  }

  // The delete that removed `value`: one that names it, else a plain DEL after the key
  // was last seen. Deletes naming another value removed a holder the poller never saw
  // (several holders can come and go between two polls) and explain nothing here.
  static Done* deleter_of(std::vector<Done>& v, const std::string& value, int64_t t) {
    for (auto& d : v) {
      if (!d.used && d.at_ns >= t && d.token == value) return &d;
    }
    for (auto& d : v) {
      if (!d.used && d.at_ns >= t && !d.token) return &d;
    }
    return nullptr;
  }

  void settle(int node, int64_t now, bool final) {
    NodeState& st = nodes_[node];
    // Changes leave in order, so a removal is never written after the set that followed.
    while (!st.pending.empty()) {
      Change& c = st.pending.front();
      const bool may_wait = !final && now < c.deadline_ns;
      if (c.removal ? !emit_removal(node, c, may_wait) : !emit_set(node, c, may_wait)) return;
      st.pending.pop_front();
    }
  }

  bool emit_set(int node, const Change& c, bool may_wait) {
    int64_t writer = -1;
    if (auto it = tokens_.find(c.value); it != tokens_.end() && it->second.size() == 1) {
      writer = *it->second.begin();
    } else if (Done* d = first_after(setters_[node], c.window_start_ns)) {
      d->used = true;
      writer = d->process;
    } else if (may_wait) {
      return false;
    }
    if (writer < 0) ++unattributed_sets_;
    nodes_[node].holder = writer;
    insert(checker::truth::kKeySet, writer, c.value, node, nullptr, c.at_ns);
    return true;
  }

  bool emit_removal(int node, const Change& c, bool may_wait) {
    const int64_t owner = nodes_[node].holder;
    nlohmann::json extra = {{"owner", owner}};
    if (Done* d = deleter_of(deleters_[node], c.value, c.window_start_ns)) {
      d->used = true;
      insert(checker::truth::kKeyDel, d->process, c.value, node, extra, c.at_ns);
      return true;
    }
    if (may_wait) return false;
    // No delete reply: an expiry if the TTL had run out by then (1 ms for measurement),
    // lost with the old master if the node moved since the key was last seen, otherwise
    // gone by a cause we cannot name (a lost reply, a node restart).
    if (c.expires_at_ns >= 0 && c.expires_at_ns <= c.at_ns + kMs) {
      insert(checker::truth::kKeyExpire, -1, c.value, node, extra, c.at_ns);
    } else if (nodes_[node].moved_at_ns >= c.window_start_ns) {
      extra["cause"] = "failover";
      insert(checker::truth::kKeyDel, -1, c.value, node, extra, c.at_ns);
    } else {
      ++unattributed_dels_;
      extra["cause"] = "unknown";
      insert(checker::truth::kKeyDel, -1, c.value, node, extra, c.at_ns);
    }
    return true;
  }

  void insert(const char* f, int64_t process, const std::string& value, int node, nlohmann::json extra, int64_t at) {
    checker::Event e;
    e.type = checker::EventType::Truth;
    e.process = process;
    e.f = f;
    e.key = key_;
    e.value = value;
    e.time_ns = at;
    e.node = node;
    e.extra = std::move(extra);
    auto& events = rec_.history().events;
    size_t pos = events.size();
    while (pos > 0 && events[pos - 1].time_ns > at) --pos;
    events.insert(events.begin() + static_cast<std::ptrdiff_t>(pos), std::move(e));
  }

  Recorder& rec_;
  std::string key_;
  std::vector<NodeState> nodes_;
  std::vector<std::vector<Done>> setters_, deleters_;
  std::map<std::string, std::set<int64_t>> tokens_;
  int64_t polls_ = 0;
  int64_t unattributed_sets_ = 0;
  int64_t unattributed_dels_ = 0;
};

std::string default_run_id() {
  return std::to_string(live::wall_clock().count() / kMs) + "-" + std::to_string(getpid());
}

// The scenario as run against a user's server: every key under lockstep:<run-id>:.
Scenario prefixed(const Scenario& s, const LiveOptions& o) {
  if (!o.redis) return s;
  Scenario out = s;
  const std::string prefix = "lockstep:" + (o.run_id.empty() ? default_run_id() : o.run_id) + ":";
  out.lock.key = prefix + s.lock.key;
  out.workload.stock_key = prefix + s.workload.stock_key;
  return out;
}

class LiveRun {
 public:
  LiveRun(const Scenario& s, const LiveOptions& o)
      : s_(prefixed(s, o)), o_(o), world_(s.seed), rec_([this] { return (live::mono_clock() - start_).count(); }),
        truth_(rec_, s_.lock.key, s_.topology.nodes) {}

  // Returns "" or why the run could not be set up.
  std::string run() {
    start_ = live::mono_clock();
    if (auto err = start_servers(); !err.empty()) return err;
    if (auto err = seed_resource(); !err.empty()) return err;
    if (auto err = await_replicas(); !err.empty()) return err;
    if (auto err = start_sentinels(); !err.empty()) return err;
    start_ = live::mono_clock();  // time 0 is when the clients may start, not server boot
    hook_commands();
    start_observer();
    start_clients();
    for (const auto& f : s_.faults) schedule(f);
    const Nanos limit = Millis(s_.duration_ms);
    world_.loop().run_until([this] { return o_.stop_when_idle && all_idle(); }, limit - (live::mono_clock() - start_));
    finish();
    return "";
  }

  checker::History take_history() { return std::move(rec_.history()); }
  const Scenario& scenario() const { return s_; }
  bool resource_read() const { return resource_read_; }
  const LockTruth& truth() const { return truth_; }
  const std::string& sentinel_timers() const { return sentinel_timers_; }
  const nlohmann::json& sentinel_events() const { return sentinel_events_; }
  int64_t relay_dropped_bytes() const {
    int64_t n = 0;
    for (const auto& r : relays_) n += r->dropped_bytes();
    return n;
  }
  nlohmann::json servers_json() const {
    nlohmann::json out = nlohmann::json::array();
    if (!farm_) return out;
    for (const auto& sv : farm_->servers())
      out.push_back({{"name", sv->config().name}, {"port", sv->address().port}});
    return out;
  }

 private:
  std::string start_servers() {
    if (o_.redis) {
      NodeAddress a;
      if (!live::parse_address(*o_.redis, a)) return "--redis expects HOST:PORT, found " + *o_.redis;
      std::vector<std::string> ping{"PING"};
      Reply r = live::sync_command(a, ping, Millis(1000));
      if (r.type != Reply::Type::Status) return "cannot reach " + a.text() + ": " + to_short_text(r);
      world_.add_node(a);
      return "";
    }
    farm_ = std::make_unique<live::ServerFarm>();
    if (!farm_->error().empty()) return farm_->error();
    for (int i = 1; i <= s_.topology.nodes; ++i) {
      live::RedisServer* master = farm_->start(config("node-" + std::to_string(i), std::nullopt));
      if (!master) return farm_->error();
      masters_.push_back(master);
      world_.add_node(master->address());
      for (int r = 1; r <= s_.topology.replicas; ++r) {
        const std::string name = "node-" + std::to_string(i) + "-replica-" + std::to_string(r);
        NodeAddress upstream = master->address();
        if (s_.topology.replication_lag_ms > 0) {
          relays_.push_back(
              std::make_unique<live::LagRelay>(world_.loop(), upstream, Millis(s_.topology.replication_lag_ms)));
          if (auto err = relays_.back()->start(); !err.empty()) return err;
          upstream = relays_.back()->address();
        }
        live::RedisServer* replica = farm_->start(config(name, upstream));
        if (!replica) return farm_->error();
        replicas_.push_back({i - 1, replica});
      }
    }
    return "";
  }

  // Runs the loop (relays need it) until check() holds, asking at most every 20 ms.
  bool wait_for(const std::function<bool()>& check, Nanos limit) {
    Nanos next{0};
    return world_.loop().run_until(
        [&] {
          if (live::mono_clock() < next) return false;
          next = live::mono_clock() + Millis(20);
          return check();
        },
        limit);
  }

  // Replicas start in sync, as in the simulator: linked to their master and holding the
  // stock the clients are about to sell.
  std::string await_replicas() {
    const Reply stock = Reply::bulk(std::to_string(s_.workload.initial_stock));
    for (const auto& entry : replicas_) {
      const int node = entry.first;
      live::RedisServer* replica = entry.second;
      auto synced = [&] {
        std::vector<std::string> info{"INFO", "replication"};
        Reply r = live::sync_command(replica->address(), info, Millis(500));
        if (r.type != Reply::Type::Bulk || r.str.find("master_link_status:up") == std::string::npos) return false;
        std::vector<std::string> get{"GET", s_.workload.stock_key};
        return node != 0 || live::sync_command(replica->address(), get, Millis(500)) == stock;
      };
      if (!wait_for(synced, kSetupLimit)) return replica->config().name + " did not sync with its master";
    }
    return "";
  }

  // Sentinels watch every master with a majority quorum. The clients start only once
  // each sentinel knows every replica and every other sentinel: a master lost before
  // that could not be failed over.
  std::string start_sentinels() {
    const int count = s_.topology.sentinels;
    if (count == 0 || !farm_) return "";
    std::vector<live::MonitoredMaster> monitors;
    std::vector<std::string> names;
    for (int n = 0; n < static_cast<int>(masters_.size()); ++n) {
      live::MonitoredMaster m;
      m.name = "node-" + std::to_string(n + 1);
      m.address = masters_[n]->address();
      m.quorum = count / 2 + 1;
      m.down_after_ms = s_.topology.down_after_ms;
      // Sentinel rewires a replica that replicates through a lag relay to the master
      // itself once failover-timeout has passed (+fix-slave-config); past the end of the
      // run, the lag stays what the scenario says.
      m.failover_timeout_ms = s_.duration_ms + 10'000;
      monitors.push_back(m);
      names.push_back(m.name);
    }
    std::vector<NodeAddress> addresses;
    for (int k = 1; k <= count; ++k) {
      live::ServerConfig c;
      c.name = "sentinel-" + std::to_string(k);
      c.monitors = monitors;
      live::RedisServer* sentinel = farm_->start(c);
      if (!sentinel) return farm_->error();
      Reply r = live::sync_command(sentinel->address(), kSentinelTimers, Millis(1000));
      sentinel_timers_ = r.is_ok() ? "shortened" : "defaults (" + to_short_text(r) + ")";
      sentinels_.push_back(sentinel);
      addresses.push_back(sentinel->address());
    }
    auto ready = [&] {
      for (auto* sentinel : sentinels_) {
        for (const auto& name : names) {
          if (healthy(sentinel, {"SENTINEL", "replicas", name}, "slave", true) < s_.topology.replicas) return false;
          if (healthy(sentinel, {"SENTINEL", "sentinels", name}, "sentinel") < count - 1) return false;
        }
      }
      return true;
    };
    if (!wait_for(ready, kSetupLimit)) return "the sentinels did not discover every replica and each other in time";
    follower_ = std::make_unique<live::SentinelFollower>(world_, names);
    follower_->on_switch = [this](int node, const NodeAddress& from, const NodeAddress& to) {
      switched(node, from, to);
    };
    if (auto err = follower_->follow(addresses); !err.empty()) return err;
    if (!wait_for([&] { return follower_->subscribed(); }, kSetupLimit))
      return "could not subscribe to the sentinels' +switch-master";
    return "";
  }

  // How many instances a SENTINEL replicas/sentinels reply lists with exactly these
  // flags (no s_down, no disconnected) and, for replicas, whose own INFO the sentinel has
  // read (it says the link to the master is ok): Sentinel promotes no other replica.
  static int healthy(live::RedisServer* sentinel, std::vector<std::string> argv, const std::string& flags,
                     bool informed = false) {
    Reply r = live::sync_command(sentinel->address(), argv, Millis(500));
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

  // Sentinel announced a new master for node `n`; the follower has re-pointed the clients.
  void switched(int n, const NodeAddress& from, const NodeAddress& to) {
    live::RedisServer* promoted = server_at(to);
    live::RedisServer* old = server_at(from);
    rec_.truth("failover", -1, "",
               {{"from", old ? old->config().name : from.text()},
                {"to", promoted ? promoted->config().name : to.text()},
                {"by", "sentinel"}},
               n);
    truth_.moved(n, rec_.now());
    if (promoted) masters_[n] = promoted;
  }

  live::RedisServer* server_at(const NodeAddress& a) {
    if (!farm_) return nullptr;
    for (auto& sv : farm_->servers()) {
      if (!sv->config().sentinel() && sv->address().port == a.port) return sv.get();
    }
    return nullptr;
  }

  live::ServerConfig config(const std::string& name, std::optional<NodeAddress> replica_of) const {
    live::ServerConfig c;
    c.name = name;
    c.persistence = s_.topology.persistence;
    c.min_replicas_to_write = s_.topology.min_replicas_to_write;
    c.replica_of = std::move(replica_of);
    for (const auto& f : s_.faults) c.shifted_clock = c.shifted_clock || (f.kind == "clock-jump" && f.target == name);
    for (const auto& k : s_.clocks) {
      if (k.process != name || k.offset_ms == 0) continue;
      c.shifted_clock = true;
      c.initial_clock_offset = Millis(k.offset_ms);
    }
    return c;
  }

  std::string seed_resource() {
    std::vector<std::string> set{"SET", s_.workload.stock_key, std::to_string(s_.workload.initial_stock)};
    Reply r = live::sync_command(world_.node_address(0), set, Millis(2000));
    return r.is_ok() ? "" : "cannot seed " + s_.workload.stock_key + ": " + to_short_text(r);
  }

  void hook_commands() {
    world_.on_sent = [this](const live::CommandNote& n) {
      if (n.client != observer_) truth_.sent(world_.history_id(n.client), *n.argv);
    };
    world_.on_reply = [this](const live::CommandNote& n) {
      if (n.client != observer_) truth_.replied(world_.history_id(n.client), n.node, *n.argv, *n.reply, rec_.now());
    };
    world_.on_client_restart = [this](int c) {
      --pending_restarts_;
      start_client(c);
    };
  }

  // The observer is a client no fault targets: it polls the lock key on every node.
  void start_observer() {
    observer_ = world_.add_client("observer", -1);
    for (int n = 0; n < world_.node_count(); ++n) world_.spawn(observer_, poll(n));
  }

  Task<void> poll(int node) {
    live::LiveEnv& env = world_.env(observer_);
    const int64_t rounds = s_.duration_ms / std::max<int64_t>(o_.poll_interval_ms, 1) + 100;
    for (int64_t i = 0; i < rounds; ++i) {
      std::vector<std::string> argv{"EVAL", kPollScript, "1", s_.lock.key};
      const int64_t sent = rec_.now();
      Reply r = co_await env.node(node).call(std::move(argv), kPollTimeout);
      truth_.observe(node, r, sent, rec_.now());
      co_await env.sleep(Millis(o_.poll_interval_ms));
    }
  }

  void start_clients() {
    for (int i = 1; i <= s_.workload.clients; ++i) {
      std::string name = "client-" + std::to_string(i);
      const int c = world_.add_client(name, i);
      for (const auto& k : s_.clocks) {
        if (k.process == name) world_.jump_wall_clock(c, Millis(k.offset_ms));
      }
      clients_.push_back(c);
      at((i - 1) * s_.workload.start_stagger_ms, [this, c] {
        ++started_;
        start_client(c);
      });
    }
  }

  void start_client(int c) {
    world_.spawn(c, stock_client(world_.env(c), rec_, world_.history_id(c), s_.lock, s_.workload));
  }

  // Idle: every client has finished and nothing on the timeline is still to come (a node
  // restart after the clients gave up still decides what the stock key reads).
  bool all_idle() const {
    if (started_ < static_cast<int>(clients_.size()) || pending_restarts_ > 0 || pending_timeline_ > 0) return false;
    for (int c : clients_) {
      if (!world_.is_crashed(c) && !world_.idle(c)) return false;
    }
    return true;
  }

  void at(int64_t ms, std::function<void()> fn) {
    ++pending_timeline_;
    world_.loop().after(start_ + Millis(ms) - live::mono_clock(), [this, fn = std::move(fn)] {
      --pending_timeline_;
      fn();
    });
  }

  int client_of(const std::string& name) const {
    for (int c : clients_) {
      if (world_.client_name(c) == name) return c;
    }
    return -1;
  }

  // node-N -> N-1; replicas and clients -> -1.
  static int node_index(const std::string& name) {
    if (!is_node(name) || name.find("replica") != std::string::npos) return -1;
    return std::atoi(name.c_str() + 5) - 1;
  }

  // The server started under this name, whatever its role now: as in the simulator, a
  // fault on node-1 after a failover still hits the old master.
  live::RedisServer* server(const std::string& name) { return farm_ ? farm_->find(name) : nullptr; }

  void mark(const char* f, const FaultSpec& fault) {
    const int c = client_of(fault.target);
    rec_.truth(f, c >= 0 ? world_.history_id(c) : -1, "", fault_record(fault), node_index(fault.target));
  }

  void schedule(const FaultSpec& f) {
    at(f.at_ms, [this, f] { mark(checker::truth::kFaultStart, f); });
    if (is_node(f.target)) {
      schedule_on_server(f);
    } else {
      schedule_on_client(f);
    }
    if (f.duration_ms > 0) at(f.at_ms + f.duration_ms, [this, f] { mark(checker::truth::kFaultEnd, f); });
  }

  void schedule_on_client(const FaultSpec& f) {
    const int c = client_of(f.target);
    if (c < 0) return;
    if (f.kind == "pause") {
      at(f.at_ms, [this, c, f] { world_.pause(c, Millis(f.duration_ms)); });
    } else if (f.kind == "crash") {
      if (f.restart_after_ms) ++pending_restarts_;
      at(f.at_ms, [this, c] {
        world_.crash(c);
        rec_.truth(checker::truth::kCrash, world_.history_id(c), "", world_.client_name(c), -1);
      });
      if (f.restart_after_ms) {
        at(f.at_ms + *f.restart_after_ms, [this, c] {
          rec_.truth("restart", world_.history_id(c), "", world_.client_name(c), -1);
          world_.restart(c);
        });
      }
    } else if (f.kind == "clock-jump") {
      // Only this client's own view of the wall clock moves; the machine's does not.
      at(f.at_ms, [this, c, f] { world_.jump_wall_clock(c, Millis(f.jump_ms)); });
    }
  }

  void schedule_on_server(const FaultSpec& f) {
    const std::string name = f.target;
    const int n = node_index(name);
    if (f.kind == "pause") {
      at(f.at_ms, [this, name] {
        if (auto* sv = server(name)) pause_server(*sv, true);
      });
      at(f.at_ms + f.duration_ms, [this, name] {
        if (auto* sv = server(name)) pause_server(*sv, false);
      });
    } else if (f.kind == "crash") {
      at(f.at_ms, [this, name, n] {
        if (auto* sv = server(name)) sv->kill();
        rec_.truth(checker::truth::kCrash, -1, "", name, n);
      });
      if (f.restart_after_ms) {
        at(f.at_ms + *f.restart_after_ms, [this, name, n] {
          rec_.truth("restart", -1, "", name, n);
          // Not waited for: clients see refused connections until it listens, as they
          // would after a real restart.
          if (auto* sv = server(name)) sv->restart(false);
        });
      }
    } else if (f.kind == "clock-jump") {
      at(f.at_ms, [this, name, f] {
        if (auto* sv = server(name)) sv->set_clock_offset(sv->clock_offset() + Millis(f.jump_ms));
      });
    } else if (f.kind == "failover") {
      at(f.at_ms, [this, n] { failover(n); });
    }
  }

  // SIGSTOP/SIGCONT, and the replication the server had buffered in a relay stops with it.
  void pause_server(live::RedisServer& sv, bool paused) {
    if (paused) {
      sv.pause();
    } else {
      sv.resume();
    }
    for (auto& relay : relays_) {
      if (relay->upstream().port == sv.address().port) relay->hold(paused);
    }
  }

  // Promotes the node's first replica and points every client at it. With sentinels, they
  // are asked to (SENTINEL FAILOVER) and the follower re-points the clients once they
  // announce the new master.
  void failover(int n) {
    if (n < 0 || !farm_) return;
    if (!sentinels_.empty()) {
      std::vector<std::string> ask{"SENTINEL", "FAILOVER", "node-" + std::to_string(n + 1)};
      Reply r = live::sync_command(sentinels_.front()->address(), ask, Millis(500));
      rec_.truth("failover-requested", -1, "", {{"sentinel", sentinels_.front()->config().name}, {"reply", to_short_text(r)}},
                 n);
      return;
    }
    live::RedisServer* replica = farm_->find("node-" + std::to_string(n + 1) + "-replica-1");
    if (!replica) return;
    std::vector<std::string> promote{"REPLICAOF", "NO", "ONE"};
    Reply r = live::sync_command(replica->address(), promote, Millis(500));
    rec_.truth("failover", -1, "", {{"promoted", replica->config().name}, {"reply", to_short_text(r)}}, n);
    masters_[n] = replica;
    world_.set_node_address(n, replica->address());
    truth_.moved(n, rec_.now());
  }

  // Sentinel's own account (+sdown, +odown, +elected-leader, -failover-abort-..., +switch-
  // master), so a report can say why a failover did or did not happen.
  void collect_sentinel_events() {
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

  void finish() {
    collect_sentinel_events();
    if (farm_) {
      for (auto& sv : farm_->servers()) pause_server(*sv, false);
      // A node restarted late may still be loading its AOF: the stock is read after.
      for (auto& sv : farm_->servers()) {
        if (sv->running()) sv->wait_ready(Millis(3000));
      }
    }
    // A few more polls so the last state of the key is seen, then everything stops.
    world_.loop().run_for(Millis(std::max<int64_t>(5 * o_.poll_interval_ms, 20)));
    const int64_t end = rec_.now();
    world_.stop_all();
    truth_.settle_all(end);
    record_resource();
    if (o_.redis) {
      std::vector<std::string> del{"DEL", s_.lock.key, s_.workload.stock_key};
      live::sync_command(world_.node_address(0), del, Millis(1000));
    }
  }

  void record_resource() {
    std::vector<std::string> get{"GET", s_.workload.stock_key};
    Reply r = live::sync_command(world_.node_address(0), get, Millis(2000));
    if (r.type != Reply::Type::Bulk && r.type != Reply::Type::Nil) return;  // node gone: unknown
    resource_read_ = true;
    nlohmann::json final_value = nullptr;
    if (r.type == Reply::Type::Bulk) {
      try {
        final_value = std::stoll(r.str);
      } catch (...) {
        final_value = r.str;
      }
    }
    rec_.truth(checker::truth::kResource, -1, s_.workload.stock_key,
               {{"initial", s_.workload.initial_stock}, {"final", final_value}}, 0);
  }

  Scenario s_;
  LiveOptions o_;
  std::unique_ptr<live::ServerFarm> farm_;  // declared before world_: servers outlive clients
  live::LiveWorld world_;
  // After world_: they run on its loop and must go first.
  std::vector<std::unique_ptr<live::LagRelay>> relays_;
  std::unique_ptr<live::SentinelFollower> follower_;
  Nanos start_{0};
  Recorder rec_;
  LockTruth truth_;
  std::vector<live::RedisServer*> masters_;
  std::vector<std::pair<int, live::RedisServer*>> replicas_;  // (node index, server)
  std::vector<live::RedisServer*> sentinels_;
  std::string sentinel_timers_;
  nlohmann::json sentinel_events_ = nlohmann::json::object();
  std::vector<int> clients_;
  int observer_ = -1;
  int started_ = 0;
  int pending_restarts_ = 0;
  int pending_timeline_ = 0;
  bool resource_read_ = false;
};

nlohmann::json checkable(const LiveRun& run) {
  // The clients' own records of their operations and critical sections are as complete
  // live as in the simulator.
  nlohmann::json out = {"mutual-exclusion", "linearizability"};
  if (run.resource_read()) out.push_back("lost-update");
  // A key removal nobody's reply explains may have been a foreign unlock we cannot see.
  if (run.truth().unattributed_dels() == 0) out.push_back("foreign-unlock");
  // Deadlock needs to know who holds the key.
  if (run.truth().unattributed_sets() == 0) out.push_back("deadlock");
  return out;
}

reports::RunReport make_report(const Scenario& original, const LiveOptions& o, const checker::History& h,
                               const std::string& jsonl, const Scenario& as_run) {
  reports::RunReport r = judge_run(original, as_run, h, jsonl);
  r.world = "live";
  const std::string path = o.replay_path.empty() ? original.file : o.replay_path;
  r.replay = "lockstep live " + (o.redis ? "--redis " + *o.redis + " " : std::string()) + path;
  return r;
}

}  // namespace

std::string live_unsupported(const Scenario& s, const LiveOptions& o) {
  if (std::find(s.worlds.begin(), s.worlds.end(), "live") == s.worlds.end())
    return "its worlds do not include \"live\"";
  if (s.workload.kind != "stock") return "the live world runs only the stock workload";
  if (s.topology.down_after_ms > 0 && s.topology.replicas > 0 && s.topology.sentinels == 0)
    return "automatic failover (topology.down_after_ms) needs redis-sentinel live: set topology.sentinels (the "
           "simulator's failure detector stands in for them)";
  for (const auto& f : s.faults) {
    if (f.kind == "delay" || f.kind == "jitter" || f.kind == "partition")
      return "live mode cannot inject network faults (" + f.kind + ") on loopback; run it in the simulator";
    if (f.kind == "clock-drift") return "live mode cannot make a clock drift; run it in the simulator";
    if (f.kind == "failover" && s.topology.replicas < 1) return "a failover needs a replica to promote";
  }
  for (const auto& c : s.clocks) {
    if (c.drift_ppm != 0) return "live mode cannot make a clock drift (" + c.process + "); run it in the simulator";
  }
  bool server_clock = false;
  for (const auto& f : s.faults) server_clock = server_clock || (f.kind == "clock-jump" && is_node(f.target));
  for (const auto& c : s.clocks) server_clock = server_clock || (is_node(c.process) && c.offset_ms != 0);
  if (o.redis) {
    if (s.topology.nodes > 1 || s.topology.replicas > 0)
      return "--redis gives one server, but the topology needs " +
             std::to_string(s.topology.nodes * (1 + s.topology.replicas)) + "; run it without --redis";
    for (const auto& f : s.faults) {
      if (is_node(f.target))
        return "--redis: refusing to " + f.kind + " " + f.target +
               ", which would be your server; run it without --redis (lockstep then starts its own)";
    }
    if (server_clock) return "--redis: refusing to change your server's clock; run it without --redis";
  } else if (server_clock && !live::shifted_clock_unusable_reason().empty()) {
    return "a server clock fault cannot be played here: " + live::shifted_clock_unusable_reason();
  }
  return "";
}

RunOutcome run_live(const Scenario& scenario, const LiveOptions& options) {
  RunOutcome out;
  std::string error = live_unsupported(scenario, options);
  nlohmann::json checkable_json = nlohmann::json::array();
  nlohmann::json truth_json, servers_json, replication_json;
  Scenario as_run = scenario;
  const Nanos wall_start = live::mono_clock();
  if (error.empty()) {
    LiveRun run(scenario, options);
    error = run.run();
    as_run = run.scenario();
    out.history = run.take_history();
    checkable_json = checkable(run);
    truth_json = {{"polls", run.truth().polls()},
                  {"unattributed_sets", run.truth().unattributed_sets()},
                  {"unattributed_dels", run.truth().unattributed_dels()}};
    servers_json = run.servers_json();
    if (scenario.topology.replicas > 0) {
      replication_json = {{"lag_ms", scenario.topology.replication_lag_ms},
                          {"lag_by", scenario.topology.replication_lag_ms > 0 ? "relay between replica and master"
                                                                              : "none (loopback)"},
                          {"dropped_bytes", run.relay_dropped_bytes()}};
      if (scenario.topology.sentinels > 0) {
        replication_json["sentinel_timers"] = run.sentinel_timers();
        replication_json["sentinel_events"] = run.sentinel_events();
      }
    }
  }
  out.history_jsonl = checker::to_jsonl(out.history);
  out.report = make_report(scenario, options, out.history, out.history_jsonl, as_run);
  auto& st = out.report.stats;
  st["checkable"] = checkable_json;
  st["truth"] = "lock key polled on every node every " + std::to_string(options.poll_interval_ms) +
                " ms; writers known from unique tokens or SET replies, deleters from delete replies";
  if (!truth_json.is_null()) st["truth_counts"] = truth_json;
  if (!servers_json.is_null()) st["servers"] = servers_json;
  if (!replication_json.is_null()) st["replication"] = replication_json;
  st["network"] = "loopback: the scenario's network latency and loss do not apply live";
  st["wall_ms"] = (live::mono_clock() - wall_start).count() / kMs;
  if (options.redis) st["redis"] = *options.redis;
  if (!error.empty()) {
    out.report.verdict = "unknown";
    out.report.violations.clear();
    st["error"] = error;
  }
  return out;
}

}  // namespace lockstep::runner
