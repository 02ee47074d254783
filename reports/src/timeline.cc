#include "lockstep/reports/timeline.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <set>

#include "history_scan.h"
#include "lockstep/fault_plan.h"
#include "lockstep/reports/text.h"

namespace lockstep::reports {
namespace {

using checker::Event;
using checker::EventType;
using checker::format_seconds;
using checker::History;
using checker::process_label;
namespace truth = checker::truth;

bool is_truth(const Event& e, const char* f) { return e.type == EventType::Truth && e.f == f; }

// Records that describe the run as a whole rather than something that happened in it;
// the resource record comes when the run's clock stops, far after the last action.
bool is_bookkeeping(const Event& e) {
  return e.type == EventType::Truth && (e.f == truth::kResource || e.f == truth::kRunaway);
}

int64_t last_action_ns(const History& h) {
  int64_t t = 0;
  for (const auto& e : h.events) {
    if (!is_bookkeeping(e)) t = std::max(t, e.time_ns);
  }
  return t;
}

std::string span(int64_t a, int64_t b) { return "[" + format_seconds(a) + ", " + format_seconds(b) + "]"; }

std::string value_text(const nlohmann::json& v) {
  if (v.is_null()) return "";
  return truncate_text(v.is_string() ? v.get<std::string>() : v.dump(), 60);
}

const nlohmann::json& scenario_part(const RunReport& r, const char* name) {
  static const nlohmann::json kNone;
  if (!r.scenario_json.is_object()) return kNone;
  auto it = r.scenario_json.find(name);
  return it == r.scenario_json.end() ? kNone : *it;
}

// The lease the lock sets when it takes the key, as the run's judgment found it (a library
// profile's own lease option, or the scenario's lease_ms); 0 when the report does not say
// (a hand-made history).
int64_t lease_ns_of(const RunReport& r) {
  if (auto it = r.stats.find("lease_ms"); it != r.stats.end() && it->is_number() && it->get<double>() > 0) {
    return static_cast<int64_t>(it->get<double>() * 1e6);
  }
  const nlohmann::json& lock = scenario_part(r, "lock");
  if (!lock.is_object()) return 0;
  if (auto it = lock.find("lease_ms"); it != lock.end() && it->is_number() && it->get<double>() > 0) {
    return static_cast<int64_t>(it->get<double>() * 1e6);
  }
  return 0;
}

// Everything drawn for one client, before lanes are chosen.
struct ClientBars {
  std::vector<Bar> holds, sections, ops;
  std::vector<Wait> waits;
};

// A critical section as mutual exclusion judges it: two read sections may overlap.
struct Section {
  int64_t process = -1;
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
  bool read = false;
  bool ended = true;  // false: still open when the run ended
};

std::string describe(const Section& s) {
  return process_label(s.process) + (s.read ? "'s read section " : "'s critical section ") +
         (s.ended ? span(s.begin_ns, s.end_ns) : "from " + format_seconds(s.begin_ns) + ", never exited");
}

// How a key stopped being held on a server.
enum class KeyEnd { Overwritten, Deleted, Expired, Evicted, Crashed, RunEnded };

class Builder {
 public:
  Builder(const RunReport& r, const History& h, const TimelineOptions& o)
      : r_(r), h_(h), o_(o), topology_(scenario_part(r, "topology")), lease_ns_(lease_ns_of(r)) {}

  Timeline build() {
    const int64_t last = last_action_ns(h_);
    t_.end_ns = std::max<int64_t>(last + last / 25, 1'000'000);
    scan_clients();
    scan_servers();
    choose_lanes();
    faults();
    highlights();
    lease_marks();
    waits();
    for (auto& f : t_.faults) f.end_ns = std::min(f.end_ns, t_.end_ns);
    for (auto& hl : t_.highlights) {
      hl.begin_ns = std::min(hl.begin_ns, t_.end_ns);
      hl.end_ns = std::min(hl.end_ns, t_.end_ns);
    }
    return std::move(t_);
  }

