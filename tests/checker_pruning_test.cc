// What the search skips may change neither a verdict nor where a history fails: on random
// histories of dozens of operations (too many for the brute-force reference), the kv and
// cas-register models give the same verdict, key and failing completion as the same
// models with their hints for the search (reads, reads out of reach) taken away.
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "lockstep/checker/linearizability.h"

namespace lockstep::checker {
namespace {

using nlohmann::json;

// A model with the search hints of `inner` taken away: every op may change the state and
// no read is ever out of reach.
class WithoutHints final : public Model {
 public:
  explicit WithoutHints(std::unique_ptr<Model> inner) : inner_(std::move(inner)) {}
  const char* name() const override { return inner_->name(); }
  State initial() const override { return inner_->initial(); }
  bool prepare(const Operation& op, Interner& values, Step& out, bool& drop, std::string& error) const override {
    return inner_->prepare(op, values, out, drop, error);
  }
  bool step(const State& s, const Step& op, State& next) const override { return inner_->step(s, op, next); }
  std::string show(const State& s, const Interner& values) const override { return inner_->show(s, values); }
  std::string explain(const ExplainContext& ctx) const override { return inner_->explain(ctx); }

 private:
  std::unique_ptr<Model> inner_;
};

// A correct object under concurrent clients: each op takes effect at a random point
// between its invocation and completion (or, for a crashed one, maybe never). Then, half
// of the time, one read is made to return something the object never held.
History random_history(const std::string& model) {
  const int processes = *rc::gen::inRange(2, 6);
  const int ops = *rc::gen::inRange(10, 40);
  std::map<std::string, std::string> kv;
  json reg;
  struct Pending {
    bool active = false, applied = false, crashed = false;
    std::string f, key;
    json input, output;
  };
  std::vector<Pending> slots(static_cast<size_t>(processes));
  History h;
  int started = 0;
  auto emit = [&](EventType t, int p, const Pending& s, const json& v) {
    Event e;
    e.type = t;
    e.process = p;
    e.f = s.f;
    e.key = s.key;
    e.value = v;
    h.events.push_back(std::move(e));
  };
  for (int guard = 0; guard < ops * 4 + 100; ++guard) {
    int p = *rc::gen::inRange(0, processes);
    Pending& s = slots[static_cast<size_t>(p)];
    if (!s.active) {
      if (started == ops) continue;
      ++started;
      s = Pending{};
      s.active = true;
      std::string value = "x" + std::to_string(started) + "y";
      if (model == "kv") {
        s.f = *rc::gen::elementOf(std::vector<std::string>{"get", "get", "append", "append", "put"});
        s.key = *rc::gen::elementOf(std::vector<std::string>{"a", "b"});
        if (s.f != "get") s.input = value;
      } else {
        s.f = *rc::gen::elementOf(std::vector<std::string>{"read", "read", "write", "cas"});
        if (s.f == "write") s.input = *rc::gen::inRange(0, 4);
        if (s.f == "cas") s.input = json::array({*rc::gen::inRange(0, 4), *rc::gen::inRange(0, 4)});
      }
      s.crashed = s.f != "get" && s.f != "read" && *rc::gen::inRange(0, 8) == 0;
      emit(EventType::Invoke, p, s, s.input);
    } else if (!s.applied && !(s.crashed && *rc::gen::arbitrary<bool>())) {
      s.applied = true;
      if (s.f == "get") s.output = kv[s.key];
      else if (s.f == "put") kv[s.key] = s.input.get<std::string>();
      else if (s.f == "append") kv[s.key] += s.input.get<std::string>();
      else if (s.f == "read") s.output = reg;
      else if (s.f == "write") reg = s.input;
      else if (reg == s.input[0]) reg = s.input[1];
      else s.output = "failed";
    } else {
      if (s.crashed) {
        emit(EventType::Info, p, s, nullptr);
      } else if (s.output == "failed") {
        emit(EventType::Fail, p, s, s.input);
      } else {
        emit(EventType::Ok, p, s, s.f == "get" || s.f == "read" ? s.output : s.input);
      }
      s.active = false;
    }
  }
  for (int p = 0; p < processes; ++p) {
    if (slots[static_cast<size_t>(p)].active) emit(EventType::Info, p, slots[static_cast<size_t>(p)], nullptr);
  }
  if (*rc::gen::arbitrary<bool>()) {
    std::vector<size_t> reads;
    for (size_t i = 0; i < h.events.size(); ++i) {
      if (h.events[i].type == EventType::Ok && (h.events[i].f == "get" || h.events[i].f == "read")) reads.push_back(i);
    }
    if (!reads.empty()) {
      Event& e = h.events[*rc::gen::elementOf(reads)];
      e.value = model == "kv" ? json(e.value.get<std::string>() + "z") : json(*rc::gen::inRange(0, 5));
    }
  }
  return h;
}

void hints_change_nothing(const std::string& model) {
  History h = random_history(model);
  Limits limits{10.0, size_t{256} << 20, 1};
  LinResult with = check_linearizable(h, *make_model(model), limits);
  WithoutHints plain(make_model(model));
  LinResult without = check_linearizable(h, plain, limits);
  RC_LOG() << to_jsonl(h);
  RC_PRE(without.verdict != Verdict::Unknown);
  RC_TAG(to_string(without.verdict));
  RC_ASSERT(with.verdict == without.verdict);
  if (with.verdict != Verdict::Invalid) return;
  RC_ASSERT(with.key == without.key);
  RC_ASSERT(with.failed_event_index == without.failed_event_index);
}

RC_GTEST_PROP(CheckerPruning, KvHintsChangeNoVerdictOrFailure, ()) { hints_change_nothing("kv"); }
RC_GTEST_PROP(CheckerPruning, CasRegisterHintsChangeNoVerdictOrFailure, ()) { hints_change_nothing("cas-register"); }

}  // namespace
}  // namespace lockstep::checker
