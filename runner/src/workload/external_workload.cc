// Starting the user's program once per client and collecting what it reports
// (external_workload.h).
#include "workload/external_workload.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>

#include <fnmatch.h>


namespace lockstep::runner {
namespace {

// Lines of a program's stderr quoted when it went wrong.
constexpr size_t kStderrLines = 16;

bool moves_clock(const Scenario& s, const std::string& client) {
  for (const auto& f : s.faults) {
    const Capability c = needed_capability(f);
    if (f.target == client && (c == Capability::ClockJumpClient || c == Capability::ClockDriftClient)) return true;
  }
  for (const auto& k : s.clocks) {
    if (k.process == client && (k.offset_ms != 0 || k.drift_ppm != 0)) return true;
  }
  return false;
}

// What a failed client's message quotes of its stderr: the last few non-blank lines, from
// the last line that names an error if there is one (a Node stack trace ends with the
// runtime's version, a Python traceback with the exception, a shell script with its own
// words), each cut short, joined with " | ".
std::string quote_stderr(const std::string& tail) {
  constexpr size_t kQuoted = 4, kLineChars = 160;
  std::vector<std::string> lines;
  size_t start = 0;
  while (start <= tail.size()) {
    size_t end = tail.find('\n', start);
    if (end == std::string::npos) end = tail.size();
    std::string l = tail.substr(start, end - start);
    start = end + 1;
    const size_t text = l.find_first_not_of(" \t\r");
    if (text == std::string::npos) continue;
    l.erase(0, text);
    if (l.size() > kLineChars) l = l.substr(0, kLineChars) + "…";
    lines.push_back(std::move(l));
  }
  size_t from = lines.size() > kQuoted ? lines.size() - kQuoted : 0;
  for (size_t i = lines.size(); i-- > 0;) {
    const std::string& l = lines[i];
    if (l.find("Error") != std::string::npos || l.find("Exception") != std::string::npos ||
        l.find("error:") != std::string::npos || l.rfind("panic", 0) == 0 || l.rfind("Traceback", 0) == 0) {
      from = i;
      break;
    }
  }
  std::string out;
  for (size_t i = from; i < lines.size() && i < from + kQuoted; ++i) out += (out.empty() ? "" : " | ") + lines[i];
  return out;
}

// The keys a command writes, as far as a lock is concerned: a script's KEYS, or the key of
// a command that stores or expires a value. Reads (GET, PTTL, EXISTS...) are not claims.
std::vector<std::string> written_keys(const std::vector<std::string>& argv) {
  if (argv.size() < 2) return {};
  std::string cmd = argv[0];
  for (auto& c : cmd) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (cmd == "EVAL" || cmd == "EVALSHA" || cmd == "FCALL") {
    if (argv.size() < 3) return {};
    const size_t n = static_cast<size_t>(std::max(0, std::atoi(argv[2].c_str())));
    std::vector<std::string> keys;
    for (size_t i = 3; i < argv.size() && i < 3 + n; ++i) keys.push_back(argv[i]);
    return keys;
  }
  static const char* const kWrites[] = {"SET",  "SETNX",   "SETEX", "PSETEX", "GETSET", "HSET",   "HSETNX",
                                        "HMSET", "HINCRBY", "INCR",  "INCRBY", "EXPIRE", "PEXPIRE", "SADD",
                                        "ZADD", "LPUSH",   "RPUSH"};
  for (const char* w : kWrites) {
    if (cmd == w) return {argv[1]};
  }
  return {};
}

}  // namespace

std::vector<std::string> external_environment(const Scenario& s, const std::string& client) {
  const WorkloadSpec& w = s.workload;
  return {"LOCKSTEP_CLIENT=" + client,
          "LOCKSTEP_LOCK_KEY=" + s.lock.key,
          "LOCKSTEP_STOCK_KEY=" + w.stock_key,
          "LOCKSTEP_LEASE_MS=" + std::to_string(s.lock.lease_ms),
          "LOCKSTEP_WAIT_MS=" + std::to_string(w.wait_ms),
          "LOCKSTEP_HOLD_MS=" + std::to_string(w.hold_ms),
          "LOCKSTEP_ATTEMPTS=" + std::to_string(w.attempts_per_client),
          "LOCKSTEP_SEED=" + std::to_string(s.seed)};
}

ExternalWorkload::ExternalWorkload(const Scenario& s, live::ExternalControl& control, Recorder& rec)
    : s_(s), control_(control), rec_(rec), watched_(s.lock.key) {
  // A pause (SIGSTOP) can hold a client between a reply and its `ok`: such clients'
  // outcomes are not judged for lateness.
  for (const auto& f : s.faults) {
    if (f.kind == FaultKind::Pause && f.target.rfind("client-", 0) == 0) paused_.insert(std::atoll(f.target.c_str() + 7));
  }
  // One declared key, no glob: watched from the start, nothing to learn.
  if (s.lock.keys.size() == 1 && s.lock.keys[0].find_first_of("*?[") == std::string::npos) {
    watched_ = s.lock.keys[0];
    learnt_from_ = "lock.keys";
  }
  control_.on_line = [this](int64_t client, int incarnation, std::string_view line, bool overlong) {
    line_read(client, incarnation, line, overlong);
  };
  control_.on_exit = [this](int64_t client, int incarnation, int status) {
    unannounced_.erase(client);  // the line that would have announced it died with the program
    traffic_.erase(client);
    const std::string name = "client-" + std::to_string(client);
    const std::string tail = control_.stderr_tail(name, kStderrLines);
    const size_t before = report(client).problems().size();
    report(client).exited(incarnation, status, quote_stderr(tail));
    if (report(client).problems().size() > before && !tail.empty()) stderr_[name] = tail;
    let_next_start(client);
  };
  control_.on_start_failed = [this](int64_t client, int incarnation, const std::string& why) {
    report(client).start_failed(incarnation, why);
    let_next_start(client);
  };
}

ExternalWorkload::~ExternalWorkload() {
  control_.on_line = nullptr;
  control_.on_exit = nullptr;
  control_.on_start_failed = nullptr;
}

ClientReport& ExternalWorkload::report(int64_t client) {
  auto& r = reports_[client];
  if (!r) {
    r = std::make_unique<ClientReport>(rec_, client, s_.lock.key, s_.workload.stock_key);
    r->count_lines_in(&run_lines_);
  }
  return *r;
}

void ExternalWorkload::line_read(int64_t client, int incarnation, std::string_view line, bool overlong) {
  ClientReport& r = report(client);
  const bool was_acquiring = r.acquiring(), held = r.holding();
  const size_t problems_before = r.problems().size();
  r.line(incarnation, line, overlong);
  if (r.silenced()) {
    unannounced_.erase(client);  // named for the line that broke it; nothing later is read
  } else if (auto u = unannounced_.find(client); u != unannounced_.end()) {
    const int64_t late_ns = rec_.now() - u->second.at_ns;
    // A line already broken is named for that; one late line tells all there is to tell.
    if (late_ns > kLateLineNs && r.problems().size() == problems_before && !late_.count(client)) {
      char seconds[32];
      std::snprintf(seconds, sizeof seconds, "%.3f", static_cast<double>(late_ns) / 1e9);
      late_[client] = "client-" + std::to_string(client) + " line " + std::to_string(r.line_number()) + " came " +
                      seconds + " s after the proxy passed its " + u->second.command +
                      ", which no line read before it announced: its output reaches lockstep late (buffered?), "
                      "and lockstep stamps each line when it reads it, so flush stdout after every line";
    }
    unannounced_.erase(u);
  }
  check_outcome(client, line, r, problems_before);
  if (!held && r.holding()) let_next_start(client);
  if (!was_acquiring && r.acquiring()) acquiring_[client].clear();
  if (!was_acquiring || held || !r.holding()) return;
  // A lock held in the ZooKeeper ensemble writes no Redis key: there is none to learn.
  if (s_.topology.zookeeper.servers > 0) return;
  // An `ok` of acquire: what did the acquire write?
  const auto writes = std::move(acquiring_[client]);
  acquiring_.erase(client);
  std::vector<std::string> keys;
  for (const auto& argv : writes) {
    for (auto& k : written_keys(argv)) {
      if (k != s_.workload.stock_key && std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
    }
  }
  if (std::find(keys.begin(), keys.end(), watched_) != keys.end()) {
    if (learnt_from_.empty()) learnt_from_ = "-";  // the lock key itself: nothing left to learn
    return;
  }
  const std::string name = "client-" + std::to_string(client);
  const std::string where = name + "'s acquire (line " + std::to_string(r.line_number()) + ")";
  // The first hold tells: a library that stores the lock under a key of its own making
  // writes exactly that one key while it acquires, or the first that lock.keys matches.
  std::vector<std::string> matching;
  for (const auto& k : keys) {
    for (const auto& pattern : s_.lock.keys) {
      if (fnmatch(pattern.c_str(), k.c_str(), 0) == 0) {
        matching.push_back(k);
        break;
      }
    }
  }
  if (learnt_from_.empty() && (s_.lock.keys.empty() ? keys.size() == 1 : !matching.empty())) {
    watched_ = s_.lock.keys.empty() ? keys[0] : matching[0];
    learnt_from_ = where;
    if (on_lock_key) on_lock_key(watched_, client, writes);
    return;
  }
  std::string wrote;
  for (const auto& k : keys) wrote += (wrote.empty() ? "" : ", ") + k;
  unseen_.push_back(name + " reported ok of acquire (line " + std::to_string(r.line_number()) +
                    ") but wrote nothing to the lock's key " + watched_ + " while acquiring (" +
                    (wrote.empty() ? "it wrote no key" : "it wrote " + wrote) +
                    "): who held the lock is unknown, so foreign unlock and deadlock are not judged");
}

// An `ok` is written once the reply that decided it came back; read long after the last
// reply, with nothing else the client was waiting for or doing, it sat in a buffer.
void ExternalWorkload::check_outcome(int64_t client, std::string_view line, const ClientReport& r,
                                     size_t problems_before) {
  Traffic& t = traffic_[client];
  const int64_t now = rec_.now();
  std::string why;
  const auto l = parse_client_line(line, why);
  if (!l || r.silenced() || r.problems().size() != problems_before || late_.count(client)) return;
  if (l->type == ClientLine::Type::Invoke) t.last_invoke_ns = now;
  if (l->type != ClientLine::Type::Ok || paused_.count(client) || t.subscribed) return;
  if (t.forwarded != t.delivered || t.last_delivery_ns < 0 || t.last_delivery_ns < t.last_forward_ns ||
      t.last_delivery_ns < t.last_invoke_ns || now - t.last_delivery_ns <= kLateOutcomeNs)
    return;
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.3f", static_cast<double>(now - t.last_delivery_ns) / 1e9);
  late_[client] = "client-" + std::to_string(client) + " line " + std::to_string(r.line_number()) + " (ok of " + l->f +
                  ") came " + seconds +
                  " s after the proxy handed it the last reply it waited for, and it sent nothing since: its output "
                  "reaches lockstep late (buffered?), and lockstep stamps each line when it reads it, so flush stdout "
                  "after every line";
}

void ExternalWorkload::delivered(int64_t client) {
  Traffic& t = traffic_[client];
  ++t.delivered;
  t.last_delivery_ns = rec_.now();
}

void ExternalWorkload::sent(int64_t client, const std::vector<std::string>& argv) {
  auto it = reports_.find(client);
  if (it == reports_.end()) return;
  {
    Traffic& t = traffic_[client];
    ++t.forwarded;
    t.last_forward_ns = rec_.now();
    std::string cmd = argv.empty() ? "" : argv[0];
    for (auto& c : cmd) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (cmd == "SUBSCRIBE" || cmd == "PSUBSCRIBE" || cmd == "SSUBSCRIBE") t.subscribed = true;
  }
  const ClientReport& r = *it->second;
  if (!r.operation_open() && !unannounced_.count(client)) {
    // The stock, or the lock while the client does not hold it (a library's renewal of a
    // held lock may go unreported): a command the next line must have announced.
    for (size_t i = 1; i < argv.size(); ++i) {
      const bool lock = argv[i] == s_.lock.key || argv[i] == watched_;
      if (argv[i] != s_.workload.stock_key && !(lock && !r.holding())) continue;
      unannounced_[client] = Unannounced{rec_.now(), argv[0] + " on " + argv[i]};
      break;
    }
  }
  if (!r.acquiring()) return;
  auto& writes = acquiring_[client];
  if (writes.size() < 64) writes.push_back(argv);  // a retry loop's many attempts: the first ones tell
}

void ExternalWorkload::add_clients(const std::function<std::string(const std::string& client)>& redis,
                                   const std::function<std::string(const std::string& client)>& zookeeper) {
  for (int i = 1; i <= s_.workload.clients; ++i) {
    const std::string name = "client-" + std::to_string(i);
    live::ExternalClientSpec spec;
    spec.argv = s_.workload.command;
    spec.directory = s_.workload.command_dir;
    spec.env = external_environment(s_, name);
    spec.env.push_back("LOCKSTEP_REDIS=" + redis(name));
    if (zookeeper) {
      spec.env.push_back("LOCKSTEP_ZOOKEEPER=" + zookeeper(name));
      spec.env.push_back("LOCKSTEP_ZOOKEEPER_SESSION_MS=" + std::to_string(s_.topology.zookeeper.session_timeout_ms));
    }
    if (mysql) spec.env.push_back("LOCKSTEP_MYSQL=" + mysql(name));
    spec.shifted_clock = moves_clock(s_, name);
    for (const auto& k : s_.clocks) {
      if (k.process != name) continue;
      spec.clock_offset = Millis(k.offset_ms);
      spec.drift_ppm = k.drift_ppm;
    }
    control_.add_client(name, i, std::move(spec));
    report(i);
  }
}

void ExternalWorkload::start() {
  if (s_.workload.start_after_hold) {
    start_at(1, Nanos(0));
    return;
  }
  for (int i = 1; i <= s_.workload.clients; ++i) start_at(i, Millis((i - 1) * s_.workload.start_stagger_ms));
}

void ExternalWorkload::start_at(int64_t client, Nanos t) {
  scheduled_ = std::max(scheduled_, client);
  control_.at(t, [this, client] {
    if (auto why = control_.start("client-" + std::to_string(client)); !why.empty()) {
      report(client).start_failed(1, why);
      let_next_start(client);
    }
  });
}

void ExternalWorkload::let_next_start(int64_t client) {
  if (!s_.workload.start_after_hold || client != scheduled_ || client >= s_.workload.clients) return;
  start_at(client + 1, control_.now() + Millis(s_.workload.start_stagger_ms));
}

void ExternalWorkload::stop() {
  if (s_.workload.start_after_hold && scheduled_ < s_.workload.clients) {
    never_started_ = "client-" + std::to_string(scheduled_ + 1) +
                     " never started: workload.start_after_hold waits for client-" + std::to_string(scheduled_) +
                     " to hold the lock or end, and it did neither before the run's end";
  }
  for (const auto& name : control_.kill_running()) {
    ClientReport& r = report(std::stoll(name.substr(7)));
    const size_t before = r.problems().size();
    r.killed_at_end();
    if (r.problems().size() > before) stderr_[name] = control_.stderr_tail(name, kStderrLines);
  }
}

std::vector<std::string> ExternalWorkload::problems() const {
  std::vector<std::string> out;
  for (const auto& [client, r] : reports_) out.insert(out.end(), r->problems().begin(), r->problems().end());
  for (const auto& [client, why] : late_) out.push_back(why);
  if (!never_started_.empty()) out.push_back(never_started_);
  return out;
}

nlohmann::json ExternalWorkload::stats() const {
  int64_t lines = 0, ignored = 0;
  nlohmann::json killed = nlohmann::json::array();
  for (const auto& [client, r] : reports_) {
    lines += r->lines();
    ignored += r->ignored_lines();
    if (r->still_running()) killed.push_back(*r->still_running());
  }
  nlohmann::json out = {{"command", s_.workload.command}, {"lines", lines}};
  if (ignored > 0) out["ignored_lines"] = ignored;
  if (!killed.empty()) out["killed_at_end"] = killed;
  if (!stderr_.empty()) out["stderr"] = stderr_;
  if (!learnt_from_.empty() && learnt_from_ != "-")
    out["lock_key"] = {{"key", watched_}, {"learnt_from", learnt_from_}};
  return out;
}

}  // namespace lockstep::runner