 private:
  void scan_clients() {
    std::map<int64_t, int64_t> hold_open;         // process -> since
    std::map<int64_t, std::pair<int64_t, bool>> cs_open;  // process -> (since, read side)
    std::map<std::pair<int64_t, int64_t>, const Event*> op_open;  // (process, thread) -> invoke
    auto close_hold = [&](int64_t p, int64_t t, const std::string& how) {
      auto it = hold_open.find(p);
      if (it == hold_open.end()) return;
      clients_[p].holds.push_back({it->second, t, p, "hold",
                                   process_label(p) + " believed it held the lock " + span(it->second, t) + ", " + how});
      hold_open.erase(it);
    };
    auto close_cs = [&](int64_t p, int64_t t, bool crashed) {
      auto it = cs_open.find(p);
      if (it == cs_open.end()) return;
      const Section s{p, it->second.first, t, it->second.second, crashed || t < t_.end_ns};
      clients_[p].sections.push_back({s.begin_ns, t, p, "cs", describe(s) + (crashed ? " (crashed inside)" : "")});
      sections_.push_back(s);
      cs_open.erase(it);
    };
    auto close_ops = [&](int64_t p, int64_t t, const std::string& how) {
      for (auto it = op_open.begin(); it != op_open.end();) {
        if (it->first.first != p) {
          ++it;
          continue;
        }
        add_op(*it->second, t, "info", how);
        it = op_open.erase(it);
      }
    };
    for (const auto& e : h_.events) {
      if (e.process < 0) continue;
      clients_[e.process];
      const int64_t p = e.process;
      if (e.type == EventType::Invoke) {
        op_open[{p, e.thread}] = &e;
      } else if (e.type != EventType::Truth) {
        if (auto it = op_open.find({p, e.thread}); it != op_open.end()) {
          add_op(*it->second, e.time_ns, to_string(e.type),
                 std::string(to_string(e.type)) + (e.value.is_null() ? "" : " " + value_text(e.value)),
                 e.type == EventType::Ok && e.value != it->second->value ? e.value : nlohmann::json());
          op_open.erase(it);
        }
        if (checker::is_acquire(e.f) && e.type == EventType::Ok) hold_open.emplace(p, e.time_ns);
        if (checker::is_release(e.f)) close_hold(p, e.time_ns, "until its release returned " + std::string(to_string(e.type)));
      } else if (e.f == truth::kCsEnter) {
        cs_open.emplace(p, std::make_pair(e.time_ns, e.value.is_string() && e.value.get<std::string>() == "read"));
      } else if (e.f == truth::kCsExit) {
        close_cs(p, e.time_ns, false);
      } else if (e.f == truth::kCrash && e.node < 0) {
        close_cs(p, e.time_ns, true);
        close_hold(p, e.time_ns, "until it crashed");
        close_ops(p, e.time_ns, "crashed");
      }
    }
    for (auto [p, open] : std::map(cs_open)) close_cs(p, t_.end_ns, false);
    for (auto [p, since] : std::map(hold_open)) close_hold(p, t_.end_ns, "to the end of the run");
    for (const auto& [key, invoke] : op_open) add_op(*invoke, t_.end_ns, "info", "no reply by the end");
    std::stable_sort(sections_.begin(), sections_.end(), [](const Section& a, const Section& b) {
      return a.begin_ns != b.begin_ns ? a.begin_ns < b.begin_ns : a.process < b.process;
    });
  }

  void add_op(const Event& invoke, int64_t end, const std::string& outcome, const std::string& result,
              const nlohmann::json& result_value = nullptr) {
    std::string arg = invoke.value.is_null() ? "" : "(" + value_text(invoke.value) + ")";
    // An external client's named thread (a watchdog's extends) is said by name.
    std::string thread;
    if (invoke.extra.is_object() && invoke.extra.contains("client_thread") && invoke.extra["client_thread"].is_string())
      thread = " (thread " + invoke.extra["client_thread"].get<std::string>() + ")";
    const std::string what = process_label(invoke.process) + thread + " " + invoke.f + " " + invoke.key + arg;
    Bar op{invoke.time_ns, end, invoke.process, "op-" + outcome, what + " → " + result + " " + span(invoke.time_ns, end)};
    op.text = invoke.f + (invoke.value.is_null() ? "" : " " + value_text(invoke.value)) +
              (result_value.is_null() ? "" : " → " + value_text(result_value));
    clients_[invoke.process].ops.push_back(std::move(op));
    if (!checker::is_acquire(invoke.f)) return;
    const std::string how = outcome == "ok" ? "got the lock" : outcome == "fail" ? "gave up" : "got no answer (" + result + ")";
    clients_[invoke.process].waits.push_back(
        {process_label(invoke.process), invoke.time_ns, end, outcome,
         process_label(invoke.process) + " waited " + format_seconds(end - invoke.time_ns) + " for the lock " +
             span(invoke.time_ns, end) + " and " + how});
  }

