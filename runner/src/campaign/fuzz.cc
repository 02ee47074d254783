#include "lockstep/runner/fuzz.h"

#include <rapidcheck.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "lockstep/algorithms.h"
#include "lockstep/profiles.h"

#include "lockstep/checker/properties.h"
#include "lockstep/random.h"
#include "lockstep/runner/jobs.h"
#include "lockstep/text.h"

namespace lockstep::runner {
namespace {

// The leases a generated scenario chooses from: around the pauses and delays generated.
const std::vector<int64_t> kLeases = {200, 500, 1000, 2000};

constexpr int kGenSize = 50;

// Which processes a fault of `kind` may hit (the fault plan's fuzz_targets).
rc::Gen<std::string> process_gen(FaultKind kind, int clients, int nodes) {
  std::vector<std::string> names;
  for (int i = 1; i <= clients; ++i) names.push_back("client-" + std::to_string(i));
  int first_node = 1;
  switch (kind_info(kind).fuzz_targets) {
    case FuzzTargets::Clients: first_node = nodes + 1; break;
    case FuzzTargets::ClientsSpareNodes: first_node = 2; break;
    case FuzzTargets::Anyone: break;
  }
  for (int i = first_node; i <= nodes; ++i) names.push_back("node-" + std::to_string(i));
  return rc::gen::elementOf(names);
}

// One fault of `kind`, somewhere in the first half of the run so its effects have time
// to show; sizes long enough to outlive small leases.
rc::Gen<FaultSpec> fault_gen(FaultKind kind, int clients, int nodes, int64_t duration_ms) {
  const int64_t horizon = duration_ms / 2;
  switch (kind_info(kind).target) {
    case FaultTarget::Master:
      return rc::gen::apply(
          [kind](int node, int64_t at) { return sized_fault(kind, "node-" + std::to_string(node), at, 0, false); },
          rc::gen::inRange(1, nodes + 1), rc::gen::inRange<int64_t>(0, horizon));
    case FaultTarget::Groups:
      return rc::gen::apply(
          [kind](int c, int64_t at, int64_t dur, bool one_way) {
            FaultSpec f = sized_fault(kind, "", at, dur, false);
            f.groups = {{"client-" + std::to_string(c)}, {"node-1"}};
            f.one_way = one_way;
            return f;
          },
          rc::gen::inRange(1, clients + 1), rc::gen::inRange<int64_t>(0, horizon), rc::gen::inRange<int64_t>(1, 3000),
          rc::gen::arbitrary<bool>());
    case FaultTarget::Process: break;
  }
  return rc::gen::apply(
      [kind](std::string target, int64_t at, int64_t amount, bool restart) {
        return sized_fault(kind, std::move(target), at, amount, restart);
      },
      process_gen(kind, clients, nodes), rc::gen::inRange<int64_t>(0, horizon), rc::gen::inRange<int64_t>(1, 3000),
      rc::gen::arbitrary<bool>());
}

// A failover needs a replica to promote.
bool needs_replica(FaultKind kind) { return kind_info(kind).target == FaultTarget::Master; }

// A schedule of faults of the allowed kinds on these processes, shrinking fault by fault.
rc::Gen<std::vector<FaultSpec>> faults_gen(const FuzzSpace& sp, int clients, int nodes, int replicas) {
  std::vector<FaultKind> kinds;
  for (const auto k : sp.fault_kinds) {
    if (!needs_replica(k) || replicas > 0) kinds.push_back(k);
  }
  if (kinds.empty()) return rc::gen::just(std::vector<FaultSpec>{});
  auto one = rc::gen::mapcat(rc::gen::elementOf(kinds), [clients, nodes, d = sp.duration_ms](FaultKind k) {
    return fault_gen(k, clients, nodes, d);
  });
  // Container shrinking drops faults one by one: how a schedule gets down to the few
  // events that matter.
  return rc::gen::resize(sp.faults_max, rc::gen::container<std::vector<FaultSpec>>(one));
}

// Pauses are clipped, client by client and in time order, so that each client's total
// pause leaves the work inside the lease with room for the round trips; pauses that no
// longer fit are dropped.
void keep_pauses_within_lease(std::vector<FaultSpec>& faults, int64_t lease_ms, int64_t hold_ms) {
  const int64_t margin = 20 + lease_ms / 10;
  std::map<std::string, int64_t> budget;
  std::vector<size_t> order(faults.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return faults[a].at_ms < faults[b].at_ms; });
  std::vector<bool> drop(faults.size(), false);
  for (size_t i : order) {
    FaultSpec& f = faults[i];
    if (f.kind != FaultKind::Pause) continue;
    auto [it, fresh] = budget.try_emplace(f.target, lease_ms - hold_ms - margin);
    if (it->second <= 0) {
      drop[i] = true;
      continue;
    }
    f.duration_ms = std::min(f.duration_ms, it->second);
    it->second -= f.duration_ms;
  }
  std::vector<FaultSpec> kept;
  for (size_t i = 0; i < faults.size(); ++i)
    if (!drop[i]) kept.push_back(std::move(faults[i]));
  faults = std::move(kept);
}

// What the scenario's lock is configured with, as its assumptions read it.
LockSetup setup_of(const Scenario& s) {
  LockSetup setup;
  setup.options = s.lock.options;
  setup.lease_ms = s.lock.lease_ms;
  setup.command_timeout_ms = s.lock.command_timeout_ms;
  return setup;
}

std::vector<Assumption> assumptions_of(const Scenario& s) {
  const LockInfo* info = s.lock.info();
  return info ? lock_assumptions(*info, setup_of(s)) : std::vector<Assumption>{};
}

// A fault on a server — a Redis node, a ZooKeeper server, the MySQL server — rather than
// on a client: what a lock's "node" assumptions speak of.
bool on_node(const FaultSpec& f) {
  return f.kind == FaultKind::Failover || f.target.rfind("node-", 0) == 0 || f.target.rfind("zk-", 0) == 0 ||
         f.target == "mysql-1";
}

const Assumption* covering(const std::vector<Assumption>& list, const FaultSpec& f) {
  const std::string hits = f.kind != FaultKind::Partition && on_node(f) ? "node" : "client";
  for (const auto& a : list)
    if (a.fault == to_string(f.kind) && a.hits == hits) return &a;
  return nullptr;
}

// A fault's size in its assumption's measure (see Assumption::max).
int64_t size_of(const FaultSpec& f) {
  switch (f.kind) {
    case FaultKind::Pause:
    case FaultKind::Partition: return f.duration_ms;
    case FaultKind::ClockJump: return std::abs(f.jump_ms);
    case FaultKind::ClockDrift: return static_cast<int64_t>(std::llround(std::abs(f.drift_ppm)));
    case FaultKind::Delay: return f.delay_ms;
    case FaultKind::Jitter: return f.jitter_ms;
    case FaultKind::Crash:
    case FaultKind::Failover: break;
  }
  return 0;
}

void set_size(FaultSpec& f, int64_t v) {
  switch (f.kind) {
    case FaultKind::Pause:
    case FaultKind::Partition: f.duration_ms = v; break;
    case FaultKind::ClockJump: f.jump_ms = f.jump_ms < 0 ? -v : v; break;
    case FaultKind::ClockDrift: f.drift_ppm = f.drift_ppm < 0 ? -static_cast<double>(v) : static_cast<double>(v); break;
    case FaultKind::Delay: f.delay_ms = v; break;
    case FaultKind::Jitter: f.jitter_ms = v; break;
    case FaultKind::Crash:
    case FaultKind::Failover: break;
  }
}

// Room a pause leaves for the round trips after it: as keep_pauses_within_lease.
int64_t pause_margin(int64_t bound) { return 20 + bound / 10; }

// The faults cut down to the lock's assumptions, in time order (see Budget::Within).
//
// Each claim speaks of its fault alone, so faults that together eat one client's lease
// share one budget of silence per client: its pauses, the cuts that isolate it, and
// the time delays add to its acquire and release, each of `rounds` sequential round
// trips slowed twice. A pause as long as its claim allows, after an acquire slowed by a
// delay as large as its claim allows, outlives the lease that the two claims each keep.
std::vector<FaultSpec> fit_within(std::vector<FaultSpec> faults, const std::vector<Assumption>& list,
                                  int64_t hold_ms, int rounds) {
  std::vector<size_t> order(faults.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return faults[a].at_ms < faults[b].at_ms; });
  std::vector<bool> keep(faults.size(), false);
  // Per client: silence taken by its pauses and cuts, and lease taken by delays (the
  // key "" holds delays on servers, which slow every client).
  std::map<std::string, int64_t> silent, slowed;
  std::map<std::string, int64_t> silence_room;  // per client: the smallest room a kept silence claimed
  std::vector<std::string> nodes_down;
  std::vector<std::pair<int64_t, int64_t>> slowing;  // kept delays and jitters: added ms, until
  const auto room_of = [&](const std::string& who) {
    auto it = silence_room.find(who);
    if (it == silence_room.end()) return Assumption::kAny;
    return it->second - silent[who] - slowed[who] - slowed[""];
  };
  for (size_t i : order) {
    FaultSpec& f = faults[i];
    const Assumption* a = covering(list, f);
    if (!a) continue;
    if (f.kind == FaultKind::Pause || f.kind == FaultKind::Partition) {
      // A client's pauses together, and its cuts together (a session that hears nothing
      // between two cuts counts both), stay inside the bound.
      const std::string who =
          f.kind == FaultKind::Pause ? f.target : (f.groups.empty() || f.groups[0].empty() ? "" : f.groups[0][0]);
      if (a->max != Assumption::kAny) {
        const int64_t room = a->max - (a->work_counts ? hold_ms : 0) - pause_margin(a->max);
        auto [it, fresh] = silence_room.try_emplace(who, room);
        if (!fresh) it->second = std::min(it->second, room);
        const int64_t left = room_of(who);
        if (left <= 0) continue;
        f.duration_ms = std::min(f.duration_ms, left);
        silent[who] += f.duration_ms;
      }
    } else if (f.kind == FaultKind::Crash && on_node(f)) {
      if (std::find(nodes_down.begin(), nodes_down.end(), f.target) == nodes_down.end()) {
        if (a->max != Assumption::kAny && static_cast<int64_t>(nodes_down.size()) >= a->max) continue;
        nodes_down.push_back(f.target);
      }
      if (f.restart_after_ms) f.restart_after_ms = std::max(*f.restart_after_ms, a->restart_min_ms + 10);
    } else if ((f.kind == FaultKind::Delay || f.kind == FaultKind::Jitter) && a->max != Assumption::kAny) {
      // Delays add up along a message's path (its sender's and its receiver's) and a
      // request's round trip carries them twice: the claim bounds the round trip, so
      // what every fault already active adds is taken from half of it, less room for
      // the network's own latency.
      int64_t used = 0;
      for (const auto& k : slowing)
        if (k.second > f.at_ms) used += k.first;
      int64_t left = (a->max - pause_margin(a->max) / 4) / 2 - used;
      // And what it adds to an acquire and a release comes out of the silence left to
      // every client it slows.
      const std::string who = on_node(f) ? "" : f.target;
      for (const auto& [client, room] : silence_room) {
        if (!who.empty() && client != who) continue;
        left = std::min(left, room_of(client) / (2 * rounds));
      }
      if (left <= 0) continue;
      if (size_of(f) > left) set_size(f, left);
      slowing.emplace_back(size_of(f), f.at_ms + f.duration_ms);
      slowed[who] += 2 * rounds * size_of(f);
    } else if (a->max != Assumption::kAny) {
      if (a->max <= 0) continue;
      if (size_of(f) > a->max) set_size(f, a->max);
    }
    keep[i] = true;
  }
  std::vector<FaultSpec> kept;
  for (size_t i = 0; i < faults.size(); ++i)
    if (keep[i]) kept.push_back(std::move(faults[i]));
  return kept;
}

