// The kv model: one string per key, as Redis and Jepsen's kv workloads keep it. An append
// concatenates (Redis APPEND; Jepsen's and Porcupine's kv `append`), and a key never
// written reads as "" or as nil, per KvMissing.
//
// The state remembers where each appended element begins, not only the concatenation,
// because a read may return the elements as a vector (list-append style): [a b] and [ab]
// concatenate alike but are different reads. Keys of histories that read only strings pay
// a byte or two per element for it.
#include "model_registry.h"

namespace lockstep::checker::detail {
namespace {

// State: a marker byte, 'a' (absent: never written, only with KvMissing::Nil) or 'p'
// (present), then each element as a LEB128 length and its bytes.
constexpr char kAbsent = 'a';
constexpr char kPresent = 'p';

enum KvCode : int32_t {
  kGetString,  // s: the expected concatenation
  kGetNil,     // the key must never have been written
  kGetList,    // s: the expected elements, encoded as in the state
  kPut,        // s: the one element, encoded
  kAppend,     // s: the element, encoded
};

void put_element(std::string& out, const std::string& v) {
  uint64_t n = v.size();
  do {
    auto byte = static_cast<unsigned char>(n & 0x7f);
    n >>= 7;
    out += static_cast<char>(n ? byte | 0x80 : byte);
  } while (n);
  out += v;
}

// Reads the element at `i` (just past the marker or a previous element) into [at, at+len).
bool next_element(const State& s, size_t& i, size_t& at, size_t& len) {
  uint64_t n = 0;
  for (unsigned shift = 0; i < s.size() && shift < 64; shift += 7) {
    auto byte = static_cast<unsigned char>(s[i++]);
    n |= uint64_t{byte & 0x7fu} << shift;
    if ((byte & 0x80) == 0) {
      if (n > s.size() - i) return false;
      at = i;
      len = static_cast<size_t>(n);
      i += len;
      return true;
    }
  }
  return false;
}

std::string concatenation(const State& s) {
  std::string out;
  size_t at = 0, len = 0;
  for (size_t i = 1; next_element(s, i, at, len);) out.append(s, at, len);
  return out;
}

bool concatenation_is(const State& s, const std::string& want) {
  size_t pos = 0, at = 0, len = 0;
  for (size_t i = 1; next_element(s, i, at, len); pos += len) {
    if (len > want.size() - pos || s.compare(at, len, want, pos, len) != 0) return false;
  }
  return pos == want.size();
}

// A scalar as the kv model's string: strings as is, integers and booleans as written.
bool kv_scalar(const nlohmann::json& v, std::string& out) {
  if (v.is_string()) out = v.get<std::string>();
  else if (v.is_number_integer() || v.is_boolean()) out = v.dump();
  else return false;
  return true;
}

class Kv final : public Model {
 public:
  explicit Kv(KvMissing missing) : missing_(missing) {}
  const char* name() const override { return "kv"; }
  State initial() const override { return State(1, missing_ == KvMissing::Empty ? kPresent : kAbsent); }

  bool prepare(const Operation& op, Interner&, Step& out, bool& drop, std::string& error) const override {
    if (op.f == "get") {
      drop = op.outcome != EventType::Ok;
      if (drop) return true;
      const nlohmann::json& v = op.output;
      if (v.is_null()) {
        out.code = missing_ == KvMissing::Nil ? kGetNil : kGetString;  // else nil reads as ""
        return true;
      }
      if (kv_scalar(v, out.s)) {
        out.code = kGetString;
        return true;
      }
      if (v.is_array()) {
        out.code = kGetList;
        std::string e;
        for (const auto& x : v) {
          if (!kv_scalar(x, e)) return bad_get(v, error);
          put_element(out.s, e);
        }
        return true;
      }
      return bad_get(v, error);
    }
    if (op.f != "put" && op.f != "append") {
      error = "kv: unknown f \"" + op.f + "\" (expected get, put or append)";
      return false;
    }
    out.code = op.f == "put" ? kPut : kAppend;
    std::string v;
    if (!kv_scalar(op.input, v)) {
      error = "kv: " + op.f + " needs a string or integer value, got " + op.input.dump();
      return false;
    }
    put_element(out.s, v);
    return true;
  }

  bool step(const State& s, const Step& op, State& next) const override {
    switch (op.code) {
      case kGetString:
        if (s[0] == kAbsent || !concatenation_is(s, op.s)) return false;
        break;
      case kGetNil:
        if (s[0] != kAbsent) return false;
        break;
      case kGetList:
        if (s.compare(1, std::string::npos, op.s) != 0) return false;
        break;
      case kPut:
        next.assign(1, kPresent);
        next += op.s;
        return true;
      default:  // kAppend
        next = s;
        next[0] = kPresent;
        next += op.s;
        return true;
    }
    next = s;
    return true;
  }

  // A value only grows, element by element, until a put sets it to one element; and a key
  // once written never reads nil again. So a read is out of reach when neither the value
  // now nor any put that may come first is a prefix of what it returned.
  bool rules_out() const override { return true; }
  bool is_read(const Step& op) const override { return op.code == kGetString || op.code == kGetNil || op.code == kGetList; }
  bool never_allowed(const State& s, const Step& op, std::span<const Step* const> may_come_first) const override {
    if (op.code == kGetNil) return s[0] != kAbsent;
    if (op.code != kGetString && op.code != kGetList) return false;
    if (s[0] == kAbsent || prefix_of_read(s, op)) return false;
    for (const Step* p : may_come_first) {
      if (p->code != kPut) continue;
      State after(1, kPresent);
      after += p->s;
      if (prefix_of_read(after, op)) return false;
    }
    return true;
  }

  std::string show(const State& s, const Interner&) const override {
    return s[0] == kAbsent ? "nil" : nlohmann::json(concatenation(s)).dump();
  }

  std::string explain(const ExplainContext& ctx) const override {
    const Operation& x = ctx.failed;
    if (x.f != "get") return Model::explain(ctx);
    const Operation* w = last_writer(ctx, "get");
    std::string got = x.output.is_string() ? nlohmann::json(x.output).dump() : show_value(x.output);
    return "process " + std::to_string(x.process) + "'s get of key " + nlohmann::json(x.key).dump() + " returned " +
           got + " (completed at " + ctx.completed(x) + ") but the key held " + show(ctx.state, ctx.values) +
           (w ? set_by(ctx, w) : " (never written)") + "; a key never written reads as " +
           (missing_ == KvMissing::Empty ? "\"\" (--kv-missing empty)" : "nil (--kv-missing nil)");
  }

 private:
  // Whether the value in `s` could still grow into what read `op` returned.
  static bool prefix_of_read(const State& s, const Step& op) {
    if (op.code == kGetList) return s.size() - 1 <= op.s.size() && s.compare(1, std::string::npos, op.s, 0, s.size() - 1) == 0;
    size_t pos = 0, at = 0, len = 0;
    for (size_t i = 1; next_element(s, i, at, len); pos += len) {
      if (len > op.s.size() - pos || s.compare(at, len, op.s, pos, len) != 0) return false;
    }
    return true;
  }
  static bool bad_get(const nlohmann::json& v, std::string& error) {
    error = "kv: get must return a string, integer, nil or a vector of those, got " + v.dump();
    return false;
  }
  KvMissing missing_;
};

}  // namespace

std::unique_ptr<Model> make_kv(KvMissing missing) { return std::make_unique<Kv>(missing); }

}  // namespace lockstep::checker::detail
