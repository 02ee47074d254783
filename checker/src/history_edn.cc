// Jepsen and Knossos histories in EDN: the file is read as EDN, not line by line, so an
// operation map may span lines and comments or discarded forms may sit between
// operations. The operations are either the file's top-level forms, one after another
// (Jepsen's history.edn), or the elements of one top-level vector or list (Knossos' test
// histories, hand-trimmed excerpts).
#include "history_readers.h"

#include "lockstep/checker/edn.h"

namespace lockstep::checker::detail {

OpResult jepsen_process(const nlohmann::json& p, Event& e, std::string& why) {
  if (p.is_string() && p.get<std::string>() == "nemesis") return OpResult::Skip;
  if (!p.is_number_integer()) {
    why = ":process must be an integer or :nemesis (got " + p.dump() + ")";
    return OpResult::Error;
  }
  e.process = p.get<int64_t>();
  return OpResult::Event;
}

bool jepsen_type(const nlohmann::json& t, EventType& out, std::string& why) {
  // "truth" is lockstep's own record kind; a Jepsen history has no such operations.
  if (t.is_string() && t.get<std::string>() != "truth" && parse_event_type(t.get<std::string>(), out)) return true;
  why = ":type must be one of :invoke, :ok, :fail, :info (got " + t.dump() + ")";
  return false;
}

OpResult jepsen_op(const nlohmann::json& m, Event& e, std::string& why) {
  if (!m.is_object()) {
    why = "expected an operation map {:process …, :type …, :f …}, got " + std::string(m.type_name());
    return OpResult::Error;
  }
  auto p = m.find("process");
  if (p == m.end()) {
    why = "operation has no :process";
    return OpResult::Error;
  }
  if (auto r = jepsen_process(*p, e, why); r != OpResult::Event) return r;
  auto t = m.find("type");
  if (t == m.end()) {
    why = "operation has no :type";
    return OpResult::Error;
  }
  if (!jepsen_type(*t, e.type, why)) return OpResult::Error;
  auto f = m.find("f");
  if (f == m.end() || !f->is_string()) {
    why = ":f must be a keyword or string";
    return OpResult::Error;
  }
  e.f = f->get<std::string>();
  for (auto it = m.begin(); it != m.end(); ++it) {
    const std::string& k = it.key();
    if (k == "process" || k == "type" || k == "f") continue;
    if (k == "value") {
      e.value = it.value();
    } else if (k == "key") {
      if (!it->is_null()) e.key = it->is_string() ? it->get<std::string>() : it->dump();
    } else if ((k == "time" || k == "thread") && it->is_number_integer()) {
      (k == "time" ? e.time_ns : e.thread) = it->get<int64_t>();
    } else {
      e.extra[k] = it.value();  // :index, :error, ... kept so nothing is lost
    }
  }
  return OpResult::Event;
}

bool read_edn_history(std::string_view text, const std::string& name, History& out, std::string& error) {
  EdnReader r(text);
  std::string why;
  auto fail = [&](const std::string& message) {
    error = name + ":" + message;
    return false;
  };
  if (!r.skip(why)) return fail(why);
  char open = r.peek();
  size_t open_at = r.offset();
  bool wrapped = open == '[' || open == '(';
  char close = open == '[' ? ']' : ')';
  if (wrapped) r.advance();
  History h;
  for (;;) {
    if (!r.skip(why)) return fail(why);
    if (r.at_end()) {
      if (wrapped) return fail(r.where(r.offset()) + ": the history's '" + open + "' (at " + r.where(open_at) + ") is never closed");
      break;
    }
    if (wrapped && r.peek() == close) {
      r.advance();
      if (!r.skip(why)) return fail(why);
      if (!r.at_end()) return fail(r.where(r.offset()) + ": text after the history's closing '" + close + "'");
      break;
    }
    size_t at = r.offset();
    nlohmann::json m;
    if (!r.read(m, why)) return fail(why);
    Event e;
    OpResult res = jepsen_op(m, e, why);
    if (res == OpResult::Error) return fail(r.where(at) + ": " + why);
    if (res == OpResult::Event) h.events.push_back(std::move(e));
  }
  out = std::move(h);
  return true;
}

}  // namespace lockstep::checker::detail