bool faults_within(const std::vector<FaultSpec>& faults, const std::vector<Assumption>& list, int64_t hold_ms,
                   int rounds) {
  return fit_within(faults, list, hold_ms, rounds) == faults;
}

// Pushes the first fault that can be past the lock's assumptions (see Budget::Beyond).
void push_beyond(std::vector<FaultSpec>& faults, const std::vector<Assumption>& list, int64_t hold_ms, int rounds) {
  if (!faults_within(faults, list, hold_ms, rounds)) return;
  for (auto& f : faults) {
    const Assumption* a = covering(list, f);
    if (!a) return;  // unreachable: a fault no assumption covers is beyond already
    if (f.kind == FaultKind::Crash && on_node(f)) {
      if (a->restart_min_ms > 0) {
        f.restart_after_ms = std::max<int64_t>(1, f.restart_after_ms.value_or(a->restart_min_ms) % a->restart_min_ms);
        return;
      }
    } else if (f.kind != FaultKind::Crash && f.kind != FaultKind::Failover && a->max != Assumption::kAny) {
      set_size(f, a->max + std::max<int64_t>(1, size_of(f)));
      return;
    }
  }
}

// The round trips of one acquire and one release that a delay may slow one after
// another: a lock over several masters may ask them in turn.
int rounds_of(const Scenario& s) { return 2 * std::max(1, s.topology.nodes); }

