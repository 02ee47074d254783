#include "lockstep/cli.h"

#include <cstdio>
#include <filesystem>
#include <map>
#include <string>

#include "commands.h"
#include "lockstep/runner/memory.h"
#include "lockstep/runner/run.h"

namespace lockstep {

const char* version() { return LOCKSTEP_VERSION; }

int cli_main(int argc, char** argv) {
  using namespace lockstep::cli;
  lockstep::runner::keep_freed_memory_for_reuse();
  if (argc > 0 && argv[0] && *argv[0]) {
    runner::set_replay_program(std::filesystem::path(argv[0]).filename().string());
  }
  CLI::App app{"lockstep: deterministic simulation and correctness testing for Redis locks"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("lockstep ") + version());

  std::map<const CLI::App*, CommandRunner> runners;
  auto add = [&](CommandRunner r) { runners[app.get_subcommands({}).back()] = std::move(r); };
  add(add_run_command(app));
  add(add_check_command(app));
  add(add_report_command(app));
  add(add_live_command(app));
  add(add_fuzz_command(app));
  add(add_sim_shell_command(app));
  add(add_profiles_command(app));
  add(add_matrix_command(app));

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitUsage;
  }
  for (const auto& [sub, run] : runners) {
    if (sub->parsed()) return run();
  }
  return kExitUsage;
}

}  // namespace lockstep