  // ----- servers: who held the key where, and where the key went after a failover -----

  // The server behind node index `node` at time `t`. In the simulator a failover's record
  // names the promoted replica by its own index; a live run keeps polling the master's
  // address, which Sentinel has pointed at the replica, so from then on that index means
  // the replica.
  std::string server_at(int64_t node, int64_t t) const {
    std::string name = server_name(topology_, node);
    for (const auto& [at, n, to] : moves_) {
      if (n == node && at <= t) name = to;
    }
    return name;
  }

  std::vector<Bar>& server_lane(const std::string& name) {
    if (!server_keys_.count(name)) server_order_.push_back(name);
    return server_keys_[name];
  }

  void scan_servers() {
    const int64_t declared = topology_.is_object() ? topology_.value("nodes", int64_t{0}) : 0;
    for (int64_t n = 0; n < declared; ++n) server_lane(server_name(topology_, n));
    for (const auto& e : h_.events) {
      if (!is_truth(e, truth::kFailover) || !e.value.is_object()) continue;
      const std::string to = e.value.value("to", std::string());
      const std::string from = e.value.value("from", std::string());
      if (to.empty()) continue;
      if (e.node >= 0 && server_name(topology_, e.node) != to) moves_.push_back({e.time_ns, e.node, to});
      failovers_.push_back({e.time_ns, from, to, e.value.value("by", std::string())});
    }
    struct Open {
      const Event* set;
      int64_t owner;
      int64_t tenure_ns;  // when this owner's unbroken hold of the key began: its lease's start
    };
    std::map<std::string, Open> open;
    std::map<std::string, int64_t> setter_of;  // lock value -> the process that last set it
    std::map<int64_t, int64_t> extended;       // process -> its latest ok extend
    auto close = [&](const std::string& s, int64_t t, KeyEnd how, const std::string& by) {
      auto it = open.find(s);
      if (it == open.end()) return;
      const Open o = it->second;
      open.erase(it);
      add_key(s, o.set->key, o.owner, o.set->time_ns, o.tenure_ns, t, how, by, extended[o.owner]);
    };
    for (const auto& e : h_.events) {
      if (e.type == EventType::Ok && e.f == "extend" && e.process >= 0) extended[e.process] = e.time_ns;
      if (e.node < 0 || e.type != EventType::Truth) continue;
      const std::string s = server_at(e.node, e.time_ns);
      server_lane(s);
      if (e.f == truth::kKeySet) {
        // A replica applying its master's write records no process: the value says whose it is.
        int64_t owner = e.process;
        const std::string value = e.value.is_string() ? e.value.get<std::string>() : e.value.dump();
        if (owner >= 0) {
          setter_of[value] = owner;
        } else if (auto w = setter_of.find(value); w != setter_of.end()) {
          owner = w->second;
        }
        auto prev = open.find(s);
        const int64_t tenure = prev != open.end() && prev->second.owner == owner ? prev->second.tenure_ns : e.time_ns;
        close(s, e.time_ns, KeyEnd::Overwritten, "");
        open[s] = {&e, owner, tenure};
      } else if (e.f == truth::kKeyDel) {
        const std::string cause = e.extra.is_object() ? e.extra.value("cause", std::string()) : "";
        close(s, e.time_ns, KeyEnd::Deleted,
              e.process >= 0 ? "deleted by " + process_label(e.process)
              : cause == "failover" ? "lost with the old master in the failover"
                                    : "deleted");
      } else if (e.f == truth::kKeyExpire) {
        close(s, e.time_ns, KeyEnd::Expired, "");
      } else if (e.f == truth::kKeyEvict) {
        close(s, e.time_ns, KeyEnd::Evicted, "");
      } else if (e.f == truth::kCrash && e.process < 0) {
        close(s, e.time_ns, KeyEnd::Crashed, "");
      }
    }
    for (auto [s, o] : std::map(open)) close(s, t_.end_ns, KeyEnd::RunEnded, "");
  }

