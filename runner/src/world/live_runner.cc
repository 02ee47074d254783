#include "lockstep/runner/live_runner.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <optional>

#include "lockstep/live/control.h"
#include "lockstep/live/external_control.h"
#include "lockstep/live/live_world.h"
#include "lockstep/runner/lock_checks.h"
#include "lockstep/runner/recorder.h"
#include "lockstep/runner/workload.h"
#include "workload/external_workload.h"
#include "world/live_topology.h"
#include "world/live_truth.h"
#include "world/world_run.h"

namespace lockstep::runner {
namespace {


std::string default_run_id() {
  return std::to_string(live::wall_clock().count() / kNsPerMs) + "-" + std::to_string(getpid());
}

// The scenario as run against a user's server: every key under lockstep:<run-id>:.
Scenario prefixed(const Scenario& s, const LiveOptions& o) {
  if (!o.redis) return s;
  Scenario out = s;
  const std::string prefix = "lockstep:" + (o.run_id.empty() ? default_run_id() : o.run_id) + ":";
  out.lock.key = prefix + s.lock.key;
  out.workload.stock_key = prefix + s.workload.stock_key;
  return out;
}

// The world control for the scenario's clients: lockstep's own, or the user's programs.
std::unique_ptr<live::Control> make_control(const Scenario& s, live::LiveWorld& world, live::Cluster& cluster) {
  if (!s.workload.external()) return std::make_unique<live::Control>(world, cluster);
  return std::make_unique<live::ExternalControl>(world, cluster, s.workload.command, s.workload.command_dir);
}

// One live run: the topology the scenario asks for, its world control, the clients (or
// the user's programs), and the ground truth the poller and the proxy give; then the same
// recording as the simulator's (world_run.h).
class LiveRun {
 public:
  LiveRun(const Scenario& s, const LiveOptions& o)
      : s_(prefixed(s, o)),
        o_(o),
        world_(s.seed),
        topology_(world_),
        control_(make_control(s_, world_, topology_.cluster())),
        rec_([this] { return control_->now().count(); }),
        truth_(rec_, s_.lock.key, s_.topology.nodes),
        poller_(world_, truth_, rec_) {
    if (s_.workload.external()) external_control_ = static_cast<live::ExternalControl*>(control_.get());
    server_faults_over_ = server_faults_over(s_);
  }

  // Returns "" or why the run could not be set up.
  std::string run() {
    control_->start();
    if (auto err = topology_.start(s_, o_.redis); !err.empty()) return err;
    if (topology_.zookeeper()) control_->set_zookeeper(topology_.zookeeper());
    if (auto err = seed_nodes(); !err.empty()) return err;
    if (external_control_ && !external_control_->error().empty()) return external_control_->error();
    control_->start();  // time 0 is when the clients may start, not server boot
    record_truth(*control_, rec_, s_.lock.key);
    // The lock key's changes, as the polls and replies reconstruct them, are this world's
    // report of them: through the same sink as the simulator's.
    truth_.on_key_change = [this](const KeyChange& c) {
      if (control_->on_key_change) control_->on_key_change(c);
    };
    truth_.on_change = [this](int node, bool set) {
      key_event(*control_, "node-" + std::to_string(node + 1), s_.lock.key, set);
    };
    topology_.cluster().on_moved = [this](int node) { truth_.moved(node, rec_.now()); };
    truth_.set_evicting(s_.topology.maxmemory_bytes > 0 && evicts(s_.topology.maxmemory_policy));
    topology_.route_clients(poller_.add());
    watch_commands();
    poller_.start(s_.duration_ms, o_.poll_interval_ms, s_.topology.maxmemory_bytes > 0);
    start_workload();
    plan_.emplace(s_.faults, *control_);
    watch_critical_sections(*control_, rec_);
    const Nanos limit = Millis(s_.duration_ms);
    world_.loop().run_until([this] { return o_.stop_when_idle && all_idle(); }, limit - control_->now());
    finish();
    return "";
  }

  checker::History take_history() { return std::move(rec_.history()); }
  const Scenario& scenario() const { return s_; }
  bool resource_read() const { return end_.resource_read; }
  bool cache_read() const { return end_.cache_read; }
  const LockTruth& truth() const { return truth_; }
  const live::Cluster& cluster() const { return topology_.cluster(); }
  const ExternalWorkload* external() const { return external_.get(); }

