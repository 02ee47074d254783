#include "lockstep/cli.h"

#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "commands.h"
#include "lockstep/runner/memory.h"
#include "lockstep/runner/run.h"
#include "lockstep/text.h"

namespace lockstep {
namespace {

// CLI11 would take an unknown first word for a stray argument and answer "A subcommand
// is required"; a user who mistyped a command needs to hear that, and what there is.
int unknown_command(const CLI::App& app, const std::string& program, const std::string& word) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands({})) names.push_back(sub->get_name());
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  const std::string best = nearest_name(word, names);
  std::fprintf(stderr, "%s: unknown command \"%s\"%s\nCommands: %s\nRun '%s --help' for what each does.\n",
               program.c_str(), word.c_str(), best.empty() ? "" : (" (did you mean \"" + best + "\"?)").c_str(),
               list.c_str(), program.c_str());
  return cli::kExitUsage;
}

}  // namespace

const char* version() { return LOCKSTEP_VERSION; }

int cli_main(int argc, char** argv) {
  using namespace lockstep::cli;
  lockstep::runner::keep_freed_memory_for_reuse();
  std::string program = "lockstep";
  if (argc > 0 && argv[0] && *argv[0]) program = std::filesystem::path(argv[0]).filename().string();
  runner::set_replay_program(program);
  CLI::App app{"lockstep: deterministic simulation and correctness testing for Redis locks"};
  app.require_subcommand(1);
  app.formatter(wrapping_formatter());
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

  auto* help = app.add_subcommand("help", "Print a command's help (help CMD is CMD --help), or this list");
  help->allow_extras();
  const auto is_command = [&](const char* word) {
    return !app.get_subcommands([&](CLI::App* sub) { return sub->check_name(word); }).empty();
  };
  // `help` alone is the list; `help CMD` is exactly `CMD --help`, so it is parsed as that.
  std::vector<char*> args(argv, argv + argc);
  std::string help_flag = "--help";
  if (argc >= 2 && std::string(argv[1]) == "help" && (argc == 2 || argv[2][0] != '-')) {
    if (argc == 2) args.resize(1);
    else if (!is_command(argv[2])) return unknown_command(app, program, argv[2]);
    else args = {argv[0], argv[2], help_flag.data()};
  }
  argc = static_cast<int>(args.size());
  argv = args.data();
  if (argc <= 1) {
    app.name(program);  // CLI11 learns the program's name only while parsing
    std::printf("%s", app.help().c_str());
    return 0;
  }
  if (argv[1][0] != '-' && !is_command(argv[1])) return unknown_command(app, program, argv[1]);

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
