#include "lockstep/reports/matrix.h"

#include <algorithm>
#include <cstdio>

#include "lockstep/reports/text.h"

namespace lockstep::reports {
namespace {

// Rows and columns in first-seen order.
std::vector<std::string> firsts(const std::vector<MatrixRow>& rows, std::string MatrixRow::*field) {
  std::vector<std::string> out;
  for (const auto& r : rows)
    if (std::find(out.begin(), out.end(), r.*field) == out.end()) out.push_back(r.*field);
  return out;
}

const MatrixRow* cell(const std::vector<MatrixRow>& rows, const std::string& profile, const std::string& fault) {
  for (const auto& r : rows)
    if (r.profile == profile && r.fault == fault) return &r;
  return nullptr;
}

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", s);
  return buf;
}

}  // namespace

nlohmann::ordered_json matrix_json(const std::vector<MatrixRow>& rows, const MatrixMeta& meta) {
  nlohmann::ordered_json j;
  j["seed"] = meta.seed;
  j["budget"] = meta.budget;
  j["command"] = meta.command;
  j["cells"] = nlohmann::ordered_json::array();
  for (const auto& r : rows) {
    nlohmann::ordered_json c;
    c["profile"] = r.profile;
    c["fault"] = r.fault;
    c["verdict"] = r.verdict;
    c["runs"] = r.runs;
    c["seconds"] = r.seconds;
    c["violations"] = r.violations;
    auto or_null = [](const std::string& s) { return s.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(s); };
    c["counterexample"] = or_null(r.counterexample);
    c["properties"] = r.properties;
    c["classes"] = r.classes;
    c["by_class"] = r.by_class;
    c["unknown"] = r.unknown;
    c["report"] = or_null(r.report);
    c["replay"] = or_null(r.replay);
    j["cells"].push_back(std::move(c));
  }
  return j;
}