// The budget applied to a built scenario's faults.
void hold_to_budget(const FuzzSpace& sp, Scenario& s) {
  if (sp.budget == Budget::Any) return;
  const auto list = assumptions_of(s);
  if (sp.budget == Budget::Within) {
    s.faults = fit_within(std::move(s.faults), list, s.workload.hold_ms, rounds_of(s));
  } else {
    push_beyond(s.faults, list, s.workload.hold_ms, rounds_of(s));
  }
}

// A lock of another service gets that service beside the stock's Redis node, sized to the
// drawn lease: a ZooKeeper session of the lease (four ticks), a MySQL wait_timeout of the
// lease in whole seconds and a row-lock wait of the client's. The partitions drawn between
// a client and node-1 cut it from the service instead: the link its lock depends on.
void give_service(Scenario& s, LockService service) {
  std::vector<std::string> servers;
  if (service == LockService::ZooKeeper) {
    s.topology.zookeeper.servers = 3;
    s.topology.zookeeper.tick_ms = std::max<int64_t>(1, s.lock.lease_ms / 4);
    s.topology.zookeeper.session_timeout_ms = s.topology.zookeeper.tick_ms * 4;
    servers = {"zk-1", "zk-2", "zk-3"};
  } else {
    s.topology.mysql.enabled = true;
    s.topology.mysql.wait_timeout_s = std::max<int64_t>(1, s.lock.lease_ms / 1000);
    s.topology.mysql.innodb_lock_wait_timeout_s = std::max<int64_t>(1, s.workload.wait_ms / 1000);
    servers = {"mysql-1"};
  }
  s.worlds = {World::Sim};
  for (auto& f : s.faults) {
    if (f.kind == FaultKind::Partition && f.groups.size() == 2 && f.groups[1] == std::vector<std::string>{"node-1"})
      f.groups[1] = servers;
  }
}

