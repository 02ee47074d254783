// Run directories on disk: writing each scenario's reports and the run's index and JUnit
// file, and reading report.json + history.jsonl back for `lockstep report`.
#include <fstream>
#include <sstream>

#include "lockstep/checker/properties.h"
#include "lockstep/reports/text.h"
#include "lockstep/reports/writers.h"

namespace lockstep::reports {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

bool write_file(const fs::path& path, const std::string& data, std::string& error) {
  std::ofstream f(path, std::ios::binary);
  f << data;
  f.close();
  if (!f) {
    error = path.string() + ": cannot write";
    return false;
  }
  return true;
}

bool make_dir(const fs::path& dir, std::string& error) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) error = dir.string() + ": cannot create directory (" + ec.message() + ")";
  return !ec;
}

bool read_file(const fs::path& path, std::string& out, std::string& error) {
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    error = path.string() + ": cannot read (missing?)";
    return false;
  }
  std::ostringstream ss;
  ss << f.rdbuf();
  out = ss.str();
  return true;
}

// Field readers for report.json: each says which field is wrong and what it should be.
struct Fields {
  const json& j;
  std::string& error;

  bool fail(const std::string& name, const char* what) {
    error = "\"" + name + "\" must be " + what;
    return false;
  }
  bool string(const char* name, std::string& out, bool required) {
    auto it = j.find(name);
    if (it == j.end()) return !required || fail(name, "present (a string)");
    if (!it->is_string()) return fail(name, "a string");
    out = it->get<std::string>();
    return true;
  }
  bool seed(uint64_t& out) {
    auto it = j.find("seed");
    if (it == j.end() || !it->is_number_unsigned()) return fail("seed", "a non-negative integer");
    out = it->get<uint64_t>();
    return true;
  }
  template <typename Strings>
  bool names(const char* name, Strings& out) {
    auto it = j.find(name);
    if (it == j.end()) return true;
    if (!it->is_array()) return fail(name, "an array of strings");
    for (const auto& x : *it) {
      if (!x.is_string()) return fail(name, "an array of strings");
      out.insert(out.end(), x.get<std::string>());
    }
    return true;
  }
};

bool violation_from_json(const json& o, size_t i, checker::Violation& v, std::string& error) {
  const std::string at = "violations[" + std::to_string(i) + "]";
  if (!o.is_object()) {
    error = "\"" + at + "\" must be an object";
    return false;
  }
  Fields f{o, error};
  std::string property;
  if (!f.string("property", property, true) || !f.string("explanation", v.explanation, false)) {
    error = at + "." + error.substr(1);
    error.insert(0, "\"");
    return false;
  }
  const auto named = checker::property_named(property);
  if (!named) {
    error = "\"" + at + ".property\" must be one of " + join(checker::property_names(), ", ") + ", not \"" + property + "\"";
    return false;
  }
  v.property = *named;
  auto ints_ok = [&](const char* name, int64_t& dst) {
    auto it = o.find(name);
    if (it == o.end()) return true;
    if (!it->is_number_integer()) return error = "\"" + at + "." + name + "\" must be an integer", false;
    dst = it->get<int64_t>();
    return true;
  };
  if (!ints_ok("at_ns", v.at_ns) || !ints_ok("count", v.count)) return false;
  if (auto it = o.find("class"); it != o.end()) {
    const auto cls = it->is_string() ? checker::severity_named(it->get<std::string>()) : std::nullopt;
    if (!cls) {
      error = "\"" + at + ".class\" must be one of " + join(checker::severity_names(), ", ");
      return false;
    }
    v.severity = *cls;
  }
  if (auto it = o.find("processes"); it != o.end()) {
    if (!it->is_array()) return error = "\"" + at + ".processes\" must be an array of integers", false;
    for (const auto& p : *it) {
      if (!p.is_number_integer()) return error = "\"" + at + ".processes\" must be an array of integers", false;
      v.processes.push_back(p.get<int64_t>());
    }
  }
  return true;
}

}  // namespace

