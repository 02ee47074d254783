// Facts about a run that every readable report states the same way: the outcome against
// the expectation, the scenario's parameters and its faults.
#include "lockstep/checker/properties.h"
#include "lockstep/fault_plan.h"
#include "lockstep/reports/text.h"
#include "lockstep/reports/writers.h"
#include "lockstep/text.h"

namespace lockstep::reports {
namespace {

using json = nlohmann::json;

std::string ms(const json& j, const char* key) {
  if (!j.contains(key) || !j[key].is_number()) return "";
  return format_duration(static_cast<int64_t>(j[key].get<double>() * 1e6));
}

std::string latency_text(const json& l) {
  const std::string dist = l.value("dist", std::string("constant"));
  if (dist == "uniform") return "uniform " + ms(l, "min_ms") + "–" + ms(l, "max_ms");
  if (dist == "normal") return "normal, mean " + ms(l, "mean_ms") + ", stddev " + ms(l, "stddev_ms");
  if (dist == "long-tail") {
    return ms(l, "ms") + ", " + l.value("tail_probability", json(0)).dump() + " chance of +" + ms(l, "tail_ms");
  }
  return "constant " + ms(l, "ms");
}

}  // namespace

std::string outcome(const RunReport& r) {
  if (r.as_expected()) return "as expected";
  return r.unknown() ? "UNKNOWN" : "MISMATCH";
}

std::string found_text(const RunReport& r) {
  if (r.unknown()) return "unknown";
  if (r.violations.empty()) return "safe";
  // Grouped by class, most severe first: "two-holders: linearizability, mutual-exclusion".
  std::string out;
  for (const auto& c : checker::severity_classes()) {
    std::set<std::string> props;
    for (const auto& v : r.violations) {
      if (v.severity == c.severity) props.insert(checker::to_string(v.property));
    }
    if (props.empty()) continue;
    out += (out.empty() ? "" : "; ") + std::string(c.name) + ": " + join(props);
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> parameter_rows(const RunReport& r) {
  std::vector<std::pair<std::string, std::string>> rows;
  rows.push_back({"algorithm", r.algorithm});
  const json& s = r.scenario_json;
  if (s.is_object() && s.contains("lock")) {
    const json& l = s["lock"];
    rows.push_back({"lease", ms(l, "lease_ms")});
    if (l.contains("retry")) {
      const json& rt = l["retry"];
      rows.push_back({"retry", "up to " + rt.value("count_max", json(0)).dump() + " times, every " + ms(rt, "delay_ms") +
                                   " + up to " + ms(rt, "jitter_ms") + " jitter"});
    }
    rows.push_back({"command timeout", ms(l, "command_timeout_ms")});
    rows.push_back({"lock key", l.value("key", std::string())});
  }
  if (s.is_object() && s.contains("workload")) {
    const json& w = s["workload"];
    rows.push_back({"workload", w.value("kind", std::string("stock")) + ": " + w.value("clients", json(0)).dump() +
                                    " clients, " + w.value("attempts_per_client", json(1)).dump() +
                                    " attempt(s) each, " + w.value("initial_stock", json(0)).dump() + " in stock"});
    rows.push_back({"hold / wait", ms(w, "hold_ms") + " in the critical section, " + ms(w, "wait_ms") + " acquire budget"});
    rows.push_back({"start stagger", ms(w, "start_stagger_ms")});
  }
  if (s.is_object() && s.contains("network")) {
    const json& n = s["network"];
    rows.push_back({"network", latency_text(n.value("latency", json::object())) + ", loss " +
                                   n.value("loss", json(0)).dump()});
  }
  if (s.is_object() && s.contains("topology")) {
    rows.push_back({"topology", s["topology"].value("nodes", json(1)).dump() + " node(s)"});
  }
  if (s.is_object() && s.contains("duration_ms")) rows.push_back({"duration", ms(s, "duration_ms")});
  rows.push_back({"world", r.world});
  rows.push_back({"seed", std::to_string(r.seed)});
  std::erase_if(rows, [](const auto& row) { return row.second.empty(); });
  return rows;
}

std::vector<std::string> inconclusive_reasons(const RunReport& r) {
  std::vector<std::string> out;
  for (const auto& why : r.inconclusive) {
    std::string s = why;
    if (!s.empty() && s[0] >= 'a' && s[0] <= 'z') s[0] = static_cast<char>(s[0] - 'a' + 'A');
    out.push_back(std::move(s));
  }
  // A report written before runs said why (or by hand) still says something.
  if (out.empty() && r.unknown()) out.push_back("The run gave no verdict, and its report does not say why.");
  return out;
}

std::string replay_promise(const RunReport& r) {
  if (r.world == to_string(World::Live)) {
    return "Same scenario against fresh servers, each fault at the same time or event; real servers and the machine "
           "set the timing, so a re-run records another history and may differ in verdict";
  }
  return "Same scenario and seed: a byte-identical history";
}

std::string inconclusive_heading(const RunReport& r) {
  if (r.inconclusive.empty() && !r.unknown()) return "";
  return r.unknown() ? "Why there is no verdict:"
                     : "What this run did not test (its violations stand: they did happen):";
}

std::vector<FaultRow> fault_rows(const RunReport& r) { return fault_rows(r, checker::History{}); }

namespace {

std::string duration_text(int64_t ms) { return format_duration(ms * 1'000'000); }

// When a fault struck, for the faults table: a timed fault at its time, one waiting on an
// event at the time(s) the history recorded it striking (truth records carry the fault's
// own record, so the two are matched as records).
std::string struck_at(const json& record, const FaultSpec& f, const checker::History& h) {
  if (!f.on) return duration_text(f.at_ms);
  std::string at;
  bool unfired = false;
  for (const auto& e : h.events) {
    if (e.type != checker::EventType::Truth || !e.value.is_object()) continue;
    const bool same = e.value.value("kind", json()) == record["kind"] &&
                      e.value.value("target", json()) == record.value("target", json()) &&
                      e.value.value("on", json()) == record["on"];
    if (same && e.f == checker::truth::kFaultStart) at += (at.empty() ? "" : ", ") + checker::format_seconds(e.time_ns);
    if (same && e.f == checker::truth::kFaultUnfired) unfired = true;
  }
  if (!at.empty()) return at;
  return unfired ? "never (its event never came)" : "on an event";
}

}  // namespace

// Each fault as the run recorded it (fault_record), read back as a FaultSpec like every
// other reader of fault records; a record this version cannot read (a report.json from
// elsewhere) is shown key by key rather than dropped.
std::vector<FaultRow> fault_rows(const RunReport& r, const checker::History& h) {
  std::vector<FaultRow> rows;
  if (!r.faults.is_array()) return rows;
  for (const auto& f : r.faults) {
    FaultRow row;
    const auto spec = fault_from_record(f);
    if (!spec) {
      row.kind = f.is_object() && f.contains("kind") ? (f["kind"].is_string() ? f["kind"].get<std::string>() : f["kind"].dump()) : "?";
      if (f.is_object()) {
        for (auto it = f.begin(); it != f.end(); ++it) {
          if (it.key() != "kind") row.details += (row.details.empty() ? "" : ", ") + it.key() + " " + it.value().dump();
        }
      }
      rows.push_back(std::move(row));
      continue;
    }
    row.kind = to_string(spec->kind);
    row.target = spec->target;
    if (spec->groups.size() == 2) {
      row.target = join(spec->groups[0], ",") + (spec->one_way ? " → " : " | ") + join(spec->groups[1], ",");
    }
    row.at = struck_at(f, *spec, h);
    if (spec->duration_ms != 0) row.duration = duration_text(spec->duration_ms);
    // What the kind and duration columns do not already say, in words.
    const std::string label = fault_label(*spec);
    if (label != row.kind && spec->kind != FaultKind::Pause && spec->kind != FaultKind::Partition) row.details = label;
    if (spec->on) row.details += (row.details.empty() ? "" : "; ") + describe_when(*spec);
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace lockstep::reports