// A library's lock draws one of its lock kinds and a lease; every duration option of the
// library is then its default scaled by lease / default lease, so a short run sees the
// library's own proportions (Redisson's 30 s watchdog with its 3 s command timeout
// becomes a 1 s watchdog with a 100 ms timeout), and counts keep their defaults. A
// library whose default is no lease at all (redis-py's timeout=None) draws that default
// too, and so do a few settings users commonly change (node-redlock's retryCount -1,
// "retry forever", which using() invites; Redisson's explicit leaseTime, and its waitTime
// -1 where the version has that option). Libraries with an extend call extend every
// third of the lease; those that renew (an extend call, a watchdog, using(), RedMutex)
// may work longer than the lease. lockstep's recipes take the lease as lease_ms, with a
// retry loop that outlasts the run, at their default options.

// The lock kinds the lock offers ("" alone: one kind).
std::vector<std::string> kinds_of(const LockInfo& lock) {
  const LockOption* k = lock.library_options() ? find_option(lock, "kind") : nullptr;
  return k ? k->choices : std::vector<std::string>{""};
}

nlohmann::json with_kind(const std::string& kind) {
  return kind.empty() ? nlohmann::json::object() : nlohmann::json{{"kind", kind}};
}

// The masters the lock takes with this kind (RedLock-style locks, MultiLocks: three).
int nodes_of(const LockInfo& lock, const std::string& kind) { return lock_nodes(lock, with_kind(kind)); }

// The library's lease in ms at its defaults (10 s when it has none, for scaling only).
double default_lease_ms(const LockInfo& p) {
  const LockOption* o = find_option(p, p.lease_option);
  if (!o || !o->default_value.is_number()) return 10000;
  return o->default_value.get<double>() * o->ms_per_unit;
}