  // A key bar, cut at the lease deadline when the history shows the key really lived
  // until its lease ran out: it expired, and expiry noticed within a short bound of the
  // deadline (Redis looks for expired keys ten times a second; a later expiry means the
  // lease was renewed in a way the history does not record, such as a watchdog's).
  void add_key(const std::string& server, const std::string& key, int64_t owner, int64_t begin, int64_t tenure,
               int64_t end, KeyEnd how, const std::string& by, int64_t last_extend) {
    const std::string whose = owner >= 0 ? " for " + process_label(owner) : "";
    const std::string held = server + " held \"" + key + "\"" + whose + " ";
    std::vector<Bar>& lane = server_lane(server);
    int64_t deadline = -1;
    if (how == KeyEnd::Expired && lease_ns_ > 0) {
      const int64_t from = std::max(tenure, last_extend > tenure ? last_extend : tenure);
      const int64_t d = from + lease_ns_;
      const int64_t bound = std::min<int64_t>(200'000'000, lease_ns_ / 4);
      if (d >= begin && d <= end && end - d <= bound) deadline = d;
    }
    if (deadline >= 0) {
      const std::string lease = "the lease it was set with (" + format_duration(lease_ns_) + " from " +
                                format_seconds(deadline - lease_ns_) + ") ran out at " + format_seconds(deadline);
      lane.push_back({begin, deadline, owner, "key", held + span(begin, deadline) + ": " + lease});
      if (end > deadline) {
        lane.push_back({deadline, end, owner, "key-expired",
                        server + " noticed at " + format_seconds(end) + " that " + process_label(owner) +
                            "'s key had expired at " + format_seconds(deadline)});
      }
      t_.marks.push_back({"deadline", server, "", deadline, "lease ends",
                          (owner >= 0 ? process_label(owner) + "'s lease" : "The lease") + " on " + server +
                              " ran out at " + format_seconds(deadline)});
      deadlines_.push_back({owner, server, deadline});
      return;
    }
    std::string then;
    switch (how) {
      case KeyEnd::Overwritten: then = "then overwritten"; break;
      case KeyEnd::Deleted: then = "then " + by; break;
      case KeyEnd::Expired: then = "then expired"; break;
      case KeyEnd::Evicted: then = "then evicted for memory"; break;
      case KeyEnd::Crashed: then = "then the server crashed and lost it"; break;
      case KeyEnd::RunEnded: then = "to the end of the run"; break;
    }
    lane.push_back({begin, end, owner, "key", held + span(begin, end) + ", " + then});
  }

  // ----- lanes -----

  // With many clients, only those a reader must see get a lane; the rest share one.
  void choose_lanes() {
    std::set<int64_t> shown;
    for (const auto& [p, bars] : clients_) shown.insert(p);
    if (clients_.size() > o_.max_client_lanes) {
      shown.clear();
      for (const auto& v : r_.violations) shown.insert(v.processes.begin(), v.processes.end());
      for (const auto& f : fault_records()) {
        if (auto p = client_number(f.value.value("target", std::string()))) shown.insert(*p);
      }
      for (const auto& [p, bars] : clients_) {
        if (shown.size() >= o_.collapsed_client_lanes) break;
        shown.insert(p);
      }
    }
    shown_ = shown;
    Lane others{"others", "", "", LaneKind::Aggregate, {}, {}, {}, {}};
    for (auto& [p, bars] : clients_) {
      for (auto& w : bars.waits) {
        if (!shown.count(p)) w.lane = "others";
        all_waits_.push_back(std::move(w));
      }
      if (!shown.count(p)) {
        ++t_.hidden_clients;
        for (auto& b : bars.holds) others.holds.push_back(grey(b));
        for (auto& b : bars.sections) others.sections.push_back(grey(b));
        continue;
      }
      Lane l{process_label(p), process_label(p), "", LaneKind::Client, std::move(bars.holds), std::move(bars.sections),
             o_.ops ? std::move(bars.ops) : std::vector<Bar>{}, {}};
      merge(l.holds, false, "lock holds");
      merge(l.sections, false, "critical sections");
      merge(l.ops, false, "operations");
      t_.lanes.push_back(std::move(l));
    }
    if (!o_.ops) t_.elided.push_back("Operation ticks were left out to keep the file small.");
    if (t_.hidden_clients > 0) {
      others.label = std::to_string(t_.hidden_clients) + " other clients";
      merge(others.holds, true, "lock holds");
      merge(others.sections, true, "critical sections");
      t_.lanes.push_back(std::move(others));
      t_.elided.push_back(std::to_string(t_.hidden_clients) +
                          " clients not involved in a violation share the lane \"" + std::to_string(t_.hidden_clients) +
                          " other clients\".");
    }
    for (const auto& name : server_order_) {
      auto& keys = server_keys_[name];
      for (auto& k : keys) {
        if (!shown.count(k.owner)) k.owner = -1;
      }
      Lane l{name, name, "", LaneKind::Node, {}, {}, {}, std::move(keys)};
      merge(l.keys, false, "key holds");
      t_.lanes.push_back(std::move(l));
    }
    for (const auto& f : failovers_) {
      const std::string by = f.by.empty() ? "" : " (" + f.by + ")";
      const std::string from = f.from.empty() ? "its master" : f.from;
      for (auto& l : t_.lanes) {
        if (l.id == f.to) l.note = "master from " + format_seconds(f.at_ns);
      }
      t_.marks.push_back({"failover", lane_of(f.from), f.to, f.at_ns, "failover → " + f.to,
                          f.to + " was promoted in place of " + from + " at " + format_seconds(f.at_ns) + by +
                              "; from then on the lock key is read and written there"});
    }
  }

