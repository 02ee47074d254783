// `lockstep sim-shell`: a redis-cli-like shell on one simulated Redis node, for poking
// at the simulator and for tests that want to compare it with redis-cli by eye. Each
// stdin line is one command, quoted as redis-cli quotes it; meta-commands move
// simulated time (.sleep MS) or step the node's wall clock (.jump MS). The lines are
// lockstep::sim::Shell's, so tests can drive the same code without a process.
#include <iostream>
#include <memory>
#include <string>

#include "commands.h"
#include "lockstep/sim/shell.h"

namespace lockstep::cli {
namespace {

struct ShellArgs {
  bool resp = false;
  uint64_t seed = 1;
};

int shell(const ShellArgs& a) {
  sim::Shell shell(a.seed, a.resp);
  std::string line;
  while (std::getline(std::cin, line)) {
    std::cout << shell.line(line);
    std::cout.flush();
  }
  return 0;
}

}  // namespace

CommandRunner add_sim_shell_command(CLI::App& app) {
  auto a = std::make_shared<ShellArgs>();
  auto* cmd = app.add_subcommand("sim-shell", "A redis-cli-like shell on one simulated Redis node (stdin lines)");
  cmd->add_flag("--resp", a->resp, "Print raw RESP2 replies instead of redis-cli's rendering");
  cmd->add_option("--seed", a->seed, "Seed of the node's random stream (active expiry sampling)");
  return [a] { return shell(*a); };
}

}  // namespace lockstep::cli