bool report_from_json(const json& j, RunReport& r, std::string& error) {
  if (!j.is_object()) {
    error = "expected a JSON object";
    return false;
  }
  RunReport out;
  Fields f{j, error};
  std::set<std::string> expected_names;
  std::string expected = verdict::kSafe, match = "at-least";
  if (!f.string("scenario", out.scenario, true) || !f.string("description", out.description, false) ||
      !f.string("world", out.world, false) || !f.string("algorithm", out.algorithm, false) || !f.seed(out.seed) ||
      !f.string("expected", expected, false) || !f.string("expected_match", match, false) ||
      !f.names("expected_violations", expected_names) || !f.string("verdict", out.verdict, true) ||
      !f.string("history_sha256", out.history_sha256, false) || !f.string("replay", out.replay, false) ||
      !f.names("inconclusive", out.inconclusive)) {
    return false;
  }
  if (out.verdict != verdict::kViolation && out.verdict != verdict::kSafe && !out.unknown()) {
    return f.fail("verdict", "one of violation, safe, unknown");
  }
  if (expected == verdict::kUnknown) {
    out.expected = Expectation::unknown();
  } else if (match == "exactly") {
    out.expected = Expectation::exactly(std::move(expected_names));
  } else if (match != "at-least") {
    return f.fail("expected_match", "one of at-least, exactly");
  } else if (expected == verdict::kViolation) {
    out.expected = Expectation::at_least(std::move(expected_names));
  } else if (expected != verdict::kSafe) {
    return f.fail("expected", "one of safe, violation, unknown");
  }
  auto vs = j.find("violations");
  if (vs == j.end() || !vs->is_array()) return f.fail("violations", "an array");
  for (size_t i = 0; i < vs->size(); ++i) {
    checker::Violation v;
    if (!violation_from_json((*vs)[i], i, v, error)) return false;
    out.violations.push_back(std::move(v));
  }
  if (auto it = j.find("faults"); it != j.end()) {
    if (!it->is_array()) return f.fail("faults", "an array");
    out.faults = *it;
  }
  if (auto it = j.find("stats"); it != j.end() && it->is_object()) out.stats = *it;
  if (auto it = j.find("scenario_definition"); it != j.end()) out.scenario_json = *it;
  r = std::move(out);
  return true;
}

bool load_run_dir(const fs::path& dir, RunReport& r, checker::History& h, std::string& error) {
  const fs::path report_path = dir / "report.json", history_path = dir / "history.jsonl";
  std::string text;
  if (!read_file(report_path, text, error)) return false;
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    error = report_path.string() + ": not valid JSON (" + e.what() + ")";
    return false;
  }
  if (!report_from_json(j, r, error)) {
    error = report_path.string() + ": " + error;
    return false;
  }
  if (!read_file(history_path, text, error)) return false;
  checker::History out;
  std::istringstream lines(text);
  std::string line;
  for (size_t n = 1; std::getline(lines, line); ++n) {
    if (line.empty()) continue;
    checker::Event e;
    try {
      if (checker::from_json(json::parse(line), e, error)) {
        out.events.push_back(std::move(e));
        continue;
      }
    } catch (const json::parse_error& ex) {
      error = std::string("not valid JSON (") + ex.what() + ")";
    }
    error = history_path.string() + ":" + std::to_string(n) + ": " + error;
    return false;
  }
  h = std::move(out);
  return true;
}

bool write_readable_reports(const fs::path& dir, const RunReport& r, const checker::History& h, std::string& error) {
  return make_dir(dir, error) && write_file(dir / "report.md", render_markdown(r, h), error) &&
         write_file(dir / "report.html", render_html(r, h), error);
}

bool write_scenario_reports(const fs::path& dir, const RunReport& r, const checker::History& h, std::string& error) {
  return make_dir(dir, error) && write_file(dir / "report.json", to_json(r).dump(2) + "\n", error) &&
         write_readable_reports(dir, r, h, error);
}

bool write_index(const fs::path& out_dir, const std::vector<RunReport>& reports, std::string& error,
                 const IndexInfo& info) {
  if (!make_dir(out_dir, error) || !write_file(out_dir / "index.html", render_index(reports, info), error)) return false;
  const fs::path skipped = out_dir / "skipped.json";
  if (info.skipped.empty()) {
    std::error_code ec;
    fs::remove(skipped, ec);  // a list left by an earlier batch is no longer true
    return true;
  }
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const auto& s : info.skipped) {
    list.push_back({{"scenario", s.scenario}, {"algorithm", s.algorithm}, {"description", s.description}, {"reason", s.reason}});
  }
  return write_file(skipped, list.dump(2) + "\n", error);
}

bool read_skipped(const fs::path& out_dir, std::vector<Skipped>& out, std::string& error) {
  out.clear();
  const fs::path path = out_dir / "skipped.json";
  if (!fs::exists(path)) return true;
  std::string text;
  if (!read_file(path, text, error)) return false;
  const json list = json::parse(text, nullptr, false);
  if (!list.is_array()) {
    error = path.string() + ": expected a JSON array of skipped scenarios";
    return false;
  }
  for (const auto& s : list) {
    if (!s.is_object() || !s.contains("scenario") || !s["scenario"].is_string()) {
      error = path.string() + ": each entry needs \"scenario\" (a string)";
      return false;
    }
    auto text_of = [&](const char* k) { return s.contains(k) && s[k].is_string() ? s[k].get<std::string>() : ""; };
    out.push_back({text_of("scenario"), text_of("algorithm"), text_of("description"), text_of("reason")});
  }
  return true;
}

bool write_junit(const std::vector<RunReport>& reports, const std::string& suite, const fs::path& path,
                 std::string& error) {
  if (path.has_parent_path() && !make_dir(path.parent_path(), error)) return false;
  return write_file(path, render_junit(reports, suite), error);
}

bool write_junit(const std::vector<RunReport>& reports, const std::string& suite, const fs::path& path) {
  std::string error;
  return write_junit(reports, suite, path, error);
}

}  // namespace lockstep::reports