  static Bar grey(Bar b) {
    b.owner = -1;
    return b;
  }

  // Bars closer together than a pixel cannot be told apart anyway; drawing them as one
  // keeps huge runs small. Small rows keep every bar so every hover stays exact.
  void merge(std::vector<Bar>& row, bool always, const char* what) {
    if (row.empty() || (!always && row.size() <= o_.merge_above)) return;
    std::stable_sort(row.begin(), row.end(), [](const Bar& a, const Bar& b) { return a.begin_ns < b.begin_ns; });
    const int64_t gap = pixel_ns(o_.merge_px);
    std::vector<Bar> out;
    for (auto& b : row) {
      if (!out.empty() && b.begin_ns - out.back().end_ns <= gap) {
        Bar& last = out.back();
        const bool alike = last.owner == b.owner && last.cls == b.cls;
        // Sub-pixel bars of different owners cannot be told apart either: one grey bar.
        if (alike || b.end_ns - b.begin_ns <= gap) {
          if (!alike) last.owner = -1;
          if (last.cls != b.cls) last.cls = b.cls.rfind("op-", 0) == 0 ? "op-ok" : b.cls;
          last.end_ns = std::max(last.end_ns, b.end_ns);
          last.merged += b.merged;
          continue;
        }
      }
      out.push_back(std::move(b));
    }
    for (auto& b : out) {
      if (b.merged > 1) b.title = std::to_string(b.merged) + " " + what + " " + span(b.begin_ns, b.end_ns) + ", drawn as one";
    }
    const bool lost_detail = out.size() < row.size() && !always;
    row = std::move(out);
    if (lost_detail) note(kMergeNote);
  }

  int64_t pixel_ns(double px) const {
    return static_cast<int64_t>(px * static_cast<double>(t_.end_ns) / static_cast<double>(std::max<int64_t>(o_.plot_width_px, 1)));
  }

  void note(const std::string& s) {
    if (std::find(t_.elided.begin(), t_.elided.end(), s) == t_.elided.end()) t_.elided.push_back(s);
  }

  static std::optional<int64_t> client_number(const std::string& name) {
    if (name.rfind("client-", 0) != 0) return std::nullopt;
    try {
      return std::stoll(name.substr(7));
    } catch (...) {
      return std::nullopt;
    }
  }

  std::string lane_of(const std::string& process_name) const {
    for (const auto& l : t_.lanes) {
      if (l.id == process_name) return l.id;
    }
    if (client_number(process_name) && t_.hidden_clients > 0) return "others";
    return "";
  }

  std::string lane_of(int64_t process) const { return lane_of(process_label(process)); }

  // ----- faults -----

  struct FaultRecord {
    nlohmann::json value;
    int64_t start_ns = -1;  // when it struck; -1: only the scenario says (a hand-made history)
    int64_t end_ns = -1;    // when its fault-end was recorded, if it was
  };

  // The faults as recorded when they struck, each paired with its end; a hand-made
  // history without them falls back to the scenario's fault list.
  std::vector<FaultRecord> fault_records() const {
    std::vector<FaultRecord> out;
    for (const auto& e : h_.events) {
      if (is_truth(e, truth::kFaultStart) && e.value.is_object()) out.push_back({e.value, e.time_ns, -1});
      if (is_truth(e, truth::kFaultEnd)) {
        for (auto& f : out) {
          if (f.end_ns < 0 && f.value == e.value) {
            f.end_ns = e.time_ns;
            break;
          }
        }
      }
    }
    if (out.empty() && r_.faults.is_array()) {
      for (const auto& f : r_.faults) {
        if (!f.contains("on")) out.push_back({f, -1, -1});
      }
    }
    return out;
  }