 private:
  // The proxy sees every command leave for a server and every reply come back: the
  // ground truth for who set and who deleted the lock key, and what an external client's
  // report of its own operations is held against.
  void watch_commands() {
    live::FaultProxy& proxy = topology_.cluster().proxy();
    proxy.on_message = [this](const live::ProxyMessage& m) {
      if (!m.argv || m.argv->empty() || m.from->rfind("client-", 0) != 0) return;
      const int64_t process = std::atoll(m.from->c_str() + 7);
      const int64_t now = rec_.now();
      if (!m.reply) {
        if (external_) external_->sent(process, *m.argv);
        truth_.sent(process, *m.argv);
        if (truth_.names_lock(*m.argv)) rec_.truth(checker::truth::kRequest, process, s_.lock.key, (*m.argv)[0]);
      } else {
        truth_.replied(process, m.node, *m.argv, *m.reply, (m.sent - control_->origin()).count(), now);
      }
    };
    proxy.on_delivered = [this](const std::string& process) {
      if (external_ && process.rfind("client-", 0) == 0) external_->delivered(std::atoll(process.c_str() + 7));
    };
  }

  // The writes aimed at a node of their own (the cache-aside database, a server standing
  // for it) go in once the servers are up, before any client starts.
  std::string seed_nodes() {
    for (const auto& w : initial_writes(s_)) {
      if (!w.node) continue;
      const Reply r = control_->admin(*w.node, {"SET", w.key, w.value});
      if (!r.is_ok()) return "cannot seed " + w.key + " on node-" + std::to_string(*w.node + 1) + ": " + to_short_text(r);
    }
    return "";
  }

  // lockstep's own clients on LiveEnv, or the user's program once per client, reaching
  // each server through its own proxy link (LOCKSTEP_REDIS, LOCKSTEP_MYSQL, ...).
  void start_workload() {
    if (!external_control_) {
      for (int i = 1; i <= s_.workload.clients; ++i) add_client(i);
      // Under allkeys-* a cache write can still evict the resource, which the simulator
      // reads at the end of duration_ms: the run then waits for the cache writers too.
      // Otherwise it ends when the lock's clients are done, cache or not.
      const bool may_evict_resource = evicts_any_key(s_.topology.maxmemory_policy);
      for (int i = 1; i <= s_.workload.cache.writers; ++i) {
        const int writer = world_.add_client(cache_writer_name(i), -1);
        if (may_evict_resource) cache_writers_.push_back(writer);
      }
      start_clients(s_, *control_, rec_);
      return;
    }
    external_ = std::make_unique<ExternalWorkload>(s_, *external_control_, rec_);
    if (s_.topology.mysql.enabled) {
      external_->mysql = [this](const std::string& client) { return topology_.mysql_address(client); };
    }
    external_->add_clients([this](const std::string& client) { return topology_.redis_addresses(client); },
                           topology_.zookeeper_connect());
    // A library that stores the lock under a key of its own: the truth follows that key
    // from now on, and takes in the acquire that showed it as if it had watched it then.
    external_->on_lock_key = [this](const std::string& key, int64_t client,
                                    const std::vector<std::vector<std::string>>& acquire) {
      truth_.watch(key);
      for (const auto& argv : acquire) truth_.sent(client, argv);
    };
    truth_.watch(external_->watched());  // a key lock.keys declares
    external_->start();
  }

  // A client starts with its scenario clock offset; only its own view of the wall clock
  // moves, not the machine's.
  void add_client(int i) {
    const std::string name = "client-" + std::to_string(i);
    const int c = world_.add_client(name, i);
    for (const auto& k : s_.clocks) {
      if (k.process != name) continue;
      world_.jump_wall_clock(c, Millis(k.offset_ms));
      if (k.drift_ppm != 0) world_.set_clock_drift(c, k.drift_ppm);
    }
    clients_.push_back(c);
  }

  // Idle: every client has finished and nothing on the timeline is still to come. With
  // external clients, once every program has exited for good what is left on the timeline
  // can only touch links and processes nobody uses any more, unless it is a server fault
  // still to start or end (a node restart decides what the stock key reads at the end).
  bool all_idle() const {
    if (external_control_) {
      if (!external_control_->all_exited_for_good([this](const std::string& c) { return restarts(c); })) return false;
      return control_->pending() == 0 || control_->now() >= server_faults_over_;
    }
    if (control_->pending() > 0) return false;
    for (const std::vector<int>* group : {&clients_, &cache_writers_}) {
      for (int c : *group) {
        if (!world_.is_crashed(c) && !world_.idle(c)) return false;
      }
    }
    return true;
  }

