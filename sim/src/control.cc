#include "lockstep/sim/control.h"

#include "lockstep/fault_plan.h"

namespace lockstep::sim {

Capabilities sim_capabilities() {
  Capabilities c = Capabilities::all();
  c.deny(Capability::ExternalClients, "an external workload runs your own program, which only the live world starts (lockstep live)");
  return c;
}

Control::Control(World& world) : world_(world) {
  world_.on_client_restart = [this](int pid) {
    if (on_client_restart) on_client_restart(ref(pid));
  };
  world_.on_command = [this](int pid, const std::vector<std::string>& argv, bool reply) {
    if (!on_event || argv.empty()) return false;
    WorldEvent e{reply ? WorldEvent::Kind::Receives : WorldEvent::Kind::Sends, world_.process(pid).name, argv[0],
                 command_key(argv)};
    return event(e);
  };
  // Every key's change may be a fault's trigger (a node sets or deletes it); the runner
  // keeps the lock key's as ground truth.
  world_.on_key_change = [this](int node, const sim::KeyChange& c) {
    using K = sim::KeyChange::Kind;
    if (on_event) {
      event({c.kind == K::Set ? WorldEvent::Kind::Sets : WorldEvent::Kind::Deletes, node_name(node), c.key, c.key});
    }
    if (!on_key_change) return;
    lockstep::KeyChange k;
    k.node = node;
    k.key = c.key;
    k.value = c.value;
    if (c.kind == K::Set) {
      k.process = c.writer;
    } else {
      k.kind = c.kind == K::Del     ? lockstep::KeyChange::Kind::Del
               : c.kind == K::Evict ? lockstep::KeyChange::Kind::Evict
                                    : lockstep::KeyChange::Kind::Expire;
      k.process = c.by_process;
      k.owner = c.writer;
    }
    on_key_change(k);
  };
  world_.on_failover = [this](int shard, int old_master, int new_master) {
    const Process& to = world_.process(new_master);
    truth(Truth::Failover, -1, {{"from", world_.process(old_master).name}, {"to", to.name}}, to.node_index,
          {{"shard", shard}});
  };
}

const std::string& Control::node_name(int node_index) const {
  for (int pid = 0; pid < world_.process_count(); ++pid) {
    if (world_.process(pid).is_node && world_.process(pid).node_index == node_index) return world_.process(pid).name;
  }
  static const std::string kNone;
  return kNone;
}

ProcessRef Control::ref(int pid) const {
  const Process& p = world_.process(pid);
  return ProcessRef{pid, p.name, p.is_node, p.history_id, p.node_index};
}

void Control::at(Nanos t, std::function<void()> fn) { world_.scheduler().at(t.count(), std::move(fn)); }

std::optional<ProcessRef> Control::process(std::string_view name) const {
  const int pid = world_.find(std::string(name));
  if (pid < 0) return std::nullopt;
  return ref(pid);
}

void Control::pause(const ProcessRef& p, Nanos d) { world_.pause(p.id, d.count()); }
void Control::crash(const ProcessRef& p) { world_.crash(p.id); }
void Control::restart(const ProcessRef& p) { world_.restart(p.id); }
void Control::jump_wall_clock(const ProcessRef& p, Nanos by) { world_.process(p.id).clock.jump_wall(by.count()); }

void Control::set_clock_drift(const ProcessRef& p, double drift_ppm) {
  world_.process(p.id).clock.set_drift(world_.now(), drift_ppm);
}

void Control::add_link_delay(const ProcessRef& p, Nanos extra) { world_.network().add_extra_delay(p.id, extra.count()); }
void Control::add_link_jitter(const ProcessRef& p, Nanos extra) { world_.network().add_jitter(p.id, extra.count()); }

void Control::block_link(const ProcessRef& from, const ProcessRef& to, int delta) {
  world_.network().block(from.id, to.id, delta);
}

void Control::fail_over(const ProcessRef& master) { world_.failover(world_.process(master.id).shard); }

Env& Control::env(const ProcessRef& client) { return world_.env(client.id); }

// Straight into the node's command path at this instant, on the node's own clock: no
// message, no draw from any random stream, so the run around it is unchanged.
Reply Control::admin(int node, const std::vector<std::string>& argv) {
  ClientState state;
  return world_.redis(node).execute(state, argv, world_.node_wall_ms(world_.node_process(node)));
}

}  // namespace lockstep::sim
