#include "lockstep/checker/linearizability.h"

#include <algorithm>
#include <map>
#include <memory>
#include <thread>
#include <utility>

#include "block_pool.h"
#include "partitions.h"

namespace lockstep::checker {

const char* to_string(Verdict v) {
  switch (v) {
    case Verdict::Valid: return "valid";
    case Verdict::Invalid: return "invalid";
    case Verdict::Unknown: return "unknown";
  }
  return "?";
}

namespace {
// "event 12: process 3 thread 1", built only when there is an error to report.
std::string where(size_t i, const Event& e) {
  return "event " + std::to_string(i + 1) + ": process " + std::to_string(e.process) +
         (e.thread ? " thread " + std::to_string(e.thread) : "");
}
}  // namespace

void OperationCollector::add(const Event& e) {
  constexpr size_t kNone = static_cast<size_t>(-1);
  const size_t i = index_++;
  if (!error_.empty() || e.type == EventType::Truth) return;
  size_t& pending = open_.try_emplace(std::make_pair(e.process, e.thread), kNone).first->second;
  if (e.type == EventType::Invoke) {
    if (pending != kNone) {
      error_ = where(i, e) + " invoked " + e.f + " while its " + out_[pending].f + " (event " +
               std::to_string(out_[pending].invoke_index + 1) + ") was still pending";
      return;
    }
    pending = out_.size();
    Operation& op = out_.emplace_back();
    op.process = e.process;
    op.thread = e.thread;
    op.f = e.f;
    op.key = e.key;
    op.input = e.value;
    op.pending = true;
    op.invoke_index = op.complete_index = i;
    op.invoke_ns = op.complete_ns = e.time_ns;
    return;
  }
  if (pending == kNone) {
    error_ = where(i, e) + " completed (" + to_string(e.type) + ") with no pending invocation";
    return;
  }
  Operation& op = out_[pending];
  pending = kNone;
  op.pending = false;
  op.outcome = e.type;
  op.complete_index = i;
  op.complete_ns = e.time_ns;
  if (e.type == EventType::Ok) op.output = e.value;
}

namespace {
OperationCollector collect(const History& history) {
  OperationCollector c;
  c.operations().reserve(history.events.size() / 2 + 1);
  for (const Event& e : history.events) {
    c.add(e);
    if (!c.ok()) break;
  }
  return c;
}
}  // namespace

bool collect_operations(const History& history, std::vector<Operation>& out, std::string& error) {
  OperationCollector c = collect(history);
  out = std::move(c.operations());
  if (c.ok()) return true;
  error = c.error();
  return false;
}

namespace {

bool has_times(const History& h) {
  return std::any_of(h.events.begin(), h.events.end(), [](const Event& e) { return e.time_ns != 0; });
}

void add_op_events(const Operation& op, std::vector<size_t>& idx) {
  idx.push_back(op.invoke_index);
  if (!op.pending) idx.push_back(op.complete_index);
}

void explain(const History& h, const std::vector<Operation>& ops, const Model& model, const detail::Partition& f,
             LinResult& r) {
  const Operation& x = ops[f.key_ops[f.out.stuck_op]];
  r.key = f.key;
  r.failed_event_index = x.complete_index;
  r.prefix.assign(h.events.begin(), h.events.begin() + static_cast<std::ptrdiff_t>(x.complete_index + 1));
  r.failed_invoke_index = x.invoke_index;
  std::vector<const Operation*> lin;
  State state = model.initial(), next;
  for (int32_t id : f.out.partial) {
    const Operation& op = ops[f.key_ops[id]];
    lin.push_back(&op);
    r.partial_linearization.push_back(h.events[op.pending ? op.invoke_index : op.complete_index]);
    r.partial_invoke_indices.push_back(op.invoke_index);
    r.partial_complete_indices.push_back(op.complete_index);
    // Replayed to say the state after each step; the search kept only the last.
    if (model.step(state, f.in.steps[static_cast<size_t>(id)], next)) state = next;
    r.partial_states.push_back(model.show(state, f.values));
  }
  std::vector<size_t> idx;
  for (size_t k : f.key_ops) {
    const Operation& y = ops[k];
    bool open_past_x = y.pending || y.outcome != EventType::Ok || y.complete_index > x.invoke_index;
    if (y.invoke_index < x.complete_index && open_past_x) add_op_events(y, idx);
  }
  if (!lin.empty()) add_op_events(*lin.back(), idx);
  std::sort(idx.begin(), idx.end());
  idx.erase(std::unique(idx.begin(), idx.end()), idx.end());
  for (size_t i : idx) r.involved.push_back(h.events[i]);
  r.involved_indices = idx;
  // Failed ops too: they never took effect, but a failed release is often the clue.
  std::vector<Operation> all;
  for (const Operation& op : ops) {
    if (op.key == f.key) all.push_back(op);
  }
  ExplainContext ctx{x, f.out.partial_state, lin, all, f.values, has_times(h)};
  r.explanation_sentence = model.explain(ctx);
  r.final_state = model.show(f.out.partial_state, f.values);
}

// Builds one partition per key, in key order, from the operations that did not fail.
bool make_partitions(const std::vector<Operation>& ops, const Model& model,
                     std::vector<std::unique_ptr<detail::Partition>>& parts, std::string& error) {
  std::map<std::string, std::vector<size_t>> by_key;  // ordered, so partitions are in a fixed order
  for (size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].outcome != EventType::Fail) by_key[ops[i].key].push_back(i);
  }
  for (const auto& [key, members] : by_key) {
    auto p = std::make_unique<detail::Partition>();
    p->key = key;
    p->in.model = &model;
    for (size_t k : members) {
      const Operation& op = ops[k];
      Step st;
      bool drop = false;
      std::string why;
      if (!model.prepare(op, p->values, st, drop, why)) {
        error = "event " + std::to_string(op.invoke_index + 1) + ": " + why;
        return false;
      }
      if (drop) continue;
      p->key_ops.push_back(k);
      p->in.steps.push_back(std::move(st));
      p->in.must.push_back(op.outcome == EventType::Ok ? 1 : 0);
      p->in.call_pos.push_back(op.invoke_index);
      p->in.ret_pos.push_back(op.outcome == EventType::Ok ? op.complete_index : detail::kNever);
    }
    parts.push_back(std::move(p));
  }
  return true;
}

