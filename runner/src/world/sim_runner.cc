#include "lockstep/runner/sim_runner.h"

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <optional>

#include "lockstep/runner/lock_checks.h"
#include "lockstep/runner/recorder.h"
#include "lockstep/runner/workload.h"
#include "lockstep/sim/control.h"
#include "lockstep/sim/world.h"
#include "lockstep/sim/zk_ensemble.h"
#include "world/world_run.h"

namespace lockstep::runner {
namespace {

// A scenario that schedules more events than this is runaway (a retry loop without a
// bound); the run stops and the verdict is unknown rather than spinning forever.
constexpr uint64_t kEventCountMax = 200'000'000;

sim::Clock clock_for(const Scenario& s, const std::string& process) {
  for (const auto& c : s.clocks) {
    if (c.process == process) return sim::Clock(c.offset_ms * kNsPerMs, c.drift_ppm);
  }
  return sim::Clock();
}

// One simulated run: owns the world, its control and the recorder.
class SimRun {
 public:
  // With `write`, the history is also written as JSON lines, and hashed, as it is
  // recorded.
  SimRun(const Scenario& s, uint64_t seed, bool write)
      : s_(s), world_(options(s, seed)), control_(world_), rec_([this] { return world_.now(); }) {
    if (write) {
      stream_ = std::make_unique<HistoryStream>(rec_.history().events);
      rec_.stream_to(stream_.get());
    }
  }

  // After run(): the stream of its history, closed (null if none was asked for).
  std::unique_ptr<HistoryStream> take_stream() { return std::move(stream_); }

  checker::History run() {
    build();
    start_clients(s_, control_, rec_);
    FaultPlan plan(s_.faults, control_);
    watch_critical_sections(control_, rec_);
    bool finished = world_.scheduler().run_until(s_.duration_ms * kNsPerMs, kEventCountMax);
    if (!finished) rec_.truth(checker::truth::kRunaway, -1, "", "event bound reached");
    record_unfired(plan, rec_);
    record_end_state(s_, control_, rec_);
    if (stream_) {
      rec_.stream_to(nullptr);
      stream_->close();
    }
    return std::move(rec_.history());
  }

 private:
  static sim::WorldOptions options(const Scenario& s, uint64_t seed) {
    sim::WorldOptions o;
    o.seed = seed;
    o.latency = latency_of(s.network.latency);
    o.loss = s.network.loss;
    o.replication_lag_ns = s.topology.replication_lag_ms * kNsPerMs;
    o.min_replicas_to_write = s.topology.min_replicas_to_write;
    return o;
  }

  void build() {
    const auto p = s_.topology.persistence;
    for (int i = 1; i <= s_.topology.nodes; ++i) {
      std::string name = "node-" + std::to_string(i);
      world_.add_node(name, clock_for(s_, name), p);
    }
    if (s_.topology.cluster_enabled()) world_.enable_cluster();
    // The resource exists before any client starts, and replicas start in sync. The limit
    // comes after it, as a server's config file comes before any client.
    seed_resource();
    if (const auto config = memory_config(s_.topology); !config.empty()) {
      for (int i = 0; i < s_.topology.nodes; ++i) {
        sim::ClientState setup;
        world_.redis(i).execute(setup, config, world_.node_wall_ms(world_.node_process(i)));
      }
    }
    for (int i = 1; i <= s_.topology.nodes; ++i) {
      for (int r = 1; r <= s_.topology.replicas; ++r) {
        std::string name = "node-" + std::to_string(i) + "-replica-" + std::to_string(r);
        const int pid = world_.add_replica(i - 1, name, clock_for(s_, name), p);
        // A replica ignores the limit until it is promoted (replica-ignore-maxmemory).
        if (const auto config = memory_config(s_.topology); !config.empty()) {
          sim::ClientState setup;
          world_.process(pid).redis->execute(setup, config, world_.node_wall_ms(pid));
        }
      }
    }
    world_.on_node_reloaded = [this](int pid) { on_node_reloaded(pid); };
    record_truth(control_, rec_, s_.lock.key);
    if (s_.topology.down_after_ms > 0 && s_.topology.replicas > 0) {
      world_.start_failure_detector(s_.topology.down_after_ms * kNsPerMs, 100 * kNsPerMs, s_.duration_ms * kNsPerMs);
    }
    if (s_.topology.cluster_enabled()) {
      world_.start_cluster_failure_detector(s_.topology.cluster.node_timeout_ms * kNsPerMs, s_.duration_ms * kNsPerMs);
    }
    if (s_.topology.zookeeper.servers > 0) build_zookeeper();
    // After the Redis nodes and the ensemble, for the same reason as the ensemble.
    if (const MysqlSpec& m = s_.topology.mysql; m.enabled) {
      world_.add_mysql("mysql-1", clock_for(s_, "mysql-1"), {m.wait_timeout_s, m.innodb_lock_wait_timeout_s});
    }
    for (int i = 1; i <= s_.workload.clients; ++i) {
      std::string name = "client-" + std::to_string(i);
      const int pid = world_.add_client(name, i, clock_for(s_, name));
      if (s_.topology.zookeeper.servers > 0) record_session_states(pid, i);
    }
    for (int i = 1; i <= s_.workload.cache.writers; ++i) {
      const std::string name = cache_writer_name(i);
      world_.add_client(name, -1, clock_for(s_, name));
    }
  }