  // Whether a crash fault on this client restarts it.
  bool restarts(const std::string& client) const {
    for (const auto& f : s_.faults) {
      if (f.kind == FaultKind::Crash && f.target == client && f.restart_after_ms) return true;
    }
    return false;
  }

  // When the last fault that can still change a server (or a link between servers) is
  // over; forever when one waits for an event, whose time is unknown here.
  static Nanos server_faults_over(const Scenario& s) {
    const auto client = [](const std::string& p) { return p.rfind("client-", 0) == 0; };
    Nanos over(0);
    for (const auto& f : s.faults) {
      bool clients_only = client(f.target);
      if (f.kind == FaultKind::Partition) {
        clients_only = false;
        for (const auto& g : f.groups) {
          clients_only = clients_only || (!g.empty() && std::all_of(g.begin(), g.end(), client));
        }
      }
      if (clients_only) continue;
      if (f.on) return Nanos::max();
      over = std::max(over, Nanos(Millis(f.at_ms + std::max(f.duration_ms, f.restart_after_ms.value_or(0)))));
    }
    return over;
  }

  void finish() {
    if (external_) external_->stop();  // the run ends for the programs as for any client
    topology_.cluster().finish();
    // A few more polls so the last state of the key is seen, then everything stops.
    world_.loop().run_for(Millis(std::max<int64_t>(5 * o_.poll_interval_ms, 20)));
    const int64_t end = rec_.now();
    world_.stop_all();
    truth_.settle_all(end);
    record_unfired(*plan_, rec_);
    end_ = record_end_state(s_, *control_, rec_);
    if (o_.redis) {
      std::vector<std::string> del{"DEL", s_.lock.key, s_.workload.stock_key};
      // A key a client's library derived from the lock key, so under this run's prefix too.
      if (truth_.watched().find(s_.lock.key) != std::string::npos) del.push_back(truth_.watched());
      live::sync_command(world_.node_address(0), del, Millis(1000));
    }
  }

