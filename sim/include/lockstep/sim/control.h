// sim::Control is the simulator's WorldControl: the fault plan's handle on a World. Every
// fault is exact here: it happens at its instant of true time, in the scheduler's order,
// and the simulator can do every kind; it runs only lockstep's own clients.
#pragma once

#include <optional>
#include <string_view>

#include "lockstep/sim/world.h"
#include "lockstep/world_control.h"

namespace lockstep::sim {

// What the simulator can do: every fault and topology, but not a user's own program.
Capabilities sim_capabilities();

class Control : public WorldControl {
 public:
  // Takes over the world's client-restart and failover hooks.
  explicit Control(World& world);

  const Capabilities& capabilities() const override { return capabilities_; }
  Nanos now() const override { return Nanos(world_.now()); }
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
  int node_of_key(const std::string& key) const override { return world_.shard_of_key(key); }
  int node_count() const override { return world_.node_count(); }

  ProcessRef ref(int pid) const;
  // The name of the first process serving logical node `node_index` ("node-1").
  const std::string& node_name(int node_index) const;

 private:
  World& world_;
  Capabilities capabilities_ = sim_capabilities();
};

}  // namespace lockstep::sim
