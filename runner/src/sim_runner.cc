#include "lockstep/runner/sim_runner.h"

#include <malloc.h>

#include <map>

#include "lockstep/runner/lock_checks.h"
#include "lockstep/runner/recorder.h"
#include "lockstep/runner/workload.h"
#include "lockstep/sim/world.h"

namespace lockstep::runner {
namespace {

constexpr int64_t kMs = 1'000'000;
// A scenario that schedules more events than this is runaway (a retry loop without a
// bound); the run stops and the verdict is unknown rather than spinning forever.
constexpr uint64_t kEventCountMax = 200'000'000;

sim::Latency to_latency(const LatencySpec& l) {
  sim::Latency out;
  auto ns = [](double ms) { return static_cast<int64_t>(ms * 1e6); };
  switch (l.kind) {
    case LatencySpec::Kind::Constant: out.kind = sim::Latency::Kind::Constant; out.a_ns = ns(l.ms); break;
    case LatencySpec::Kind::Uniform:
      out.kind = sim::Latency::Kind::Uniform;
      out.a_ns = ns(l.min_ms);
      out.b_ns = ns(l.max_ms);
      break;
    case LatencySpec::Kind::Normal:
      out.kind = sim::Latency::Kind::Normal;
      out.a_ns = ns(l.mean_ms);
      out.b_ns = ns(l.stddev_ms);
      break;
    case LatencySpec::Kind::LongTail:
      out.kind = sim::Latency::Kind::LongTail;
      out.a_ns = ns(l.ms);
      out.b_ns = ns(l.tail_ms);
      out.tail_probability = l.tail_probability;
      break;
  }
  return out;
}

sim::Clock clock_for(const Scenario& s, const std::string& process) {
  for (const auto& c : s.clocks) {
    if (c.process == process) return sim::Clock(c.offset_ms * kMs, c.drift_ppm);
  }
  return sim::Clock();
}

// One simulated run: owns the world, the recorder and the fault timeline.
class SimRun {
 public:
  SimRun(const Scenario& s, uint64_t seed) : s_(s), world_(options(s, seed)), rec_([this] { return world_.now(); }) {}

  checker::History run() {
    build();
    for (const auto& f : s_.faults) schedule(f);
    bool finished = world_.scheduler().run_until(s_.duration_ms * kMs, kEventCountMax);
    if (!finished) rec_.truth("runaway", -1, "", "event bound reached");
    record_resource();
    return std::move(rec_.history());
  }

 private:
  static sim::WorldOptions options(const Scenario& s, uint64_t seed) {
    sim::WorldOptions o;
    o.seed = seed;
    o.latency = to_latency(s.network.latency);
    o.loss = s.network.loss;
    o.replication_lag_ns = s.topology.replication_lag_ms * kMs;
    o.min_replicas_to_write = s.topology.min_replicas_to_write;
    return o;
  }

  static sim::Persistence persistence(const std::string& mode) {
    if (mode == "aof-always") return sim::Persistence::AofAlways;
    if (mode == "aof-everysec") return sim::Persistence::AofEverysec;
    return sim::Persistence::None;
  }

  void build() {
    const auto p = persistence(s_.topology.persistence);
    for (int i = 1; i <= s_.topology.nodes; ++i) {
      std::string name = "node-" + std::to_string(i);
      world_.add_node(name, clock_for(s_, name), p);
    }
    // The resource exists before any client starts, and replicas start in sync.
    seed_resource();
    for (int i = 1; i <= s_.topology.nodes; ++i) {
      for (int r = 1; r <= s_.topology.replicas; ++r) {
        std::string name = "node-" + std::to_string(i) + "-replica-" + std::to_string(r);
        world_.add_replica(i - 1, name, clock_for(s_, name), p);
      }
    }
    world_.on_key_change = [this](int node, const sim::KeyChange& c) { on_key_change(node, c); };
    world_.on_node_reloaded = [this](int pid) { on_node_reloaded(pid); };
    world_.on_failover = [this](int shard, int old_master, int new_master) {
      rec_.truth("failover", -1, "", {{"from", world_.process(old_master).name}, {"to", world_.process(new_master).name}},
                 world_.process(new_master).node_index, {{"shard", shard}});
    };
    if (s_.topology.down_after_ms > 0 && s_.topology.replicas > 0) {
      world_.start_failure_detector(s_.topology.down_after_ms * kMs, 100 * kMs, s_.duration_ms * kMs);
    }
    world_.on_client_restart = [this](int pid) { start_client(pid); };
    for (int i = 1; i <= s_.workload.clients; ++i) {
      std::string name = "client-" + std::to_string(i);
      int pid = world_.add_client(name, i, clock_for(s_, name));
      world_.scheduler().at((i - 1) * s_.workload.start_stagger_ms * kMs, [this, pid] { start_client(pid); });
    }
  }

