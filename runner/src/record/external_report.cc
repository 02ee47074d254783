// Reading an external client's lines (external_report.h; the contract is
// docs/external-clients.md).
#include "lockstep/runner/external_report.h"

#include <sys/wait.h>

#include <array>
#include <cstring>

#include <nlohmann/json.hpp>

namespace lockstep::runner {
namespace {

using json = nlohmann::json;
using Type = ClientLine::Type;

constexpr std::array<std::pair<const char*, Type>, 6> kTypes = {{{"invoke", Type::Invoke},
                                                                 {"ok", Type::Ok},
                                                                 {"fail", Type::Fail},
                                                                 {"info", Type::Info},
                                                                 {"cs-enter", Type::CsEnter},
                                                                 {"cs-exit", Type::CsExit}}};
const char* const kOperations[] = {"acquire", "release", "extend", "read", "write"};
constexpr size_t kQuotedMax = 60;

// What was found, short enough for one line of a report.
std::string shown(const json& v) {
  std::string s = v.dump(-1, ' ', false, json::error_handler_t::replace);
  if (s.size() <= kQuotedMax) return s;
  // Cut between characters, never inside one: the problem is quoted in JSON reports.
  size_t cut = kQuotedMax;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return s.substr(0, cut) + "…";
}

std::string type_name(Type t) {
  for (const auto& [name, type] : kTypes) {
    if (type == t) return name;
  }
  return "?";
}

bool is_operation(const std::string& f) {
  for (const char* op : kOperations) {
    if (f == op) return true;
  }
  return false;
}

// Which optional keys each kind of line takes, and which it must have.
struct Allowed {
  bool value = false, value_required = false, token = false, error = false;
};

Allowed allowed(Type t, const std::string& f) {
  Allowed a;
  if (t == Type::Invoke && f == "write") a.value = a.value_required = a.token = true;
  if (t == Type::Ok && f == "read") a.value = a.value_required = true;
  if (t == Type::Ok && f == "write") a.value = a.token = true;
  if (t == Type::Ok && f == "acquire") a.token = true;
  if (t == Type::Fail || t == Type::Info) a.error = true;
  return a;
}

bool read_integer(const json& v, std::optional<int64_t>& out) {
  if (!v.is_number_integer()) return false;
  if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) return false;
  out = v.get<int64_t>();
  return true;
}

std::string exit_text(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const char* name = sigabbrev_np(WTERMSIG(status));
    return std::string("was killed by SIG") + (name ? name : std::to_string(WTERMSIG(status)).c_str());
  }
  return "ended (wait status " + std::to_string(status) + ")";
}

}  // namespace

std::optional<ClientLine> parse_client_line(std::string_view text, std::string& why) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    why = "not JSON (at byte " + std::to_string(e.byte) + ")";
    return std::nullopt;
  } catch (const json::out_of_range&) {
    // 1e309: valid JSON grammar, but no double holds it (nlohmann does not say where).
    why = "not JSON (a number too large for a double)";
    return std::nullopt;
  }
  if (!j.is_object()) {
    why = "expected a JSON object, found " + shown(j);
    return std::nullopt;
  }
  ClientLine l;
  auto type = j.find("type");
  if (type == j.end()) {
    why = "expected a \"type\" (invoke, ok, fail, info, cs-enter or cs-exit), found none";
    return std::nullopt;
  }
  bool known = false;
  for (const auto& [name, t] : kTypes) {
    if (type->is_string() && *type == name) l.type = t, known = true;
  }
  if (!known) {
    why = "expected \"type\" to be invoke, ok, fail, info, cs-enter or cs-exit, found " + shown(*type);
    return std::nullopt;
  }
  const bool section = l.type == Type::CsEnter || l.type == Type::CsExit;
  if (!section) {
    auto f = j.find("f");
    if (f == j.end() || !f->is_string() || !is_operation(f->get<std::string>())) {
      why = "expected \"f\" to be acquire, release, extend, read or write, found " + (f == j.end() ? "none" : shown(*f));
      return std::nullopt;
    }
    l.f = f->get<std::string>();
  }
  const Allowed a = allowed(l.type, l.f);
  const std::string what = section ? type_name(l.type) : type_name(l.type) + " " + l.f;
  for (const auto& [key, v] : j.items()) {
    const bool ok = key == "type" || key == "thread" || (key == "f" && !section) || (key == "value" && a.value) ||
                    (key == "token" && a.token) || (key == "error" && a.error);
    if (!ok) {
      why = "unexpected key " + shown(json(key)) + " in " + what;
      return std::nullopt;
    }
  }
  if (auto v = j.find("value"); v != j.end() && !read_integer(*v, l.value)) {
    why = "expected \"value\" to be an integer, found " + shown(*v);
    return std::nullopt;
  }
  if (a.value_required && !l.value) {
    why = "expected a \"value\" (an integer) in " + what + ", found none";
    return std::nullopt;
  }
  if (auto t = j.find("token"); t != j.end() && !read_integer(*t, l.token)) {
    why = "expected \"token\" to be an integer, found " + shown(*t);
    return std::nullopt;
  }
  if (auto e = j.find("error"); e != j.end()) {
    if (!e->is_string()) {
      why = "expected \"error\" to be a string, found " + shown(*e);
      return std::nullopt;
    }
    l.error = e->get<std::string>();
  }
  if (auto t = j.find("thread"); t != j.end()) {
    if (t->is_string() && !t->get_ref<const std::string&>().empty()) {
      l.thread = t->get<std::string>();
    } else if (t->is_number_unsigned()) {
      l.thread = std::to_string(t->get<uint64_t>());
    } else {
      why = "expected \"thread\" to be a non-empty string or a non-negative integer, found " + shown(*t);
      return std::nullopt;
    }
  }
  return l;
}

