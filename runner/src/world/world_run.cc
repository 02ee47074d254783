#include "world/world_run.h"

#include <memory>
#include <set>

#include "lockstep/runner/workload.h"

namespace lockstep::runner {
namespace {

const char* truth_name(Truth kind) {
  switch (kind) {
    case Truth::FaultStart: return checker::truth::kFaultStart;
    case Truth::FaultEnd: return checker::truth::kFaultEnd;
    case Truth::Crash: return checker::truth::kCrash;
    case Truth::Restart: return checker::truth::kRestart;
    case Truth::Failover: return checker::truth::kFailover;
    case Truth::FailoverRequested: return checker::truth::kFailoverRequested;
  }
  return checker::truth::kFaultStart;
}

void start_client(const Scenario& s, WorldControl& world, Recorder& rec, const ProcessRef& client) {
  Env& env = world.env(client);
  if (s.workload.cache_aside.enabled()) {
    env.spawn(cache_aside_client(env, rec, client.history_id, s.lock, s.workload));
    return;
  }
  env.spawn(stock_client(env, rec, client.history_id, s.lock, s.workload));
}

}  // namespace

Latency latency_of(const LatencySpec& l) {
  Latency out;
  auto ns = [](double ms) { return static_cast<int64_t>(ms * 1e6); };
  switch (l.kind) {
    case LatencySpec::Kind::Constant:
      out.kind = Latency::Kind::Constant;
      out.a_ns = ns(l.ms);
      break;
    case LatencySpec::Kind::Uniform:
      out.kind = Latency::Kind::Uniform;
      out.a_ns = ns(l.min_ms);
      out.b_ns = ns(l.max_ms);
      break;
    case LatencySpec::Kind::Normal:
      out.kind = Latency::Kind::Normal;
      out.a_ns = ns(l.mean_ms);
      out.b_ns = ns(l.stddev_ms);
      break;
    case LatencySpec::Kind::LongTail:
      out.kind = Latency::Kind::LongTail;
      out.a_ns = ns(l.ms);
      out.b_ns = ns(l.tail_ms);
      out.tail_probability = l.tail_probability;
      break;
  }
  return out;
}

void record_truth(WorldControl& world, Recorder& rec, const std::string& lock_key) {
  world.on_truth = [&rec](Truth kind, int64_t process, nlohmann::json value, int64_t node, nlohmann::json extra) {
    rec.truth(truth_name(kind), process, "", std::move(value), node, std::move(extra));
  };
  world.on_key_change = [&rec, &lock_key](const KeyChange& c) {
    if (c.key == lock_key) record_key_change(rec, c);
  };
}

void record_key_change(Recorder& rec, const KeyChange& c) {
  using K = KeyChange::Kind;
  const char* f = c.kind == K::Set      ? checker::truth::kKeySet
                  : c.kind == K::Del    ? checker::truth::kKeyDel
                  : c.kind == K::Evict  ? checker::truth::kKeyEvict
                                        : checker::truth::kKeyExpire;
  nlohmann::json extra;
  if (c.kind != K::Set) {
    // Built by emplace: an initializer list made this record cost as much as the DEL
    // that caused it.
    extra = nlohmann::json(nlohmann::json::value_t::object);
    extra.emplace("owner", c.owner);
    if (!c.cause.empty()) extra.emplace("cause", std::string(c.cause));
  } else if (c.reloaded) {
    extra = {{"reloaded", true}};
  }
  if (!c.at) {
    rec.truth(f, c.process, std::string(c.key), std::string(c.value), c.node, std::move(extra));
    return;
  }
  // Reported after the fact: placed among the records by its time, so the history stays
  // in time order.
  checker::Event e;
  e.type = checker::EventType::Truth;
  e.process = c.process;
  e.f = f;
  e.key = std::string(c.key);
  e.value = std::string(c.value);
  e.time_ns = c.at->count();
  e.node = c.node;
  e.extra = std::move(extra);
  auto& events = rec.history().events;
  size_t pos = events.size();
  while (pos > 0 && events[pos - 1].time_ns > e.time_ns) --pos;
  events.insert(events.begin() + static_cast<std::ptrdiff_t>(pos), std::move(e));
}

void start_clients(const Scenario& s, WorldControl& world, Recorder& rec) {
  // A client runs its workload once per life: from its start time, or from a restart
  // after a crash. A client down at its start time starts when it comes back; one that
  // comes back before its start time waits for it (it had not started: nothing to redo).
  auto down = std::make_shared<std::set<int64_t>>();  // history ids of clients crashed now
  world.on_truth = [down, record = std::move(world.on_truth)](Truth kind, int64_t process, nlohmann::json value,
                                                               int64_t node, nlohmann::json extra) {
    if (kind == Truth::Crash) down->insert(process);
    if (kind == Truth::Restart) down->erase(process);
    if (record) record(kind, process, std::move(value), node, std::move(extra));
  };
  world.on_client_restart = [&s, &world, &rec](const ProcessRef& client) {
    if (world.now() >= Millis(client_start_ms(s.workload, static_cast<int>(client.history_id)))) {
      start_client(s, world, rec, client);
    }
  };
  for (int i = 1; i <= s.workload.clients; ++i) {
    auto client = world.process("client-" + std::to_string(i));
    if (!client) continue;
    world.at(Millis(client_start_ms(s.workload, i)), [&s, &world, &rec, down, c = *client] {
      if (!down->count(c.history_id)) start_client(s, world, rec, c);
    });
  }
  for (int i = 1; i <= s.workload.cache.writers; ++i) {
    auto writer = world.process(cache_writer_name(i));
    if (!writer) continue;
    world.at(Millis(s.workload.cache.start_ms), [&s, &world, i, w = *writer] {
      Env& env = world.env(w);
      env.spawn(cache_writer(env, s.workload.cache, i));
    });
  }
}

int64_t oom_errors_in_info(const std::string& info) {
  const std::string field = "errorstat_OOM:count=";
  const size_t at = info.find(field);
  if (at == std::string::npos) return 0;
  int64_t n = 0;
  for (size_t i = at + field.size(); i < info.size() && info[i] >= '0' && info[i] <= '9'; ++i) n = n * 10 + (info[i] - '0');
  return n;
}

int64_t client_start_ms(const WorkloadSpec& w, int i) {
  const CacheAsideSpec& c = w.cache_aside;
  if (!c.enabled()) return (i - 1) * w.start_stagger_ms;
  if (i <= c.writers) return c.writer_start_ms + (i - 1) * w.start_stagger_ms;
  return c.reader_start_ms + (i - 1 - c.writers) * w.start_stagger_ms;
}

std::string cache_writer_name(int i) { return "cache-" + std::to_string(i); }

std::vector<InitialWrite> initial_writes(const Scenario& s) {
  std::vector<InitialWrite> out;
  out.push_back({std::nullopt, s.workload.stock_key, std::to_string(s.workload.initial_stock)});
  const CacheAsideSpec& c = s.workload.cache_aside;
  if (!c.enabled()) return out;
  for (int k = 0; k < c.keys; ++k) out.push_back({c.db_node - 1, cache_aside_db_key(k), cache_aside_initial_value(k)});
  return out;
}

namespace {

bool read_back(const Reply& r) { return r.type == Reply::Type::Bulk || r.type == Reply::Type::Nil; }

nlohmann::json string_value(const Reply& r) {
  return r.type == Reply::Type::Bulk ? nlohmann::json(r.str) : nlohmann::json();
}

}  // namespace

EndState record_end_state(const Scenario& s, WorldControl& world, Recorder& rec) {
  EndState out;
  const Reply stock = world.admin(world.node_of_key(s.workload.stock_key), {"GET", s.workload.stock_key});
  if (read_back(stock)) {
    out.resource_read = true;
    nlohmann::json final_value = nullptr;
    if (stock.type == Reply::Type::Bulk) {
      try {
        final_value = std::stoll(stock.str);
      } catch (...) {
        final_value = stock.str;
      }
    }
    rec.truth(checker::truth::kResource, -1, s.workload.stock_key,
              {{"initial", s.workload.initial_stock}, {"final", final_value}}, 0);
  }
  const CacheAsideSpec& c = s.workload.cache_aside;
  if (c.enabled()) {
    out.cache_read = true;
    for (int k = 0; k < c.keys; ++k) {
      const Reply cache = world.admin(c.cache_node - 1, {"GET", cache_aside_cache_key(k)});
      const Reply ttl = world.admin(c.cache_node - 1, {"PTTL", cache_aside_cache_key(k)});
      const Reply db = world.admin(c.db_node - 1, {"GET", cache_aside_db_key(k)});
      if (!read_back(cache) || !read_back(db) || ttl.type != Reply::Type::Integer) {
        out.cache_read = false;  // a server gone: that key's state is unknown
        continue;
      }
      rec.truth(checker::truth::kCacheFinal, -1, cache_aside_item(k),
                {{"cache", string_value(cache)}, {"db", string_value(db)}, {"cache_ttl_ms", ttl.integer},
                 {"max_stale_ms", c.max_stale_ms}},
                c.cache_node - 1);
    }
  }
  // How often each node answered OOM: what makes a full node an availability failure.
  if (s.topology.maxmemory_bytes > 0) {
    for (int n = 0; n < world.node_count(); ++n) {
      if (const int64_t count = oom_errors_in_info(world.admin(n, {"INFO", "errorstats"}).str); count > 0)
        rec.truth(checker::truth::kOomRefused, -1, "", count, n);
    }
  }
  return out;
}

std::vector<std::string> memory_config(const TopologySpec& t) {
  if (t.maxmemory_bytes == 0 && t.maxmemory_policy == EvictionPolicy::NoEviction && t.maxmemory_samples == 5) return {};
  return {"CONFIG", "SET", "maxmemory", std::to_string(t.maxmemory_bytes), "maxmemory-policy", to_string(t.maxmemory_policy),
          "maxmemory-samples", std::to_string(t.maxmemory_samples)};
}

void watch_critical_sections(WorldControl& world, Recorder& rec) {
  rec.on_truth = [&world](const checker::Event& e) {
    if (!world.on_event || e.process < 0) return;
    const bool enter = e.f == checker::truth::kCsEnter;
    if (!enter && e.f != checker::truth::kCsExit) return;
    const std::string name = "client-" + std::to_string(e.process);
    world.event({enter ? WorldEvent::Kind::Enters : WorldEvent::Kind::Leaves, name, "critical-section", {}});
  };
}

void key_event(WorldControl& world, const std::string& node, const std::string& key, bool set) {
  if (!world.on_event) return;
  world.event({set ? WorldEvent::Kind::Sets : WorldEvent::Kind::Deletes, node, key, key});
}

void record_unfired(const FaultPlan& plan, Recorder& rec) {
  for (const auto& f : plan.unfired()) rec.truth(checker::truth::kFaultUnfired, -1, "", fault_record(f));
}

std::vector<std::pair<Capability, std::string>> needs(const Scenario& s) {
  std::vector<std::pair<Capability, std::string>> out;
  const TopologySpec& t = s.topology;
  if (s.workload.external()) out.push_back({Capability::ExternalClients, "workload.kind \"external\""});
  if (const int servers = t.nodes * (1 + t.replicas); servers > 1)
    out.push_back({Capability::SeveralServers, "the topology needs " + std::to_string(servers) + " servers"});
  if (t.down_after_ms > 0 && t.replicas > 0 && t.sentinels == 0)
    out.push_back({Capability::BuiltInFailureDetector, "topology.down_after_ms without sentinels"});
  if (t.cluster_enabled()) {
    out.push_back({Capability::Cluster, "topology.cluster"});
    for (const auto& f : s.faults) {
      if (f.kind == FaultKind::Partition) out.push_back({Capability::ClusterPartition, describe_fault(f)});
    }
  }
  if (t.sentinels > 0) out.push_back({Capability::Sentinel, "topology.sentinels"});
  if (!memory_config(t).empty()) out.push_back({Capability::ReconfigureServers, "topology.maxmemory_*"});
  if (s.workload.cache.writers > 0) out.push_back({Capability::ReconfigureServers, "workload.cache"});
  if (t.mysql.enabled) out.push_back({Capability::MysqlServer, "topology.mysql"});
  return out;
}

std::string unplayable(const Scenario& s, const Capabilities& caps) {
  for (const auto& [need, what] : needs(s)) {
    if (!caps.has(need)) return caps.why_not(need) + " (" + what + ")";
  }
  for (const auto& c : s.clocks) {
    for (const auto& [moved, kind] : {std::pair{c.drift_ppm != 0, FaultKind::ClockDrift},
                                      std::pair{c.offset_ms != 0, FaultKind::ClockJump}}) {
      const Capability need = clock_capability(c.process, kind);
      if (moved && !caps.has(need)) return caps.why_not(need) + " (" + c.process + "'s clock)";
    }
  }
  return lockstep::unplayable(s.faults, caps);
}

}  // namespace lockstep::runner