  // The stock counter exists before any client starts, as in the seed's demo.
  void seed_resource() {
    sim::ClientState setup;
    world_.redis(0).execute(setup, {"SET", s_.workload.stock_key, std::to_string(s_.workload.initial_stock)},
                            world_.node_wall_ms(world_.node_process(0)));
  }

  void start_client(int pid) {
    auto& p = world_.process(pid);
    p.env->spawn(stock_client(*p.env, rec_, p.history_id, s_.lock, s_.workload));
  }

  void on_key_change(int node, const sim::KeyChange& c) {
    if (c.key != s_.lock.key) return;
    using K = sim::KeyChange::Kind;
    if (c.kind == K::Set) {
      rec_.truth(checker::truth::kKeySet, c.writer, c.key, c.value, node);
    } else {
      nlohmann::json extra = {{"owner", c.writer}};
      rec_.truth(c.kind == K::Del ? checker::truth::kKeyDel : checker::truth::kKeyExpire, c.by_process, c.key,
                 c.value, node, extra);
    }
  }

  // A keyspace replaced wholesale (AOF reload, resync) fires no per-key events; say who
  // holds the lock there now so the ground truth stays complete.
  void on_node_reloaded(int pid) {
    auto& p = world_.process(pid);
    if (auto v = p.redis->peek_string(s_.lock.key)) {
      rec_.truth(checker::truth::kKeySet, p.redis->writer_of(s_.lock.key), s_.lock.key, *v, p.node_index,
                 {{"reloaded", true}});
    }
  }

  int pid_of(const std::string& name) { return world_.find(name); }

  int64_t history_id(int pid) { return world_.process(pid).history_id; }

  void at(int64_t ms, std::function<void()> fn) { world_.scheduler().at(ms * kMs, std::move(fn)); }

  void mark(const char* f, const FaultSpec& fault) {
    int pid = fault.target.empty() ? -1 : pid_of(fault.target);
    int64_t process = pid >= 0 ? history_id(pid) : -1;
    int64_t node = pid >= 0 ? world_.process(pid).node_index : -1;
    rec_.truth(f, process, "", fault_record(fault), node);
  }

  void schedule(const FaultSpec& f) {
    const int pid = f.target.empty() ? -1 : pid_of(f.target);
    at(f.at_ms, [this, f] { mark(checker::truth::kFaultStart, f); });
    if (f.kind == "pause") {
      at(f.at_ms, [this, pid, f] { world_.pause(pid, f.duration_ms * kMs); });
    } else if (f.kind == "crash") {
      at(f.at_ms, [this, pid] {
        world_.crash(pid);
        auto& p = world_.process(pid);
        rec_.truth(checker::truth::kCrash, p.history_id, "", p.name, p.node_index);
      });
      if (f.restart_after_ms) {
        at(f.at_ms + *f.restart_after_ms, [this, pid] {
          auto& p = world_.process(pid);
          rec_.truth("restart", p.history_id, "", p.name, p.node_index);
          world_.restart(pid);
        });
      }
    } else if (f.kind == "clock-jump") {
      at(f.at_ms, [this, pid, f] { world_.process(pid).clock.jump_wall(f.jump_ms * kMs); });
    } else if (f.kind == "clock-drift") {
      at(f.at_ms, [this, pid, f] { world_.process(pid).clock.set_drift(world_.now(), f.drift_ppm); });
    } else if (f.kind == "delay" || f.kind == "jitter") {
      const bool delay = f.kind == "delay";
      const int64_t amount = (delay ? f.delay_ms : f.jitter_ms) * kMs;
      auto apply = [this, pid, delay](int64_t a) {
        delay ? world_.network().add_extra_delay(pid, a) : world_.network().add_jitter(pid, a);
      };
      at(f.at_ms, [apply, amount] { apply(amount); });
      at(f.at_ms + f.duration_ms, [apply, amount] { apply(-amount); });
    } else if (f.kind == "failover") {
      at(f.at_ms, [this, pid] { world_.failover(world_.process(pid).shard); });
    } else if (f.kind == "partition") {
      at(f.at_ms, [this, f] { partition(f, +1); });
      at(f.at_ms + f.duration_ms, [this, f] { partition(f, -1); });
    }
    if (f.duration_ms > 0) at(f.at_ms + f.duration_ms, [this, f] { mark(checker::truth::kFaultEnd, f); });
  }

