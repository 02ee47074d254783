#include "lockstep/checker/history_io.h"

#include <fstream>
#include <sstream>

#include "lockstep/checker/edn.h"

namespace lockstep::checker {

const char* to_string(Format f) {
  switch (f) {
    case Format::Auto: return "auto";
    case Format::Json: return "json";
    case Format::Edn: return "edn";
    case Format::JepsenLog: return "jepsen-log";
  }
  return "?";
}

bool parse_format(const std::string& s, Format& out) {
  static const std::pair<const char*, Format> kNames[] = {{"auto", Format::Auto}, {"json", Format::Json},
                                                          {"jsonl", Format::Json}, {"edn", Format::Edn},
                                                          {"jepsen-log", Format::JepsenLog},
                                                          {"log", Format::JepsenLog}};
  for (const auto& [n, f] : kNames) {
    if (s == n) {
      out = f;
      return true;
    }
  }
  return false;
}

namespace {

std::string_view trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

enum class LineResult { Event, Skip, Error };

LineResult json_line(std::string_view line, Event& e, std::string& why) {
  nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded()) {
    why = "not valid JSON";
    return LineResult::Error;
  }
  return from_json(j, e, why) ? LineResult::Event : LineResult::Error;
}

bool type_from_keyword(const nlohmann::json& v, EventType& t, std::string& why) {
  if (v.is_string() && v.get<std::string>() != "truth" && parse_event_type(v.get<std::string>(), t)) return true;
  why = ":type must be one of :invoke, :ok, :fail, :info (got " + v.dump() + ")";
  return false;
}

// Fills e.process from an EDN process value; Skip for the nemesis.
LineResult edn_process(const nlohmann::json& p, Event& e, std::string& why) {
  if (p.is_string() && p.get<std::string>() == "nemesis") return LineResult::Skip;
  if (!p.is_number_integer()) {
    why = ":process must be an integer or :nemesis (got " + p.dump() + ")";
    return LineResult::Error;
  }
  e.process = p.get<int64_t>();
  return LineResult::Event;
}

// A history saved as one EDN vector of maps, one map per line, opens with "[" before the
// first map and closes with "]" after the last; those brackets are not part of any map.
std::string_view strip_vector_brackets(std::string_view line) {
  if (line.size() > 1 && line[0] == '[' && trim(line.substr(1)).substr(0, 1) == "{") line = trim(line.substr(1));
  if (line.size() > 1 && line.back() == ']' && trim(line.substr(0, line.size() - 1)).back() == '}') {
    line = trim(line.substr(0, line.size() - 1));
  }
  return line;
}

LineResult edn_line(std::string_view line, Event& e, std::string& why) {
  line = strip_vector_brackets(line);
  if (line.empty()) return LineResult::Skip;
  nlohmann::json m;
  if (!parse_edn(line, m, why)) return LineResult::Error;
  if (!m.is_object()) {
    why = "expected a map {...}";
    return LineResult::Error;
  }
  auto p = m.find("process");
  if (p == m.end()) {
    why = "missing :process";
    return LineResult::Error;
  }
  if (auto r = edn_process(*p, e, why); r != LineResult::Event) return r;
  auto t = m.find("type");
  if (t == m.end() || !type_from_keyword(*t, e.type, why)) {
    if (t == m.end()) why = "missing :type";
    return LineResult::Error;
  }
  auto f = m.find("f");
  if (f == m.end() || !f->is_string()) {
    why = ":f must be a keyword or string";
    return LineResult::Error;
  }
  e.f = f->get<std::string>();
  for (auto it = m.begin(); it != m.end(); ++it) {
    const std::string& k = it.key();
    if (k == "process" || k == "type" || k == "f") continue;
    if (k == "value") e.value = it.value();
    else if (k == "key" && !it->is_null()) e.key = it->is_string() ? it->get<std::string>() : it->dump();
    else if ((k == "time" || k == "thread") && it->is_number_integer()) (k == "time" ? e.time_ns : e.thread) = it->get<int64_t>();
    else if (k != "key") e.extra[k] = it.value();
  }
  return LineResult::Event;
}

constexpr std::string_view kLogMarker = "jepsen.util - ";

LineResult log_line(std::string_view line, Event& e, std::string& why) {
  size_t at = line.find(kLogMarker);
  if (at == std::string_view::npos) return LineResult::Skip;
  std::string_view rest = line.substr(at + kLogMarker.size());
  if (rest.find('\t') == std::string_view::npos) return LineResult::Skip;
  std::vector<std::string_view> fields;
  for (size_t start = 0; start <= rest.size() && fields.size() < 16;) {
    size_t tab = rest.find('\t', start);
    if (tab == std::string_view::npos) tab = rest.size();
    fields.push_back(rest.substr(start, tab - start));
    start = tab + 1;
  }
  if (fields.size() < 3) {
    why = "expected process, type and f separated by tabs";
    return LineResult::Error;
  }
  nlohmann::json p, t, f, v;
  if (!parse_edn(fields[0], p, why)) return why = "process: " + why, LineResult::Error;
  if (auto r = edn_process(p, e, why); r != LineResult::Event) return r;
  if (!parse_edn(fields[1], t, why)) return why = "type: " + why, LineResult::Error;
  if (!type_from_keyword(t, e.type, why)) return LineResult::Error;
  if (!parse_edn(fields[2], f, why) || !f.is_string()) {
    why = "f: " + (why.empty() ? "must be a keyword" : why);
    return LineResult::Error;
  }
  e.f = f.get<std::string>();
  if (fields.size() > 3 && !trim(fields[3]).empty()) {
    if (!parse_edn(fields[3], e.value, why)) return why = "value: " + why, LineResult::Error;
  }
  if (fields.size() > 4 && !trim(fields[4]).empty()) {
    nlohmann::json err;
    e.extra["error"] = parse_edn(fields[4], err, why) ? err : nlohmann::json(std::string(trim(fields[4])));
    why.clear();
  }
  return LineResult::Event;
}

}  // namespace

