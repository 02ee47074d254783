// report.md: the facts of report.html as Markdown that reads well as a pull-request
// comment (GitHub-flavoured: tables, fenced blocks, <details>).
#include <algorithm>

#include "lockstep/reports/text.h"
#include "lockstep/reports/writers.h"

namespace lockstep::reports {
namespace {

// A fence longer than any backtick run inside, so no line can close it early.
std::string fence_for(const std::vector<std::string>& lines) {
  size_t longest = 0;
  for (const auto& l : lines) {
    size_t run = 0;
    for (char c : l) {
      run = c == '`' ? run + 1 : 0;
      longest = std::max(longest, run);
    }
  }
  return std::string(std::max<size_t>(3, longest + 1), '`');
}

std::string upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return s;
}

}  // namespace

std::string render_markdown(const RunReport& r, const checker::History& h) {
  std::string md = "### lockstep: " + md_cell(r.scenario) + " — **" + upper(r.verdict.empty() ? "unknown" : r.verdict) +
                   "** (" + outcome(r) + ")\n\n";
  if (!r.description.empty()) md += "> " + md_cell(r.description) + "\n\n";
  md += "Expected: " + md_cell(r.expected.text()) + ". Found: " + md_cell(found_text(r)) + ".\n\n";
  for (const auto& v : r.violations) {
    md += "- **" + md_cell(checker::to_string(v.property)) + "** (" + checker::severity_info(v.severity).words + "): " +
          md_cell(v.explanation);
    if (v.count > 1) md += " (" + std::to_string(v.count) + " instances; the first is described)";
    md += "\n";
  }
  if (!r.violations.empty()) md += "\n";
  if (const std::string heading = inconclusive_heading(r); !heading.empty()) {
    md += "**" + heading + "**\n\n";
    for (const auto& why : inconclusive_reasons(r)) md += "- " + md_cell(why) + "\n";
    md += "\n";
  }

  const std::vector<std::string> replay{r.replay};
  md += "Replay:\n\n" + fence_for(replay) + "sh\n" + r.replay + "\n" + fence_for(replay) + "\n\n";

  md += "| parameter | value |\n| --- | --- |\n";
  for (const auto& [k, v] : parameter_rows(r)) md += "| " + md_cell(k) + " | " + md_cell(v) + " |\n";
  md += "\n";
  const auto faults = fault_rows(r, h);
  if (!faults.empty()) {
    md += "| fault | target | at | for | details |\n| --- | --- | --- | --- | --- |\n";
    for (const auto& f : faults) {
      md += "| " + md_cell(f.kind) + " | " + md_cell(f.target) + " | " + md_cell(f.at) + " | " + md_cell(f.duration) +
            " | " + md_cell(f.details) + " |\n";
    }
    md += "\n";
  }

  const Excerpt ex = history_excerpt(r, h, 40);
  if (!ex.lines.empty()) {
    const std::string fence = fence_for(ex.lines);
    md += "<details><summary>History excerpt: " + xml_escape(ex.caption) + "</summary>\n\n" + fence + "text\n";
    for (const auto& l : ex.lines) md += l + "\n";
    md += fence + "\n\n</details>\n\n";
  }
  md += "History SHA-256 `" + r.history_sha256 + "`";
  if (r.stats.is_object() && r.stats.contains("events")) md += ", " + r.stats["events"].dump() + " events";
  md += ".\n";
  return md;
}

}  // namespace lockstep::reports
