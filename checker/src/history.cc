#include "lockstep/checker/history.h"

#include <charconv>
#include <cstring>

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

bool is_acquire(std::string_view f) { return f == "acquire" || f.starts_with("acquire-"); }
bool is_release(std::string_view f) { return f == "release" || f.starts_with("release-"); }

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

namespace {

// Printable ASCII without quote or backslash: written by dump() as it is, in quotes.
bool plain(std::string_view s) {
  for (unsigned char c : s) {
    if (c < 0x20 || c == '"' || c == '\\' || c >= 0x7f) return false;
  }
  return true;
}

// A string as nlohmann's dump() writes it. Names, keys and ids in a history are plain,
// which needs no escaping; anything else goes through the library.
void append_string(std::string& out, const std::string& s) {
  if (!plain(s)) {
    out += nlohmann::json(s).dump();
    return;
  }
  out += '"';
  out += s;
  out += '"';
}

void append_int(std::string& out, int64_t v) {
  char buf[24];
  out.append(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
}

// A value as dump() writes it: the kinds a lock history holds on nearly every event
// (null, integers, booleans, plain strings) directly, anything else through the
// library, whose serializer cost more than the rest of the line.
void append_value(std::string& out, const nlohmann::json& v) {
  switch (v.type()) {
    case nlohmann::json::value_t::null: out += "null"; return;
    case nlohmann::json::value_t::boolean: out += v.get<bool>() ? "true" : "false"; return;
    case nlohmann::json::value_t::number_integer: append_int(out, v.get<int64_t>()); return;
    case nlohmann::json::value_t::string: append_string(out, v.get_ref<const std::string&>()); return;
    default: out += v.dump(); return;
  }
}

// An `extra` field with the name of a fixed one replaces it in place (see to_json).
bool extra_overrides_a_field(const Event& e) {
  if (!e.extra.is_object()) return false;
  for (const char* name : {"type", "process", "thread", "f", "key", "value", "time_ns"}) {
    if (e.extra.contains(name)) return true;
  }
  return e.node >= 0 && e.extra.contains("node");
}

// The fixed fields of an event, in to_json's order, through a writer `w` that has
// text (a literal), raw, number, string and value.
template <typename Writer>
void write_fields(Writer& w, const Event& e) {
  w.text("{\"type\":\"");
  w.raw(to_string(e.type));
  w.text("\",\"process\":");
  w.number(e.process);
  w.text(",\"thread\":");
  w.number(e.thread);
  w.text(",\"f\":");
  w.string(e.f);
  w.text(",\"key\":");
  w.string(e.key);
  w.text(",\"value\":");
  w.value(e.value);
  w.text(",\"time_ns\":");
  w.number(e.time_ns);
  if (e.node >= 0) {
    w.text(",\"node\":");
    w.number(e.node);
  }
}

// Appends each piece, strings and values as dump() writes them.
struct Appender {
  std::string& out;
  template <size_t N>
  void text(const char (&s)[N]) { out.append(s, N - 1); }
  void raw(std::string_view s) { out += s; }
  void number(int64_t v) { append_int(out, v); }
  void string(const std::string& s) { append_string(out, s); }
  void value(const nlohmann::json& v) { append_value(out, v); }
};

// Writes into space already made in a string: no length or capacity checks per piece.
// Only for plain strings and the values `simple` accepts.
struct Cursor {
  char* p;
  template <size_t N>
  void text(const char (&s)[N]) {
    std::memcpy(p, s, N - 1);
    p += N - 1;
  }
  void raw(std::string_view s) {
    std::memcpy(p, s.data(), s.size());
    p += s.size();
  }
  void number(int64_t v) { p = std::to_chars(p, p + 20, v).ptr; }
  void string(std::string_view s) {
    *p++ = '"';
    raw(s);
    *p++ = '"';
  }
  void value(const nlohmann::json& v) {
    switch (v.type()) {
      case nlohmann::json::value_t::string: string(v.get_ref<const std::string&>()); return;
      case nlohmann::json::value_t::number_integer: number(v.get<int64_t>()); return;
      case nlohmann::json::value_t::boolean: v.get<bool>() ? text("true") : text("false"); return;
      default: text("null"); return;
    }
  }
  static bool simple(const nlohmann::json& v) {
    switch (v.type()) {
      case nlohmann::json::value_t::null:
      case nlohmann::json::value_t::boolean:
      case nlohmann::json::value_t::number_integer: return true;
      case nlohmann::json::value_t::string: return plain(v.get_ref<const std::string&>());
      default: return false;
    }
  }
};

// The fixed fields, in one piece when the event's strings are plain and its value is one
// of the kinds every lock history is made of (nearly every event), else piece by piece.
void append_fields(std::string& out, const Event& e) {
  if (!Cursor::simple(e.value) || !plain(e.f) || !plain(e.key)) {
    Appender w{out};
    write_fields(w, e);
    return;
  }
  // The field names, five numbers of at most 20 characters and quotes: under 200.
  const size_t text = e.value.is_string() ? e.value.get_ref<const std::string&>().size() : 0;
  const size_t at = out.size();
  out.resize(at + 224 + e.f.size() + e.key.size() + text);
  Cursor w{out.data() + at};
  write_fields(w, e);
  out.resize(static_cast<size_t>(w.p - out.data()));
}

}  // namespace

// Writes each event directly, in exactly the bytes to_json(e).dump() gives: building an
// ordered_json per event was most of the cost of recording a run.
void append_jsonl(std::string& out, const Event& e) {
  if (extra_overrides_a_field(e)) {
    out += to_json(e).dump();
    out += '\n';
    return;
  }
  append_fields(out, e);
  if (e.extra.is_object()) {
    for (auto it = e.extra.begin(); it != e.extra.end(); ++it) {
      out += ',';
      append_string(out, it.key());
      out += ':';
      append_value(out, it.value());
    }
  }
  out += "}\n";
}

std::string to_jsonl(const History& h) {
  std::string out;
  out.reserve(h.events.size() * 160);  // a typical line: fewer copies of a growing history
  for (const auto& e : h.events) append_jsonl(out, e);
  return out;
}

}  // namespace lockstep::checker
