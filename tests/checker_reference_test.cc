// The fast search agrees with a brute-force reference on random small histories of every
// model: the reference tries every order of the ok operations plus any subset of the info
// operations that respects real time, with no memoization and no partitioning. For kv the
// reference also has its own semantics (appends concatenate), so the model is checked too.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "lockstep/checker/linearizability.h"
#include "lockstep/checker/model.h"

namespace lockstep::checker {
namespace {

using nlohmann::json;

struct RefOp {
  Operation op;
  Step step;
};

// The model under test, stepped through its own `step`.
struct ModelRef {
  using S = State;
  const Model& m;
  S initial() const { return m.initial(); }
  bool step(const S& before, const RefOp& op, S& after) const { return m.step(before, op.step, after); }
};

// The kv semantics as documented, written apart from the model so that the model's
// encoding is checked too: a key is absent or holds the elements appended since the last
// put; a string read compares with their concatenation, a vector read element by element.
struct KvRef {
  using S = std::optional<std::vector<std::string>>;
  KvMissing missing;
  S initial() const { return std::nullopt; }
  bool step(const S& before, const RefOp& r, S& after) const {
    const Operation& op = r.op;
    std::vector<std::string> held = before.value_or(std::vector<std::string>{});
    if (op.f == "put" || op.f == "append") {
      if (op.f == "put") held.clear();
      held.push_back(op.input.get<std::string>());
      after = held;
      return true;
    }
    after = before;
    const json& out = op.output;
    if (out.is_array()) {
      std::vector<std::string> read;
      for (const auto& e : out) read.push_back(e.get<std::string>());
      return read == held;
    }
    if (out.is_null() && missing == KvMissing::Nil) return !before.has_value();
    if (!before.has_value() && missing == KvMissing::Nil) return false;
    std::string joined;
    for (const auto& e : held) joined += e;
    return joined == (out.is_null() ? "" : out.get<std::string>());
  }
};

template <class Ref>
bool place(const std::vector<RefOp>& ops, const Ref& ref, std::vector<bool>& used,
           std::map<std::string, typename Ref::S>& states, size_t ok_left) {
  if (ok_left == 0) return true;
  for (size_t b = 0; b < ops.size(); ++b) {
    if (used[b]) continue;
    bool blocked = false;  // an unplaced ok op completed before b was invoked
    for (size_t a = 0; a < ops.size() && !blocked; ++a) {
      blocked = !used[a] && ops[a].op.outcome == EventType::Ok &&
                ops[a].op.complete_index < ops[b].op.invoke_index;
    }
    if (blocked) continue;
    const std::string& key = ops[b].op.key;
    if (!states.count(key)) states[key] = ref.initial();
    typename Ref::S before = states[key], after;
    if (!ref.step(before, ops[b], after)) continue;
    used[b] = true;
    states[key] = after;
    bool ok = ops[b].op.outcome == EventType::Ok;
    if (place(ops, ref, used, states, ok_left - (ok ? 1 : 0))) return true;
    states[key] = before;
    used[b] = false;
  }
  return false;
}

// `kv_missing` set: the kv reference semantics instead of the model's own steps.
bool reference_linearizable(const History& h, const Model& m, std::optional<KvMissing> kv_missing = std::nullopt) {
  std::vector<Operation> all;
  std::string error;
  if (!collect_operations(h, all, error)) throw std::runtime_error(error);
  Interner values;
  std::vector<RefOp> ops;
  size_t ok = 0;
  for (const Operation& op : all) {
    if (op.outcome == EventType::Fail) continue;
    RefOp r{op, {}};
    bool drop = false;
    if (kv_missing) {
      drop = op.f == "get" && op.outcome != EventType::Ok;  // a read of unknown outcome says nothing
    } else if (!m.prepare(op, values, r.step, drop, error)) {
      throw std::runtime_error(error);
    }
    if (drop) continue;
    ok += op.outcome == EventType::Ok;
    ops.push_back(std::move(r));
  }
  std::vector<bool> used(ops.size(), false);
  if (kv_missing) {
    std::map<std::string, KvRef::S> states;
    return place(ops, KvRef{*kv_missing}, used, states, ok);
  }
  std::map<std::string, State> states;
  return place(ops, ModelRef{m}, used, states, ok);
}

// One random operation for `model`: f, input, output (when ok).
struct OpSpec {
  std::string f;
  json input;
  json output;
  std::string key;
};

OpSpec random_op(const std::string& model) {
  auto pick = [](std::vector<json> xs) { return *rc::gen::elementOf(xs); };
  auto pickf = [](std::vector<std::string> xs) { return *rc::gen::elementOf(xs); };
  OpSpec s;
  if (model == "mutex" || model == "reentrant-mutex") {
    s.f = pickf({"acquire", "release"});
  } else if (model == "rw-lock") {
    s.f = pickf({"acquire-read", "release-read", "acquire-write", "release-write"});
  } else if (model == "register" || model == "cas-register") {
    s.f = model == "register" ? pickf({"read", "write"}) : pickf({"read", "write", "cas"});
    if (s.f == "write") s.input = pick({1, 2});
    if (s.f == "cas") s.input = json::array({pick({nullptr, 1, 2}), pick({1, 2})});
    if (s.f == "read") s.output = pick({nullptr, 1, 2});
  } else if (model == "counter") {
    s.f = pickf({"add", "read"});
    if (s.f == "add") s.input = pick({1, 2});
    else s.output = pick({0, 1, 2, 3});
  } else {
    s.f = pickf({"get", "put", "append"});
    s.key = pickf({"a", "b"});
    if (s.f == "get") {
      s.output = pick({nullptr, "", "x", "y", "xy", "yx", "x y", "xyx", json::array(), json::array({"x", "y"}),
                       json::array({"y", "x"}), json::array({"xy"}), json::array({""})});
    } else {
      s.input = pick({"x", "y", ""});
    }
  }
  return s;
}

// A random history of up to 7 ops over 3 processes, each op on its own thread so that
// operations of one process may overlap (ownership is still by process).
History random_history(const std::string& model, size_t max_ops = 7, int info_weight = 2) {
  size_t n = *rc::gen::inRange<size_t>(1, max_ops + 1);
  std::vector<OpSpec> specs;
  std::vector<EventType> outcome;
  std::vector<int64_t> process;
  for (size_t i = 0; i < n; ++i) {
    specs.push_back(random_op(model));
    // Invoke (pending) stands for an op never completed.
    outcome.push_back(*rc::gen::weightedElement<EventType>(
        {{6, EventType::Ok}, {info_weight, EventType::Info}, {1, EventType::Fail}, {info_weight, EventType::Invoke}}));
    process.push_back(*rc::gen::inRange<int64_t>(0, 3));
  }
  History h;
  std::vector<int> stage(n, 0);  // 0 not invoked, 1 invoked, 2 done
  for (size_t guard = 0; guard < 2 * n; ++guard) {
    std::vector<size_t> ready;
    for (size_t i = 0; i < n; ++i) {
      if (stage[i] == 0 || (stage[i] == 1 && outcome[i] != EventType::Invoke)) ready.push_back(i);
    }
    if (ready.empty()) break;
    size_t i = *rc::gen::elementOf(ready);
    Event e;
    e.process = process[i];
    e.thread = static_cast<int64_t>(i);
    e.f = specs[i].f;
    e.key = specs[i].key;
    e.time_ns = static_cast<int64_t>(h.events.size() + 1) * 1000;
    e.type = stage[i] == 0 ? EventType::Invoke : outcome[i];
    e.value = stage[i] == 0 ? specs[i].input : (outcome[i] == EventType::Ok ? specs[i].output : json());
    if (stage[i] == 1 && outcome[i] == EventType::Ok && e.value.is_null() && !specs[i].input.is_null()) {
      e.value = specs[i].input;  // completions echo the written value, as Jepsen's do
    }
    if (e.type == EventType::Ok && (e.f == "read" || e.f == "get")) e.value = specs[i].output;
    ++stage[i];
    h.events.push_back(std::move(e));
  }
  return h;
}

History prefix_of(const History& h, size_t len) {
  History p;
  p.events.assign(h.events.begin(), h.events.begin() + static_cast<std::ptrdiff_t>(len));
  return p;
}

History without_failed(const History& h) {
  std::vector<bool> failed(h.events.size(), false);
  for (size_t i = 0; i < h.events.size(); ++i) {
    if (h.events[i].type != EventType::Fail) continue;
    failed[i] = true;
    for (size_t j = i; j-- > 0;) {
      const Event& e = h.events[j];
      if (e.process == h.events[i].process && e.thread == h.events[i].thread) {
        failed[j] = true;
        break;
      }
    }
  }
  History out;
  for (size_t i = 0; i < h.events.size(); ++i) {
    if (!failed[i]) out.events.push_back(h.events[i]);
  }
  return out;
}

void agrees_with_reference(const std::string& model_name, size_t max_ops = 7, int info_weight = 2,
                           std::optional<KvMissing> kv_missing = std::nullopt) {
  ModelOptions options;
  if (kv_missing) options.kv_missing = *kv_missing;
  auto model = make_model(model_name, options);
  History h = random_history(model_name, max_ops, info_weight);
  bool expected = reference_linearizable(h, *model, kv_missing);
  LinResult r = check_linearizable(h, *model, Limits{5.0, size_t{64} << 20});
  RC_TAG(expected ? "valid" : "invalid");
  RC_LOG() << to_jsonl(h) << "verdict " << to_string(r.verdict) << " failed at " << r.failed_event_index << "\n";
  RC_ASSERT(r.error.empty());
  RC_ASSERT(r.verdict == (expected ? Verdict::Valid : Verdict::Invalid));
  if (expected) return;
  LinResult again = check_linearizable(h, *model, Limits{5.0, size_t{64} << 20});
  RC_ASSERT(again.explanation_sentence == r.explanation_sentence);
  RC_ASSERT(to_jsonl(History{again.partial_linearization}) == to_jsonl(History{r.partial_linearization}));
  RC_ASSERT(r.prefix.size() == r.failed_event_index + 1);
  RC_ASSERT(!r.explanation_sentence.empty());
  // The reported prefix is the smallest that cannot be linearized. A prefix cut before a
  // fail completion would make that op pending, so minimality is checked on the history
  // without its failed ops (which never took effect and so change nothing).
  History nf = without_failed(h);
  LinResult rn = check_linearizable(nf, *model, Limits{5.0, size_t{64} << 20});
  RC_ASSERT(rn.verdict == Verdict::Invalid);
  RC_ASSERT(!reference_linearizable(prefix_of(nf, rn.prefix.size()), *model, kv_missing));
  RC_ASSERT(reference_linearizable(prefix_of(nf, rn.prefix.size() - 1), *model, kv_missing));
}

RC_GTEST_PROP(CheckerReference, MutexAgrees, ()) { agrees_with_reference("mutex"); }
RC_GTEST_PROP(CheckerReference, ReentrantMutexAgrees, ()) { agrees_with_reference("reentrant-mutex"); }
RC_GTEST_PROP(CheckerReference, RwLockAgrees, ()) { agrees_with_reference("rw-lock"); }
RC_GTEST_PROP(CheckerReference, RegisterAgrees, ()) { agrees_with_reference("register"); }
RC_GTEST_PROP(CheckerReference, CasRegisterAgrees, ()) { agrees_with_reference("cas-register"); }
RC_GTEST_PROP(CheckerReference, CounterAgrees, ()) { agrees_with_reference("counter"); }
// kv against the reference's own semantics (appends concatenate), in both readings of a
// missing key.
RC_GTEST_PROP(CheckerReference, KvAgrees, ()) { agrees_with_reference("kv", 7, 2, KvMissing::Empty); }
RC_GTEST_PROP(CheckerReference, KvWithMissingAsNilAgrees, ()) { agrees_with_reference("kv", 7, 2, KvMissing::Nil); }
// Longer kv histories, mostly of known outcome: reads are committed to where they are
// allowed, and orders a later read rules out are abandoned; neither may change a verdict
// or the smallest invalid prefix.
RC_GTEST_PROP(CheckerReference, KvWithMoreOpsAgrees, ()) { agrees_with_reference("kv", 10, 1, KvMissing::Empty); }
// Larger histories, mostly of unknown outcome: exercises the pruning of info-op subsets
// (dominance, identical info ops) where it matters.
RC_GTEST_PROP(CheckerReference, CasRegisterWithManyInfoOpsAgrees, ()) {
  agrees_with_reference("cas-register", 9, 8);
}
RC_GTEST_PROP(CheckerReference, MutexWithManyInfoOpsAgrees, ()) { agrees_with_reference("mutex", 9, 8); }

TEST(CheckerReference, EveryModelIsCovered) {
  EXPECT_EQ(model_names(), (std::vector<std::string>{"cas-register", "counter", "kv", "mutex", "register",
                                                     "reentrant-mutex", "rw-lock"}));
}

}  // namespace
}  // namespace lockstep::checker