  void faults() {
    for (const auto& rec : fault_records()) {
      const nlohmann::json& f = rec.value;
      FaultBand b;
      b.kind = f.value("kind", std::string("fault"));
      b.begin_ns = rec.start_ns >= 0 ? rec.start_ns : f.value("at_ms", int64_t{0}) * 1'000'000;
      // A kind this build does not know (a hand-made history) still gets its band.
      const auto fault = fault_from_record(f);
      b.label = fault ? fault_label(*fault) : b.kind;
      const auto span_ms = fault ? fault_span_ms(*fault) : std::optional<int64_t>(f.value("duration_ms", int64_t{0}));
      b.end_ns = rec.end_ns >= 0 ? rec.end_ns : span_ms ? b.begin_ns + *span_ms * 1'000'000 : t_.end_ns;
      b.sentence = (fault ? describe_fault(*fault) : b.kind) + ": struck at " + format_seconds(b.begin_ns) +
                   (b.end_ns > b.begin_ns && b.end_ns < t_.end_ns ? ", over at " + format_seconds(b.end_ns) : "");
      if (f.contains("target") && f["target"].is_string()) {
        if (auto l = lane_of(f["target"].get<std::string>()); !l.empty()) b.lanes.push_back(l);
      }
      if (f.contains("groups") && f["groups"].is_array()) {
        for (const auto& g : f["groups"]) {
          for (const auto& name : g) {
            auto l = name.is_string() ? lane_of(name.get<std::string>()) : "";
            if (!l.empty() && std::find(b.lanes.begin(), b.lanes.end(), l) == b.lanes.end()) b.lanes.push_back(l);
          }
        }
      }
      t_.faults.push_back(std::move(b));
    }
  }

  // ----- violations -----

  void highlights() {
    for (const auto& v : r_.violations) {
      const size_t before = t_.highlights.size();
      if (v.property == checker::Property::MutualExclusion) overlaps(v);
      if (v.property == checker::Property::ForeignUnlock) foreign_unlock(v);
      if (v.property == checker::Property::Deadlock) deadlock(v);
      if (v.property == checker::Property::Linearizability) linearizability(v);
      if (v.property == checker::Property::LostUpdate) lost_update(v);
      if (v.property == checker::Property::StaleCache) stale_cache(v);
      // Whatever else a check finds gets a marker where and when it says it happened.
      if (t_.highlights.size() == before && v.at_ns < t_.end_ns) {
        marker(v, v.at_ns, v.processes.empty() ? std::vector<int64_t>{} : std::vector<int64_t>{v.processes[0]},
               v.property == checker::Property::Fencing     ? "stale token accepted"
               : v.property == checker::Property::StaleRead ? "stale read"
                                                            : checker::to_string(v.property),
               v.explanation);
      }
    }
  }

  void marker(const checker::Violation& v, int64_t at, const std::vector<int64_t>& processes, const std::string& label,
              const std::string& title) {
    Highlight hl{checker::to_string(v.property), {}, at, at, title, label, false};
    for (int64_t p : processes) add_lane(hl, lane_of(p));
    if (!hl.lanes.empty()) t_.highlights.push_back(std::move(hl));
  }

  // Every pair of sections that overlapped, by the rule the check counts them with.
  void overlaps(const checker::Violation& v) {
    size_t n = 0;
    constexpr size_t kMax = 5000;
    for (size_t i = 0; i < sections_.size(); ++i) {
      for (size_t j = i + 1; j < sections_.size() && sections_[j].begin_ns < sections_[i].end_ns; ++j) {
        const Section& a = sections_[i];
        const Section& b = sections_[j];
        if (a.process == b.process || (a.read && b.read)) continue;
        if (++n > kMax) continue;
        const int64_t end = std::min(a.end_ns, b.end_ns);
        const std::string sentence = n == 1 ? v.explanation
                                            : describe(b) + " began while " + describe(a) +
                                                  " was still running: both held the lock for " +
                                                  format_seconds(end - b.begin_ns) + ".";
        Highlight hl{checker::to_string(v.property), {}, b.begin_ns, end, sentence, "overlap " + format_duration(end - b.begin_ns), false};
        add_lane(hl, lane_of(a.process));
        add_lane(hl, lane_of(b.process));
        t_.highlights.push_back(std::move(hl));
      }
    }
    if (n > kMax) note("The first " + std::to_string(kMax) + " of " + std::to_string(n) + " overlaps are drawn.");
    const size_t drawn = std::min(n, kMax);
    if (drawn > 1) {
      size_t k = 0;
      for (auto& hl : t_.highlights) {
        if (hl.property == checker::to_string(v.property)) hl.title = "Overlap " + std::to_string(++k) + " of " + std::to_string(n) + ": " + hl.title;
      }
    }
  }

