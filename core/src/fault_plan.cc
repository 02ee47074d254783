// The one place that knows what each fault kind means: its keys, its words, its record,
// what a world needs to play it, and how it is played.
#include "lockstep/fault_plan.h"

#include <algorithm>
#include <cctype>
#include <memory>

#include "lockstep/text.h"

namespace lockstep {
namespace {

constexpr int64_t kMsNs = 1'000'000;

bool on_server(const std::string& name) { return name.rfind("node-", 0) == 0 || name.rfind("mysql-", 0) == 0; }

std::string ms_text(int64_t ms) { return format_duration(ms * kMsNs); }

// The capability a fault needs on one process of the world.
Capability needed(FaultKind kind, bool server) {
  switch (kind) {
    case FaultKind::Pause: return server ? Capability::PauseServer : Capability::PauseClient;
    case FaultKind::Crash: return server ? Capability::CrashServer : Capability::CrashClient;
    case FaultKind::ClockJump: return server ? Capability::ClockJumpServer : Capability::ClockJumpClient;
    case FaultKind::ClockDrift: return server ? Capability::ClockDriftServer : Capability::ClockDriftClient;
    case FaultKind::Delay: return Capability::LinkDelay;
    case FaultKind::Jitter: return Capability::LinkJitter;
    case FaultKind::Partition: return Capability::Partition;
    case FaultKind::Failover: return Capability::Failover;
  }
  return Capability::kCount;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool matches(const FaultTrigger& t, const WorldEvent& e) {
  if (static_cast<int>(t.event) != static_cast<int>(e.kind) || t.process != e.process) return false;
  const bool command = t.event == FaultTrigger::Event::Sends || t.event == FaultTrigger::Event::Receives;
  if (command ? lower(t.what) != lower(e.what) : t.what != e.what) return false;
  return t.key.empty() || t.key == e.key;
}

std::string ordinal(int n) {
  const int tens = n % 100;
  const char* suffix = (tens >= 11 && tens <= 13) ? "th" : n % 10 == 1 ? "st" : n % 10 == 2 ? "nd" : n % 10 == 3 ? "rd" : "th";
  return std::to_string(n) + suffix;
}

}  // namespace

// Schedules faults. The order of the at() calls is part of the history: two records due
// at the same instant are written in the order they were scheduled. Scheduled work holds
// the world by reference: it runs only while the world does. (A friend of WorldControl,
// to write the world's truth records.)
class FaultPlayer {
 public:
  explicit FaultPlayer(WorldControl& world) : world_(world) {}

  void add(const FaultSpec& f) {
    if (f.on) {
      armed_.push_back({f, 0, false});
    } else {
      schedule(f, Millis(f.at_ms), fault_record(f));
    }
  }

  bool event(const WorldEvent& e) {
    bool now = false;
    for (auto& a : armed_) {
      if (a.fired || !matches(*a.fault.on, e) || ++a.seen < a.fault.on->nth) continue;
      a.fired = true;
      const Nanos start = world_.now() + Millis(a.fault.on->delay_ms);
      // The record says when the fault really struck.
      FaultSpec as_struck = a.fault;
      as_struck.at_ms = std::chrono::duration_cast<Millis>(start).count();
      schedule(a.fault, start, fault_record(as_struck));
      now = now || a.fault.on->delay_ms == 0;
    }
    return now;
  }

  std::vector<FaultSpec> unfired() const {
    std::vector<FaultSpec> out;
    for (const auto& a : armed_) {
      if (!a.fired) out.push_back(a.fault);
    }
    return out;
  }

  bool armed() const { return !armed_.empty(); }

 private:
  struct Armed {
    FaultSpec fault;
    int seen;
    bool fired;
  };

  void schedule(const FaultSpec& f, Nanos start, nlohmann::json record) {
    const auto target = f.target.empty() ? std::nullopt : world_.process(f.target);
    const int64_t process = target ? target->history_id : -1;
    const int64_t node = target ? target->truth_node : -1;
    WorldControl& w = world_;
    w.at(start, [&w, record, process, node] { w.truth(Truth::FaultStart, process, record, node); });
    if (target || f.kind == FaultKind::Partition) act(f, start, target ? *target : ProcessRef{});
    if (f.duration_ms > 0) {
      w.at(start + Millis(f.duration_ms),
           [&w, record, process, node] { w.truth(Truth::FaultEnd, process, record, node); });
    }
  }

