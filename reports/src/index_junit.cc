// The run-wide reports: index.html (one row per scenario with its description, linking to
// its report, the skipped ones with the reason, a filter and sortable columns) and JUnit
// XML for CI systems, which show each scenario as a test case.
#include <algorithm>
#include <cstdio>

#include "lockstep/reports/text.h"
#include "lockstep/reports/writers.h"

namespace lockstep::reports {
namespace {

bool failed(const RunReport& r) { return !r.as_expected(); }

// Scenario names come from file names: keep a link working whatever they contain.
std::string url_segment(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      out += buf;
    }
  }
  return out;
}

constexpr const char* kIndexStyle = R"CSS(
body{margin:0;padding:20px 28px 40px;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,Arial,sans-serif;color:#1d232b}
h1{font-size:22px;margin:0 0 6px}p{color:#5b6573}
.tools{display:flex;gap:10px;align-items:center;flex-wrap:wrap;margin:10px 0}
.tools input{font:inherit;padding:5px 9px;border:1px solid #b8c0ca;border-radius:5px;width:340px}
.tools button{font:inherit;padding:4px 10px;border:1px solid #b8c0ca;border-radius:5px;background:#fff;cursor:pointer}
.tools button[aria-pressed=true]{background:#1d232b;color:#fff;border-color:#1d232b}
.tools .count{color:#5b6573;margin-left:auto}
table{border-collapse:collapse}th,td{border:1px solid #d9dee5;padding:5px 12px;text-align:left;vertical-align:top}th{background:#f6f8fa}
th[data-sort]{cursor:pointer;user-select:none;white-space:nowrap}th[data-sort]:after{content:" ↕";color:#aab2bc}
th.asc:after{content:" ↑";color:#1d232b}th.desc:after{content:" ↓";color:#1d232b}
td.desc{color:#5b6573;max-width:460px;font-size:13px}td.props{font-size:13px}td.name,td.ok,td.bad{white-space:nowrap}
a{color:#1f5fbf;text-decoration:none}a:hover{text-decoration:underline}
.badge{display:inline-block;padding:1px 8px;border-radius:4px;font-weight:700;font-size:12px;color:#fff}
.b-violation{background:#d0191f}.b-safe{background:#17803d}.b-unknown{background:#b26a00}.b-skipped{background:#8a939e}
.ok{color:#17803d;font-weight:600}.bad{color:#d0191f;font-weight:700}.skip{color:#5b6573;font-weight:600}
tr.skipped td{background:#fafbfc}
)CSS";

// Filtering matches every word typed against a row's text; a status button keeps only its
// rows; a click on a column header sorts by it (again: the other way).
constexpr const char* kIndexScript = R"JS(
(function(){
var body=document.querySelector('table.runs tbody'),rows=[].slice.call(body.rows),input=document.querySelector('input.filter');
var status='all',count=document.querySelector('.count');
function apply(){var words=input.value.toLowerCase().split(/\s+/).filter(Boolean),n=0;
rows.forEach(function(r){var text=r.textContent.toLowerCase(),ok=words.every(function(w){return text.indexOf(w)>=0;})&&
(status==='all'||r.getAttribute('data-status').split(' ').indexOf(status)>=0);r.hidden=!ok;if(ok)n++;});
count.textContent='showing '+n+' of '+rows.length;document.body.setAttribute('data-shown',String(n));}
input.addEventListener('input',apply);
document.querySelectorAll('.tools button[data-status]').forEach(function(b){b.addEventListener('click',function(){
status=b.getAttribute('data-status');document.querySelectorAll('.tools button[data-status]').forEach(function(x){
x.setAttribute('aria-pressed',String(x===b));});apply();});});
document.querySelectorAll('th[data-sort]').forEach(function(th,col){th.addEventListener('click',function(){
var asc=!th.classList.contains('asc');document.querySelectorAll('th[data-sort]').forEach(function(x){x.classList.remove('asc','desc');});
th.classList.add(asc?'asc':'desc');var i=th.cellIndex;
rows.sort(function(p,q){var a=p.cells[i].getAttribute('data-key')||p.cells[i].textContent,b=q.cells[i].getAttribute('data-key')||q.cells[i].textContent;
return (asc?1:-1)*a.localeCompare(b,undefined,{numeric:true})||(+p.getAttribute('data-order')-+q.getAttribute('data-order'));});
rows.forEach(function(r){body.appendChild(r);});});});
apply();document.body.setAttribute('data-ok','1');
})();
)JS";

std::string plural(size_t n, const char* one, const char* many) { return std::to_string(n) + " " + (n == 1 ? one : many); }

// The batch's command: what the caller says, else what the reports' world says.
std::string command_of(const std::vector<RunReport>& reports, const IndexInfo& info) {
  if (!info.command.empty()) return info.command;
  for (const auto& r : reports) {
    if (r.world == to_string(World::Live)) return to_string(World::Live);
  }
  return "run";
}

std::string cell(const std::string& text, const char* cls = nullptr) {
  return std::string("<td") + (cls ? std::string(" class=\"") + cls + "\"" : "") + ">" + xml_escape(text) + "</td>";
}

// A description cut to a readable length in the table; the whole of it on hover.
std::string description_cell(const std::string& d) {
  return "<td class=\"desc\" title=\"" + xml_escape(d) + "\">" + xml_escape(truncate_text(d, 130)) + "</td>";
}

}  // namespace

std::string render_index(const std::vector<RunReport>& reports, const IndexInfo& info) {
  size_t mismatched = 0;
  for (const auto& r : reports) mismatched += failed(r) ? 1 : 0;
  const std::string command = command_of(reports, info);
  const std::string where = command == "live" ? "against real redis-server" : "in the simulator";
  const size_t total = reports.size() + info.skipped.size();
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>lockstep " + command +
                    " — " + plural(total, "scenario", "scenarios") + "</title>\n<style>" + kIndexStyle +
                    "</style>\n</head>\n<body>\n<h1>lockstep " + command + "</h1>\n<p>" +
                    plural(reports.size(), "scenario", "scenarios") + " run " + where + ", " +
                    std::to_string(reports.size() - mismatched) + " as expected, " + std::to_string(mismatched) +
                    " mismatched" + (info.skipped.empty() ? "" : ", " + std::to_string(info.skipped.size()) + " skipped") +
                    ".</p>\n";
  for (const auto& note : info.notes) out += "<p>" + xml_escape(note) + "</p>\n";
  out += "<div class=\"tools\"><input class=\"filter\" type=\"search\" placeholder=\"Filter: "
         "scenario, algorithm, property, words of the description\" aria-label=\"Filter\">";
  for (const char* st : {"all", "mismatched", "violation", "safe", "unknown", "skipped"}) {
    out += std::string("<button type=\"button\" data-status=\"") + st + "\" aria-pressed=\"" +
           (std::string(st) == "all" ? "true" : "false") + "\">" + st + "</button>";
  }
  out += "<span class=\"count\"></span></div>\n<table class=\"runs\">\n<thead><tr><th data-sort>scenario</th>"
         "<th>description</th><th data-sort>algorithm</th><th data-sort>expected</th><th data-sort>found</th>"
         "<th data-sort>verdict</th><th data-sort>result</th></tr></thead>\n<tbody>\n";
  size_t order = 0;
  for (const auto& r : reports) {
    const std::string v = r.verdict == verdict::kViolation || r.verdict == verdict::kSafe ? r.verdict : "unknown";
    const std::string status = v + (failed(r) ? " mismatched" : "");
    // The classes found are in the found cell, so the filter finds "two-holders" too.
    out += "<tr data-status=\"" + status + "\" data-order=\"" + std::to_string(order++) + "\"><td class=\"name\"><a href=\"" +
           xml_escape(url_segment(r.scenario)) + "/report.html\">" + xml_escape(r.scenario) + "</a></td>" +
           description_cell(r.description) + cell(r.algorithm) + cell(r.expected.text(), "props") +
           cell(found_text(r), "props") + "<td><span class=\"badge b-" + v + "\">" + xml_escape(v) + "</span></td>" +
           cell(outcome(r), failed(r) ? "bad" : "ok") + "</tr>\n";
  }
  for (const auto& s : info.skipped) {
    out += "<tr class=\"skipped\" data-status=\"skipped\" data-order=\"" + std::to_string(order++) + "\">" +
           cell(s.scenario, "name") + "<td class=\"desc\">" + xml_escape(truncate_text(s.description, 130)) +
           (s.description.empty() ? "" : "<br>") + "<b>Skipped:</b> " + xml_escape(s.reason) + "</td>" +
           cell(s.algorithm) + cell("-") + cell("-") +
           "<td><span class=\"badge b-skipped\">skipped</span></td>" + cell("skipped", "skip") + "</tr>\n";
  }
  out += "</tbody>\n</table>\n<script>" + std::string(kIndexScript) + "</script>\n</body>\n</html>\n";
  return out;
}

std::string render_junit(const std::vector<RunReport>& reports, const std::string& suite) {
  size_t failures = 0;
  for (const auto& r : reports) failures += failed(r) ? 1 : 0;
  const std::string counts = "tests=\"" + std::to_string(reports.size()) + "\" failures=\"" + std::to_string(failures) +
                             "\" errors=\"0\"";
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"lockstep\" " + counts + ">\n";
  out += "  <testsuite name=\"" + xml_escape(suite) + "\" " + counts + " skipped=\"0\">\n";
  for (const auto& r : reports) {
    out += "    <testcase classname=\"" + xml_escape(r.algorithm.empty() ? suite : r.algorithm) + "\" name=\"" +
           xml_escape(r.scenario) + "\">\n";
    std::string body;
    for (const auto& v : r.violations) {
      body += std::string(checker::to_string(v.property)) + " [" + checker::to_string(v.severity) + "]: " + v.explanation + "\n";
    }
    for (const auto& why : inconclusive_reasons(r)) body += "inconclusive: " + why + "\n";
    body += "replay: " + r.replay + "\n";
    if (failed(r)) {
      const auto reasons = inconclusive_reasons(r);
      const std::string message = r.unknown() ? "no verdict: " + (reasons.empty() ? std::string() : reasons.front())
                                              : "expected " + r.expected.text() + ", found " + found_text(r);
      out += "      <failure type=\"" + std::string(r.unknown() ? "unknown" : "mismatch") + "\" message=\"" +
             xml_escape(message) + "\">" + xml_escape(body) + "</failure>\n";
    }
    out += "      <system-out>" + xml_escape("verdict: " + r.verdict + "\n" + body) + "</system-out>\n";
    out += "    </testcase>\n";
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

}  // namespace lockstep::reports