std::string render_matrix_html(const std::vector<MatrixRow>& rows, const MatrixMeta& meta) {
  const auto profiles = firsts(rows, &MatrixRow::profile);
  const auto faults = firsts(rows, &MatrixRow::fault);
  size_t bugs = 0, limits = 0;
  for (const auto& r : rows) {
    bugs += r.verdict == matrix_verdict::kBug || r.verdict == matrix_verdict::kBroken;
    limits += r.verdict == matrix_verdict::kLimit;
  }
  std::string h;
  h += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">";
  h += "<title>lockstep safety matrix</title>\n<style>\n";
  h += "body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222}table{border-collapse:collapse}"
       "th,td{border:1px solid #ccc;padding:6px 8px;vertical-align:top;text-align:left}"
       "th{background:#f4f4f4}td.safe{background:#e3f4e1}td.safe b{color:#1e7b34}"
       "td.cls-two-holders{background:#f6c9c6}td.cls-two-holders b{color:#8c1d18}"
       "td.cls-damage{background:#fbd9b8}td.cls-damage b{color:#8a3b00}"
       "td.cls-lease-lost{background:#fdf0c4}td.cls-lease-lost b{color:#6b4e00}"
       "td.cls-stuck{background:#e4e0f7}td.cls-stuck b{color:#3a2d8c}"
       "td.cls-unfair{background:#dcebf7}td.cls-unfair b{color:#144d7a}"
       // A limit is the price of leases, not the library's debt: pale, its class in the border.
       "td.limit{background:#f7f7f7;border-left-width:4px}td.limit b{color:#555;font-weight:600}"
       "td.limit.cls-two-holders{border-left-color:#f6c9c6}td.limit.cls-damage{border-left-color:#fbd9b8}"
       "td.limit.cls-lease-lost{border-left-color:#fdf0c4}td.limit.cls-stuck{border-left-color:#e4e0f7}"
       "td.limit.cls-unfair{border-left-color:#dcebf7}"
       ".small{font-size:12px;color:#555}summary{cursor:pointer;font-size:12px;color:#555}"
       "code{font-size:12px;background:#f6f6f6;padding:1px 3px}.key span{display:inline-block;padding:1px 6px;"
       "margin-right:6px;border-radius:3px}\n</style></head><body>\n";
  h += "<h1>Safety matrix</h1>\n<p>" + std::to_string(rows.size()) + " cells, " + std::to_string(bugs) +
       " bug" + (bugs == 1 ? "" : "s") + ", " + std::to_string(limits) + " limit" + (limits == 1 ? "" : "s") +
       ". Each cell is two fuzz campaigns (" + xml_escape(meta.budget) + ", seed " +
       std::to_string(meta.seed) +
       "): faults within the lock's own assumptions, then faults beyond them. <b>bug</b>: broken within them, "
       "coloured by the most severe class its counterexample shows; <b>limit</b> (pale, the class in its left "
       "border): broken only beyond them, the price every lease pays; <b>no-violation</b>: none in either. Open "
       "a cell's details for its properties, story, report and replay command.</p>\n";
  h += "<p class=\"key\"><span style=\"background:#f6c9c6\">two-holders</span><span style=\"background:#fbd9b8\">"
       "damage</span><span style=\"background:#fdf0c4\">lease-lost</span><span style=\"background:#e4e0f7\">stuck"
       "</span><span style=\"background:#dcebf7\">unfair</span><span style=\"background:#e3f4e1\">no violation"
       "</span></p>\n";
  if (!meta.command.empty()) h += "<p class=\"small\">Made by <code>" + xml_escape(meta.command) + "</code></p>\n";
  h += "<table>\n<tr><th>profile</th>";
  for (const auto& f : faults) h += "<th>" + xml_escape(f) + "</th>";
  h += "</tr>\n";
  for (const auto& p : profiles) {
    h += "<tr><th>" + xml_escape(p) + "</th>";
    for (const auto& f : faults) {
      const MatrixRow* r = cell(rows, p, f);
      if (!r) {
        h += "<td></td>";
        continue;
      }
      const bool bad = matrix_broken(r->verdict);
      const bool limit = r->verdict == matrix_verdict::kLimit;
      // The classes come most severe first: the cell is coloured and named by that one.
      const std::string cls = bad && !r->classes.empty() ? r->classes.front() : "";
      h += std::string("<td class=\"") + (bad ? (limit ? "limit cls-" : "broken cls-") + cls : std::string("safe")) +
           "\" data-profile=\"" + xml_escape(p) + "\" data-fault=\"" + xml_escape(f) + "\" data-verdict=\"" +
           xml_escape(r->verdict) + "\"" + (bad ? " data-class=\"" + xml_escape(cls) + "\"" : std::string()) + "><b>" +
           xml_escape(bad ? r->verdict + (cls.empty() ? "" : ": " + cls) : r->verdict) + "</b>";
      if (bad) {
        h += "<details><summary>" + xml_escape(join(r->properties, ", ")) + "</summary>";
        if (!r->report.empty()) h += "<a href=\"" + xml_escape(r->report) + "\">report</a>";
        if (!r->counterexample.empty()) h += " · <a href=\"" + xml_escape(r->counterexample) + "\">scenario</a>";
        if (!r->story.empty()) h += "<div class=\"small\">" + xml_escape(truncate_text(r->story, 240)) + "</div>";
        if (!r->replay.empty()) h += "<div class=\"small\"><code>" + xml_escape(r->replay) + "</code></div>";
        h += "</details>";
      }
      h += "<div class=\"small\">" + std::to_string(r->runs) + " runs, " + seconds_text(r->seconds) + "</div></td>";
    }
    h += "</tr>\n";
  }
  h += "</table>\n</body></html>\n";
  return h;
}

std::string render_matrix_markdown(const std::vector<MatrixRow>& rows) {
  const auto profiles = firsts(rows, &MatrixRow::profile);
  const auto faults = firsts(rows, &MatrixRow::fault);
  std::string m = "| profile |";
  for (const auto& f : faults) m += " " + md_cell(f) + " |";
  m += "\n| --- |";
  for (size_t i = 0; i < faults.size(); ++i) m += " --- |";
  m += "\n";
  for (const auto& p : profiles) {
    m += "| " + md_cell(p) + " |";
    for (const auto& f : faults) {
      const MatrixRow* r = cell(rows, p, f);
      if (!r) {
        m += " |";
      } else if (matrix_broken(r->verdict)) {
        const std::string v = r->verdict == matrix_verdict::kLimit ? "limit" : "**" + r->verdict + "**";
        m += " " + v + ": " + md_cell(join(r->classes, ", ")) + " (" + md_cell(join(r->properties, ", ")) + ") |";
      } else {
        m += " no-violation |";
      }
    }
    m += "\n";
  }
  return m;
}

}  // namespace lockstep::reports