  Scenario s_;
  LiveOptions o_;
  live::LiveWorld world_;
  // After world_: the servers go first; the clients' connections and sessions are closed
  // (stop_all) while they still serve.
  LiveTopology topology_;
  std::unique_ptr<live::Control> control_;
  live::ExternalControl* external_control_ = nullptr;  // control_, when the clients are programs
  Nanos server_faults_over_{0};  // see server_faults_over()
  Recorder rec_;
  LockTruth truth_;
  LockPoller poller_;
  std::optional<FaultPlan> plan_;
  // Goes first: it hooks into control_ and writes to rec_.
  std::unique_ptr<ExternalWorkload> external_;
  std::vector<int> clients_;
  std::vector<int> cache_writers_;
  EndState end_;
};

nlohmann::json checkable(const LiveRun& run) {
  // The clients' own records of their operations and critical sections are as complete
  // live as in the simulator.
  nlohmann::json out = {"mutual-exclusion", "linearizability"};
  if (run.resource_read()) out.push_back("lost-update");
  if (run.cache_read()) out.push_back("stale-cache");
  // A hold the lock's key never showed: who held it, and who removed it, went unseen.
  if (run.external() && !run.external()->unseen_acquires().empty()) return out;
  // A key removal nobody's reply explains may have been a foreign unlock we cannot see.
  if (run.truth().unattributed_dels() == 0) out.push_back("foreign-unlock");
  // Deadlock and a false extension need to know who holds the key; an extension is judged
  // for the locks lockstep runs itself, not for a program's.
  if (run.truth().unattributed_sets() == 0) {
    out.push_back("deadlock");
    if (!run.external()) out.push_back("false-extend");
  }
  return out;
}

reports::RunReport make_report(const Scenario& original, const LiveOptions& o, const checker::History& h,
                               const std::string& jsonl, const Scenario& as_run) {
  reports::RunReport r = judge_run(original, as_run, h);
  r.history_sha256 = reports::sha256_hex(jsonl);
  r.world = to_string(World::Live);
  const std::string path = o.replay_path.empty() ? original.file : o.replay_path;
  r.replay = replay_program() + " live " + (o.redis ? "--redis " + *o.redis + " " : std::string()) +
             (o.client.empty() ? std::string() : "--client '" + o.client + "' ") + path;
  return r;
}

}  // namespace

std::string live_unsupported(const Scenario& s, const LiveOptions& o) {
  if (!s.runs_in(World::Live))
    return "its worlds do not include \"live\"";
  if (!s.workload.external()) return unplayable(s, live::live_capabilities(!o.redis));
  return unplayable(s, live::external_capabilities(!o.redis, s.workload.command, s.workload.command_dir));
}

RunOutcome run_live(const Scenario& scenario, const LiveOptions& options) {
  RunOutcome out;
  std::string error = live_unsupported(scenario, options);
  nlohmann::json checkable_json = nlohmann::json::array();
  nlohmann::json truth_json, servers_json, replication_json, clients_json;
  std::vector<std::string> client_problems, unseen_acquires;
  Scenario as_run = scenario;
  const Nanos wall_start = live::mono_clock();
  if (error.empty()) {
    LiveRun run(scenario, options);
    error = run.run();
    as_run = run.scenario();
    out.history = run.take_history();
    checkable_json = checkable(run);
    truth_json = {{"polls", run.truth().polls()},
                  {"unattributed_sets", run.truth().unattributed_sets()},
                  {"unattributed_dels", run.truth().unattributed_dels()}};
    servers_json = run.cluster().servers_json();
    if (const ExternalWorkload* external = run.external()) {
      clients_json = external->stats();
      client_problems = external->problems();
      unseen_acquires = external->unseen_acquires();
    }
    if (scenario.topology.replicas > 0) {
      replication_json = {{"lag_ms", scenario.topology.replication_lag_ms},
                          {"lag_by", scenario.topology.replication_lag_ms > 0 ? "relay between replica and master"
                                                                              : "none (loopback)"},
                          {"dropped_bytes", run.cluster().relay_dropped_bytes()}};
      if (scenario.topology.sentinels > 0) {
        replication_json["sentinel_timers"] = run.cluster().sentinel_timers();
        replication_json["sentinel_events"] = run.cluster().sentinel_events();
      }
    }
  }
  out.history_jsonl = checker::to_jsonl(out.history);
  out.report = make_report(scenario, options, out.history, out.history_jsonl, as_run);
  auto& st = out.report.stats;
  st["checkable"] = checkable_json;
  st["truth"] = "lock key polled on every node every " + std::to_string(options.poll_interval_ms) +
                " ms; writers known from unique tokens or SET replies, deleters from delete replies";
  if (!truth_json.is_null()) st["truth_counts"] = truth_json;
  if (!servers_json.is_null()) st["servers"] = servers_json;
  if (!replication_json.is_null()) st["replication"] = replication_json;
  if (!clients_json.is_null()) st["clients"] = clients_json;
  // A program still running at the end was killed there: what it was doing is untested.
  if (clients_json.is_object() && clients_json.contains("killed_at_end")) {
    for (const auto& k : clients_json["killed_at_end"]) {
      if (k.is_string()) out.report.add_inconclusive(k.get<std::string>() + ".");
    }
  }
  // A client whose report cannot be trusted means the run did not test what it says.
  if (!client_problems.empty()) {
    for (const auto& why : client_problems)
      out.report.add_inconclusive("an external client went wrong, so its operations are unknown: " + why + ".", true);
    st["client_errors"] = client_problems;
  }
  for (const auto& why : unseen_acquires) out.report.add_inconclusive(why + ".");
  st["network"] = "loopback through lockstep's fault proxy: each message waits a draw of the scenario's latency "
                  "(loss does not apply live)";
  st["wall_ms"] = (live::mono_clock() - wall_start).count() / kNsPerMs;
  if (options.redis) st["redis"] = *options.redis;
  if (!error.empty()) {
    out.report.violations.clear();
    out.report.inconclusive.clear();  // what an empty history lacks says nothing more
    out.report.add_inconclusive("the run could not be played: " + error + ".", true);
    st["error"] = error;
  }
  out.report.settle_verdict();
  return out;
}

}  // namespace lockstep::runner