// Asked once per process: the C library reads the count from sysfs on every call, which
// cost a run of a fuzz campaign (a check per run) about a twelfth of its time.
unsigned thread_count(unsigned asked) {
  if (asked > 0) return asked;
  static const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  return cores;
}

}  // namespace

void release_kept_search_memory() { detail::BlockPool::release_kept(); }

LinResult check_linearizable(const History& history, const Model& model, const Limits& limits) {
  return check_linearizable(history, collect(history), model, limits);
}

LinResult check_linearizable(const History& history, OperationCollector&& collected, const Model& model,
                             const Limits& limits) {
  LinResult r;
  if (!collected.ok()) {
    r.error = collected.error();
    return r;
  }
  std::vector<Operation> ops = std::move(collected.operations());
  r.ops = ops.size();
  std::vector<std::unique_ptr<detail::Partition>> parts;
  if (!make_partitions(ops, model, parts, r.error)) return r;
  detail::MemoryLedger ledger(limits.memory_limit_bytes, limits.resident_bytes, limits.resident_base_bytes);
  detail::SearchBudget budget;
  // At most 31 years, so that converting to the clock's nanoseconds cannot overflow; NaN
  // counts as 0.
  double seconds = limits.time_limit_s > 0 ? std::min(limits.time_limit_s, 1e9) : 0.0;
  auto span = std::chrono::duration<double>(seconds);
  budget.deadline = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::nanoseconds>(span);
  budget.memory = &ledger;
  detail::search_partitions(parts, budget, thread_count(limits.threads));

  const detail::Partition* invalid = nullptr;
  for (const auto& p : parts) {
    r.stats.keys += p->decided;
    r.stats.states_visited += p->out.states_visited;
    r.stats.cache_entries += p->out.cache_entries;
    r.stats.max_depth = std::max(r.stats.max_depth, p->out.max_depth);
    bool failed = p->decided && p->out.verdict == Verdict::Invalid;
    if (failed && (invalid == nullptr || failure_position(*p) < failure_position(*invalid))) invalid = p.get();
    if (p->decided && p->out.verdict == Verdict::Unknown && r.unknown_reason.empty()) {
      r.unknown_reason = p->out.unknown_reason;
    }
  }
  r.stats.peak_bytes = ledger.peak();
  if (invalid != nullptr) {
    r.verdict = Verdict::Invalid;
    r.unknown_reason.clear();
    explain(history, ops, model, *invalid, r);
  } else {
    r.verdict = r.unknown_reason.empty() ? Verdict::Valid : Verdict::Unknown;
  }
  return r;
}

}  // namespace lockstep::checker
