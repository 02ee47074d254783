// The live world's topology: the servers a scenario asks for (or the one the user names),
// the ZooKeeper ensemble, and every client's links to them through the fault proxy. This
// is all the live world builds for a run; what a run does over it is the same as in the
// simulator (world_run.h).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "lockstep/live/cluster.h"
#include "lockstep/live/live_world.h"
#include "lockstep/live/zk_ensemble.h"
#include "lockstep/runner/scenario.h"

namespace lockstep::runner {

// The servers a scenario asks for, in the live world's terms.
live::ClusterSpec cluster_spec(const Scenario& s);

class LiveTopology {
 public:
  explicit LiveTopology(live::LiveWorld& world) : world_(world), cluster_(world) {}

  // Starts the scenario's servers, or reaches the user's at `redis` (HOST:PORT), and its
  // ensemble. Returns "" or why not.
  std::string start(const Scenario& s, const std::optional<std::string>& redis);

  // lockstep's clients reach every server through links of their own, which faults act on;
  // `direct` (the poller) reaches them straight.
  void route_clients(int direct);

  // A program's view of the servers, through its own links: its Redis nodes' addresses
  // (comma-separated), mysql-1's, and the ensemble's connect string (an empty function
  // without an ensemble).
  std::string redis_addresses(const std::string& client);
  std::string mysql_address(const std::string& client);
  std::function<std::string(const std::string&)> zookeeper_connect();

  live::Cluster& cluster() { return cluster_; }
  const live::Cluster& cluster() const { return cluster_; }
  live::ZkEnsemble* zookeeper() { return zk_.get(); }

 private:
  // `a` as `client` reaches it, through its own proxy link (the server itself when the
  // proxy cannot open one).
  live::NodeAddress via(const std::string& client, const std::string& server, int node, const live::NodeAddress& a,
                        live::FaultProxy::Framing framing);
  std::string start_zookeeper(const ZooKeeperSpec& z);

  live::LiveWorld& world_;
  // After world_: the cluster's relays and follower run on the world's loop and go first.
  live::Cluster cluster_;
  // After cluster_: the servers go before the proxy their links run through.
  std::unique_ptr<live::ZkEnsemble> zk_;
};

}  // namespace lockstep::runner