  void foreign_unlock(const checker::Violation& v) {
    Highlight hl{checker::to_string(v.property), {}, v.at_ns, v.at_ns, v.explanation, checker::to_string(v.property), false};
    for (const auto& e : h_.events) {
      if (is_truth(e, truth::kKeyDel) && e.time_ns == v.at_ns && !v.processes.empty() && e.process == v.processes[0]) {
        hl.lanes.push_back(server_at(e.node, e.time_ns));
        break;
      }
    }
    if (!v.processes.empty()) add_lane(hl, lane_of(v.processes[0]));
    t_.highlights.push_back(std::move(hl));
  }

  void deadlock(const checker::Violation& v) {
    if (v.processes.empty()) return;
    Highlight hl{checker::to_string(v.property), {}, v.at_ns, t_.end_ns, v.explanation, std::string(checker::to_string(v.property)) + " (bound exceeded)", false};
    for (const auto& l : t_.lanes) {
      for (const auto& k : l.keys) {
        if (k.begin_ns <= v.at_ns && v.at_ns <= k.end_ns) {
          hl.lanes.push_back(l.id);
          hl.end_ns = k.end_ns;
        }
      }
    }
    add_lane(hl, lane_of(v.processes[0]));
    if (v.processes.size() > 1) add_lane(hl, lane_of(v.processes[1]));
    t_.highlights.push_back(std::move(hl));
  }

  // The acquire that could not be placed, and its cause: whoever still believed it held
  // the lock when that acquire completed.
  void linearizability(const checker::Violation& v) {
    if (v.processes.empty()) return;
    const auto holders = other_holders(lock_holds(h_), v.processes[0], v.at_ns);
    if (holders.empty()) {
      marker(v, v.at_ns, {v.processes[0]}, "not linearizable", v.explanation);
      return;
    }
    Highlight hl{checker::to_string(v.property), {}, holders.front().begin_ns, v.at_ns, v.explanation, "not linearizable", true};
    add_lane(hl, lane_of(v.processes[0]));
    for (const auto& hd : holders) add_lane(hl, lane_of(hd.process));
    t_.highlights.push_back(std::move(hl));
  }

  void lost_update(const checker::Violation& v) {
    const nlohmann::json& w = scenario_part(r_, "workload");
    const std::string key = w.is_object() ? w.value("stock_key", std::string("stock")) : "stock";
    for (const auto& lw : lost_writes(h_, key)) {
      marker(v, lw.at_ns, {lw.process}, "lost write", lw.sentence);
    }
  }

  // The cache write that left the stale entry behind: the last one of the process the
  // check names, before the end it judged.
  void stale_cache(const checker::Violation& v) {
    if (v.processes.empty()) return;
    const Event* last = nullptr;
    for (const auto& e : h_.events) {
      if (e.process == v.processes[0] && e.type == EventType::Ok && e.time_ns <= v.at_ns &&
          (e.f == "cache-fill" || e.f == "cache-write")) {
        last = &e;
      }
    }
    if (last) marker(v, last->time_ns, {v.processes[0]}, "stale cache write", v.explanation);
  }

  static void add_lane(Highlight& hl, const std::string& l) {
    if (!l.empty() && std::find(hl.lanes.begin(), hl.lanes.end(), l) == hl.lanes.end()) hl.lanes.push_back(l);
  }

