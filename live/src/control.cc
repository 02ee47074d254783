#include "lockstep/live/control.h"

#include <cstdlib>

#include "lockstep/fault_plan.h"
#include "lockstep/live/mariadb_server.h"

namespace lockstep::live {
namespace {

// node-N -> N-1 for a master; replicas and anything else -> -1 (as live truth records
// name nodes: replicas are not polled).
int master_index(std::string_view name) {
  if (name.rfind("node-", 0) != 0 || name.find("replica") != std::string_view::npos) return -1;
  return std::atoi(std::string(name.substr(5)).c_str()) - 1;
}

}  // namespace

Capabilities live_capabilities(bool own_servers) {
  Capabilities c = Capabilities::all();
  c.deny(Capability::ExternalClients, "lockstep's own clients were asked for (an external workload, or --client, runs your program)");
  c.deny(Capability::BuiltInFailureDetector,
         "automatic failover (topology.down_after_ms) needs redis-sentinel live: set topology.sentinels (the "
         "simulator's failure detector stands in for them)");
  c.deny(Capability::ClusterPartition,
         "a partition with topology.cluster is not played live: the fault proxy would hold a cut cluster bus's bytes "
         "rather than lose them");
  c.deny(Capability::ClockMysqlServer,
         "clock faults on the MySQL server are simulator-only (MariaDB's clock is the machine's; lockstep's clock "
         "library is not preloaded into mariadbd)");
  c.deny(Capability::ClockZooKeeperServer,
         "a clock fault on a ZooKeeper server is not played live: its session timeouts run on the JVM's monotonic "
         "clock, which lockstep cannot move in a real server");
  if (!own_servers) {
    c.deny(Capability::MysqlServer, "--redis gives one Redis server and no MySQL server; run it without --redis");
    c.deny(Capability::SeveralServers, "--redis gives one server; run it without --redis");
    c.deny(Capability::ReconfigureServers,
           "a memory limit or a cache writer fills and reconfigures the server, which lockstep does only to servers of "
           "its own; run it without --redis");
    const std::string yours =
        "--redis: refusing to fault your server; run it without --redis (lockstep then starts its own)";
    c.deny(Capability::PauseServer, yours).deny(Capability::CrashServer, yours).deny(Capability::Failover, yours);
    const std::string clock = "--redis: refusing to change your server's clock; run it without --redis";
    c.deny(Capability::ClockJumpServer, clock).deny(Capability::ClockDriftServer, clock);
  } else {
    // Probing starts a server: only a scenario that moves a server's clock pays for it.
    auto probe = [] {
      const std::string& why = shifted_clock_unusable_reason();
      return why.empty() ? why : "a server clock fault cannot be played here: " + why;
    };
    c.allow_if(Capability::ClockJumpServer, probe).allow_if(Capability::ClockDriftServer, probe);
    c.allow_if(Capability::MysqlServer, [] {
      if (!mariadb_client_missing().empty()) return "a MySQL server cannot be played live: " + mariadb_client_missing();
      if (find_mariadbd().empty())
        return std::string("a MySQL server cannot be played live: mariadbd not found (scripts/setup installs "
                           "mariadb-server, or set LOCKSTEP_MARIADBD)");
      return std::string();
    });
  }
  return c;
}

Control::Control(LiveWorld& world, Cluster& cluster)
    : world_(world), cluster_(cluster), capabilities_(live_capabilities(cluster.own_servers())) {
  world_.on_client_restart = [this](int c) {
    if (!on_client_restart) return;
    if (auto p = process(world_.client_name(c))) on_client_restart(*p);
  };
  cluster_.on_failover = [this](bool requested, nlohmann::json value, int node) {
    truth(requested ? Truth::FailoverRequested : Truth::Failover, -1, std::move(value), node);
  };
  // A workload client's command leaving and its reply arriving are the events
  // event-triggered faults wait for; a helper client of the run's own (a poller) is not.
  world_.on_command = [this](const CommandNote& n) {
    if (!on_event || n.argv->empty()) return false;
    const std::string& name = world_.client_name(n.client);
    if (name.rfind("client-", 0) != 0) return false;
    const auto kind = n.reply ? WorldEvent::Kind::Receives : WorldEvent::Kind::Sends;
    return event({kind, name, (*n.argv)[0], command_key(*n.argv)});
  };
}

void Control::at(Nanos t, std::function<void()> fn) {
  // Due now: behind work already deferred on the loop, in order (an event-triggered fault
  // must land before the step of the client it was triggered by).
  if (t <= now()) {
    ++pending_;
    world_.loop().defer([this, fn = std::move(fn)] {
      --pending_;
      fn();
    });
    return;
  }
  ++pending_;
  world_.loop().after(t - now(), [this, fn = std::move(fn)] {
    --pending_;
    fn();
  });
}

std::optional<ProcessRef> Control::process(std::string_view name) const {
  if (name.rfind("zk-", 0) == 0) {
    const int i = zk_ ? zk_->index_of(std::string(name)) : -1;
    if (i < 0) return std::nullopt;
    return ProcessRef{i, std::string(name), true, -1, -1};
  }
  if (name == Cluster::kMysqlName) {
    if (!const_cast<Cluster&>(cluster_).mysql()) return std::nullopt;
    return ProcessRef{-1, std::string(name), true, -1, -1};
  }
  if (name.rfind("node-", 0) == 0) {
    if (cluster_.own_servers() && !cluster_.server(std::string(name))) return std::nullopt;
    return ProcessRef{-1, std::string(name), true, -1, master_index(name)};
  }
  for (int c = 0; c < world_.client_count(); ++c) {
    if (world_.client_name(c) == name) return ProcessRef{c, std::string(name), false, world_.history_id(c), -1};
  }
  return std::nullopt;
}

void Control::pause(const ProcessRef& p, Nanos d) {
  if (!p.server) {
    world_.pause(p.id, d);
    // Its ZooKeeper session's heartbeats come from the C client's own thread: they stop
    // in the proxy, as a stopped process's would.
    // On the loop's own timer, as the pause's end: it keeps no run from ending.
    cluster_.proxy().freeze(p.name, 1);
    world_.loop().after(d, [proxy = &cluster_.proxy(), name = p.name] { proxy->freeze(name, -1); });
    return;
  }
  if (const int i = zk_index(p); i >= 0) {
    zk_->pause(i, true);
    at(now() + d, [this, i] { zk_->pause(i, false); });
    return;
  }
  cluster_.pause(p.name, true);
  at(now() + d, [this, name = p.name] { cluster_.pause(name, false); });
}

void Control::crash(const ProcessRef& p) {
  if (const int i = zk_index(p); i >= 0) {
    zk_->kill(i);
    return;
  }
  if (p.server) {
    cluster_.kill(p.name);
    return;
  }
  // First its ZooKeeper links go, as a killed process's sockets do: closing the session
  // handle afterwards can then tell the server nothing, and the session must expire.
  cluster_.proxy().sever(p.name);
  world_.crash(p.id);
}
void Control::restart(const ProcessRef& p) {
  if (const int i = zk_index(p); i >= 0) {
    // A server that does not come back leaves the ensemble a server short, which the
    // run then shows; there is no one to tell but its log.
    zk_->restart(i);
    return;
  }
  p.server ? cluster_.restart(p.name) : world_.restart(p.id);
}

// A client's jump moves only that client's own view of the wall clock; a server's moves
// the clock its preloaded clock library reports.
void Control::jump_wall_clock(const ProcessRef& p, Nanos by) {
  p.server ? cluster_.jump_clock(p.name, by) : world_.jump_wall_clock(p.id, by);
}

void Control::set_clock_drift(const ProcessRef& p, double drift_ppm) {
  p.server ? cluster_.drift_clock(p.name, drift_ppm) : world_.set_clock_drift(p.id, drift_ppm);
}

// Network faults go to the fault proxy every client and replica connects through.
void Control::add_link_delay(const ProcessRef& p, Nanos extra) { cluster_.proxy().add_delay(p.name, extra); }
void Control::add_link_jitter(const ProcessRef& p, Nanos extra) { cluster_.proxy().add_jitter(p.name, extra); }
void Control::block_link(const ProcessRef& from, const ProcessRef& to, int delta) {
  cluster_.proxy().block(from.name, to.name, delta);
}

void Control::fail_over(const ProcessRef& master) { cluster_.fail_over(static_cast<int>(master.truth_node)); }

Env& Control::env(const ProcessRef& client) { return world_.env(client.id); }

// Its own connection to the node's current address, straight past the fault proxy. Two
// seconds is far beyond a loopback round trip and short enough for a stopped server.
Reply Control::admin(int node, const std::vector<std::string>& argv) {
  return sync_command(world_.node_address(node), argv, Millis(2000));
}

}  // namespace lockstep::live