nlohmann::json scaled(const LockOption& o, double scale) {
  const double v = o.default_value.get<double>() * scale;
  if (o.type == LockOption::Type::Integer) {
    return std::max<int64_t>(static_cast<int64_t>(o.min), static_cast<int64_t>(std::llround(v)));
  }
  return std::max(o.min, std::round(v * 1000) / 1000);
}

// A choice beside the lock kind (redis-py 2.10.6's `usage` and `class`) is how users call
// the library, and each way has its own windows: `choice_bits` picks one of each.
nlohmann::json options_for(const LockInfo& p, const std::string& kind, int64_t lease_ms, bool library_default,
                           uint32_t choice_bits) {
  nlohmann::json out = with_kind(kind);
  const double scale = static_cast<double>(lease_ms) / default_lease_ms(p);
  for (const auto& o : option_table(p)) {
    if (!applies_to_kind(o, kind)) continue;
    if (o.type == LockOption::Type::Choice && o.name != "kind" && o.choices.size() > 1) {
      out[o.name] = o.choices[choice_bits % o.choices.size()];
      choice_bits /= static_cast<uint32_t>(o.choices.size());
      continue;
    }
    if (!o.duration || !o.default_value.is_number()) continue;
    out[o.name] = scaled(o, scale);
  }
  const LockOption* lease = find_option(p, p.lease_option);
  if (lease && !(library_default && lease->default_value.is_null())) {
    const double v = static_cast<double>(lease_ms) / lease->ms_per_unit;
    out[lease->name] = lease->ms_per_unit == 1 ? nlohmann::json(lease_ms) : nlohmann::json(v);
  }
  if (!library_default && p.library == "node-redlock") out["retryCount"] = -1;
  if (!library_default && p.library == "redisson") out["leaseTime"] = lease_ms;
  // tryLock(-1, leaseTime), "now or never", where a version documents -1 as no wait.
  if (!library_default && find_option(p, "waitTime")) out["waitTime"] = -1;
  return out;
}

// Renews by itself or by the client's extend calls: the work may outlast the lease. A
// recipe drawn at its default options does not.
bool renews(const LockInfo& p, const nlohmann::json& options) {
  if (!p.library_options()) return false;
  const ProfileOptions o(p, options);
  if (lock_extends(p, options)) return true;
  if (p.library == "redisson") return o.integer("leaseTime") <= 0;
  if (p.library == "node-redlock") return o.choice("kind") == "using";
  if (p.library == "redis-plus-plus") return o.choice("kind") == "redmutex";
  return false;
}

// What one run draws, beyond the space it draws from.
struct Draw {
  const LockInfo* lock = nullptr;
  std::string kind;  // a library's lock kind, "" for one kind
  int clients = 2, replicas = 0, lease_index = 0;
  bool library_default = false;  // a library's lease (and a few options) left at its default
  // A lock that reports each hold's validity: the holder works for all of it, and waiters
  // try again until their wait is over (RedLock's own usage, and a queue of workers).
  bool by_validity = false;
  int stagger_percent = 0;  // by_validity: clients arrive this far apart, in percent of the lease
  int hold_percent = 1;          // the work, in percent of the lease (of four leases when renewed)
  std::vector<FaultSpec> faults;
  uint32_t seed = 0;
};

