#include "commands.h"

namespace lockstep::cli {

CommandRunner add_sim_shell_command(CLI::App& app) {
  app.add_subcommand("sim-shell", "A redis-cli-like shell on one simulated Redis node (not yet available)");
  return [] {
    std::fprintf(stderr, "lockstep sim-shell: not yet available\n");
    return kExitUsage;
  };
}

}  // namespace lockstep::cli
