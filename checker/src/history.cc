#include "lockstep/checker/history.h"

namespace lockstep::checker {

const char* to_string(EventType t) {
  switch (t) {
    case EventType::Invoke: return "invoke";
    case EventType::Ok: return "ok";
    case EventType::Fail: return "fail";
    case EventType::Info: return "info";
    case EventType::Truth: return "truth";
  }
  return "?";
}

bool is_acquire(const std::string& f) { return f == "acquire" || f.rfind("acquire-", 0) == 0; }
bool is_release(const std::string& f) { return f == "release" || f.rfind("release-", 0) == 0; }

bool parse_event_type(const std::string& s, EventType& out) {
  static const std::pair<const char*, EventType> kTypes[] = {
      {"invoke", EventType::Invoke}, {"ok", EventType::Ok},     {"fail", EventType::Fail},
      {"info", EventType::Info},     {"truth", EventType::Truth}};
  for (const auto& [name, t] : kTypes) {
    if (s == name) {
      out = t;
      return true;
    }
  }
  return false;
}

nlohmann::ordered_json to_json(const Event& e) {
  // Fixed key order for human readers, and so that equal histories are equal bytes.
  nlohmann::ordered_json j;
  j["type"] = to_string(e.type);
  j["process"] = e.process;
  j["thread"] = e.thread;
  j["f"] = e.f;
  j["key"] = e.key;
  j["value"] = e.value;
  j["time_ns"] = e.time_ns;
  if (e.node >= 0) j["node"] = e.node;
  if (e.extra.is_object()) {
    for (auto it = e.extra.begin(); it != e.extra.end(); ++it) j[it.key()] = it.value();
  }
  return j;
}

bool from_json(const nlohmann::json& j, Event& out, std::string& error) {
  if (!j.is_object()) {
    error = "expected a JSON object";
    return false;
  }
  Event e;
  auto type = j.find("type");
  if (type == j.end() || !type->is_string() || !parse_event_type(type->get<std::string>(), e.type)) {
    error = "\"type\" must be one of invoke, ok, fail, info, truth";
    return false;
  }
  auto get_int = [&](const char* name, int64_t& dst, bool required) {
    auto it = j.find(name);
    if (it == j.end() || it->is_null()) return !required || (error = std::string("missing \"") + name + "\"", false);
    if (!it->is_number_integer()) {
      error = std::string("\"") + name + "\" must be an integer";
      return false;
    }
    dst = it->get<int64_t>();
    return true;
  };
  if (!get_int("process", e.process, false) || !get_int("thread", e.thread, false) ||
      !get_int("time_ns", e.time_ns, false) || !get_int("node", e.node, false)) {
    return false;
  }
  auto f = j.find("f");
  if (f == j.end() || !f->is_string()) {
    error = "\"f\" must be a string";
    return false;
  }
  e.f = f->get<std::string>();
  if (auto k = j.find("key"); k != j.end() && !k->is_null()) {
    e.key = k->is_string() ? k->get<std::string>() : k->dump();
  }
  if (auto v = j.find("value"); v != j.end()) e.value = *v;
  static const char* kKnown[] = {"type", "process", "thread", "f", "key", "value", "time_ns", "node"};
  for (auto it = j.begin(); it != j.end(); ++it) {
    bool known = false;
    for (const char* k : kKnown) known = known || it.key() == k;
    if (!known) e.extra[it.key()] = it.value();
  }
  out = std::move(e);
  return true;
}

std::string to_jsonl(const History& h) {
  std::string out;
  for (const auto& e : h.events) {
    out += to_json(e).dump();
    out += '\n';
  }
  return out;
}

}  // namespace lockstep::checker
