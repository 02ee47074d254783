#include "commands.h"

namespace lockstep::cli {

CommandRunner add_report_command(CLI::App& app) {
  app.add_subcommand("report", "Regenerate HTML and Markdown reports from a run directory (not yet available)");
  return [] {
    std::fprintf(stderr, "lockstep report: not yet available\n");
    return kExitUsage;
  };
}

}  // namespace lockstep::cli
