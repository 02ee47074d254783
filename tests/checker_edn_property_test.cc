// Random histories pretty-printed in every layout a Jepsen or Knossos history comes in
// read back as the same events: one map per line, one vector, one list with comments,
// maps broken over lines with discarded forms between them, tagged records, and Jepsen log
// lines with any run of spaces and tabs between fields.
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "lockstep/checker/history_io.h"

namespace lockstep::checker {
namespace {

using nlohmann::json;

enum class Layout { MapPerLine, Vector, ListWithComments, MapsOverLines, TaggedRecords, LogLines };
const Layout kLayouts[] = {Layout::MapPerLine,   Layout::Vector,        Layout::ListWithComments,
                           Layout::MapsOverLines, Layout::TaggedRecords, Layout::LogLines};

struct Op {
  EventType type = EventType::Invoke;
  int64_t process = 0;
  std::string f;
  json key;  // null (no key), a string or an integer
  json value;
  int64_t time = 0;
  int64_t index = -1;  // -1: no :index
  bool timed_out = false;
};

std::string gen_word() {
  std::string s(1, *rc::gen::elementOf(std::string("abcdefghijklmnopqrstuvwxyz")));
  int n = *rc::gen::inRange(0, 8);
  for (int i = 0; i < n; ++i) s += *rc::gen::elementOf(std::string("abcdefghijklmnopqrstuvwxyz0123456789-?!*"));
  return s;
}

// Strings with the characters that need care: quotes, backslashes, line ends, tabs,
// commas and semicolons (which are EDN syntax outside strings), and non-ASCII text.
std::string gen_text() {
  static const std::vector<std::string> kPieces = {"a", "Z", "0", " ", "x 0 1 y", "\"", "\\", "\n", "\t", ",", ";",
                                                   "(", "]", "}", "#_", ":k", "\xc3\xa9", "\xe2\x82\xac",
                                                   "\xf0\x9f\x98\x80"};
  std::string s;
  int n = *rc::gen::inRange(0, 6);
  for (int i = 0; i < n; ++i) s += *rc::gen::elementOf(kPieces);
  return s;
}

json gen_value(int depth) {
  int kind = *rc::gen::inRange(0, depth > 2 ? 5 : 7);
  switch (kind) {
    case 0: return nullptr;
    case 1: return *rc::gen::arbitrary<bool>();
    case 2: return *rc::gen::arbitrary<int64_t>();
    case 3: return gen_text();
    case 4: return gen_word();  // may be printed as a keyword
    case 5: {
      json a = json::array();
      int n = *rc::gen::inRange(0, 4);
      for (int i = 0; i < n; ++i) a.push_back(gen_value(depth + 1));
      return a;
    }
    default: {
      json m = json::object();
      int n = *rc::gen::inRange(0, 3);
      for (int i = 0; i < n; ++i) m[gen_word()] = gen_value(depth + 1);
      return m;
    }
  }
}

std::vector<Op> gen_ops(bool for_log) {
  // A log with no operation lines at all is rejected (it is not a Jepsen log), so logs
  // get at least one.
  int n = *rc::gen::inRange(for_log ? 1 : 0, 12);
  std::vector<Op> ops;
  for (int i = 0; i < n; ++i) {
    Op op;
    op.type = *rc::gen::elementOf(std::vector<EventType>{EventType::Invoke, EventType::Ok, EventType::Fail, EventType::Info});
    op.process = *rc::gen::inRange<int64_t>(-2, 60);
    op.f = gen_word();
    op.value = gen_value(0);
    op.timed_out = *rc::gen::inRange(0, 4) == 0;
    if (!for_log) {
      int key_kind = *rc::gen::inRange(0, 3);
      op.key = key_kind == 0 ? json() : key_kind == 1 ? json(gen_text()) : json(*rc::gen::inRange<int64_t>(-5, 50));
      op.time = *rc::gen::inRange<int64_t>(0, INT64_MAX);
      if (*rc::gen::arbitrary<bool>()) op.index = i;
    }
    ops.push_back(std::move(op));
  }
  return ops;
}

// Whitespace between forms: spaces, commas, and (where lines may break) line ends,
// comments and discarded forms.
std::string gap(bool may_break) {
  std::vector<std::string> gaps = {" ", "  ", ", ", ",", "\t"};
  if (may_break) {
    for (const char* g : {"\n", "\n  ", " ; a comment, with [brackets\n ", "\n#_{:discarded [1 2]}\n", " #_ :gone "}) {
      gaps.emplace_back(g);
    }
  }
  return *rc::gen::elementOf(gaps);
}

bool keyword_safe(const std::string& s) {
  if (s.empty() || !std::isalpha(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && std::string("-?!*").find(c) == std::string::npos) return false;
  }
  return s != "nil" && s != "true" && s != "false";
}

std::string edn_string(const std::string& s, bool may_break) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += "\\\"";
    else if (c == '\\') out += "\\\\";
    else if (c == '\n') out += may_break && *rc::gen::arbitrary<bool>() ? "\n" : "\\n";  // EDN strings may span lines
    else if (c == '\t') out += "\\t";
    else out += c;
  }
  return out + "\"";
}