  // A lease that ran out while its client still believed it held the lock is the moment
  // the lock was lost: drawn on the client's lane too.
  void lease_marks() {
    for (const auto& d : deadlines_) {
      const std::string l = lane_of(d.owner);
      if (l.empty() || l == "others") continue;
      for (const auto& lane : t_.lanes) {
        if (lane.id != l) continue;
        for (const auto& hold : lane.holds) {
          if (hold.begin_ns <= d.at_ns && d.at_ns < hold.end_ns) {
            t_.marks.push_back({"deadline", l, "", d.at_ns, "lease ends",
                                process_label(d.owner) + "'s lease on " + d.server + " ran out at " +
                                    format_seconds(d.at_ns) + " while it still believed it held the lock (until " +
                                    format_seconds(hold.end_ns) + ")"});
            break;
          }
        }
      }
    }
  }

  // The availability strip: every acquire's wait. Past max_waits the run is cut into
  // max_waits / 3 stretches and only the longest wait of each outcome in each is kept:
  // what a reader looks for is how long the worst waits were, and when.
  void waits() {
    if (all_waits_.size() <= o_.max_waits) {
      t_.waits = std::move(all_waits_);
      return;
    }
    const int64_t stretch = std::max<int64_t>(t_.end_ns / static_cast<int64_t>(std::max<size_t>(o_.max_waits / 3, 1)), 1);
    std::map<std::pair<int64_t, std::string>, Wait> worst;
    for (auto& w : all_waits_) {
      auto [it, fresh] = worst.try_emplace({w.begin_ns / stretch, w.outcome}, w);
      if (!fresh && w.end_ns - w.begin_ns > it->second.end_ns - it->second.begin_ns) it->second = std::move(w);
    }
    for (auto& [k, w] : worst) t_.waits.push_back(std::move(w));
    note("The availability strip shows the longest wait of each " + format_duration(stretch) + " (" +
         std::to_string(all_waits_.size()) + " acquires in all).");
  }

  static constexpr const char* kMergeNote =
      "Bars less than a pixel apart are drawn as one; their hover text gives the count.";

  struct Move {
    int64_t at_ns, node;
    std::string to;
  };
  struct Failover {
    int64_t at_ns;
    std::string from, to, by;
  };
  struct Deadline {
    int64_t owner;
    std::string server;
    int64_t at_ns;
  };

  const RunReport& r_;
  const History& h_;
  const TimelineOptions& o_;
  const nlohmann::json& topology_;
  const int64_t lease_ns_;
  Timeline t_;
  std::map<int64_t, ClientBars> clients_;
  std::set<int64_t> shown_;
  std::vector<Section> sections_;  // exact, before merging, in order of entry
  std::vector<std::string> server_order_;
  std::map<std::string, std::vector<Bar>> server_keys_;
  std::vector<Move> moves_;
  std::vector<Failover> failovers_;
  std::vector<Deadline> deadlines_;
  std::vector<Wait> all_waits_;
};

}  // namespace

std::string server_name(const nlohmann::json& topology, int64_t node) {
  if (!topology.is_object() || node < 0) return node_label(node);
  const int64_t masters = std::max<int64_t>(topology.value("nodes", int64_t{1}), 1);
  const int64_t replicas = topology.value("replicas", int64_t{0});
  if (node < masters) return node_label(node);
  const int64_t k = node - masters;
  if (replicas <= 0 || k >= masters * replicas) return node_label(node);
  return "node-" + std::to_string(k / replicas + 1) + "-replica-" + std::to_string(k % replicas + 1);
}

Timeline build_timeline(const RunReport& r, const History& h, const TimelineOptions& o) {
  return Builder(r, h, o).build();
}

int64_t tick_step_ns(int64_t end_ns, int target) {
  for (int64_t m = 1;; m *= 10) {
    for (int64_t f : {1, 2, 5}) {
      if (f * m * target >= end_ns) return f * m;
    }
    if (m > INT64_MAX / 100) return m;
  }
}

std::string tick_label(int64_t t_ns, int64_t step_ns, int64_t end_ns) {
  char buf[32];
  if (t_ns == 0) return "0";
  if (end_ns < 2'000'000'000) {
    const int decimals = step_ns >= 1'000'000 ? 0 : step_ns >= 100'000 ? 1 : step_ns >= 10'000 ? 2 : 3;
    std::snprintf(buf, sizeof buf, "%.*fms", decimals, static_cast<double>(t_ns) / 1e6);
  } else {
    const int decimals = step_ns >= 1'000'000'000 ? 0 : step_ns >= 100'000'000 ? 1 : 2;
    std::snprintf(buf, sizeof buf, "%.*fs", decimals, static_cast<double>(t_ns) / 1e9);
  }
  return buf;
}

}  // namespace lockstep::reports