Scenario build(const FuzzSpace& sp, Draw d) {
  const LockInfo& lock = *d.lock;
  Scenario s;
  s.name = "fuzz";
  s.description = "Generated by lockstep fuzz.";
  s.seed = d.seed;
  s.duration_ms = sp.duration_ms;
  s.topology.nodes = nodes_of(lock, d.kind);
  s.topology.replicas = d.replicas;
  s.topology.replication_lag_ms = d.replicas > 0 ? 20 : 0;
  const int64_t lease = kLeases[d.lease_index];
  s.lock.algorithm = lock.name;
  if (lock.library_options()) {
    // The seed's upper bits pick the choices beside the kind (see options_for), so the
    // generators, and the draws of every lock without such a choice, stay as they were.
    s.lock.options = options_for(lock, d.kind, lease, d.library_default, d.seed >> 8);
  } else {
    s.lock.lease_ms = lease;
    s.lock.retry = {1000, 10, 10};
  }
  s.workload.clients = d.clients;
  s.workload.initial_stock = 10;
  s.workload.attempts_per_client = 2;
  // Without renewal the work fits in the lease (a violation needs a fault); with it, the
  // work may run up to four leases: what renewal is for, and what its failures need (a
  // renewal lost early shows only once the work outlives the leases renewed before it).
  const int percent = renews(lock, s.lock.options) ? d.hold_percent * 8 : d.hold_percent;
  s.workload.hold_ms = std::max<int64_t>(1, lease * percent / 100);
  s.workload.extend_every_ms = lock_extends(lock, s.lock.options) ? std::max<int64_t>(1, lease / 3) : 0;
  s.workload.wait_ms = sp.duration_ms / 2;
  s.workload.start_stagger_ms = 5;
  if (d.by_validity) {
    s.workload.hold_for_validity = s.workload.retry_until_wait = true;
    s.workload.hold_ms = lease;  // the most the work can take: what the budgets count
    // Workers arrive at any moment of a hold: a waiter's retries then meet a lease's end
    // at every phase, not at the one a fixed stagger and a fixed retry delay give.
    s.workload.start_stagger_ms = std::max<int64_t>(5, lease * d.stagger_percent / 100);
  }
  // A read-write lock gets some readers too; drawn from the seed so that the generators
  // (and every existing campaign's scenarios) stay as they were.
  if (lock.read_write) s.workload.readers = static_cast<int>(d.seed % static_cast<uint32_t>(d.clients));
  for (auto& f : d.faults) f.at_ms = std::min(f.at_ms, s.duration_ms - 1);
  if (sp.pauses_within_lease) keep_pauses_within_lease(d.faults, lease, s.workload.hold_ms);
  s.faults = std::move(d.faults);
  if (lock.service != LockService::Redis) give_service(s, lock.service);
  hold_to_budget(sp, s);
  return s;
}

// What a run draws once its lock and topology are chosen: a library's lock kind, then the
// lease, (for a library) whether to keep its defaults, the work, the faults and the seed.
rc::Gen<Scenario> draws_gen(const FuzzSpace& sp, int clients, const LockInfo& lock, int replicas) {
  const auto lease_index = rc::gen::inRange(0, static_cast<int>(kLeases.size()));
  const auto hold_percent = rc::gen::inRange(1, 50);
  if (!lock.library_options()) {
    return rc::gen::apply(
        [sp, clients, &lock, replicas](int lease, int hold, std::vector<FaultSpec> faults, uint32_t seed) {
          return build(sp, Draw{&lock, "", clients, replicas, lease, false, false, 0, hold, std::move(faults), seed});
        },
        lease_index, hold_percent, faults_gen(sp, clients, nodes_of(lock, ""), replicas),
        rc::gen::arbitrary<uint32_t>());
  }
  return rc::gen::mapcat(rc::gen::elementOf(kinds_of(lock)), [=, &lock](const std::string& kind) {
    // A lock that reports validity draws whether the run uses it; the others draw as
    // they always have.
    if (lock.reports_validity) {
      return rc::gen::apply(
          [sp, clients, &lock, replicas, kind](int lease, bool library_default, int hold, std::vector<FaultSpec> faults,
                                               uint32_t seed, bool by_validity, int stagger) {
            Draw d{&lock, kind, clients, replicas, lease, library_default, by_validity, stagger, hold, std::move(faults), seed};
            return build(sp, std::move(d));
          },
          lease_index, rc::gen::arbitrary<bool>(), hold_percent, faults_gen(sp, clients, nodes_of(lock, kind), replicas),
          rc::gen::arbitrary<uint32_t>(), rc::gen::arbitrary<bool>(), rc::gen::inRange(0, 100));
    }
    return rc::gen::apply(
        [sp, clients, &lock, replicas, kind](int lease, bool library_default, int hold,
                                             std::vector<FaultSpec> faults, uint32_t seed) {
          return build(sp, Draw{&lock, kind, clients, replicas, lease, library_default, false, 0, hold, std::move(faults), seed});
        },
        lease_index, rc::gen::arbitrary<bool>(), hold_percent, faults_gen(sp, clients, nodes_of(lock, kind), replicas),
        rc::gen::arbitrary<uint32_t>());
  });
}