ClientReport::ClientReport(Recorder& rec, int64_t process, std::string lock_key, std::string stock_key)
    : rec_(rec), process_(process), lock_key_(std::move(lock_key)), stock_key_(std::move(stock_key)) {}

std::string ClientReport::name() const {
  return "client-" + std::to_string(process_) + (incarnation_ > 1 ? " (incarnation " + std::to_string(incarnation_) + ")" : "");
}

std::string ClientReport::where() const { return name() + " line " + std::to_string(line_no_); }

// A restarted program starts its report afresh: what the last one left open went with
// its crash.
void ClientReport::begin(int incarnation) {
  if (incarnation == incarnation_) return;
  incarnation_ = incarnation;
  line_no_ = 0;
  broken_ = false;
  open_.clear();
  threads_ = {{"", 0}};
  in_cs_ = false;
  holding_ = false;
}

bool ClientReport::acquiring() const {
  for (const auto& [thread, o] : open_) {
    if (o.f == "acquire") return true;
  }
  return false;
}

int64_t ClientReport::thread(const std::string& name) {
  if (auto it = threads_.find(name); it != threads_.end()) return it->second;
  const auto n = static_cast<int64_t>(threads_.size());
  if (n >= kThreadsMax) return -1;
  threads_.emplace(name, n);
  return n;
}

// The main thread's events are lockstep's usual client events; a named thread's carry
// its name beside its number.
void ClientReport::op(checker::EventType type, const std::string& thread_name, const std::string& f,
                      nlohmann::json value) {
  const std::string& key = f == "read" || f == "write" ? stock_key_ : lock_key_;
  const int64_t n = history_thread(thread(thread_name));
  if (thread_name.empty()) return rec_.op(type, process_, f, key, std::move(value), n);
  checker::Event e;
  e.type = type;
  e.process = process_;
  e.thread = n;
  e.f = f;
  e.key = key;
  e.value = std::move(value);
  e.time_ns = rec_.now();
  e.extra = {{"client_thread", thread_name}};
  rec_.record(std::move(e));
}

void ClientReport::line(int incarnation, std::string_view text, bool overlong) {
  begin(incarnation);
  ++lines_total_;
  if (broken_) {
    ++ignored_;
    return;
  }
  ++line_no_;
  if (++*run_lines_ > kLinesMax)
    return broken(std::string(run_lines_ == &own_lines_ ? "" : "the run's clients wrote ") + "more than " +
                  std::to_string(kLinesMax) + " lines");
  if (overlong) return broken("a line longer than 65536 bytes");
  std::string why;
  const auto l = parse_client_line(text, why);
  if (!l) return broken(why);
  const bool section = l->type == Type::CsEnter || l->type == Type::CsExit;
  if (!section && thread(l->thread) < 0)
    return broken("a line on thread " + shown(json(l->thread)) + ", one more than the " + std::to_string(kThreadsMax) +
                  " threads a client may name");
  const auto open = open_.find(l->thread);
  const std::string on = l->thread.empty() ? "" : " on thread " + shown(json(l->thread));
  if (!section && l->type == Type::Invoke && open != open_.end())
    return broken("invoke of " + l->f + on + " while " + open->second.f + " (line " + std::to_string(open->second.line) +
                  ") has no outcome yet");
  if (!section && l->type != Type::Invoke && open == open_.end())
    return broken(type_name(l->type) + " of " + l->f + on + " with no operation invoked");
  if (!section && l->type != Type::Invoke && l->f != open->second.f)
    return broken(type_name(l->type) + " of " + l->f + on + " while the open operation is " + open->second.f +
                  " (line " + std::to_string(open->second.line) + ")");
  if (l->type == Type::CsEnter && in_cs_)
    return broken("cs-enter inside the critical section entered at line " + std::to_string(cs_line_));
  if (l->type == Type::CsExit && !in_cs_) return broken("cs-exit outside a critical section");
  record(*l);
}

