#include <cmath>
#include <cstdlib>

#include "lockstep/live/live_world.h"

namespace lockstep::live {

bool parse_address(const std::string& text, NodeAddress& out) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 >= text.size()) return false;
  const std::string port = text.substr(colon + 1);
  if (port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos) return false;
  const int p = std::atoi(port.c_str());
  if (p <= 0 || p > 65535) return false;
  out.host = text.substr(0, colon);
  out.port = p;
  return true;
}

LiveWorld::LiveWorld(uint64_t seed) : seed_(seed) {}

LiveWorld::~LiveWorld() {
  // Frames first (they point into envs and connections), then the connections, whose
  // hiredis contexts call back with "freed" for every command in flight: closing_ makes
  // those callbacks drop their work instead of queueing it on a loop about to go.
  closing_ = true;
  for (auto& c : clients_) c->tasks.clear();
  clients_.clear();
  join_zookeeper_closers();
}

int LiveWorld::add_node(NodeAddress address) {
  nodes_.push_back(Node{std::move(address), 0});
  return node_count() - 1;
}

void LiveWorld::set_node_address(int node, NodeAddress address) {
  nodes_[node].address = std::move(address);
  ++nodes_[node].generation;  // connections notice on their next call and reconnect
  for (auto& c : clients_) c->env->close_node(node);
}

int LiveWorld::add_client(const std::string& name, int64_t history_id) {
  auto c = std::make_unique<Client>();
  c->name = name;
  c->history_id = history_id;
  c->rng = Rng(seed_, name);
  clients_.push_back(std::move(c));
  const int index = client_count() - 1;
  clients_.back()->env = std::make_unique<LiveEnv>(*this, index);
  return index;
}

LiveEnv& LiveWorld::env(int client) { return *clients_[client]->env; }

void LiveWorld::set_clock_drift(int client, double drift_ppm) {
  Client& c = *clients_[client];
  const Nanos now = loop_.now();
  c.drift_before = drift(client, now);
  c.drift_base = now;
  c.drift_ppb = std::llround(drift_ppm * 1000.0);
}

Nanos LiveWorld::drift(int client, Nanos now) const {
  const Client& c = *clients_[client];
  if (c.drift_ppb == 0) return c.drift_before;
  return c.drift_before + Nanos(static_cast<int64_t>(static_cast<__int128>((now - c.drift_base).count()) * c.drift_ppb / 1'000'000'000));
}

void LiveWorld::post(int client, uint64_t epoch, std::function<void()> fn) {
  if (closing_) return;
  loop_.defer([this, client, epoch, fn = std::move(fn)]() mutable { run_in(client, epoch, std::move(fn)); });
}

void LiveWorld::run_in(int client, uint64_t epoch, std::function<void()> fn) {
  Client& c = *clients_[client];
  if (c.crashed || c.epoch != epoch) return;
  if (loop_.now() < c.paused_until) {
    c.held.push_back(std::move(fn));
    return;
  }
  fn();
}

void LiveWorld::pause(int client, Nanos d) {
  Client& c = *clients_[client];
  if (c.crashed) return;
  const Nanos until = loop_.now() + d;
  if (until <= c.paused_until) return;
  c.paused_until = until;
  loop_.after(d, [this, client] { end_pause(client); });
}

bool LiveWorld::is_paused(int client) const { return loop_.now() < clients_[client]->paused_until; }

void LiveWorld::end_pause(int client) {
  Client& c = *clients_[client];
  if (loop_.now() < c.paused_until) return;  // a longer pause overlapped this one
  auto held = std::move(c.held);
  c.held.clear();
  // Re-posted in arrival order; the defer queue is FIFO, so the order survives.
  for (auto& fn : held) post(client, c.epoch, std::move(fn));
}

void LiveWorld::crash(int client) {
  Client& c = *clients_[client];
  if (c.crashed) return;
  c.crashed = true;
  ++c.epoch;
  c.paused_until = Nanos(0);
  c.held.clear();
  // Destroying the frames cancels every in-flight call, sleep and watchdog at once.
  c.tasks.clear();
  c.env->close_connections();
}

void LiveWorld::restart(int client) {
  Client& c = *clients_[client];
  if (!c.crashed) return;
  c.crashed = false;
  if (on_client_restart) on_client_restart(client);
}

void LiveWorld::spawn(int client, Task<void> t) {
  Client& c = *clients_[client];
  if (c.crashed) return;
  std::erase_if(c.tasks, [](const Task<void>& x) { return x.done(); });
  auto h = t.handle();
  c.tasks.push_back(std::move(t));
  post(client, c.epoch, [h] { h.resume(); });
}

bool LiveWorld::idle(int client) const {
  const Client& c = *clients_[client];
  for (const auto& t : c.tasks) {
    if (!t.done()) return false;
  }
  return true;
}

void LiveWorld::stop_all() {
  for (auto& c : clients_) {
    ++c->epoch;
    c->held.clear();
    c->tasks.clear();
    c->env->close_connections();
  }
  // Sessions close through the fault proxy, which runs on the loop: it keeps running
  // while they do (bounded: a close gives up after a few seconds).
  if (zookeeper_closers_running()) loop_.run_until([] { return !zookeeper_closers_running(); }, Millis(10000));
  join_zookeeper_closers();
}

}  // namespace lockstep::live