std::string print(const json& v, bool may_break) {
  if (v.is_null()) return "nil";
  if (v.is_boolean() || v.is_number()) return v.dump();
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    return keyword_safe(s) && *rc::gen::arbitrary<bool>() ? ":" + s : edn_string(s, may_break);
  }
  if (v.is_array()) {
    bool list = *rc::gen::arbitrary<bool>();
    std::string out = list ? "(" : "[";
    for (size_t i = 0; i < v.size(); ++i) out += (i ? gap(may_break) : "") + print(v[i], may_break);
    return out + (list ? ")" : "]");
  }
  std::string out = "{";
  bool first = true;
  for (auto it = v.begin(); it != v.end(); ++it) {
    out += (first ? "" : gap(may_break)) + ":" + it.key() + " " + print(it.value(), may_break);
    first = false;
  }
  return out + "}";
}

std::string print_map(const Op& op, bool over_lines) {
  std::vector<std::string> entries = {":process " + std::to_string(op.process),
                                      std::string(":type :") + to_string(op.type), ":f :" + op.f,
                                      ":value " + print(op.value, over_lines)};
  if (!op.key.is_null()) entries.push_back(":key " + print(op.key, over_lines));
  entries.push_back(":time " + std::to_string(op.time));
  if (op.index >= 0) entries.push_back(":index " + std::to_string(op.index));
  if (op.timed_out) entries.emplace_back(":error :timed-out");
  std::string out = "{";
  for (size_t i = 0; i < entries.size(); ++i) out += (i ? (over_lines ? "\n " : gap(false)) : "") + entries[i];
  return out + "}";
}

std::string print_history(const std::vector<Op>& ops, Layout layout) {
  std::string out;
  if (layout == Layout::LogLines) {
    auto sep = [] { return *rc::gen::elementOf(std::vector<std::string>{" ", "   ", "\t", " \t  "}); };
    out += "2024-05-01 10:00:00,000{GMT}\tINFO\t[main] jepsen.core - Running test\n";
    for (const Op& op : ops) {
      out += "INFO  jepsen.util - " + std::to_string(op.process) + sep() + ":" + to_string(op.type) + sep() + ":" + op.f +
             sep() + print(op.value, false) + (op.timed_out ? sep() + ":timed-out" : "") + "\n";
    }
    return out;
  }
  const char* open = layout == Layout::Vector ? "[" : layout == Layout::ListWithComments ? "(" : "";
  const char* close = layout == Layout::Vector ? "]" : layout == Layout::ListWithComments ? ")" : "";
  out += open;
  for (const Op& op : ops) {
    if (layout == Layout::ListWithComments) out += "\n ; the next operation\n ";
    if (layout == Layout::TaggedRecords) out += "#jepsen.history.Op";
    out += print_map(op, layout == Layout::MapsOverLines) + "\n";
    if (layout == Layout::MapsOverLines && *rc::gen::arbitrary<bool>()) out += "#_{:process :nemesis}\n";
  }
  return out + close + "\n";
}

Event expected_event(const Op& op) {
  Event e;
  e.type = op.type;
  e.process = op.process;
  e.f = op.f;
  e.key = op.key.is_null() ? "" : op.key.is_string() ? op.key.get<std::string>() : op.key.dump();
  e.value = op.value;
  e.time_ns = op.time;
  if (op.index >= 0) e.extra["index"] = op.index;
  if (op.timed_out) e.extra["error"] = "timed-out";
  return e;
}

RC_GTEST_PROP(CheckerEdnProperty, EveryLayoutReadsBackTheSameEvents, ()) {
  Layout layout = *rc::gen::elementOf(std::vector<Layout>(std::begin(kLayouts), std::end(kLayouts)));
  bool log = layout == Layout::LogLines;
  std::vector<Op> ops = gen_ops(log);
  std::string text = print_history(ops, layout);
  RC_LOG() << "layout " << static_cast<int>(layout) << ":\n" << text;
  History h;
  std::string error;
  RC_ASSERT(parse_history_text(text, "h", Format::Auto, h, error));
  History want;
  for (const Op& op : ops) want.events.push_back(expected_event(op));
  RC_ASSERT(to_jsonl(h) == to_jsonl(want));
}

}  // namespace
}  // namespace lockstep::checker
