// The history excerpt: which events to show a reader so the failure can be followed line
// by line without the whole history.
#include <algorithm>
#include <cstdio>
#include <optional>
#include <set>

#include "history_scan.h"
#include "lockstep/fault_plan.h"
#include "lockstep/reports/text.h"
#include "lockstep/reports/timeline.h"

namespace lockstep::reports {
namespace {

using checker::Event;
using checker::EventType;
using checker::History;
using checker::process_label;
namespace truth = checker::truth;

struct Window {
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
  std::set<int64_t> processes;
  std::string caption;
};

// [enter, exit] of `p`'s critical section that contains `t` (exit: crash or the end).
std::pair<int64_t, int64_t> section_around(const History& h, int64_t p, int64_t t) {
  int64_t begin = -1;
  for (const auto& e : h.events) {
    if (e.type != EventType::Truth || e.process != p) continue;
    if (e.f == truth::kCsEnter) {
      if (e.time_ns > t) break;
      begin = e.time_ns;
    } else if ((e.f == truth::kCsExit || (e.f == truth::kCrash && e.node < 0)) && begin >= 0) {
      if (e.time_ns > t) return {begin, e.time_ns};
      begin = -1;
    }
  }
  return {begin < 0 ? t : begin, h.events.empty() ? t : h.events.back().time_ns};
}

Window window_for(const RunReport& r, const checker::Violation& v, const History& h) {
  Window w{v.at_ns, v.at_ns, {v.processes.begin(), v.processes.end()}, ""};
  if (v.property == checker::Property::MutualExclusion && v.processes.size() >= 2) {
    auto a = section_around(h, v.processes[0], v.at_ns), b = section_around(h, v.processes[1], v.at_ns);
    w.begin_ns = std::min(a.first, b.first);
    w.end_ns = std::max(a.second, b.second);
    w.caption = "from the start of the overlapping critical sections to their end";
  } else if (v.property == checker::Property::ForeignUnlock && v.processes.size() >= 2) {
    for (const auto& e : h.events) {
      if (e.time_ns > v.at_ns) break;
      if (e.type == EventType::Truth && e.f == truth::kKeySet && e.process == v.processes[1]) w.begin_ns = e.time_ns;
    }
    w.caption = "from " + process_label(v.processes[1]) + " setting the lock to " + process_label(v.processes[0]) +
                " deleting it";
  } else if (v.property == checker::Property::Linearizability && !v.processes.empty()) {
    // The acquire that could not be placed says nothing alone; its cause is whoever still
    // believed it held the lock, from the moment it took it.
    const auto holders = other_holders(lock_holds(h), v.processes[0], v.at_ns);
    std::string names;
    for (const auto& hd : holders) {
      w.begin_ns = std::min(w.begin_ns, hd.begin_ns);
      w.processes.insert(hd.process);
      names += (names.empty() ? "" : ", ") + process_label(hd.process);
    }
    w.caption = holders.empty() ? "the operations around the one that could not be placed"
                                : "from " + names + " taking the lock to " + process_label(v.processes[0]) +
                                      "'s acquire, which could not be placed while " + names + " held it";
  } else if (v.property == checker::Property::LostUpdate) {
    w.begin_ns = 0;
    w.caption = "the reads and writes of the resource";
  } else if (v.property == checker::Property::Deadlock) {
    int64_t bound_ms = 5000;
    if (r.scenario_json.is_object() && r.scenario_json.contains("checks")) {
      bound_ms = r.scenario_json["checks"].value("deadlock_bound_ms", bound_ms);
    }
    w.begin_ns = std::max<int64_t>(0, v.at_ns - bound_ms * 1'000'000);
    w.caption = "while the lock stayed with a process that could no longer release it";
  } else if (v.property == checker::Property::StaleCache) {
    w.begin_ns = 0;
    w.caption = "the database and cache operations, and what each held at the end";
  } else {
    w.caption = "the events of the processes involved around the violation";
  }
  return w;
}

bool relevant(const Event& e, const Window& w, checker::Property property) {
  if (property == checker::Property::LostUpdate) {
    return e.f == "read" || e.f == "write" || e.f == truth::kResource;
  }
  // Every client's steps on the stale item tell the race; the lock's only how it was queued.
  if (property == checker::Property::StaleCache) {
    return e.f.rfind("db-", 0) == 0 || e.f.rfind("cache-", 0) == 0 ||
           (e.type == EventType::Truth && (e.f == truth::kFaultStart || e.f == truth::kFaultEnd));
  }
  if (e.type == EventType::Truth && (e.f == truth::kFaultStart || e.f == truth::kFaultEnd)) return true;
  if (e.type == EventType::Truth && e.node >= 0 && e.f != truth::kResource) return true;
  return w.processes.count(e.process) > 0;
}

}  // namespace

std::string format_event_line(const Event& e) {
  std::string who = e.node >= 0 ? node_label(e.node) : e.process >= 0 ? process_label(e.process) : "world";
  std::string details;
  if (e.node >= 0 && e.process >= 0) details = "by " + process_label(e.process) + " ";
  const bool fault = e.type == EventType::Truth &&
                     (e.f == truth::kFaultStart || e.f == truth::kFaultEnd || e.f == truth::kFaultUnfired);
  const auto spec = fault ? fault_from_record(e.value) : std::nullopt;
  if (spec) {
    details += describe_fault(*spec);  // a sentence, not the record's JSON
  } else if (e.type == EventType::Truth && e.f == truth::kFailover && e.value.is_object() && e.value.contains("to")) {
    details += e.value.value("to", std::string()) + " promoted in place of " + e.value.value("from", std::string("its master"));
  } else if (!e.value.is_null()) {
    details += truncate_text(e.value.is_string() ? '"' + e.value.get<std::string>() + '"' : e.value.dump(), 80);
  }
  if (e.extra.is_object()) {
    for (auto it = e.extra.begin(); it != e.extra.end(); ++it) {
      const bool owner = it.key() == "owner" && it.value().is_number_integer();
      details += " " + it.key() + "=" + (owner ? process_label(it.value().get<int64_t>()) : truncate_text(it.value().dump(), 40));
    }
  }
  char head[96];
  std::snprintf(head, sizeof head, "%11.6fs  %-9s %-6s %-11s %-6s ", static_cast<double>(e.time_ns) / 1e9,
                who.c_str(), to_string(e.type), e.f.c_str(), e.key.c_str());
  std::string line = head + details;
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return line;
}

Excerpt history_excerpt(const RunReport& r, const History& h, size_t max_lines) {
  Excerpt out;
  if (r.violations.empty()) return out;
  const auto& v = r.violations.front();
  const Window w = window_for(r, v, h);
  out.caption = std::string(checker::to_string(v.property)) + ": " + w.caption + " (" + checker::format_seconds(w.begin_ns) + " to " +
                checker::format_seconds(w.end_ns) + ")";
  // A few events before the window say how the processes got there (the acquire that
  // led into a section, the crash that left a lock behind).
  constexpr size_t kLeadIn = 3;
  std::vector<const Event*> before, picked;
  for (const auto& e : h.events) {
    if (!relevant(e, w, v.property) || e.time_ns > w.end_ns) continue;
    if (e.time_ns >= w.begin_ns) {
      picked.push_back(&e);
    } else if (v.property != checker::Property::LostUpdate) {
      before.push_back(&e);
      if (before.size() > kLeadIn) before.erase(before.begin());
    }
  }
  picked.insert(picked.begin(), before.begin(), before.end());
  const size_t keep = std::max<size_t>(max_lines, 2);
  if (picked.size() > keep) {
    out.elided = picked.size() - keep;
    picked.erase(picked.begin() + static_cast<std::ptrdiff_t>(keep / 2),
                 picked.end() - static_cast<std::ptrdiff_t>(keep - keep / 2));
  }
  for (size_t i = 0; i < picked.size(); ++i) {
    if (out.elided > 0 && i == keep / 2) out.lines.push_back("  … " + std::to_string(out.elided) + " events elided …");
    out.lines.push_back(format_event_line(*picked[i]));
  }
  return out;
}

}  // namespace lockstep::reports
