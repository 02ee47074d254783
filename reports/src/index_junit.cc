// The run-wide reports: index.html (one row per scenario, linking to its report) and
// JUnit XML for CI systems, which show each scenario as a test case.
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
table{border-collapse:collapse}th,td{border:1px solid #d9dee5;padding:5px 12px;text-align:left}th{background:#f6f8fa}
a{color:#1f5fbf;text-decoration:none}a:hover{text-decoration:underline}
.badge{display:inline-block;padding:1px 8px;border-radius:4px;font-weight:700;font-size:12px;color:#fff}
.b-violation{background:#d0191f}.b-safe{background:#17803d}.b-unknown{background:#b26a00}
.ok{color:#17803d;font-weight:600}.bad{color:#d0191f;font-weight:700}
)CSS";

}  // namespace

std::string render_index(const std::vector<RunReport>& reports) {
  size_t mismatched = 0;
  for (const auto& r : reports) mismatched += failed(r) ? 1 : 0;
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>lockstep run — " +
                    std::to_string(reports.size()) + " scenarios</title>\n<style>" + kIndexStyle +
                    "</style>\n</head>\n<body>\n<h1>lockstep run</h1>\n<p>" + std::to_string(reports.size()) +
                    " scenarios, " + std::to_string(reports.size() - mismatched) + " as expected, " +
                    std::to_string(mismatched) + " mismatched.</p>\n<table>\n<tr><th>scenario</th><th>algorithm</th>"
                    "<th>expected</th><th>found</th><th>verdict</th><th>result</th></tr>\n";
  for (const auto& r : reports) {
    const std::string v = r.verdict == verdict::kViolation || r.verdict == verdict::kSafe ? r.verdict : "unknown";
    out += "<tr><td><a href=\"" + xml_escape(url_segment(r.scenario)) + "/report.html\">" + xml_escape(r.scenario) +
           "</a></td><td>" + xml_escape(r.algorithm) + "</td><td>" + xml_escape(r.expected.text()) +
           "</td><td>" + xml_escape(found_text(r)) + "</td><td><span class=\"badge b-" + v + "\">" + xml_escape(v) +
           "</span></td><td class=\"" + (failed(r) ? "bad" : "ok") + "\">" + xml_escape(outcome(r)) + "</td></tr>\n";
  }
  out += "</table>\n<script>document.body.setAttribute('data-ok','1');</script>\n</body>\n</html>\n";
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
      body += v.property + " [" + checker::to_string(v.severity) + "]: " + v.explanation + "\n";
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
