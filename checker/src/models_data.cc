// The data models: register, cas-register, counter (kv is in models_kv.cc).
#include "model_registry.h"

namespace lockstep::checker::detail {

// The last op in the linearization that wrote (any f other than `read_f`), or nullptr.
const Operation* last_writer(const ExplainContext& ctx, const std::string& read_f) {
  for (auto it = ctx.linearized.rbegin(); it != ctx.linearized.rend(); ++it) {
    if ((*it)->f != read_f) return *it;
  }
  return nullptr;
}

std::string set_by(const ExplainContext& ctx, const Operation* w) {
  if (w == nullptr) return " (its initial value)";
  std::string when = w->outcome == EventType::Ok ? "completed at " + ctx.completed(*w)
                                                 : "invoked " + ctx.invoked(*w) + ", outcome unknown";
  return " (set by " + ExplainContext::name(*w) + ", " + when + ")";
}

namespace {

enum RegCode : int32_t { kRead, kWrite, kCas };

// State: [id of the current value]; null has id 0.
class Register : public Model {
 public:
  explicit Register(bool cas) : cas_(cas) {}
  const char* name() const override { return cas_ ? "cas-register" : "register"; }
  State initial() const override {
    State s;
    append_i64(s, 0);
    return s;
  }
  bool prepare(const Operation& op, Interner& values, Step& out, bool& drop, std::string& error) const override {
    if (op.f == "read") {
      out.code = kRead;
      drop = op.outcome != EventType::Ok;
      out.a = values.id(op.output);
    } else if (op.f == "write") {
      out.code = kWrite;
      out.a = values.id(op.input);
    } else if (op.f == "cas" && cas_) {
      if (!op.input.is_array() || op.input.size() != 2) {
        error = "cas-register: cas needs value [old new], got " + op.input.dump();
        return false;
      }
      out.code = kCas;
      out.a = values.id(op.input[0]);
      out.b = values.id(op.input[1]);
    } else {
      error = std::string(name()) + ": unknown f \"" + op.f + "\" (expected read, write" + (cas_ ? " or cas)" : ")");
      return false;
    }
    return true;
  }
  bool step(const State& s, const Step& op, State& next) const override {
    int64_t cur = read_i64(s, 0);
    if (op.code == kRead) {
      if (cur != op.a) return false;
      next = s;
      return true;
    }
    if (op.code == kCas && cur != op.a) return false;
    next.clear();
    append_i64(next, op.code == kCas ? op.b : op.a);
    return true;
  }
  bool is_read(const Step& op) const override { return op.code == kRead; }
  std::string show(const State& s, const Interner& values) const override {
    return "value " + show_value(values.value(read_i64(s, 0)));
  }
  std::string explain(const ExplainContext& ctx) const override {
    const Operation& x = ctx.failed;
    std::string held = show_value(ctx.values.value(read_i64(ctx.state, 0)));
    std::string p = "process " + std::to_string(x.process);
    std::string source = set_by(ctx, last_writer(ctx, "read"));
    if (x.f == "read") {
      return p + " read " + show_value(x.output) + " (completed at " + ctx.completed(x) + ") but the register held " +
             held + source + ", and no write of " + show_value(x.output) + " could take effect in between";
    }
    if (x.f == "cas") {
      return p + "'s cas " + show_value(x.input) + " succeeded at " + ctx.completed(x) + " but the register held " +
             held + source;
    }
    return Model::explain(ctx);
  }

 private:
  bool cas_;
};

enum CounterCode : int32_t { kAdd, kCounterRead };

bool as_int(const nlohmann::json& v, int64_t& out) {
  if (!v.is_number_integer()) return false;
  out = v.get<int64_t>();
  return true;
}

// State: [value].
class Counter final : public Model {
 public:
  const char* name() const override { return "counter"; }
  State initial() const override {
    State s;
    append_i64(s, 0);
    return s;
  }
  bool prepare(const Operation& op, Interner&, Step& out, bool& drop, std::string& error) const override {
    if (op.f == "add") {
      out.code = kAdd;
      out.a = 1;
      if (op.input.is_null() || as_int(op.input, out.a)) return true;
      error = "counter: add needs an integer value, got " + op.input.dump();
      return false;
    }
    if (op.f == "read") {
      out.code = kCounterRead;
      drop = op.outcome != EventType::Ok;
      if (drop || as_int(op.output, out.a)) return true;
      error = "counter: read must return an integer, got " + op.output.dump();
      return false;
    }
    error = "counter: unknown f \"" + op.f + "\" (expected add or read)";
    return false;
  }
  bool step(const State& s, const Step& op, State& next) const override {
    int64_t cur = read_i64(s, 0);
    if (op.code == kCounterRead) {
      if (cur != op.a) return false;
      next = s;
      return true;
    }
    next.clear();
    append_i64(next, static_cast<int64_t>(static_cast<uint64_t>(cur) + static_cast<uint64_t>(op.a)));
    return true;
  }
  bool is_read(const Step& op) const override { return op.code == kCounterRead; }
  std::string show(const State& s, const Interner&) const override {
    return "value " + std::to_string(read_i64(s, 0));
  }
  std::string explain(const ExplainContext& ctx) const override {
    const Operation& x = ctx.failed;
    if (x.f != "read") return Model::explain(ctx);
    // Adds that completed before the read began must precede it; the others (concurrent,
    // or of unknown outcome) may or may not, so the read must be base + some subset.
    int64_t base = 0;
    std::string optional;
    for (const Operation& op : ctx.all) {
      if (op.f != "add" || op.outcome == EventType::Fail || op.invoke_index >= x.complete_index) continue;
      int64_t d = op.input.is_number_integer() ? op.input.get<int64_t>() : 1;
      if (op.outcome == EventType::Ok && op.complete_index < x.invoke_index) {
        base += d;
      } else {
        optional += (optional.empty() ? "" : ", ") + std::string(d < 0 ? "" : "+") + std::to_string(d);
      }
    }
    std::string s = "process " + std::to_string(x.process) + " read " + show_value(x.output) + " (completed at " +
                    ctx.completed(x) + ") but the adds that finished before it began sum to " + std::to_string(base);
    if (optional.empty()) return s + " and none could be in flight";
    return s + " and no subset of the adds that may or may not precede it (" + optional + ") makes up the difference";
  }
};

}  // namespace

std::unique_ptr<Model> make_register() { return std::make_unique<Register>(false); }
std::unique_ptr<Model> make_cas_register() { return std::make_unique<Register>(true); }
std::unique_ptr<Model> make_counter() { return std::make_unique<Counter>(); }

}  // namespace lockstep::checker::detail