  // The ensemble's servers come after the Redis nodes, so a scenario without one has the
  // processes (and the random streams) it always had.
  void build_zookeeper() {
    const auto& z = s_.topology.zookeeper;
    sim::ZkOptions o;
    o.servers = z.servers;
    o.tick_ns = z.tick_ms * kNsPerMs;
    o.session_timeout_ns = z.session_timeout_ms * kNsPerMs;
    world_.enable_zookeeper(o);
    for (int pid : world_.zookeeper()->server_pids()) world_.process(pid).clock = clock_for(s_, world_.process(pid).name);
    // The ground truth of a ZooKeeper lock: who owns a znode of the lock's directory from
    // when to when, and which sessions the leader expired.
    const std::string dir = "/lockstep/" + s_.lock.key + "/";
    world_.zookeeper()->on_change = [this, dir](const sim::ZkChange& c) {
      const int64_t owner = c.owner_pid < 0 ? -1 : world_.process(static_cast<int>(c.owner_pid)).history_id;
      nlohmann::json extra(nlohmann::json::value_t::object);
      extra.emplace("session", c.session);
      extra.emplace("zxid", c.zxid);
      switch (c.kind) {
        case sim::ZkChange::Kind::SessionExpired: rec_.truth("session-expire", owner, "", nullptr, -1, std::move(extra)); break;
        case sim::ZkChange::Kind::LeaderElected:
          rec_.truth("zk-leader", -1, "", world_.process(world_.zookeeper()->server_pids()[c.server]).name, -1, std::move(extra));
          break;
        case sim::ZkChange::Kind::Created:
          if (c.path.rfind(dir, 0) == 0) rec_.truth("znode-create", owner, c.path, nullptr, -1, std::move(extra));
          break;
        case sim::ZkChange::Kind::Deleted:
          if (c.path.rfind(dir, 0) == 0) rec_.truth("znode-delete", owner, c.path, nullptr, -1, std::move(extra));
          break;
      }
    };
  }

  // A client's session as its library reports it (connected, suspended, expired): what
  // the holder was told, beside what the leader did.
  void record_session_states(int pid, int64_t history_id) {
    ZooKeeper* zk = world_.env(pid).zookeeper();
    if (!zk) return;
    zk->on_state = [this, history_id](ZkState s) { rec_.truth("zk-session", history_id, "", to_string(s)); };
  }

  // The stage is set before any client starts, as in the seed's demo, and on the masters
  // alone: replicas start as copies of them.
  void seed_resource() {
    for (const auto& w : initial_writes(s_)) {
      control_.admin(w.node.value_or(control_.node_of_key(w.key)), {"SET", w.key, w.value});
    }
  }

  // A keyspace replaced wholesale (AOF reload, resync) fires no per-key events; say who
  // holds the lock there now so the ground truth stays complete.
  void on_node_reloaded(int pid) {
    auto& p = world_.process(pid);
    if (auto v = p.redis->peek_string(s_.lock.key)) {
      KeyChange c;
      c.node = p.node_index;
      c.key = s_.lock.key;
      c.value = *v;
      c.process = p.redis->writer_of(s_.lock.key);
      c.reloaded = true;
      record_key_change(rec_, c);
    }
  }

  const Scenario& s_;
  sim::World world_;
  sim::Control control_;
  Recorder rec_;
  // Declared after the recorder: if the run throws, the writer stops before the events
  // it reads are destroyed.
  std::unique_ptr<HistoryStream> stream_;
};

reports::RunReport make_report(const Scenario& s, uint64_t seed, const RunOptions& o, const checker::History& h) {
  reports::RunReport r = judge_run(s, s, h, o.verdict_only);
  r.seed = seed;
  const std::string path = o.replay_path.empty() ? s.file : o.replay_path;
  r.replay = replay_program() + " run --seed " + std::to_string(seed) + " " + path;
  return r;
}

}  // namespace

namespace {
std::string& replay_program_slot() {
  static std::string program = "lockstep";
  return program;
}
}  // namespace

const std::string& replay_program() { return replay_program_slot(); }
void set_replay_program(std::string program) { replay_program_slot() = std::move(program); }

std::string sim_unsupported(const Scenario& s) {
  if (!s.runs_in(World::Sim) && !s.workload.external())
    return "its worlds do not include \"sim\"";
  return unplayable(s, sim::sim_capabilities());
}

RunOutcome run_in_sim(const Scenario& scenario, const RunOptions& options) {
  const uint64_t seed = options.seed.value_or(scenario.seed);
  RunOutcome out;
  if (const std::string why = sim_unsupported(scenario); !why.empty()) {
    out.report = make_report(scenario, seed, options, out.history);
    if (!options.verdict_only) out.report.history_sha256 = reports::sha256_hex(out.history_jsonl);
    out.report.violations.clear();
    out.report.inconclusive.clear();  // what an empty history lacks says nothing more
    out.report.add_inconclusive("the simulator cannot run it: " + why + ".", true);
    out.report.settle_verdict();
    out.report.stats["error"] = "the simulator cannot run it: " + why;
    return out;
  }
  std::unique_ptr<HistoryStream> stream;
  {
    SimRun run(scenario, seed, !options.verdict_only);
    out.history = run.run();
    stream = run.take_stream();
  }
  // The writer kept up with the run, and writes its last few hundred events while the
  // run is judged.
  out.report = make_report(scenario, seed, options, out.history);
  if (stream) {
    HistoryStream::Written written = stream->take();
    out.history_jsonl = std::move(written.jsonl);
    out.report.history_sha256 = std::move(written.sha256);
  }
  return out;
}

}  // namespace lockstep::runner
