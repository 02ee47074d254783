#include "commands.h"

namespace lockstep::cli {

CommandRunner add_run_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("run", "Run scenario files in the simulator");
  (void)cmd;
  return [] { return kExitUsage; };
}

}  // namespace lockstep::cli
