// Playing faults on external client programs (external_control.h says what each means).
#include "lockstep/live/external_control.h"

#include <stdlib.h>

#include <filesystem>

#include "lockstep/fault_plan.h"
#include "lockstep/live/redis_server.h"

namespace lockstep::live {
namespace {

namespace fs = std::filesystem;

std::string make_temp_dir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string templ = std::string(tmp && *tmp ? tmp : "/tmp") + "/lockstep-clients-XXXXXX";
  return mkdtemp(templ.data()) ? templ : "";
}

}  // namespace

Capabilities external_capabilities(bool own_servers, const std::vector<std::string>& argv,
                                   const std::string& directory) {
  Capabilities c = live_capabilities(own_servers);
  c.allow(Capability::ExternalClients);
  c.deny(Capability::Cluster, "external clients reach each node by address, not as Redis Cluster clients (topology.cluster)");
  c.deny(Capability::Sentinel,
         "external clients reach each node through one fixed address and would not follow Sentinel's failover "
         "(topology.sentinels)");
  c.deny(Capability::Failover,
         "external clients reach each node through one fixed address, and nothing re-points them after a failover");
  auto clock = [argv0 = argv.empty() ? std::string() : argv[0], directory]() -> std::string {
    if (find_clock_library().empty())
      return "a client clock fault needs liblockstep_clock.so (build it, or set LOCKSTEP_CLOCK_LIBRARY)";
    const std::string program = resolve_program(argv0, directory);
    if (program.empty()) return "";  // it will not start, which the run reports
    const std::string why = clock_unreachable_reason(program);
    return why.empty() ? why : "a client clock fault cannot reach the external client: " + why;
  };
  c.allow_if(Capability::ClockJumpClient, clock).allow_if(Capability::ClockDriftClient, clock);
  return c;
}

ExternalControl::ExternalControl(LiveWorld& world, Cluster& cluster, const std::vector<std::string>& argv,
                                 const std::string& directory)
    : Control(world, cluster), caps_(external_capabilities(cluster.own_servers(), argv, directory)),
      dir_(make_temp_dir()) {
  if (dir_.empty()) error_ = "cannot create a temporary directory for the client programs";
  cluster_.proxy().on_arrival = [this](const ProxyMessage& m) { return arrived(m); };
}

