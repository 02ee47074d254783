#include "lockstep/reports/timeline.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <set>

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

// Everything drawn for one client, before lanes are chosen.
struct ClientBars {
  std::vector<Bar> holds, sections, ops;
};

class Builder {
 public:
  Builder(const RunReport& r, const History& h, const TimelineOptions& o) : r_(r), h_(h), o_(o) {}

  Timeline build() {
    const int64_t last = last_action_ns(h_);
    t_.end_ns = std::max<int64_t>(last + last / 25, 1'000'000);
    scan_clients();
    for (const auto& [p, bars] : clients_) raw_sections_[p] = bars.sections;  // exact, for highlights
    scan_nodes();
    choose_lanes();
    faults();
    highlights();
    for (auto& f : t_.faults) f.end_ns = std::min(f.end_ns, t_.end_ns);
    for (auto& hl : t_.highlights) {
      hl.begin_ns = std::min(hl.begin_ns, t_.end_ns);
      hl.end_ns = std::min(hl.end_ns, t_.end_ns);
    }
    return std::move(t_);
  }

 private:
  void scan_clients() {
    std::map<int64_t, int64_t> hold_open, cs_open;  // process -> since
    std::map<std::pair<int64_t, int64_t>, const Event*> op_open;  // (process, thread) -> invoke
    auto close_hold = [&](int64_t p, int64_t t, const std::string& how) {
      auto it = hold_open.find(p);
      if (it == hold_open.end()) return;
      clients_[p].holds.push_back({it->second, t, p, "hold",
                                   process_label(p) + " believed it held the lock " + span(it->second, t) + ", " + how});
      hold_open.erase(it);
    };
    auto close_cs = [&](int64_t p, int64_t t, const std::string& how) {
      auto it = cs_open.find(p);
      if (it == cs_open.end()) return;
      clients_[p].sections.push_back(
          {it->second, t, p, "cs", process_label(p) + "'s critical section " + span(it->second, t) + how});
      cs_open.erase(it);
    };
    auto close_ops = [&](int64_t p, int64_t t, const std::string& how) {
      for (auto it = op_open.begin(); it != op_open.end();) {
        if (it->first.first != p) {
          ++it;
          continue;
        }
        add_op(*it->second, t, "op-info", how);
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
          add_op(*it->second, e.time_ns, std::string("op-") + to_string(e.type),
                 std::string(to_string(e.type)) + (e.value.is_null() ? "" : " " + value_text(e.value)));
          op_open.erase(it);
        }
        if (checker::is_acquire(e.f) && e.type == EventType::Ok) hold_open.emplace(p, e.time_ns);
        if (checker::is_release(e.f)) close_hold(p, e.time_ns, "until its release returned " + std::string(to_string(e.type)));
      } else if (e.f == truth::kCsEnter) {
        cs_open.emplace(p, e.time_ns);
      } else if (e.f == truth::kCsExit) {
        close_cs(p, e.time_ns, "");
      } else if (e.f == truth::kCrash && e.node < 0) {
        close_cs(p, e.time_ns, " (crashed inside)");
        close_hold(p, e.time_ns, "until it crashed");
        close_ops(p, e.time_ns, "crashed");
      }
    }
    for (const auto& [p, since] : cs_open) {
      clients_[p].sections.push_back({since, t_.end_ns, p, "cs",
                                      process_label(p) + "'s critical section from " + format_seconds(since) +
                                          ", never exited"});
    }
    for (auto [p, since] : std::map(hold_open)) close_hold(p, t_.end_ns, "to the end of the run");
    for (const auto& [key, invoke] : op_open) add_op(*invoke, t_.end_ns, "op-info", "no reply by the end");
  }

  void add_op(const Event& invoke, int64_t end, const std::string& cls, const std::string& outcome) {
    std::string arg = invoke.value.is_null() ? "" : "(" + value_text(invoke.value) + ")";
    clients_[invoke.process].ops.push_back({invoke.time_ns, end, invoke.process, cls,
                                            process_label(invoke.process) + " " + invoke.f + " " + invoke.key + arg +
                                                " → " + outcome + " " + span(invoke.time_ns, end)});
  }

  void scan_nodes() {
    int64_t declared = 0;
    if (r_.scenario_json.is_object() && r_.scenario_json.contains("topology")) {
      declared = r_.scenario_json["topology"].value("nodes", 0);
    }
    for (int64_t n = 0; n < declared; ++n) nodes_[n];
    std::map<int64_t, std::pair<const Event*, bool>> open;  // node -> key-set
    auto close = [&](int64_t n, int64_t t, const std::string& how) {
      auto it = open.find(n);
      if (it == open.end()) return;
      const Event& set = *it->second.first;
      nodes_[n].push_back({set.time_ns, t, set.process, "key",
                           node_label(n) + " held \"" + set.key + "\" for " + process_label(set.process) + " " +
                               span(set.time_ns, t) + ", " + how});
      open.erase(it);
    };
    for (const auto& e : h_.events) {
      if (e.node < 0 || e.type != EventType::Truth) continue;
      nodes_[e.node];
      if (e.f == truth::kKeySet) {
        close(e.node, e.time_ns, "then overwritten");
        open[e.node] = {&e, true};
      } else if (e.f == truth::kKeyDel) {
        close(e.node, e.time_ns, "then deleted by " + process_label(e.process));
      } else if (e.f == truth::kKeyExpire) {
        close(e.node, e.time_ns, "then expired");
      } else if (e.f == truth::kKeyEvict) {
        close(e.node, e.time_ns, "then evicted for memory");
      } else if (e.f == truth::kCrash && e.process < 0) {
        close(e.node, e.time_ns, "then the node crashed and lost it");
      }
    }
    for (auto [n, set] : std::map(open)) close(n, t_.end_ns, "to the end of the run");
  }

  // With many clients, only those a reader must see get a lane; the rest share one.
  void choose_lanes() {
    std::set<int64_t> shown;
    for (const auto& [p, bars] : clients_) shown.insert(p);
    if (clients_.size() > o_.max_client_lanes) {
      shown.clear();
      for (const auto& v : r_.violations) shown.insert(v.processes.begin(), v.processes.end());
      for (const auto& f : fault_records()) {
        if (auto p = client_number(f.value("target", std::string()))) shown.insert(*p);
      }
      for (const auto& [p, bars] : clients_) {
        if (shown.size() >= o_.collapsed_client_lanes) break;
        shown.insert(p);
      }
    }
    Lane others{"others", "", LaneKind::Aggregate, {}, {}, {}, {}};
    for (auto& [p, bars] : clients_) {
      if (!shown.count(p)) {
        ++t_.hidden_clients;
        for (auto& b : bars.holds) others.holds.push_back(grey(b));
        for (auto& b : bars.sections) others.sections.push_back(grey(b));
        continue;
      }
      Lane l{process_label(p), process_label(p), LaneKind::Client, std::move(bars.holds), std::move(bars.sections),
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
    for (auto& [n, keys] : nodes_) {
      for (auto& k : keys) {
        if (!shown.count(k.owner)) k.owner = -1;
      }
      Lane l{node_label(n), node_label(n), LaneKind::Node, {}, {}, {}, std::move(keys)};
      merge(l.keys, false, "key holds");
      t_.lanes.push_back(std::move(l));
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
    const auto gap = static_cast<int64_t>(o_.merge_px * static_cast<double>(t_.end_ns) /
                                          static_cast<double>(std::max<int64_t>(o_.plot_width_px, 1)));
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
    if (lost_detail && std::find(t_.elided.begin(), t_.elided.end(), kMergeNote) == t_.elided.end()) {
      t_.elided.push_back(kMergeNote);
    }
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

  // The faults as recorded when they struck; a hand-made history without them falls
  // back to the scenario's fault list.
  std::vector<nlohmann::json> fault_records() const {
    std::vector<nlohmann::json> out;
    for (const auto& e : h_.events) {
      if (is_truth(e, truth::kFaultStart) && e.value.is_object()) out.push_back(e.value);
    }
    if (out.empty() && r_.faults.is_array()) {
      for (const auto& f : r_.faults) out.push_back(f);
    }
    return out;
  }

  void faults() {
    for (const auto& f : fault_records()) {
      FaultBand b;
      b.kind = f.value("kind", std::string("fault"));
      b.begin_ns = f.value("at_ms", int64_t{0}) * 1'000'000;
      // A kind this build does not know (a hand-made history) still gets its band.
      const auto fault = fault_from_record(f);
      b.label = fault ? fault_label(*fault) : b.kind;
      const auto span_ms = fault ? fault_span_ms(*fault) : std::optional<int64_t>(f.value("duration_ms", int64_t{0}));
      b.end_ns = span_ms ? b.begin_ns + *span_ms * 1'000'000 : t_.end_ns;
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

  void highlights() {
    for (const auto& v : r_.violations) {
      std::optional<Highlight> hl;
      if (v.property == "mutual-exclusion") hl = overlap(v);
      if (v.property == "foreign-unlock") hl = foreign_unlock(v);
      if (v.property == "deadlock") hl = deadlock(v);
      if (hl) t_.highlights.push_back(std::move(*hl));
    }
  }

  std::optional<Highlight> overlap(const checker::Violation& v) {
    if (v.processes.size() < 2) return std::nullopt;
    auto a = section_at(v.processes[0], v.at_ns), b = section_at(v.processes[1], v.at_ns);
    if (!a || !b) return std::nullopt;
    Highlight hl{v.property, {}, std::max(a->begin_ns, b->begin_ns), std::min(a->end_ns, b->end_ns), v.explanation};
    add_lanes(hl, {v.processes[0], v.processes[1]});
    return hl;
  }

  std::optional<Bar> section_at(int64_t p, int64_t t) const {
    auto it = raw_sections_.find(p);
    if (it == raw_sections_.end()) return std::nullopt;
    for (const auto& s : it->second) {
      if (s.begin_ns <= t && t < s.end_ns) return s;
    }
    return std::nullopt;
  }

  std::optional<Highlight> foreign_unlock(const checker::Violation& v) {
    Highlight hl{v.property, {}, v.at_ns, v.at_ns, v.explanation};
    for (const auto& e : h_.events) {
      if (is_truth(e, truth::kKeyDel) && e.time_ns == v.at_ns && !v.processes.empty() && e.process == v.processes[0]) {
        hl.lanes.push_back(node_label(e.node));
        break;
      }
    }
    if (!v.processes.empty()) add_lanes(hl, {v.processes[0]});
    return hl;
  }

  std::optional<Highlight> deadlock(const checker::Violation& v) {
    if (v.processes.empty()) return std::nullopt;
    Highlight hl{v.property, {}, v.at_ns, t_.end_ns, v.explanation};
    for (const auto& l : t_.lanes) {
      for (const auto& k : l.keys) {
        if (k.begin_ns <= v.at_ns && v.at_ns <= k.end_ns) {
          hl.lanes.push_back(l.id);
          hl.end_ns = k.end_ns;
        }
      }
    }
    add_lanes(hl, {v.processes[0]});
    if (v.processes.size() > 1) add_lanes(hl, {v.processes[1]});
    return hl;
  }

  void add_lanes(Highlight& hl, std::initializer_list<int64_t> ps) const {
    for (int64_t p : ps) {
      auto l = lane_of(p);
      if (!l.empty() && std::find(hl.lanes.begin(), hl.lanes.end(), l) == hl.lanes.end()) hl.lanes.push_back(l);
    }
  }

  static constexpr const char* kMergeNote =
      "Bars less than a pixel apart are drawn as one; their hover text gives the count.";

  const RunReport& r_;
  const History& h_;
  const TimelineOptions& o_;
  Timeline t_;
  std::map<int64_t, ClientBars> clients_;
  std::map<int64_t, std::vector<Bar>> raw_sections_;  // before merging
  std::map<int64_t, std::vector<Bar>> nodes_;

};

}  // namespace

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
