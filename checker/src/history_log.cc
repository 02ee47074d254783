// Jepsen log lines: what jepsen.util logs for every operation, as in
//   INFO  jepsen.util - 1	:invoke	:cas	[3 0]
//   INFO  jepsen.util - 1   :info :cas  [3 0]  :timed-out
// After "jepsen.util - " come the process, the type, f, then optionally the value and an
// error, each an EDN form; any run of whitespace (tabs or spaces) separates them, and a
// value such as [1 2] keeps its inner spaces because it is read as one form. Whatever
// follows the value is the error: read as EDN when it is one form, kept as text otherwise.
// Other log output is skipped: lines without the marker, and marker lines whose text does
// not begin like a process (a digit, '-' or ':').
#include <cctype>

#include "history_readers.h"
#include "lockstep/checker/edn.h"
#include "text_util.h"

namespace lockstep::checker::detail {
namespace {

constexpr std::string_view kMarker = "jepsen.util - ";

// Reads one line; `error` gets "line:column: why" on failure.
OpResult log_line(std::string_view line, size_t line_no, Event& e, std::string& error) {
  size_t at = line.find(kMarker);
  if (at == std::string_view::npos) return OpResult::Skip;
  EdnReader r(line, at + kMarker.size(), line_no);
  std::string why;
  if (!r.skip(why)) return OpResult::Skip;
  char c = r.peek();
  if (!std::isdigit(static_cast<unsigned char>(c)) && c != '-' && c != ':') return OpResult::Skip;
  auto fail = [&](size_t where, const std::string& what) {
    error = r.where(where) + ": " + what;
    return OpResult::Error;
  };
  auto field = [&](nlohmann::json& v, const char* what, size_t& where) {
    if (!r.skip(why)) return false;
    where = r.offset();
    if (r.at_end()) {
      why = r.where(where) + ": the line ends before its " + what;
      return false;
    }
    return r.read(v, why);
  };
  nlohmann::json p, t, f;
  size_t p_at = 0, t_at = 0, f_at = 0;
  if (!field(p, "process", p_at)) return error = why, OpResult::Error;
  if (auto res = jepsen_process(p, e, why); res != OpResult::Event) {
    return res == OpResult::Skip ? res : fail(p_at, why);
  }
  if (!field(t, "type (:invoke, :ok, :fail or :info)", t_at)) return error = why, OpResult::Error;
  if (!jepsen_type(t, e.type, why)) return fail(t_at, why);
  if (!field(f, "f (the operation, e.g. :read)", f_at)) return error = why, OpResult::Error;
  if (!f.is_string()) return fail(f_at, "f must be a keyword, got " + f.dump());
  e.f = f.get<std::string>();
  if (!r.skip(why)) return error = why, OpResult::Error;
  if (r.at_end()) return OpResult::Event;
  if (!r.read(e.value, why)) return error = why, OpResult::Error;
  std::string_view rest = trim(line.substr(r.offset()));
  if (rest.empty()) return OpResult::Event;
  nlohmann::json err;
  std::string ignored;
  if (parse_edn(rest, err, ignored)) {
    e.extra["error"] = std::move(err);
  } else if (valid_utf8(rest)) {
    e.extra["error"] = std::string(rest);
  } else {
    return fail(r.offset(), "the error text is not valid UTF-8");
  }
  return OpResult::Event;
}

}  // namespace

bool read_jepsen_log(std::string_view text, const std::string& name, History& out, std::string& error) {
  History h;
  size_t line_no = 0;
  bool any_content = false;
  for (size_t pos = 0; pos < text.size();) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(pos, nl - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    pos = nl + 1;
    ++line_no;
    any_content = any_content || !trim(line).empty();
    Event e;
    std::string why;
    OpResult r = log_line(line, line_no, e, why);
    if (r == OpResult::Error) {
      error = name + ":" + why;
      return false;
    }
    if (r == OpResult::Event) h.events.push_back(std::move(e));
  }
  if (h.events.empty() && any_content) {
    error = name + ":1:1: no Jepsen operation lines (\"jepsen.util - <process> :<type> :<f> <value>\") found";
    return false;
  }
  out = std::move(h);
  return true;
}

}  // namespace lockstep::checker::detail