  void act(const FaultSpec& f, Nanos start, const ProcessRef& p) {
    WorldControl& w = world_;
    const Nanos end = start + Millis(f.duration_ms);
    switch (f.kind) {
      case FaultKind::Pause:
        w.at(start, [&w, p, d = Millis(f.duration_ms)] { w.pause(p, d); });
        break;
      case FaultKind::Crash:
        w.at(start, [&w, p] {
          w.crash(p);
          w.truth(Truth::Crash, p.history_id, p.name, p.truth_node);
        });
        if (f.restart_after_ms) {
          w.at(start + Millis(*f.restart_after_ms), [&w, p] {
            w.truth(Truth::Restart, p.history_id, p.name, p.truth_node);
            w.restart(p);
          });
        }
        break;
      case FaultKind::ClockJump:
        w.at(start, [&w, p, by = Millis(f.jump_ms)] { w.jump_wall_clock(p, by); });
        break;
      case FaultKind::ClockDrift:
        w.at(start, [&w, p, ppm = f.drift_ppm] { w.set_clock_drift(p, ppm); });
        break;
      case FaultKind::Delay:
      case FaultKind::Jitter: {
        const bool delay = f.kind == FaultKind::Delay;
        const Nanos amount = Millis(delay ? f.delay_ms : f.jitter_ms);
        auto apply = [&w, p, delay](Nanos a) { delay ? w.add_link_delay(p, a) : w.add_link_jitter(p, a); };
        w.at(start, [apply, amount] { apply(amount); });
        w.at(end, [apply, amount] { apply(-amount); });
        break;
      }
      case FaultKind::Partition:
        w.at(start, [&w, f] { partition(w, f, +1); });
        w.at(end, [&w, f] { partition(w, f, -1); });
        break;
      case FaultKind::Failover:
        w.at(start, [&w, p] { w.fail_over(p); });
        break;
    }
  }

  static void partition(WorldControl& w, const FaultSpec& f, int delta) {
    if (f.groups.size() < 2) return;
    for (const auto& a : f.groups[0]) {
      for (const auto& b : f.groups[1]) {
        auto pa = w.process(a), pb = w.process(b);
        if (!pa || !pb) continue;
        w.block_link(*pa, *pb, delta);
        if (!f.one_way) w.block_link(*pb, *pa, delta);
      }
    }
  }