Format detect_format(std::string_view text) {
  for (size_t pos = 0; pos < text.size();) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = trim(text.substr(pos, nl - pos));
    pos = nl + 1;
    if (line.empty()) continue;
    if (line[0] == '[') line = trim(line.substr(1));
    if (line.empty() || line[0] != '{') return Format::JepsenLog;
    std::string_view inner = trim(line.substr(1));
    return !inner.empty() && inner[0] == ':' ? Format::Edn : Format::Json;
  }
  return Format::Json;
}

bool parse_history_text(std::string_view text, const std::string& name, Format fmt, History& out,
                        std::string& error) {
  if (fmt == Format::Auto) fmt = detect_format(text);
  History h;
  size_t line_no = 0, content_lines = 0;
  for (size_t pos = 0; pos < text.size();) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = trim(text.substr(pos, nl - pos));
    pos = nl + 1;
    ++line_no;
    if (line.empty()) continue;
    ++content_lines;
    Event e;
    std::string why;
    LineResult r = fmt == Format::Json  ? json_line(line, e, why)
                   : fmt == Format::Edn ? edn_line(line, e, why)
                                        : log_line(line, e, why);
    if (r == LineResult::Error) {
      error = name + ":" + std::to_string(line_no) + ": " + why;
      return false;
    }
    if (r == LineResult::Event) h.events.push_back(std::move(e));
  }
  if (fmt == Format::JepsenLog && h.events.empty() && content_lines > 0) {
    error = name + ":1: no Jepsen operation lines (\"jepsen.util - <process>\\t:<type>\\t...\") found";
    return false;
  }
  out = std::move(h);
  return true;
}

bool read_history(const std::string& path, Format fmt, History& out, std::string& error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = path + ": cannot open file";
    return false;
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  return parse_history_text(ss.str(), path, fmt, out, error);
}

}  // namespace lockstep::checker
