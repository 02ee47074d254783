#include "scenario_files.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

namespace lockstep::cli {

namespace fs = std::filesystem;

namespace {

// lockstep's own output met while walking a directory (a run's report.json beside its
// history, its skipped.json beside index.html, a fuzz or live campaign's summary.json): not scenarios, and not worth an
// error. A fuzz campaign's counterexample-N.json files and a live campaign's saved schedules are scenarios and are kept.
bool is_lockstep_output(const fs::path& file) {
  std::error_code ec;
  const std::string name = file.filename().string();
  if (name == "report.json") return fs::exists(file.parent_path() / "history.jsonl", ec);
  if (name == "skipped.json") return fs::exists(file.parent_path() / "index.html", ec);
  if (name != "summary.json") return false;
  std::ifstream in(file);
  const auto j = nlohmann::json::parse(in, nullptr, false);
  return j.is_object() && j.contains("runs") && (j.contains("counterexamples") || j.contains("each_run"));
}

std::vector<std::string> expand(const std::string& path) {
  std::error_code ec;
  if (!fs::is_directory(path, ec)) return {path};
  std::vector<std::string> files;
  // Recursive, so that `scenarios` also takes in scenarios/live/.
  for (const auto& entry : fs::recursive_directory_iterator(path, ec)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_regular_file() || entry.path().extension() != ".json") continue;
    if (name.size() > 12 && name.ends_with(".schema.json")) continue;
    if (is_lockstep_output(entry.path())) continue;
    files.push_back(entry.path().string());
  }
  // Directory order is the file system's; sorting makes the catalogue order stable.
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

bool load_scenarios(const std::vector<std::string>& paths, std::vector<LoadedScenario>& out) {
  bool ok = true;
  std::map<std::string, std::string> seen;  // name -> file that used it first
  for (const auto& arg : paths) {
    auto files = expand(arg);
    if (files.empty()) {
      std::fprintf(stderr, "%s: $: expected scenario files (*.json), found an empty directory\n", arg.c_str());
      ok = false;
    }
    for (const auto& file : files) {
      auto result = runner::load_scenario_file(file);
      if (auto* err = std::get_if<runner::ScenarioError>(&result)) {
        std::fprintf(stderr, "%s\n", err->message().c_str());
        ok = false;
        continue;
      }
      auto& s = std::get<runner::Scenario>(result);
      if (auto [it, fresh] = seen.emplace(s.name, file); !fresh) {
        std::fprintf(stderr, "%s: $.name: expected a name no other scenario uses, found \"%s\" (also in %s)\n",
                     file.c_str(), s.name.c_str(), it->second.c_str());
        ok = false;
        continue;
      }
      out.push_back({std::move(s), file});
    }
  }
  return ok;
}

}  // namespace lockstep::cli