  WorldControl& world_;
  std::vector<Armed> armed_;
};

namespace {

nlohmann::json trigger_json(const FaultTrigger& t) {
  nlohmann::json j = {{"process", t.process}, {trigger_event_names()[static_cast<int>(t.event)], t.what}};
  if (!t.key.empty()) j["key"] = t.key;
  if (t.nth != 1) j["nth"] = t.nth;
  if (t.delay_ms != 0) j["delay_ms"] = t.delay_ms;
  return j;
}

std::optional<FaultTrigger> trigger_from_json(const nlohmann::json& j) {
  if (!j.is_object() || !j.contains("process") || !j["process"].is_string()) return std::nullopt;
  FaultTrigger t;
  t.process = j["process"].get<std::string>();
  bool found = false;
  for (size_t i = 0; i < trigger_event_names().size(); ++i) {
    auto it = j.find(trigger_event_names()[i]);
    if (it == j.end() || !it->is_string()) continue;
    t.event = static_cast<FaultTrigger::Event>(i);
    t.what = it->get<std::string>();
    found = true;
  }
  if (!found) return std::nullopt;
  if (auto it = j.find("key"); it != j.end() && it->is_string()) t.key = it->get<std::string>();
  if (auto it = j.find("nth"); it != j.end() && it->is_number_integer()) t.nth = it->get<int>();
  if (auto it = j.find("delay_ms"); it != j.end() && it->is_number_integer()) t.delay_ms = it->get<int64_t>();
  return t;
}

}  // namespace

std::string_view command_key(const std::vector<std::string>& argv) {
  if (argv.size() < 2) return {};
  const std::string name = lower(argv[0]);
  if (name != "eval" && name != "evalsha" && name != "eval_ro" && name != "evalsha_ro") return argv[1];
  if (argv.size() < 4 || argv[2] == "0" || argv[2].empty() || argv[2][0] == '-') return {};
  return argv[3];
}

const std::vector<std::string>& trigger_event_names() {
  static const std::vector<std::string> kNames = {"sends", "receives", "enters", "leaves", "sets", "deletes"};
  return kNames;
}

const std::vector<FaultKindInfo>& fault_kinds() {
  using T = FaultTarget;
  using F = FuzzTargets;
  static const std::vector<FaultKindInfo> kKinds = {
      {FaultKind::Pause, "pause", {"target", "at_ms", "duration_ms"}, T::Process, F::Clients,
       "the process stops for duration_ms (a GC pause, SIGSTOP): its timers and inbound messages wait"},
      {FaultKind::Crash, "crash", {"target", "at_ms", "restart_after_ms"}, T::Process, F::ClientsSpareNodes,
       "the process loses its memory; with restart_after_ms it comes back (a node with what its persistence kept)"},
      {FaultKind::ClockJump, "clock-jump", {"target", "at_ms", "jump_ms"}, T::Process, F::Anyone,
       "the process's wall clock steps by jump_ms (an NTP step); its monotonic clock does not"},
      {FaultKind::ClockDrift, "clock-drift", {"target", "at_ms", "drift_ppm"}, T::Process, F::Anyone,
       "from at_ms on, both of the process's clocks run drift_ppm fast (negative: slow)"},
      {FaultKind::Delay, "delay", {"target", "at_ms", "duration_ms", "delay_ms"}, T::Process, F::Anyone,
       "every message to or from the process takes delay_ms longer"},
      {FaultKind::Jitter, "jitter", {"target", "at_ms", "duration_ms", "jitter_ms"}, T::Process, F::Anyone,
       "every message to or from the process takes up to jitter_ms longer, drawn at random"},
      {FaultKind::Partition, "partition", {"groups", "at_ms", "duration_ms", "one_way"}, T::Groups, F::Anyone,
       "messages between the two groups are dropped (one_way: only from the first to the second)"},
      {FaultKind::Failover, "failover", {"target", "at_ms"}, T::Master, F::Anyone,
       "a replica of the master is promoted, as Sentinel does, and clients follow it"},
  };
  return kKinds;
}

const FaultKindInfo& kind_info(FaultKind kind) {
  for (const auto& k : fault_kinds()) {
    if (k.kind == kind) return k;
  }
  return fault_kinds().front();
}

const char* to_string(FaultKind kind) { return kind_info(kind).name; }

std::optional<FaultKind> fault_kind_named(std::string_view name) {
  for (const auto& k : fault_kinds()) {
    if (name == k.name) return k.kind;
  }
  return std::nullopt;
}

std::vector<std::string> fault_kind_names() {
  std::vector<std::string> out;
  for (const auto& k : fault_kinds()) out.push_back(k.name);
  return out;
}

nlohmann::ordered_json fault_file_json(const FaultSpec& f) {
  nlohmann::ordered_json j = {{"kind", to_string(f.kind)}};
  for (const auto& key : kind_info(f.kind).keys) {
    if (key == "at_ms" && f.on) {
      j["on"] = nlohmann::ordered_json::parse(trigger_json(*f.on).dump());
      continue;
    }
    if (key == "target") j[key] = f.target;
    if (key == "groups") j[key] = f.groups;
    if (key == "at_ms") j[key] = f.at_ms;
    if (key == "duration_ms") j[key] = f.duration_ms;
    if (key == "restart_after_ms" && f.restart_after_ms) j[key] = *f.restart_after_ms;
    if (key == "jump_ms") j[key] = f.jump_ms;
    if (key == "drift_ppm") j[key] = f.drift_ppm;
    if (key == "delay_ms") j[key] = f.delay_ms;
    if (key == "jitter_ms") j[key] = f.jitter_ms;
    if (key == "one_way") j[key] = f.one_way;
  }
  return j;
}

// Zero amounts are left out (a record says what the fault does); a drift of 0 and a
// two-way partition are still stated, since they are what that fault is.
nlohmann::json fault_record(const FaultSpec& f) {
  nlohmann::json j = {{"kind", to_string(f.kind)}};
  if (f.on) j["on"] = trigger_json(*f.on);
  for (const auto& key : kind_info(f.kind).keys) {
    if (key == "target" && !f.target.empty()) j[key] = f.target;
    if (key == "groups" && !f.groups.empty()) j[key] = f.groups;
    if (key == "at_ms") j[key] = f.at_ms;
    if (key == "duration_ms" && f.duration_ms) j[key] = f.duration_ms;
    if (key == "restart_after_ms" && f.restart_after_ms) j[key] = *f.restart_after_ms;
    if (key == "jump_ms" && f.jump_ms) j[key] = f.jump_ms;
    if (key == "drift_ppm") j[key] = f.drift_ppm;
    if (key == "delay_ms" && f.delay_ms) j[key] = f.delay_ms;
    if (key == "jitter_ms" && f.jitter_ms) j[key] = f.jitter_ms;
    if (key == "one_way") j[key] = f.one_way;
  }
  return j;
}

std::optional<FaultSpec> fault_from_record(const nlohmann::json& r) {
  if (!r.is_object() || !r.contains("kind") || !r["kind"].is_string()) return std::nullopt;
  auto kind = fault_kind_named(r["kind"].get<std::string>());
  if (!kind) return std::nullopt;
  FaultSpec f;
  f.kind = *kind;
  auto integer = [&](const char* key) -> std::optional<int64_t> {
    auto it = r.find(key);
    if (it == r.end() || !it->is_number()) return std::nullopt;
    return it->get<int64_t>();
  };
  f.at_ms = integer("at_ms").value_or(0);
  if (auto it = r.find("on"); it != r.end()) f.on = trigger_from_json(*it);
  f.duration_ms = integer("duration_ms").value_or(0);
  f.restart_after_ms = integer("restart_after_ms");
  f.jump_ms = integer("jump_ms").value_or(0);
  f.delay_ms = integer("delay_ms").value_or(0);
  f.jitter_ms = integer("jitter_ms").value_or(0);
  if (auto it = r.find("drift_ppm"); it != r.end() && it->is_number()) f.drift_ppm = it->get<double>();
  if (auto it = r.find("target"); it != r.end() && it->is_string()) f.target = it->get<std::string>();
  if (auto it = r.find("one_way"); it != r.end() && it->is_boolean()) f.one_way = it->get<bool>();
  if (auto it = r.find("groups"); it != r.end() && it->is_array()) {
    for (const auto& g : *it) {
      if (!g.is_array()) continue;
      f.groups.emplace_back();
      for (const auto& name : g) {
        if (name.is_string()) f.groups.back().push_back(name.get<std::string>());
      }
    }
  }
  return f;
}

std::string fault_label(const FaultSpec& f) {
  switch (f.kind) {
    case FaultKind::Pause: return "pause " + ms_text(f.duration_ms);
    case FaultKind::Crash:
      return f.restart_after_ms ? "crash, restart after " + ms_text(*f.restart_after_ms) : "crash";
    case FaultKind::ClockJump: return std::string("clock jump ") + (f.jump_ms >= 0 ? "+" : "") + ms_text(f.jump_ms);
    case FaultKind::ClockDrift: return "clock drift " + nlohmann::json(f.drift_ppm).dump() + "ppm";
    case FaultKind::Delay: return "delay +" + ms_text(f.delay_ms);
    case FaultKind::Jitter: return "jitter ≤" + ms_text(f.jitter_ms);
    case FaultKind::Partition: return f.one_way ? "one-way partition" : "partition";
    case FaultKind::Failover: return "failover";
  }
  return to_string(f.kind);
}

std::string describe_when(const FaultSpec& f) {
  if (!f.on) return "at " + ms_text(f.at_ms);
  const FaultTrigger& t = *f.on;
  std::string when = t.delay_ms ? ms_text(t.delay_ms) + " after " : "when ";
  when += t.process + " " + trigger_event_names()[static_cast<int>(t.event)] + " " + t.what;
  if (!t.key.empty()) when += " " + t.key;
  if (t.nth != 1) when += " (the " + ordinal(t.nth) + " time)";
  return when;
}

std::string describe_fault(const FaultSpec& f) {
  std::string who = " on " + f.target;
  if (f.groups.size() == 2) who = " " + join(f.groups[0], ",") + (f.one_way ? " -> " : " | ") + join(f.groups[1], ",");
  std::string out = fault_label(f) + who + " " + describe_when(f);
  // A pause's label already says how long it lasts.
  if (f.duration_ms > 0 && f.kind != FaultKind::Pause) out += " for " + ms_text(f.duration_ms);
  return out;
}

std::optional<int64_t> fault_span_ms(const FaultSpec& f) {
  switch (f.kind) {
    case FaultKind::Crash: return f.restart_after_ms;
    case FaultKind::ClockDrift: return std::nullopt;
    case FaultKind::ClockJump:
    case FaultKind::Failover: return 0;
    case FaultKind::Pause:
    case FaultKind::Delay:
    case FaultKind::Jitter:
    case FaultKind::Partition: break;
  }
  return f.duration_ms;
}

FaultSpec sized_fault(FaultKind kind, std::string target, int64_t at_ms, int64_t amount, bool restart) {
  FaultSpec f;
  f.kind = kind;
  f.target = std::move(target);
  f.at_ms = at_ms;
  switch (kind) {
    case FaultKind::Pause: f.duration_ms = amount; break;
    case FaultKind::Crash:
      if (restart) f.restart_after_ms = amount;
      break;
    case FaultKind::ClockJump: f.jump_ms = amount; break;
    case FaultKind::ClockDrift: f.drift_ppm = static_cast<double>(amount) * 10; break;
    case FaultKind::Delay:
      f.duration_ms = amount;
      f.delay_ms = amount / 4 + 1;
      break;
    case FaultKind::Jitter:
      f.duration_ms = amount;
      f.jitter_ms = amount / 4 + 1;
      break;
    case FaultKind::Partition:
      f.duration_ms = amount;
      break;
    case FaultKind::Failover: break;
  }
  return f;
}

Capability clock_capability(const std::string& process, FaultKind kind) {
  // The MySQL and ZooKeeper servers' clocks are capabilities of their own: a world may move
  // Redis servers' clocks and not MariaDB's or the JVM's.
  if (process.rfind("mysql-", 0) == 0) return Capability::ClockMysqlServer;
  if (process.rfind("zk-", 0) == 0) return Capability::ClockZooKeeperServer;
  return needed(kind, on_server(process));
}

Capability needed_capability(const FaultSpec& f) {
  if (f.kind == FaultKind::ClockJump || f.kind == FaultKind::ClockDrift) return clock_capability(f.target, f.kind);
  return needed(f.kind, on_server(f.target));
}

std::string unplayable(const std::vector<FaultSpec>& faults, const Capabilities& caps) {
  for (const auto& f : faults) {
    const Capability c = needed_capability(f);
    if (!caps.has(c)) return caps.why_not(c) + " (" + describe_fault(f) + ")";
  }
  return "";
}

std::string unplayable(const std::vector<FaultSpec>& faults, const WorldControl& world) {
  return unplayable(faults, world.capabilities());
}

FaultPlan::FaultPlan(const std::vector<FaultSpec>& faults, WorldControl& world)
    : world_(world), player_(std::make_unique<FaultPlayer>(world)) {
  for (const auto& f : faults) player_->add(f);
  if (player_->armed()) world_.on_event = [p = player_.get()](const WorldEvent& e) { return p->event(e); };
}

FaultPlan::~FaultPlan() {
  if (player_->armed()) world_.on_event = nullptr;
}

std::vector<FaultSpec> FaultPlan::unfired() const { return player_->unfired(); }

}  // namespace lockstep
