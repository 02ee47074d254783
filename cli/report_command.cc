// `lockstep report DIR`: redraws report.html and report.md for every scenario directory
// under DIR (each holding report.json and history.jsonl, as `lockstep run` leaves them)
// and writes DIR/index.html. Nothing is re-run: the reports come from the files alone,
// so a run directory fetched from CI can be read with a newer lockstep.
#include <algorithm>
#include <filesystem>

#include "commands.h"
#include "lockstep/reports/writers.h"

namespace lockstep::cli {
namespace {

namespace fs = std::filesystem;

struct ReportArgs {
  std::string dir;
};

std::vector<fs::path> scenario_dirs(const fs::path& dir) {
  std::vector<fs::path> out;
  if (fs::exists(dir / "report.json")) return {dir};
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.is_directory() && fs::exists(e.path() / "report.json")) out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

int run(const ReportArgs& args) {
  const fs::path dir(args.dir);
  if (!fs::is_directory(dir)) {
    std::fprintf(stderr, "lockstep report: %s is not a directory\n", args.dir.c_str());
    return kExitUsage;
  }
  const auto dirs = scenario_dirs(dir);
  if (dirs.empty()) {
    std::fprintf(stderr, "lockstep report: no */report.json under %s (is it the --out directory of lockstep run?)\n",
                 args.dir.c_str());
    return kExitDataErr;
  }
  std::vector<reports::RunReport> all;
  for (const auto& d : dirs) {
    reports::RunReport r;
    checker::History h;
    std::string error;
    if (!reports::load_run_dir(d, r, h, error)) {
      std::fprintf(stderr, "lockstep report: %s\n", error.c_str());
      return kExitDataErr;
    }
    if (!reports::write_readable_reports(d, r, h, error)) {
      std::fprintf(stderr, "lockstep report: %s\n", error.c_str());
      return kExitDataErr;
    }
    std::printf("wrote %s %s\n", (d / "report.html").string().c_str(), (d / "report.md").string().c_str());
    all.push_back(std::move(r));
  }
  if (dirs.size() == 1 && dirs.front() == dir) return 0;
  std::string error;
  reports::IndexInfo index;
  if (!reports::read_skipped(dir, index.skipped, error) || !reports::write_index(dir, all, error, index)) {
    std::fprintf(stderr, "lockstep report: %s\n", error.c_str());
    return kExitDataErr;
  }
  std::printf("wrote %s (%zu scenarios)\n", (dir / "index.html").string().c_str(), all.size());
  return 0;
}

}  // namespace

CommandRunner add_report_command(CLI::App& app) {
  auto args = std::make_shared<ReportArgs>();
  auto* cmd = app.add_subcommand("report", "Regenerate HTML and Markdown reports (and index.html) from a run directory");
  cmd->add_option("dir", args->dir, "A run directory (the --out of lockstep run) or one scenario's directory")
      ->required();
  return [args] { return run(*args); };
}

}  // namespace lockstep::cli
