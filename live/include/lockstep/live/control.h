// live::Control is the live world's WorldControl: the fault plan's handle on real
// redis-server processes (a Cluster) and on the live clients (a LiveWorld). It is the
// sibling of sim::Control; what it cannot do on loopback it says in capabilities().
//
// Time: now() is the monotonic clock since start(), the moment the clients may begin
// (server start-up is not part of the run). at() counts what is still to come, so a run
// that stops once every client is idle still waits for a fault on the timeline (a node
// restart after the clients gave up decides what the stock key reads).
#pragma once

#include <optional>
#include <string_view>

#include "lockstep/live/cluster.h"
#include "lockstep/live/live_world.h"
#include "lockstep/live/zk_ensemble.h"
#include "lockstep/world_control.h"

namespace lockstep::live {

// What the live world can do: with its own servers (own_servers) or against a user's
// server that lockstep must not touch.
Capabilities live_capabilities(bool own_servers);

class Control : public WorldControl {
 public:
  // Takes over the world's client-restart hook and the cluster's failover hook.
  Control(LiveWorld& world, Cluster& cluster);

  // The run's ZooKeeper ensemble: zk-N are its servers (pause, crash and restart, links).
  void set_zookeeper(ZkEnsemble* zk) { zk_ = zk; }

  // Time zero of the run.
  void start() { start_ = mono_clock(); }
  // The monotonic reading that is time zero of the run.
  Nanos origin() const { return start_; }
  // Scheduled work not yet run.
  int pending() const { return pending_; }

  const Capabilities& capabilities() const override { return capabilities_; }
  Nanos now() const override { return mono_clock() - start_; }
  void at(Nanos t, std::function<void()> fn) override;
  std::optional<ProcessRef> process(std::string_view name) const override;

  void pause(const ProcessRef& p, Nanos d) override;
  void crash(const ProcessRef& p) override;
  void restart(const ProcessRef& p) override;
  void jump_wall_clock(const ProcessRef& p, Nanos by) override;
  void set_clock_drift(const ProcessRef& p, double drift_ppm) override;
  void add_link_delay(const ProcessRef& p, Nanos extra) override;
  void add_link_jitter(const ProcessRef& p, Nanos extra) override;
  void block_link(const ProcessRef& from, const ProcessRef& to, int delta) override;
  void fail_over(const ProcessRef& master) override;
  Env& env(const ProcessRef& client) override;
  Reply admin(int node, const std::vector<std::string>& argv) override;
  int node_of_key(const std::string& key) const override { return cluster_.seed_node(key); }
  int node_count() const override { return world_.node_count(); }

 protected:
  // For siblings that play some processes differently (ExternalControl).
  LiveWorld& world_;
  Cluster& cluster_;
  ZkEnsemble* zk_ = nullptr;
  // The ensemble's index of a zk-N process, or -1.
  int zk_index(const ProcessRef& p) const { return zk_ ? zk_->index_of(p.name) : -1; }

 private:
  Capabilities capabilities_;
  Nanos start_{0};
  int pending_ = 0;
};

}  // namespace lockstep::live