// Topology first (clients, the lock and so the node count, replicas), then everything
// that refers to it, so every generated name exists. A space of library locks never
// shrinks a run to another lock (a counterexample belongs to its library); a space of
// recipes may. A mixed space first draws the lock, which never shrinks to another, then
// draws as a space of that lock alone.
rc::Gen<Scenario> scenario_gen(const FuzzSpace& sp) {
  size_t library = 0;
  for (const auto& name : sp.locks) library += find_lock(name)->library_options();
  if (library != 0 && library != sp.locks.size()) {
    return rc::gen::mapcat(rc::gen::noShrink(rc::gen::elementOf(sp.locks)), [sp](const std::string& name) {
      FuzzSpace one = sp;
      one.locks = {name};
      return scenario_gen(one);
    });
  }
  const bool may_fail_over = std::any_of(sp.fault_kinds.begin(), sp.fault_kinds.end(), needs_replica);
  auto lock = rc::gen::elementOf(sp.locks);
  auto topology = rc::gen::tuple(rc::gen::inRange(2, sp.clients_max + 1),
                                 library != 0 ? rc::gen::noShrink(std::move(lock)) : std::move(lock),
                                 rc::gen::inRange(0, may_fail_over ? 2 : 1));
  return rc::gen::mapcat(topology, [sp](const std::tuple<int, std::string, int>& t) {
    const auto& [clients, name, replicas] = t;
    return draws_gen(sp, clients, *find_lock(name), replicas);
  });
}

uint64_t run_seed(uint64_t campaign_seed, uint64_t index) {
  uint64_t state = campaign_seed ^ (index * 0x9e3779b97f4a7c15ULL);
  return splitmix64(state);
}

bool stops(const FuzzSpace& sp, const checker::Violation& v) {
  if (sp.properties.empty() && sp.classes.empty()) return true;
  return sp.properties.count(checker::to_string(v.property)) > 0 || sp.classes.count(v.severity) > 0;
}

// What one run showed: whether it stops the campaign, and what the summary counts of it.
struct Judged {
  bool bad = false;
  std::set<std::string> classes;
  bool unknown = false;
};

Judged judge(const FuzzSpace& sp, const Scenario& s, RunOutcome* out = nullptr) {
  Judged j;
  RunOptions options;
  options.verdict_only = out == nullptr;
  RunOutcome o = run_in_sim(s, options);
  for (const auto& v : o.report.violations) j.bad = j.bad || stops(sp, v);
  j.classes = o.report.found_classes();
  j.unknown = o.report.unknown();
  if (out) *out = std::move(o);
  return j;
}

// Whether the run shows a finding the campaign stops on.
bool fails(const FuzzSpace& sp, const Scenario& s, RunOutcome* out = nullptr) {
  // A smaller scenario that falls back within the assumptions is not a beyond one.
  if (sp.budget == Budget::Beyond && within_assumptions(s)) return false;
  return judge(sp, s, out).bad;
}

// Greedy descent of the shrink tree: take the first smaller scenario that still fails,
// repeat until none does or the run budget is spent.
Scenario shrink(const FuzzSpace& sp, rc::Shrinkable<Scenario> current, int runs_max, int& steps) {
  int runs = 0;
  bool progressed = true;
  while (progressed && runs < runs_max) {
    progressed = false;
    auto candidates = current.shrinks();
    while (auto next = candidates.next()) {
      if (++runs > runs_max) break;
      if (fails(sp, next->value())) {
        current = std::move(*next);
        ++steps;
        progressed = true;
        break;
      }
    }
  }
  return current.value();
}

}  // namespace

const char* to_string(Budget b) {
  switch (b) {
    case Budget::Any: return "any";
    case Budget::Within: return "within";
    case Budget::Beyond: return "beyond";
  }
  return "any";
}

bool within_assumptions(const Scenario& s) {
  return faults_within(s.faults, assumptions_of(s), s.workload.hold_ms, rounds_of(s));
}

