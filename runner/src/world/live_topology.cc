#include "world/live_topology.h"

#include "lockstep/runner/workload.h"
#include "world/world_run.h"

namespace lockstep::runner {

using live::NodeAddress;

live::ClusterSpec cluster_spec(const Scenario& s) {
  live::ClusterSpec c;
  c.nodes = s.topology.nodes;
  c.replicas = s.topology.replicas;
  c.persistence = s.topology.persistence;
  c.replication_lag_ms = s.topology.replication_lag_ms;
  c.min_replicas_to_write = s.topology.min_replicas_to_write;
  c.maxmemory_bytes = s.topology.maxmemory_bytes;
  c.maxmemory_policy = s.topology.maxmemory_policy;
  c.maxmemory_samples = s.topology.maxmemory_samples;
  c.sentinels = s.topology.sentinels;
  c.down_after_ms = s.topology.down_after_ms;
  if (s.topology.cluster_enabled()) c.cluster_node_timeout_ms = s.topology.cluster.node_timeout_ms;
  c.run_ms = s.duration_ms;
  // A server whose wall clock a fault moves, or that starts with an offset or a drift,
  // runs with lockstep's clock library preloaded.
  auto shift = [&c](const std::string& name) -> live::ClusterSpec::ShiftedClock& {
    for (auto& k : c.shifted_clocks) {
      if (k.server == name) return k;
    }
    c.shifted_clocks.push_back({name});
    return c.shifted_clocks.back();
  };
  for (const auto& f : s.faults) {
    const Capability need = needed_capability(f);
    if (need == Capability::ClockJumpServer || need == Capability::ClockDriftServer) shift(f.target);
  }
  for (const auto& k : s.clocks) {
    if (k.process.rfind("node-", 0) != 0 || (k.offset_ms == 0 && k.drift_ppm == 0)) continue;
    auto& clock = shift(k.process);
    clock.offset = Millis(k.offset_ms);
    clock.drift_ppm = k.drift_ppm;
  }
  // Keys placed by the cluster go in with the servers, so replicas start holding them.
  for (const auto& w : initial_writes(s)) {
    if (!w.node) c.seed.push_back({w.key, w.value});
  }
  c.latency = latency_of(s.network.latency);
  if (const MysqlSpec& m = s.topology.mysql; m.enabled) {
    live::MariaDbSettings db;
    db.wait_timeout_s = m.wait_timeout_s;
    db.innodb_lock_wait_timeout_s = m.innodb_lock_wait_timeout_s;
    c.mysql = db;
  }
  return c;
}

std::string LiveTopology::start(const Scenario& s, const std::optional<std::string>& redis) {
  const live::ClusterSpec spec = cluster_spec(s);
  if (!redis) {
    if (auto err = cluster_.start(spec); !err.empty()) return err;
  } else {
    NodeAddress a;
    if (!live::parse_address(*redis, a)) return "--redis expects HOST:PORT, found " + *redis;
    if (auto err = cluster_.use_server(a, spec); !err.empty()) return err;
  }
  return start_zookeeper(s.topology.zookeeper);
}

// The ensemble, every link of it through the fault proxy; clients reach it through links
// of their own.
std::string LiveTopology::start_zookeeper(const ZooKeeperSpec& z) {
  if (z.servers == 0) return "";
  zk_ = std::make_unique<live::ZkEnsemble>(world_.loop(), cluster_.proxy());
  live::ZkEnsembleSpec spec;
  spec.servers = z.servers;
  spec.tick_ms = z.tick_ms;
  if (auto err = zk_->start(spec); !err.empty()) return err;
  world_.zk_connect = [this](int client) { return zk_->connect_string(world_.client_name(client)); };
  world_.zk_session_timeout = Millis(z.session_timeout_ms);
  return "";
}

NodeAddress LiveTopology::via(const std::string& client, const std::string& server, int node, const NodeAddress& a,
                              live::FaultProxy::Framing framing) {
  NodeAddress out;
  const live::FaultProxy::LinkSpec link{client, server, node, a, framing, Nanos(0)};
  return cluster_.proxy().route(link, out).empty() ? out : a;
}

// Redis commands go through the proxy as RESP, so it sees every command leave and every
// reply come back; SQL sessions as a byte stream: a cut holds their bytes (TCP
// retransmits) and a paused server's answers wait, as on any TCP link.
void LiveTopology::route_clients(int direct) {
  world_.route = [this, direct](int client, int node, const NodeAddress& a) {
    if (client == direct) return a;
    return via(world_.client_name(client), cluster_.server_name(a), node, a, live::FaultProxy::Framing::Resp);
  };
  world_.mysql_route = [this](int client, const NodeAddress& a) {
    return via(world_.client_name(client), live::Cluster::kMysqlName, -1, a, live::FaultProxy::Framing::Bytes);
  };
}

std::string LiveTopology::redis_addresses(const std::string& client) {
  std::string out;
  for (int n = 0; n < world_.node_count(); ++n) {
    const NodeAddress a = world_.node_address(n);
    out += (out.empty() ? "" : ",") + via(client, cluster_.server_name(a), n, a, live::FaultProxy::Framing::Resp).text();
  }
  return out;
}

std::string LiveTopology::mysql_address(const std::string& client) {
  const NodeAddress a = cluster_.mysql()->address();
  return via(client, live::Cluster::kMysqlName, -1, a, live::FaultProxy::Framing::Bytes).text();
}

std::function<std::string(const std::string&)> LiveTopology::zookeeper_connect() {
  if (!zk_) return nullptr;
  return [this](const std::string& client) { return zk_->connect_string(client); };
}

}  // namespace lockstep::runner
