#include "commands.h"

namespace lockstep::cli {

CommandRunner add_fuzz_command(CLI::App& app) {
  app.add_subcommand("fuzz", "Search for lock violations with generated scenarios (not yet available)");
  return [] {
    std::fprintf(stderr, "lockstep fuzz: not yet available\n");
    return kExitUsage;
  };
}

}  // namespace lockstep::cli
