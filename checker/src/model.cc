#include "lockstep/checker/model.h"

#include <cstring>
#include <cstdio>

#include "model_registry.h"

namespace lockstep::checker {

void append_i64(State& s, int64_t v) {
  char buf[8];
  std::memcpy(buf, &v, 8);
  s.append(buf, 8);
}

int64_t read_i64(const State& s, size_t word) {
  int64_t v = 0;
  if ((word + 1) * 8 <= s.size()) std::memcpy(&v, s.data() + word * 8, 8);
  return v;
}

size_t i64_count(const State& s) { return s.size() / 8; }

int64_t Interner::id(const nlohmann::json& v) {
  std::string k = v.dump();
  auto [it, inserted] = ids_.emplace(std::move(k), static_cast<int64_t>(values_.size()));
  if (inserted) values_.push_back(v);
  return it->second;
}

const nlohmann::json& Interner::value(int64_t id) const {
  static const nlohmann::json kNull;
  if (id < 0 || static_cast<size_t>(id) >= values_.size()) return kNull;
  return values_[static_cast<size_t>(id)];
}

namespace {
std::string format_time(bool has_time, int64_t ns, size_t index) {
  if (!has_time) return "event " + std::to_string(index + 1);
  char buf[64];
  std::snprintf(buf, sizeof buf, "t=%.3fs", static_cast<double>(ns) / 1e9);
  return buf;
}
}  // namespace

std::string ExplainContext::invoked(const Operation& op) const {
  return format_time(has_time, op.invoke_ns, op.invoke_index);
}

std::string ExplainContext::completed(const Operation& op) const {
  return format_time(has_time, op.complete_ns, op.complete_index);
}

std::string ExplainContext::name(const Operation& op) {
  std::string s = "process " + std::to_string(op.process) + "'s " + op.f;
  if (!op.input.is_null()) s += " " + detail::show_value(op.input);
  return s;
}

std::string Model::explain(const ExplainContext& ctx) const {
  return ExplainContext::name(ctx.failed) + " completed at " + ctx.completed(ctx.failed) +
         " but no order of the operations before it is consistent with the " + name() +
         " model (state there: " + show(ctx.state, ctx.values) + ")";
}

bool Model::never_allowed(const State&, const Step&, std::span<const Step* const>) const { return false; }

namespace detail {
std::string show_value(const nlohmann::json& v) {
  if (v.is_null()) return "nil";
  if (v.is_array()) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? " " : "") + show_value(v[i]);
    return s + "]";
  }
  return v.dump();
}
}  // namespace detail

const char* to_string(KvMissing m) { return m == KvMissing::Empty ? "empty" : "nil"; }

bool parse_kv_missing(const std::string& s, KvMissing& out) {
  if (s != "empty" && s != "nil") return false;
  out = s == "empty" ? KvMissing::Empty : KvMissing::Nil;
  return true;
}

namespace {
using Factory = std::unique_ptr<Model> (*)(const ModelOptions&);
// Sorted by name so model_names() is stable.
const std::pair<const char*, Factory> kModels[] = {
    {"cas-register", [](const ModelOptions&) { return detail::make_cas_register(); }},
    {"counter", [](const ModelOptions&) { return detail::make_counter(); }},
    {"kv", [](const ModelOptions& o) { return detail::make_kv(o.kv_missing); }},
    {"mutex", [](const ModelOptions&) { return detail::make_mutex(); }},
    {"register", [](const ModelOptions&) { return detail::make_register(); }},
    {"reentrant-mutex", [](const ModelOptions&) { return detail::make_reentrant_mutex(); }},
    {"rw-lock", [](const ModelOptions&) { return detail::make_rw_lock(); }},
};
}  // namespace

std::unique_ptr<Model> make_model(const std::string& name, const ModelOptions& options) {
  for (const auto& [n, f] : kModels) {
    if (name == n) return f(options);
  }
  return nullptr;
}

std::vector<std::string> model_names() {
  std::vector<std::string> out;
  for (const auto& [n, f] : kModels) out.emplace_back(n);
  return out;
}

}  // namespace lockstep::checker