void ClientReport::record(const ClientLine& l) {
  using checker::EventType;
  nlohmann::json value = nullptr;
  if (l.value) value = *l.value;
  if (l.token) value = l.value ? nlohmann::json{{"value", *l.value}, {"token", *l.token}} : nlohmann::json{{"token", *l.token}};
  if (!l.error.empty()) value = l.error;
  switch (l.type) {
    case Type::CsEnter:
      in_cs_ = true;
      cs_line_ = line_no_;
      rec_.truth(checker::truth::kCsEnter, process_, lock_key_);
      return;
    case Type::CsExit:
      in_cs_ = false;
      rec_.truth(checker::truth::kCsExit, process_, lock_key_);
      return;
    case Type::Invoke:
      open_[l.thread] = Open{l.f, line_no_};
      if (l.f == "release") holding_ = false;
      op(EventType::Invoke, l.thread, l.f, std::move(value));
      return;
    case Type::Ok:
    case Type::Fail:
    case Type::Info: {
      open_.erase(l.thread);
      if (l.type == Type::Ok && l.f == "acquire") {
        holding_ = true;
        holder_thread_ = l.thread;
      }
      const EventType t = l.type == Type::Ok ? EventType::Ok : l.type == Type::Fail ? EventType::Fail : EventType::Info;
      op(t, l.thread, l.f, std::move(value));
      return;
    }
  }
}

void ClientReport::broken(const std::string& why) {
  problems_.push_back(where() + ": " + why);
  broken_ = true;
  close_open("report broken");
}

void ClientReport::close_open(const char* cause) {
  for (const auto& [thread_name, o] : open_) op(checker::EventType::Info, thread_name, o.f, cause);
  open_.clear();
  if (in_cs_) {
    rec_.truth(checker::truth::kCsExit, process_, lock_key_, nullptr, -1, {{"cause", cause}});
    in_cs_ = false;
  }
  // A release that may take effect at any later point: the lease runs out some time.
  if (holding_) {
    op(checker::EventType::Invoke, holder_thread_, "release", cause);
    holding_ = false;
  }
}

void ClientReport::exited(int incarnation, int wait_status, const std::string& stderr_quote) {
  begin(incarnation);
  const bool clean = WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0;
  std::string why;
  if (!clean) {
    why = exit_text(wait_status);
  } else if (line_no_ == 0) {
    why = "exited without reporting anything";
  } else if (!broken_ && !open_.empty()) {
    // The one open longest.
    auto first = open_.begin();
    for (auto it = open_.begin(); it != open_.end(); ++it) {
      if (it->second.line < first->second.line) first = it;
    }
    why = "exited with " + first->second.f + (first->first.empty() ? "" : " on thread " + shown(json(first->first))) +
          " (line " + std::to_string(first->second.line) + ") still open";
  } else if (!broken_ && in_cs_) {
    why = "exited inside its critical section (entered at line " + std::to_string(cs_line_) + ")";
  }
  if (!why.empty()) {
    if (!clean && !stderr_quote.empty()) why += "; its stderr ends: " + stderr_quote;
    problems_.push_back(name() + " " + why);
  }
  close_open(clean ? "exited" : "died");
  if (!clean) {
    rec_.truth(checker::truth::kCrash, process_, "", "client-" + std::to_string(process_), -1,
               {{"exit", exit_text(wait_status)}});
  } else {
    rec_.truth(checker::truth::kFinish, process_, "");
  }
}

void ClientReport::start_failed(int incarnation, const std::string& why) {
  begin(incarnation);
  problems_.push_back(name() + " could not start: " + why);
}

void ClientReport::killed_at_end() {
  still_running_ = name() + " was still running when the run ended: killed";
  if (lines_total_ == 0) problems_.push_back(name() + " reported nothing before the run ended");
}

}  // namespace lockstep::runner
