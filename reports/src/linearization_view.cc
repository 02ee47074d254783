// `lockstep check --html`: the timeline of any history's operations, and the partial
// linearization view of an invalid one.
#include <algorithm>
#include <map>

#include "lockstep/checker/invariants.h"
#include "lockstep/reports/check_report.h"
#include "lockstep/reports/text.h"
#include "lockstep/reports/timeline.h"
#include "timeline_svg.h"

namespace lockstep::reports {
namespace {

using checker::Event;
using checker::EventType;
using checker::History;
using checker::LinResult;
using checker::Verdict;

constexpr int64_t kEventNs = 1'000'000;  // one event of a history without times, on the axis

std::string html(const std::string& s) { return xml_escape(s); }

bool has_times(const History& h) {
  return std::any_of(h.events.begin(), h.events.end(), [](const Event& e) { return e.time_ns != 0; });
}

std::string json_text(const nlohmann::json& v) {
  if (v.is_null()) return "nil";
  return v.is_string() ? v.get<std::string>() : v.dump();
}

// "p3 read → 4", "p1 cas [1 4]", "p2 write 3 (no answer)": an operation as the list says it.
std::string op_text(const History& h, size_t invoke, size_t complete) {
  const Event& in = h.events[invoke];
  std::string s = "p" + std::to_string(in.process) + " " + in.f;
  if (!in.key.empty()) s += " " + in.key;
  if (!in.value.is_null()) s += " " + json_text(in.value);
  if (complete == invoke) return s + " (no answer)";
  const Event& out = h.events[complete];
  if (out.type == EventType::Info) return s + " (outcome unknown)";
  if (!out.value.is_null() && out.value != in.value) s += " → " + json_text(out.value);
  return s;
}

// The history as drawn: the failing key's events alone when there are several keys, with
// each event's time, or its position when the history recorded no times. `index` maps
// the drawn events back to the history's.
struct Drawn {
  History h;
  std::vector<size_t> index;
  std::map<size_t, int64_t> time_of;  // history position -> time on the axis
  bool event_axis = false;
  size_t other_keys = 0;
};

Drawn drawn_history(const History& h, const LinResult& r) {
  Drawn d;
  d.event_axis = !has_times(h);
  std::map<std::string, bool> keys;
  for (const auto& e : h.events) {
    if (e.type != EventType::Truth) keys[e.key] = true;
  }
  const bool one_key = r.verdict == Verdict::Invalid && keys.size() > 1;
  d.other_keys = one_key ? keys.size() - 1 : 0;
  for (size_t i = 0; i < h.events.size(); ++i) {
    const Event& e = h.events[i];
    if (one_key && e.type != EventType::Truth && e.key != r.key) continue;
    Event copy = e;
    if (d.event_axis) copy.time_ns = static_cast<int64_t>(i + 1) * kEventNs;
    d.time_of[i] = copy.time_ns;
    d.index.push_back(i);
    d.h.events.push_back(std::move(copy));
  }
  return d;
}

Bar* bar_at(Timeline& t, int64_t process, int64_t begin) {
  const std::string id = checker::process_label(process);
  for (auto& l : t.lanes) {
    if (l.id != id) continue;
    for (auto& b : l.ops) {
      if (b.begin_ns == begin) return &b;
    }
  }
  return nullptr;
}

constexpr const char* kPageStyle = R"CSS(
:root{--fg:#1d232b;--muted:#5b6573;--line:#d9dee5;--red:#d0191f;--green:#17803d;--amber:#b26a00}
*{box-sizing:border-box}
body{margin:0;padding:20px 28px 40px;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:var(--fg);background:#fff}
h1{font-size:22px;margin:0;word-break:break-all}h2{font-size:16px;margin:26px 0 8px;border-bottom:1px solid var(--line);padding-bottom:4px}
.top{display:flex;align-items:center;gap:14px;flex-wrap:wrap}
.badge{display:inline-block;padding:2px 10px;border-radius:4px;font-weight:700;letter-spacing:.04em;color:#fff;font-size:13px}
.b-invalid{background:var(--red)}.b-valid{background:var(--green)}.b-unknown{background:var(--amber)}
.desc{margin:8px 0 12px;max-width:1100px}.muted{color:var(--muted)}.elided{color:var(--amber)}
code,pre{font:12.5px/1.5 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
ol.lin{margin:6px 0;padding-left:34px;max-width:1100px}
ol.lin li{padding:2px 6px;border-radius:4px;cursor:pointer}ol.lin li:hover{background:#f3f5f8}
ol.lin li.picked{background:#e6efff}
ol.lin .state{color:var(--muted);margin-left:10px}
ol.lin li.stuck{color:var(--red);font-weight:600;list-style:none;margin-left:-22px}
pre.involved{background:#f6f8fa;border:1px solid var(--line);border-radius:6px;padding:10px 12px;overflow-x:auto;max-width:1250px}
)CSS";

// A click on a step of the list shows that operation on the timeline: the chart's script
// listens for this event.
constexpr const char* kPageScript = R"JS(
document.querySelectorAll('ol.lin li[data-a]').forEach(function(li){li.addEventListener('click',function(){
document.querySelectorAll('ol.lin li.picked').forEach(function(x){x.classList.remove('picked');});li.classList.add('picked');
document.dispatchEvent(new CustomEvent('lockstep-show',{detail:{a:+li.getAttribute('data-a'),b:+li.getAttribute('data-b')}}));});});
document.body.setAttribute('data-ok','1');
)JS";

}  // namespace

std::string render_check_html(const CheckPageInput& in) {
  const History& h = *in.history;
  const LinResult& r = *in.result;
  const Drawn d = drawn_history(h, r);
  const std::string verdict = to_string(r.verdict);
  const bool invalid = r.verdict == Verdict::Invalid;

  RunReport run;
  run.scenario = in.file;
  TimelineOptions to;
  to.plot_width_px = timeline_plot_width();
  to.merge_above = 100'000;  // every operation keeps its box: the list points at them
  to.max_client_lanes = 60;
  if (invalid) {
    // The processes the failure involves keep their own lanes however many there are.
    checker::Violation v{checker::Property::Linearizability, r.explanation_sentence, {}, 0, 1};
    for (const auto& e : r.involved) v.processes.push_back(e.process);
    run.violations.push_back(std::move(v));
  }
  Timeline t = build_timeline(run, d.h, to);
  t.highlights.clear();
  t.waits.clear();  // an acquire's wait is a lock run's question, not a history's
  for (auto& l : t.lanes) {
    if (l.kind == LaneKind::Client) l.label = "process " + l.id.substr(l.id.find('-') + 1);
  }
  std::string steps;
  if (invalid) {
    for (size_t k = 0; k < r.partial_invoke_indices.size(); ++k) {
      const size_t i = r.partial_invoke_indices[k], c = r.partial_complete_indices[k];
      const int64_t a = d.time_of.at(i), b = c == i ? t.end_ns : d.time_of.at(c);
      if (Bar* bar = bar_at(t, h.events[i].process, a)) {
        bar->cls += " lin";
        bar->text = "#" + std::to_string(k + 1) + " " + bar->text;
        bar->title = "#" + std::to_string(k + 1) + " of the partial linearization: " + bar->title;
      }
      steps += "<li data-a=\"" + std::to_string(a) + "\" data-b=\"" + std::to_string(b) + "\">" +
               html(op_text(h, i, c)) + "<span class=\"state\">→ " +
               html(k < r.partial_states.size() ? r.partial_states[k] : "") + "</span></li>\n";
    }
    const Event& stuck = h.events[r.failed_invoke_index];
    const int64_t a = d.time_of.at(r.failed_invoke_index), b = d.time_of.at(r.failed_event_index);
    if (Bar* bar = bar_at(t, stuck.process, a)) {
      bar->cls += " stuck";
      bar->title = "Could not be placed: " + bar->title;
    }
    Highlight hl{"linearizability", {checker::process_label(stuck.process)}, a, b, r.explanation_sentence,
                 "could not be placed", false};
    t.highlights.push_back(std::move(hl));
    steps += "<li class=\"stuck\" data-a=\"" + std::to_string(a) + "\" data-b=\"" + std::to_string(b) +
             "\">✗ could not be placed: " + html(op_text(h, r.failed_invoke_index, r.failed_event_index)) + "</li>\n";
  }
  if (d.other_keys > 0) {
    t.elided.push_back("Only key " + nlohmann::json(r.key).dump() + " is drawn, the key that failed; the history has " +
                       std::to_string(d.other_keys) + " other key" + (d.other_keys == 1 ? "" : "s") + ".");
  }
  if (d.event_axis) t.elided.push_back("The history records no times: the axis counts its events, in order.");

  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>" +
                    html(in.file + " — " + verdict + " — lockstep check") + "</title>\n<style>" + kPageStyle +
                    timeline_style() + "</style>\n</head>\n<body>\n";
  out += "<div class=\"top\"><h1>" + html(in.file) + "</h1><span class=\"badge b-" + verdict + "\">" + html(verdict) +
         "</span><span class=\"muted\">" + html(in.model) + " model · " + std::to_string(r.ops) + " operations" +
         (invalid && !r.key.empty() ? " · key " + html(nlohmann::json(r.key).dump()) : "") + "</span></div>\n";
  if (invalid) {
    out += "<p class=\"desc\">" + html(r.explanation_sentence) + "</p>\n";
  } else if (r.verdict == Verdict::Valid) {
    out += "<p class=\"desc\">Every operation can be placed in one order, between its call and its return, that the " +
           html(in.model) + " model accepts.</p>\n";
  } else {
    out += "<p class=\"desc\">No verdict: the search reached its " + html(r.unknown_reason) + ".</p>\n";
  }
  ChartOptions co;
  co.op_boxes = true;
  co.event_axis = d.event_axis;
  out += "<h2>Operations</h2>\n" + render_timeline_chart(t, co);
  for (const auto& e : t.elided) out += "<p class=\"elided\">" + html(e) + "</p>\n";
  if (invalid) {
    out += "<h2>Partial linearization</h2>\n<p class=\"muted\">The longest order the search found that the model "
           "accepts (" + std::to_string(r.partial_invoke_indices.size()) + " operations, numbered on the timeline in "
           "green), the state after each, then the operation no order could place (red). Click a step to see it on "
           "the timeline.</p>\n<ol class=\"lin\">\n" + steps + "</ol>\n";
    out += "<h2>Involved</h2>\n<p class=\"muted\">The failing operation, those concurrent with it, and the operation "
           "that last changed the state; the smallest invalid prefix is events 1–" +
           std::to_string(r.failed_event_index + 1) + " of " + std::to_string(h.events.size()) + ".</p>\n<pre class=\"involved\">";
    for (size_t k = 0; k < r.involved.size(); ++k) {
      const Event& e = r.involved[k];
      out += html("event " + std::to_string(r.involved_indices[k] + 1) + ": process " + std::to_string(e.process) + " " +
                  to_string(e.type) + " " + e.f + (e.value.is_null() ? "" : " " + e.value.dump())) + "\n";
    }
    out += "</pre>\n";
  }
  out += "<script>" + std::string(timeline_script()) + kPageScript + "</script>\n</body>\n</html>\n";
  return out;
}

}  // namespace lockstep::reports
