#include "commands.h"

namespace lockstep::cli {

CommandRunner add_live_command(CLI::App& app) {
  app.add_subcommand("live", "Run scenario files against real redis-server processes (not yet available)");
  return [] {
    std::fprintf(stderr, "lockstep live: not yet available\n");
    return kExitUsage;
  };
}

}  // namespace lockstep::cli
