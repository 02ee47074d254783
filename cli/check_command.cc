#include "commands.h"

namespace lockstep::cli {

CommandRunner add_check_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("check", "Check recorded histories for linearizability");
  (void)cmd;
  return [] { return kExitUsage; };
}

}  // namespace lockstep::cli