ExternalControl::~ExternalControl() {
  cluster_.proxy().on_arrival = nullptr;
  for (auto& [name, c] : clients_) {
    if (c->process) c->process->on_line = nullptr;
  }
  clients_.clear();  // kills and reaps every program still running
  if (!dir_.empty()) {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
}

void ExternalControl::add_client(const std::string& name, int64_t history_id, ExternalClientSpec spec) {
  world_.add_client(name, history_id);  // so that process() finds it, as any live client
  auto c = std::make_unique<Client>();
  c->name = name;
  c->history_id = history_id;
  c->spec = std::move(spec);
  if (c->spec.shifted_clock) {
    c->clock = std::make_unique<ClockFile>(dir_ + "/" + name + ".clock");
    c->clock->set_wall_offset(c->spec.clock_offset);
    if (c->spec.drift_ppm != 0) c->clock->set_drift(c->spec.drift_ppm, /*monotonic_too=*/true);
  }
  clients_[name] = std::move(c);
}

std::string ExternalControl::start(const std::string& name) {
  Client* c = find(name);
  if (!c) return "no client " + name;
  c->incarnation += 1;
  c->ended = false;
  ClientProcessSpec spec;
  spec.name = name;
  spec.argv = c->spec.argv;
  spec.directory = c->spec.directory;
  spec.env = c->spec.env;
  spec.env.push_back("LOCKSTEP_INCARNATION=" + std::to_string(c->incarnation));
  spec.env.push_back("TMPDIR=" + dir_);
  spec.stderr_file = dir_ + "/" + name + ".stderr";
  if (c->clock) {
    if (!c->clock->open()) return "cannot create the clock file " + c->clock->path();
    spec.clock_file = c->clock->path();
  }
  c->process = std::make_unique<ClientProcess>(world_.loop(), std::move(spec));
  const int64_t id = c->history_id;
  const int incarnation = c->incarnation;
  c->process->on_line = [this, id, incarnation](std::string_view line, bool overlong) {
    if (on_line) on_line(id, incarnation, line, overlong);
  };
  c->process->on_exit = [this, c, id, incarnation](int status) {
    c->ended = true;
    c->paused_until = Nanos(0);
    c->when_running.clear();
    cluster_.proxy().drop(c->name);
    if (on_exit) on_exit(id, incarnation, status);
  };
  return c->process->start();
}

bool ExternalControl::all_ended() const {
  for (const auto& [name, c] : clients_) {
    if (c->process && c->process->running()) return false;
  }
  return true;
}

bool ExternalControl::all_exited_for_good(const std::function<bool(const std::string& client)>& restarts) const {
  for (const auto& [name, c] : clients_) {
    if (c->incarnation == 0 || (c->process && c->process->running())) return false;
    if (c->crashed && restarts(name)) return false;
  }
  return true;
}

std::vector<std::string> ExternalControl::kill_running() {
  std::vector<std::string> out;
  for (auto& [name, c] : clients_) {
    if (!c->process || !c->process->running()) continue;
    out.push_back(name);
    c->process->kill();
  }
  return out;
}

std::string ExternalControl::stderr_tail(const std::string& name, size_t lines) const {
  auto it = clients_.find(name);
  if (it == clients_.end() || !it->second->process) return "";
  return it->second->process->stderr_tail(lines);
}

ExternalControl::Client* ExternalControl::find(std::string_view name) {
  auto it = clients_.find(name);
  return it == clients_.end() ? nullptr : it->second.get();
}

ExternalControl::Client* ExternalControl::find(const ProcessRef& p) { return p.server ? nullptr : find(p.name); }

// A command on its way from a client: first what the program wrote before sending it,
// then the event; a fault due now closes the gate until it has been played.
bool ExternalControl::arrived(const ProxyMessage& m) {
  Client* c = find(*m.from);
  if (!c) return false;
  if (!m.reply && c->process) c->process->read_output();
  if (!m.argv || m.argv->empty()) return false;
  const auto kind = m.reply ? WorldEvent::Kind::Receives : WorldEvent::Kind::Sends;
  if (!event({kind, c->name, (*m.argv)[0], command_key(*m.argv)})) return false;
  // Deferred behind the fault the event just scheduled for this instant.
  at(now(), [this, name = c->name] {
    Client* held = find(name);
    if (!held) return;
    if (held->crashed) {
      cluster_.proxy().drop(name);
      return;
    }
    run_when_running(*held, [this, name] { cluster_.proxy().release(name); });
  });
  return true;
}

void ExternalControl::run_when_running(Client& c, std::function<void()> fn) {
  if (c.crashed || c.ended) return;
  if (c.paused_until > now()) {
    c.when_running.push_back(std::move(fn));
    return;
  }
  fn();
}

void ExternalControl::pause(const ProcessRef& p, Nanos d) {
  Client* c = find(p);
  if (!c) {
    Control::pause(p, d);
    return;
  }
  if (c->crashed || c->ended || !c->process || !c->process->running()) return;
  const Nanos until = now() + d;
  if (until <= c->paused_until) return;
  if (c->paused_until <= now()) c->process->stop();
  c->paused_until = until;
  at(until, [this, name = c->name] {
    if (Client* paused = find(name)) end_pause(*paused);
  });
}

void ExternalControl::end_pause(Client& c) {
  if (c.paused_until > now() || c.paused_until == Nanos(0)) return;  // a longer pause, or gone
  c.paused_until = Nanos(0);
  if (c.process) c.process->resume();
  auto waiting = std::move(c.when_running);
  c.when_running.clear();
  for (auto& fn : waiting) fn();
}

void ExternalControl::crash(const ProcessRef& p) {
  Client* c = find(p);
  if (!c) {
    Control::crash(p);
    return;
  }
  if (c->crashed || !c->process) return;
  c->process->kill();  // hands on what it wrote before it died, then it is gone
  c->crashed = true;
  c->paused_until = Nanos(0);
  c->when_running.clear();
  cluster_.proxy().drop(c->name);
}

void ExternalControl::restart(const ProcessRef& p) {
  Client* c = find(p);
  if (!c) {
    Control::restart(p);
    return;
  }
  if (!c->crashed) return;
  c->crashed = false;
  if (auto why = start(c->name); !why.empty() && on_start_failed) on_start_failed(c->history_id, c->incarnation, why);
}

void ExternalControl::jump_wall_clock(const ProcessRef& p, Nanos by) {
  Client* c = find(p);
  if (!c) {
    Control::jump_wall_clock(p, by);
    return;
  }
  if (c->clock) c->clock->set_wall_offset(c->clock->wall_offset() + by);
}

void ExternalControl::set_clock_drift(const ProcessRef& p, double drift_ppm) {
  Client* c = find(p);
  if (!c) {
    Control::set_clock_drift(p, drift_ppm);
    return;
  }
  if (c->clock) c->clock->set_drift(drift_ppm, /*monotonic_too=*/true);
}

}  // namespace lockstep::live
