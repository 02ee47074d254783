#include "lockstep/runner/lock_checks.h"

#include <future>
#include <map>
#include <optional>
#include <set>
#include <system_error>

#include "lockstep/checker/invariants.h"
#include "lockstep/checker/linearizability.h"
#include "lockstep/profiles.h"
#include "lockstep/runner/history_stream.h"

namespace lockstep::runner {

namespace {

// Two clients that asked closer together than this may have had their requests arrive
// in either order (a fair lock serves the one that arrived first): a millisecond for the
// world's own scheduling, plus how far one message's delay can differ from another's.
int64_t fairness_margin_ns(const LatencySpec& l) {
  double spread_ms = 0;
  switch (l.kind) {
    case LatencySpec::Kind::Constant:
      break;
    case LatencySpec::Kind::Uniform:
      spread_ms = l.max_ms - l.min_ms;
      break;
    case LatencySpec::Kind::Normal:
      spread_ms = 8 * l.stddev_ms;
      break;
    case LatencySpec::Kind::LongTail:
      spread_ms = 10 * l.tail_ms;
      break;
  }
  return 1'000'000 + static_cast<int64_t>(spread_ms * 1e6);
}

// The lease a lock sets when it takes its key: a library profile's own lease option, in
// its unit, or the scenario's lease_ms; 0 for an external program's lock.
double lease_ms_of(const LockSpec& lock) {
  const LockInfo* info = lock.info();
  if (!info) return 0;
  if (!info->library_options()) return static_cast<double>(lock.lease_ms);
  const ProfileOption* o = find_option(*info, info->lease_option);
  if (!o) return 0;
  const nlohmann::json v = ProfileOptions(*info, lock.options).value(o->name);  // a copy: value() points into the options
  return v.is_number() && v.get<double>() > 0 ? v.get<double>() * o->ms_per_unit : 0;
}

// The model the lock's registry entry calls for; an external program's lock is a mutex.
std::string lock_model(const LockSpec& lock) {
  const LockInfo* info = lock.info();
  return info ? checker_model(*info) : "mutex";
}

// Checks the acquire/release operations that `drawn` took from the lock key
// against the algorithm's model (mutex, reentrant mutex or read-write lock). Returns the
// violation, if any; sets `unknown` when the search ran out of its time or memory limit.
std::optional<checker::Violation> check_lock_linearizability(const LockSpec& lock, LockOperations&& drawn,
                                                             bool& unknown) {
  auto model = checker::make_model(lock_model(lock));
  checker::Limits limits;
  limits.time_limit_s = 5.0;
  limits.memory_limit_bytes = size_t{512} << 20;
  const checker::History ops = drawn.take();
  checker::LinResult r = checker::check_linearizable(ops, drawn.take_operations(), *model, limits);
  unknown = r.verdict == checker::Verdict::Unknown;
  if (r.verdict != checker::Verdict::Invalid) return std::nullopt;
  checker::Violation v{checker::Property::Linearizability, std::string("the lock's operations are not linearizable as a ") + model->name() + ": " +
                                              r.explanation_sentence + ".", {}, 0};
  if (r.failed_event_index < ops.events.size()) {
    v.at_ns = ops.events[r.failed_event_index].time_ns;
    // A later life of a client after a crash is that client (LockOperations::kLifeStride).
    v.processes.push_back(ops.events[r.failed_event_index].process % LockOperations::kLifeStride);
  }
  return v;
}

// What judging finds besides linearizability: the invariants' violations, and the run's
// counts and unfinished work, read in one pass.
struct Rest {
  std::vector<checker::Violation> violations;
  bool runaway = false;
  int64_t sales = 0, acquired = 0, attempts = 0, oom_errors = 0;
  nlohmann::json unfired = nlohmann::json::array();  // faults that never struck, described
  std::vector<std::string> unfinished;
};

Rest judge_the_rest(const checker::History& h, const checker::InvariantOptions& io) {
  Rest t;
  t.violations = checker::check_invariants(h, io);
  for (const auto& e : h.events) {
    t.runaway = t.runaway || (e.type == checker::EventType::Truth && f_is(e, checker::truth::kRunaway));
    // A fault that never struck means the run did not test what the scenario describes.
    if (e.type == checker::EventType::Truth && f_is(e, checker::truth::kFaultUnfired)) {
      if (auto f = fault_from_record(e.value)) t.unfired.push_back(describe_fault(*f));
    }
    if (e.type == checker::EventType::Ok && f_is(e, "write")) ++t.sales;
    if (e.type == checker::EventType::Ok && checker::is_acquire(e.f)) ++t.acquired;
    if (e.type == checker::EventType::Invoke && checker::is_acquire(e.f)) ++t.attempts;
    if (e.type == checker::EventType::Truth && f_is(e, checker::truth::kOomRefused) && e.value.is_number_integer())
      t.oom_errors += e.value.get<int64_t>();
  }
  t.unfinished = checker::unfinished_work(h);
  return t;
}

}  // namespace

reports::RunReport judge_run(const Scenario& s, const Scenario& played, const checker::History& h,
                             bool verdict_only) {
  reports::RunReport r;
  r.scenario = s.name;
  r.description = s.description;
  r.algorithm = lock_in_use(s);
  r.seed = s.seed;
  if (!verdict_only) {
    for (const auto& f : s.faults) r.faults.push_back(fault_record(f));
  }
  r.expected = s.expect;
  checker::InvariantOptions io;
  io.lock_key = played.lock.key;
  io.resource_key = played.workload.stock_key;
  io.deadlock_bound_ns = s.deadlock_bound_ms * 1'000'000;
  io.fair = s.check_fairness.value_or(lock_promises_arrival_order(s.lock));
  io.fairness_margin_ns = fairness_margin_ns(s.network.latency);
  // Whether a reported extension was true is judged from the lock key on the Redis nodes,
  // for the locks lockstep runs itself.
  if (const LockInfo* info = played.lock.info(); info && info->service == LockService::Redis && !s.workload.external())
    io.lock_nodes = lock_nodes(*info, played.lock.options);
  // An external program's lock is a mutex, whatever name the scenario gives it.
  LockSpec lock = s.lock;
  if (s.workload.external()) lock.algorithm = "external";
  // Judging only reads the history, in two halves: the lock's linearizability (drawing
  // its operations, then the search) and everything else (the invariants, the run's
  // counts, the work it left unfinished). A long history's second half is judged on a
  // second thread while this one does the first, the longer: the thread's start-up is
  // then off the path that decides when judging ends. Either way the violations keep
  // their order: the invariants', then the lock's.
  auto rest = [&] { return judge_the_rest(h, io); };
  std::future<Rest> rest_future;
  if (kFastPaths && h.events.size() >= kEventsWorthAThread) {
    try {
      rest_future = std::async(std::launch::async, rest);
    } catch (const std::system_error&) {
      // No thread to be had: judged on this one below.
    }
  }
  bool unknown = false;
  std::optional<checker::Violation> v;
  {
    LockOperations drawn(played.lock.key);
    for (const auto& e : h.events) drawn.add(e);
    v = check_lock_linearizability(lock, std::move(drawn), unknown);
  }
  Rest t = rest_future.valid() ? rest_future.get() : rest();
  if (!verdict_only) r.scenario_json = to_report_json(s);
  r.violations = std::move(t.violations);
  if (v) r.violations.push_back(std::move(*v));
  checker::classify(r.violations, h);
  if (!t.unfired.empty()) {
    for (const auto& f : t.unfired) {
      r.add_inconclusive("a fault never fired (its event never came), so the run is not the scenario it describes: " +
                             f.get<std::string>() + ".",
                         true);
    }
  }
  if (t.runaway) r.add_inconclusive("the run reached its bound on events (a retry loop without a bound?) and stopped early.");
  if (unknown) r.add_inconclusive("the linearizability check ran out of its time or memory limit before it could decide.");
  for (auto& why : t.unfinished) r.add_inconclusive(std::move(why));
  r.settle_verdict();
  r.stats = {{"events", h.events.size()}, {"acquisitions", t.acquired}, {"sales", t.sales}};
  // The lease the lock sets on its key, for the reports' lease deadlines.
  if (const double lease = lease_ms_of(lock); lease > 0) r.stats["lease_ms"] = lease;
  if (!t.unfired.empty()) r.stats["faults_never_fired"] = t.unfired;
  // A full node under noeviction keeps the lock safe and makes it unavailable: said
  // here, beside the verdict, never as a violation of a safety property.
  if (t.oom_errors > 0) {
    r.stats["oom_errors"] = t.oom_errors;
    r.stats["unavailable"] = "the servers answered " + std::to_string(t.oom_errors) +
                             " commands with OOM (used memory above maxmemory); " + std::to_string(t.acquired) + " of " +
                             std::to_string(t.attempts) + " acquisitions succeeded";
  }
  return r;
}

}  // namespace lockstep::runner