std::string parse_stop_on(const std::string& list, FuzzSpace& space) {
  space.properties.clear();
  space.classes.clear();
  if (list == "all" || list.empty()) return "";
  if (list == "safety") {
    // Exclusion and progress: everything but the order waiters are served in.
    for (const auto& c : checker::severity_classes())
      if (c.severity != checker::Severity::Unfair) space.classes.insert(c.severity);
    return "";
  }
  std::vector<std::string> known = checker::severity_names();
  for (const auto& p : checker::property_names()) known.push_back(p);
  size_t begin = 0;
  while (begin <= list.size()) {
    const size_t end = std::min(list.find(',', begin), list.size());
    const std::string name = list.substr(begin, end - begin);
    begin = end + 1;
    if (name.empty()) continue;
    if (auto c = checker::severity_named(name)) {
      space.classes.insert(*c);
    } else if (checker::property_named(name)) {
      space.properties.insert(name);
    } else {
      const std::string near = nearest_name(name, known);
      return "unknown class or property \"" + name + "\"" + (near.empty() ? "" : " (did you mean \"" + near + "\"?)") +
             ": classes " + join(checker::severity_names()) + "; properties " + join(checker::property_names());
    }
  }
  return "";
}

std::string by_class_text(const std::map<std::string, uint64_t>& by_class) {
  std::string out;
  // In the classes' own order, most severe first, not the map's.
  for (const auto& c : checker::severity_classes()) {
    auto it = by_class.find(c.name);
    if (it == by_class.end() || it->second == 0) continue;
    out += (out.empty() ? "" : ", ") + std::string(c.name) + " " + std::to_string(it->second);
  }
  return out.empty() ? "none" : out;
}

Scenario generate_scenario(const FuzzSpace& space, uint64_t campaign_seed, uint64_t index) {
  return scenario_gen(space)(rc::Random(run_seed(campaign_seed, index)), kGenSize).value();
}

FuzzSummary fuzz(const FuzzSpace& space, const FuzzOptions& o, const std::function<void(uint64_t, uint64_t)>& progress) {
  const auto started = std::chrono::steady_clock::now();
  auto elapsed = [started] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(); };
  // Shards take interleaved run indices: shard k of n runs k, k+n, k+2n, ...
  auto run_index = [&o](uint64_t i) { return i * static_cast<uint64_t>(o.shards) + static_cast<uint64_t>(o.shard); };
  // A run that found nothing is thrown away on the thread that ran it; only its counts
  // come back. A scenario no fault of which can leave the assumptions has no place in a
  // beyond campaign: it is not run.
  struct Run {
    bool skipped = false;
    Judged judged;
  };
  auto make_worker = [&space, &o, &run_index] {
    return [&space, &o, &run_index, gen = scenario_gen(space)](uint64_t i) {
      Run r;
      const Scenario s = gen(rc::Random(run_seed(o.seed, run_index(i))), kGenSize).value();
      r.skipped = space.budget == Budget::Beyond && within_assumptions(s);
      if (!r.skipped) r.judged = judge(space, s);
      return r;
    };
  };
  // A run's counts are a few bytes: the other jobs may run far past a slow one.
  InOrderPlan plan{std::max(1u, o.jobs), o.time_limit_s > 0 ? std::numeric_limits<uint64_t>::max() : o.runs, {}, 64};
  if (o.time_limit_s > 0) plan.may_start = [&elapsed, &o] { return elapsed() < o.time_limit_s; };
  FuzzSummary summary;
  std::optional<uint64_t> failed;
  run_in_order<Run>(plan, make_worker, [&](uint64_t i, Run&& r) {
    if (r.skipped) return true;
    ++summary.runs;
    for (const auto& c : r.judged.classes) ++summary.by_class[c];
    if (r.judged.unknown) ++summary.unknown;
    if (progress) progress(summary.runs, o.time_limit_s > 0 ? 0 : o.runs);
    if (r.judged.bad) failed = run_index(i);
    return !failed;
  });
  if (failed) {
    ++summary.violations;
    // The failing scenario is drawn again here, the same from its index: its shrink tree
    // is walked on this thread alone.
    auto shrinkable = scenario_gen(space)(rc::Random(run_seed(o.seed, *failed)), kGenSize);
    FuzzFinding f;
    f.original = shrinkable.value();
    f.index = *failed;
    f.shrunk = shrink(space, shrinkable, o.shrink_runs_max, f.shrink_steps);
    fails(space, f.shrunk, &f.outcome);
    f.shrunk.expect = reports::Expectation::at_least(f.outcome.report.found_violations());
    summary.finding = std::move(f);
  }
  summary.seconds = elapsed();
  return summary;
}

}  // namespace lockstep::runner