  void partition(const FaultSpec& f, int delta) {
    if (f.groups.size() < 2) return;
    for (const auto& a : f.groups[0]) {
      for (const auto& b : f.groups[1]) {
        world_.network().block(pid_of(a), pid_of(b), delta);
        if (!f.one_way) world_.network().block(pid_of(b), pid_of(a), delta);
      }
    }
  }

  void record_resource() {
    nlohmann::json final_value = nullptr;
    if (auto v = world_.redis(0).peek_string(s_.workload.stock_key)) {
      try {
        final_value = std::stoll(*v);
      } catch (...) {
        final_value = *v;
      }
    }
    rec_.truth(checker::truth::kResource, -1, s_.workload.stock_key,
               {{"initial", s_.workload.initial_stock}, {"final", final_value}}, 0);
  }

  const Scenario& s_;
  sim::World world_;
  Recorder rec_;
};

reports::RunReport make_report(const Scenario& s, uint64_t seed, const RunOptions& o, const checker::History& h,
                               const std::string& jsonl) {
  reports::RunReport r = judge_run(s, s, h, jsonl);
  r.seed = seed;
  const std::string path = o.replay_path.empty() ? s.file : o.replay_path;
  r.replay = "lockstep run --seed " + std::to_string(seed) + " " + path;
  return r;
}

}  // namespace

std::string describe_fault(const FaultSpec& f) {
  std::string who = f.target;
  if (f.kind == "partition" && f.groups.size() == 2) {
    auto join = [](const std::vector<std::string>& g) {
      std::string out;
      for (const auto& x : g) out += (out.empty() ? "" : ",") + x;
      return out;
    };
    who = join(f.groups[0]) + (f.one_way ? "->" : "|") + join(f.groups[1]);
  }
  std::string out = f.kind + " " + who + " @" + std::to_string(f.at_ms) + "ms";
  if (f.duration_ms) out += " for " + std::to_string(f.duration_ms) + "ms";
  if (f.jump_ms) out += " by " + std::to_string(f.jump_ms) + "ms";
  if (f.restart_after_ms) out += " restart +" + std::to_string(*f.restart_after_ms) + "ms";
  return out;
}

void keep_freed_memory_for_reuse() {
#if defined(__GLIBC__)
  mallopt(M_TRIM_THRESHOLD, 256 << 20);  // give back only a top of heap over 256 MiB
  mallopt(M_MMAP_THRESHOLD, 32 << 20);   // the largest allowed: big buffers stay in the heap
#endif
}

RunOutcome run_in_sim(const Scenario& scenario, const RunOptions& options) {
  const uint64_t seed = options.seed.value_or(scenario.seed);
  RunOutcome out;
  {
    SimRun run(scenario, seed);
    out.history = run.run();
  }
  out.history_jsonl = checker::to_jsonl(out.history);
  out.report = make_report(scenario, seed, options, out.history, out.history_jsonl);
  return out;
}

}  // namespace lockstep::runner
