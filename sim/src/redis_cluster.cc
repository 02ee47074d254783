// Cluster mode of the simulated node: which keys a command touches, whether this node
// may run it (getNodeByQuery: MOVED to the slot's master, CROSSSLOT for keys of several
// slots, CLUSTERDOWN while a slot's master is flagged FAIL), the same check for every
// command a script runs, and the CLUSTER command. The layout itself — failure detection,
// elections, epochs — is the World's business; the node only answers from its copy.
#include <string_view>

#include "lockstep/cluster_slot.h"
#include "redis_impl.h"

namespace lockstep::sim {

int ClusterLayout::shard_of_slot(int slot) const {
  for (size_t i = 0; i < slot_first.size(); ++i) {
    if (slot >= slot_first[i] && slot <= slot_last[i]) return static_cast<int>(i);
  }
  return -1;
}

int ClusterLayout::master_of_shard(int shard) const {
  for (size_t i = 0; i < members.size(); ++i) {
    if (members[i].shard == shard && members[i].master) return static_cast<int>(i);
  }
  return -1;
}

bool ClusterLayout::state_ok() const {
  for (size_t shard = 0; shard < slot_first.size(); ++shard) {
    const int m = master_of_shard(static_cast<int>(shard));
    if (m < 0 || members[m].failed) return false;
  }
  return true;
}

namespace {

// The key positions of each command (Redis's key specs, reduced to what the simulated
// commands need): EVAL/EVALSHA declare theirs with numkeys, MSET alternates key and
// value, RENAME has two, MEMORY USAGE names its key second, the variadic ones take every
// argument, the key-less ones none, the rest argv[1].
void command_keys(const Command& cmd, const Args& a, std::vector<const std::string*>& out) {
  const std::string_view name(cmd.name);
  static constexpr std::string_view kNoKeys[] = {
      "dbsize", "flushall", "flushdb", "ping", "echo", "multi", "exec", "discard", "unwatch", "subscribe",
      "unsubscribe", "publish", "info", "config|get", "config|set", "script|load", "script|exists",
      "script|flush", "script|kill", "cluster|keyslot", "cluster|info", "cluster|slots", "cluster|shards",
      "cluster|myid", "asking", "time"};
  for (auto k : kNoKeys) {
    if (name == k) return;
  }
  if (name == "eval" || name == "evalsha") {
    int64_t n = 0;
    // A bad numkeys declares no keys; the command itself then reports the error.
    if (a.size() < 3 || !string_to_ll(a[2], n) || n < 0 || n > static_cast<int64_t>(a.size()) - 3) return;
    for (int64_t i = 0; i < n; ++i) out.push_back(&a[3 + static_cast<size_t>(i)]);
    return;
  }
  if (name == "memory|usage") {
    out.push_back(&a[2]);
    return;
  }
  if (name == "rename" || name == "renamenx") {
    out.push_back(&a[1]);
    out.push_back(&a[2]);
    return;
  }
  if (name == "mset") {
    for (size_t i = 1; i < a.size(); i += 2) out.push_back(&a[i]);
    return;
  }
  if (name == "del" || name == "unlink" || name == "exists" || name == "mget" || name == "watch") {
    for (size_t i = 1; i < a.size(); ++i) out.push_back(&a[i]);
    return;
  }
  if (a.size() > 1) out.push_back(&a[1]);
}

const Command* resolve(const NodeCore& n, const Args& a) {
  const Command* cmd = n.find(a[0]);
  if (cmd && (cmd->flags & kContainer) && a.size() > 1) cmd = n.find_sub(*cmd, a[1]);
  return cmd;
}

struct Route {
  enum class Kind { Here, Moved, CrossSlot, Unbound, Down };
  Kind kind = Kind::Here;
  int slot = -1;   // of the first key, -1 without keys
  int owner = -1;  // Moved: the member serving the slot
};

// getNodeByQuery for one or more commands (EXEC passes what it queued).
Route route(const ClusterLayout& l, int self, const NodeCore& n, const std::vector<const Args*>& cmds) {
  Route r;
  std::vector<const std::string*> keys;
  for (const Args* argv : cmds) {
    const Command* cmd = argv->empty() ? nullptr : resolve(n, *argv);
    if (!cmd) continue;
    keys.clear();
    command_keys(*cmd, *argv, keys);
    for (const std::string* k : keys) {
      const int slot = key_hash_slot(*k);
      if (r.slot < 0) {
        r.slot = slot;
        const int shard = l.shard_of_slot(slot);
        r.owner = shard < 0 ? -1 : l.master_of_shard(shard);
        if (r.owner < 0) return {Route::Kind::Unbound, slot, -1};
      } else if (slot != r.slot) {
        return {Route::Kind::CrossSlot, r.slot, -1};
      }
    }
  }
  if (r.slot < 0) return r;  // no keys: any node runs it
  if (!l.state_ok()) return {Route::Kind::Down, r.slot, -1};
  if (r.owner != self) r.kind = Route::Kind::Moved;
  return r;
}

const char* const kCrossSlot = "CROSSSLOT Keys in request don't hash to the same slot";

Reply cluster_disabled() { return Reply::error("ERR This instance has cluster support disabled"); }

Reply cmd_cluster(NodeCore&, ClientState&, const Args& a) {
  // Only reached without a known subcommand: "CLUSTER" alone fails on arity first.
  return Reply::error("ERR unknown subcommand '" + a[1] + "'. Try CLUSTER HELP.");
}

Reply cmd_cluster_keyslot(NodeCore& n, ClientState&, const Args& a) {
  if (!n.cluster) return cluster_disabled();
  return Reply::integer_of(key_hash_slot(a[2]));
}

// The node never migrates slots, so it never answers ASK: ASKING is accepted and forgotten.
Reply cmd_asking(NodeCore& n, ClientState&, const Args&) {
  if (!n.cluster) return cluster_disabled();
  return Reply::ok();
}

Reply cmd_cluster_myid(NodeCore& n, ClientState&, const Args&) {
  if (!n.cluster) return cluster_disabled();
  return Reply::bulk(n.cluster->members[n.cluster_self].id);
}

// One node of CLUSTER SLOTS: ip, port, id and the (empty, no hostnames) metadata map.
Reply slots_node(const ClusterLayout::Member& m) {
  return Reply::array({Reply::bulk(m.host), Reply::integer_of(m.port), Reply::bulk(m.id), Reply::array({})});
}

// By slot order (a real server walks its node table, an order no client may rely on);
// replicas flagged FAIL are left out, as clusterReplyMultiBulkSlots does.
Reply cmd_cluster_slots(NodeCore& n, ClientState&, const Args&) {
  if (!n.cluster) return cluster_disabled();
  const ClusterLayout& l = *n.cluster;
  std::vector<Reply> out;
  for (size_t shard = 0; shard < l.slot_first.size(); ++shard) {
    const int m = l.master_of_shard(static_cast<int>(shard));
    if (m < 0) continue;
    std::vector<Reply> entry{Reply::integer_of(l.slot_first[shard]), Reply::integer_of(l.slot_last[shard]),
                             slots_node(l.members[m])};
    for (size_t i = 0; i < l.members.size(); ++i) {
      const auto& r = l.members[i];
      if (static_cast<int>(i) != m && r.shard == static_cast<int>(shard) && !r.failed) entry.push_back(slots_node(r));
    }
    out.push_back(Reply::array(std::move(entry)));
  }
  return Reply::array(std::move(out));
}

// CLUSTER SHARDS (RESP2: maps as flat arrays). The replication offset is not tracked by
// the node itself, so it reads 0.
Reply cmd_cluster_shards(NodeCore& n, ClientState&, const Args&) {
  if (!n.cluster) return cluster_disabled();
  const ClusterLayout& l = *n.cluster;
  std::vector<Reply> out;
  for (size_t shard = 0; shard < l.slot_first.size(); ++shard) {
    std::vector<Reply> nodes;
    for (const auto& m : l.members) {
      if (m.shard != static_cast<int>(shard)) continue;
      nodes.push_back(Reply::array({Reply::bulk("id"), Reply::bulk(m.id), Reply::bulk("port"),
                                    Reply::integer_of(m.port), Reply::bulk("ip"), Reply::bulk(m.host),
                                    Reply::bulk("endpoint"), Reply::bulk(m.host), Reply::bulk("role"),
                                    Reply::bulk(m.master ? "master" : "replica"), Reply::bulk("replication-offset"),
                                    Reply::integer_of(0), Reply::bulk("health"),
                                    Reply::bulk(m.failed ? "fail" : "online")}));
    }
    out.push_back(Reply::array({Reply::bulk("slots"),
                                Reply::array({Reply::integer_of(l.slot_first[shard]), Reply::integer_of(l.slot_last[shard])}),
                                Reply::bulk("nodes"), Reply::array(std::move(nodes))}));
  }
  return Reply::array(std::move(out));
}

// The first lines of a 7.0 CLUSTER INFO; the bus message counters are left out.
Reply cmd_cluster_info(NodeCore& n, ClientState&, const Args&) {
  if (!n.cluster) return cluster_disabled();
  const ClusterLayout& l = *n.cluster;
  int assigned = 0, failing = 0, masters_serving = 0;
  for (size_t shard = 0; shard < l.slot_first.size(); ++shard) {
    const int count = l.slot_last[shard] - l.slot_first[shard] + 1;
    assigned += count;
    const int m = l.master_of_shard(static_cast<int>(shard));
    if (m >= 0) ++masters_serving;
    if (m < 0 || l.members[m].failed) failing += count;
  }
  const auto line = [](const char* k, auto v) { return std::string(k) + ":" + std::to_string(v) + "\r\n"; };
  std::string s = std::string("cluster_state:") + (l.state_ok() ? "ok" : "fail") + "\r\n";
  s += line("cluster_slots_assigned", assigned);
  s += line("cluster_slots_ok", assigned - failing);
  s += line("cluster_slots_pfail", 0);
  s += line("cluster_slots_fail", failing);
  s += line("cluster_known_nodes", l.members.size());
  s += line("cluster_size", masters_serving);
  s += line("cluster_current_epoch", l.current_epoch);
  s += line("cluster_my_epoch", l.members[n.cluster_self].config_epoch);
  s += line("total_cluster_links_buffer_limit_exceeded", 0);
  return Reply::bulk(std::move(s));
}

}  // namespace

std::optional<Reply> NodeCore::cluster_route(const ClientState& c, const Command& cmd, const Args& argv) {
  std::vector<const Args*> cmds;
  if (std::string_view(cmd.name) == "exec") {
    if (!c.in_multi) return std::nullopt;
    for (const auto& q : c.queued) cmds.push_back(&q);
  } else {
    cmds.push_back(&argv);
  }
  const Route r = route(*cluster, cluster_self, *this, cmds);
  switch (r.kind) {
    case Route::Kind::Here: return std::nullopt;
    case Route::Kind::CrossSlot: return Reply::error(kCrossSlot);
    case Route::Kind::Unbound: return Reply::error("CLUSTERDOWN Hash slot not served");
    case Route::Kind::Down: return Reply::error("CLUSTERDOWN The cluster is down");
    case Route::Kind::Moved: {
      const auto& m = cluster->members[r.owner];
      return Reply::error("MOVED " + std::to_string(r.slot) + " " + m.host + ":" + std::to_string(m.port));
    }
  }
  return std::nullopt;
}

std::string NodeCore::cluster_script_route(const Args& argv, bool cross_slot, int& slot) {
  const Route r = route(*cluster, cluster_self, *this, {&argv});
  // 7.0.15 lets a script without a shebang touch undeclared keys of any slot this node
  // serves: only keys served elsewhere (or unserved) and a down cluster stop it. A script
  // with one stays in the slot of its first key unless it allows cross-slot keys.
  switch (r.kind) {
    case Route::Kind::Here: break;
    case Route::Kind::Down: return "Script attempted to execute a command while the cluster is down";
    default: return "Script attempted to access a non local key in a cluster node";
  }
  if (r.slot < 0 || cross_slot) return {};
  if (slot < 0) slot = r.slot;
  else if (slot != r.slot) return "Script attempted to access keys that do not hash to the same slot";
  return {};
}

void register_cluster_commands(std::vector<Command>& out) {
  out.insert(out.end(), {
                            {"cluster", -2, kNoScript | kContainer, cmd_cluster},
                            {"cluster|keyslot", 3, kNoScript, cmd_cluster_keyslot},
                            {"cluster|info", 2, kNoScript, cmd_cluster_info},
                            {"cluster|slots", 2, kNoScript, cmd_cluster_slots},
                            {"cluster|shards", 2, kNoScript, cmd_cluster_shards},
                            {"cluster|myid", 2, kNoScript, cmd_cluster_myid},
                            {"asking", 1, 0, cmd_asking},
                        });
}

}  // namespace lockstep::sim
