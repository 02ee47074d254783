// report.html: one self-contained page per scenario. The timeline is inline SVG drawn
// from the Timeline model (timeline_svg.cc); hover text is SVG <title>, so the page needs
// no script to be read (the script adds zoom and pan, a copy button, and marks the page
// as loaded).
#include <algorithm>
#include <cstdio>
#include <map>

#include "lockstep/reports/text.h"
#include "lockstep/reports/writers.h"
#include "timeline_svg.h"

namespace lockstep::reports {
namespace {

std::string esc(const std::string& s) { return xml_escape(s); }

constexpr const char* kStyle = R"CSS(
:root{--fg:#1d232b;--muted:#5b6573;--line:#d9dee5;--red:#d0191f;--green:#17803d;--amber:#b26a00}
*{box-sizing:border-box}
body{margin:0;padding:20px 28px 40px;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:var(--fg);background:#fff}
h1{font-size:22px;margin:0}h2{font-size:16px;margin:26px 0 8px;border-bottom:1px solid var(--line);padding-bottom:4px}
.top{display:flex;align-items:center;gap:14px;flex-wrap:wrap}
.badge{display:inline-block;padding:2px 10px;border-radius:4px;font-weight:700;letter-spacing:.04em;color:#fff;font-size:13px}
.b-violation{background:var(--red)}.b-safe{background:var(--green)}.b-unknown{background:var(--amber)}
.b-ok{background:#e8f3ec;color:var(--green)}.b-mismatch{background:#fde8e8;color:var(--red)}
.desc{color:var(--muted);margin:6px 0 12px;max-width:1100px}
.verdict{display:flex;gap:18px;align-items:flex-start;margin-top:22px;padding:16px 18px;border-radius:8px;border:1px solid var(--line)}
.verdict.v-violation{background:#fff5f5;border-color:#f2c4c4}.verdict.v-safe{background:#f2faf5;border-color:#bfe3cc}.verdict.v-unknown{background:#fff8ec;border-color:#f1d49c}
.big{font-size:30px;font-weight:800;letter-spacing:.03em;line-height:1}
.v-violation .big{color:var(--red)}.v-safe .big{color:var(--green)}.v-unknown .big{color:var(--amber)}
.verdict p{margin:4px 0 0}
ul.violations{margin:10px 0 0;padding-left:18px}ul.violations li{margin:4px 0}
.prop{font:600 12px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:#fde8e8;color:var(--red);padding:1px 6px;border-radius:3px;margin-right:6px}
.cls{font-size:12px;padding:1px 6px;border-radius:3px;margin-right:6px;background:#eee;color:#333}
.cls-two-holders{background:#b3261e;color:#fff}.cls-damage{background:#e8710a;color:#fff}
.cls-lease-lost{background:#fbe7b3;color:#6b4e00}.cls-stuck{background:#d7d2f5;color:#3a2d8c}
.cls-unfair{background:#d6e9f8;color:#144d7a}.inconclusive{margin-top:8px;padding:6px 10px;border-left:3px solid #b08500;background:#fff8e1}
.replay{display:flex;gap:8px;align-items:center;max-width:1100px}
code,pre{font:12.5px/1.5 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
.replay code{flex:1;background:#f3f5f8;border:1px solid var(--line);border-radius:5px;padding:7px 10px;user-select:all;overflow-x:auto;white-space:nowrap}
button.copy{font:inherit;padding:6px 12px;border:1px solid #b8c0ca;border-radius:5px;background:#fff;cursor:pointer}
table{border-collapse:collapse;margin:4px 0 8px}th,td{border:1px solid var(--line);padding:4px 10px;text-align:left;vertical-align:top}
th{background:#f6f8fa;font-weight:600}
pre.excerpt{background:#f6f8fa;border:1px solid var(--line);border-radius:6px;padding:10px 12px;overflow-x:auto;max-width:1250px}
.muted{color:var(--muted)}.elided{color:var(--amber)}
.cols{display:flex;gap:32px;flex-wrap:wrap}
)CSS";

constexpr const char* kScript = R"JS(
document.querySelectorAll('button.copy').forEach(function(b){b.addEventListener('click',function(){
var el=document.getElementById(b.getAttribute('data-for'));var t=el.textContent;
function sel(){var r=document.createRange();r.selectNodeContents(el);var s=window.getSelection();s.removeAllRanges();s.addRange(r);b.textContent='Selected: press Ctrl+C';}
if(navigator.clipboard&&window.isSecureContext){navigator.clipboard.writeText(t).then(function(){b.textContent='Copied';},sel);}else{sel();}});});
document.body.setAttribute('data-ok','1');
)JS";

std::string verdict_word(const RunReport& r) {
  std::string v = r.verdict.empty() ? "unknown" : r.verdict;
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return v;
}

std::string verdict_class(const RunReport& r) {
  return r.verdict == verdict::kViolation || r.verdict == verdict::kSafe ? r.verdict : "unknown";
}

std::string outcome_badge(const RunReport& r) {
  const std::string o = outcome(r);
  return "<span class=\"badge " + std::string(o == "as expected" ? "b-ok" : "b-mismatch") + "\">" + esc(o) + "</span>";
}

std::string header(const RunReport& r) {
  return "<div class=\"top\"><h1>" + esc(r.scenario) + "</h1><span class=\"badge b-" + verdict_class(r) + "\">" +
         esc(verdict_word(r)) + "</span>" + outcome_badge(r) + "<span class=\"muted\">" + esc(r.algorithm) +
         " · seed " + std::to_string(r.seed) + "</span></div>\n<p class=\"desc\">" + esc(r.description) + "</p>\n";
}

std::string timeline_section(const Timeline& t) {
  std::string out = "<h2>Timeline</h2>\n" + render_timeline_chart(t);
  for (const auto& e : t.elided) out += "<p class=\"elided\">" + esc(e) + "</p>\n";
  return out;
}

std::string verdict_section(const RunReport& r) {
  std::string out = "<div class=\"verdict v-" + verdict_class(r) + "\"><div class=\"big\">" + esc(verdict_word(r)) +
                    "</div><div><p><b>" + esc(outcome(r)) + ".</b> Expected: " + esc(r.expected.text()) +
                    ". Found: " + esc(found_text(r)) + ".</p>";
  if (!r.violations.empty()) {
    out += "<ul class=\"violations\">";
    for (const auto& v : r.violations) {
      out += "<li data-class=\"" + std::string(checker::to_string(v.severity)) + "\"><span class=\"prop\">" +
             esc(checker::to_string(v.property)) + "</span><span class=\"cls cls-" + checker::to_string(v.severity) + "\">" +
             esc(checker::severity_info(v.severity).words) + "</span>" + esc(v.explanation);
      if (v.count > 1) out += " <span class=\"muted\">(" + std::to_string(v.count) + " instances; the first is described)</span>";
      out += "</li>";
    }
    out += "</ul>";
  } else if (r.verdict == verdict::kSafe) {
    out += "<p>No property was violated.</p>";
  }
  if (const std::string heading = inconclusive_heading(r); !heading.empty()) {
    out += "<div class=\"inconclusive\"><p><b>" + esc(heading) + "</b></p><ul>";
    for (const auto& why : inconclusive_reasons(r)) out += "<li>" + esc(why) + "</li>";
    out += "</ul></div>";
  }
  return out + "</div></div>\n";
}

std::string replay_section(const RunReport& r) {
  return "<h2>Replay</h2>\n<div class=\"replay\"><code id=\"replay\">" + esc(r.replay) +
         "</code><button class=\"copy\" type=\"button\" data-for=\"replay\">Copy</button></div>\n"
         "<p class=\"muted\">" + esc(replay_promise(r)) + " (this run's SHA-256 <code>" + esc(r.history_sha256) +
         "</code>).</p>\n";
}

std::string excerpt_section(const RunReport& r, const checker::History& h, size_t lines) {
  const Excerpt ex = history_excerpt(r, h, lines);
  if (ex.lines.empty()) return "";
  std::string out = "<h2>History excerpt</h2>\n<p class=\"muted\">" + esc(ex.caption) + "</p>\n<pre class=\"excerpt\">";
  for (const auto& l : ex.lines) out += esc(l) + "\n";
  return out + "</pre>\n";
}

std::string parameters_section(const RunReport& r, const checker::History& h) {
  std::string out = "<h2>Scenario</h2>\n<div class=\"cols\"><table class=\"params\">";
  for (const auto& [k, v] : parameter_rows(r)) out += "<tr><th>" + esc(k) + "</th><td>" + esc(v) + "</td></tr>";
  out += "</table><div><table class=\"faults\"><tr><th>fault</th><th>target</th><th>at</th><th>for</th><th>details</th></tr>";
  const auto rows = fault_rows(r, h);
  for (const auto& f : rows) {
    out += "<tr><td>" + esc(f.kind) + "</td><td>" + esc(f.target) + "</td><td>" + esc(f.at) + "</td><td>" +
           esc(f.duration) + "</td><td>" + esc(f.details) + "</td></tr>";
  }
  if (rows.empty()) out += "<tr><td colspan=\"5\" class=\"muted\">no faults</td></tr>";
  out += "</table>";
  if (r.stats.is_object() && !r.stats.empty()) {
    out += "<table class=\"stats\">";
    for (auto it = r.stats.begin(); it != r.stats.end(); ++it) {
      out += "<tr><th>" + esc(it.key()) + "</th><td>" + esc(it.value().dump()) + "</td></tr>";
    }
    out += "</table>";
  }
  return out + "</div></div>\n";
}

std::string page(const RunReport& r, const checker::History& h, const TimelineOptions& to, size_t excerpt_lines,
                 const std::vector<std::string>& notes) {
  Timeline t = build_timeline(r, h, to);
  t.elided.insert(t.elided.end(), notes.begin(), notes.end());
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>" +
                    esc(r.scenario + " — " + verdict_word(r) + " — lockstep") + "</title>\n<style>" + kStyle +
                    timeline_style() + "</style>\n</head>\n<body>\n";
  out += header(r) + timeline_section(t) + verdict_section(r) + replay_section(r) + excerpt_section(r, h, excerpt_lines) +
         parameters_section(r, h);
  out += "<script>" + std::string(timeline_script()) + kScript + "</script>\n</body>\n</html>\n";
  return out;
}

}  // namespace

std::string render_html(const RunReport& r, const checker::History& h, const HtmlOptions& o) {
  // Each step gives up detail a reader misses least, until the page fits the budget.
  TimelineOptions to = o.timeline;
  to.plot_width_px = timeline_plot_width();
  size_t excerpt = o.excerpt_lines;
  std::vector<std::string> notes;
  std::string html = page(r, h, to, excerpt, notes);
  for (int step = 0; html.size() > o.max_bytes && step < 4; ++step) {
    if (step == 0) to.ops = false, to.max_waits = std::min<size_t>(to.max_waits, 1000);
    if (step == 1) to.merge_above = 0, to.merge_px = 2, to.max_waits = std::min<size_t>(to.max_waits, 300);
    if (step == 2) to.max_client_lanes = 0, excerpt = std::min<size_t>(excerpt, 20);
    if (step == 3) to.merge_px = 8, to.max_waits = std::min<size_t>(to.max_waits, 100);
    notes = {"The full page would exceed " + std::to_string(o.max_bytes / 1000) +
             " KB, so detail was dropped; history.jsonl has every event."};
    html = page(r, h, to, excerpt, notes);
  }
  return html;
}

}  // namespace lockstep::reports
