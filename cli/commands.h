// The `lockstep` command is a set of subcommands (run, check, ...). Each lives in its own
// file and registers itself on the CLI11 app; the function it returns runs the command
// when the user chose it and gives the process exit code.
//
// Exit codes follow sysexits: 0 success, 1 a verdict differs from what was expected (or
// a violation was found), 2 unknown verdicts, 64 usage error, 65 bad input data.
#pragma once

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

namespace lockstep::cli {

inline constexpr int kExitMismatch = 1;
inline constexpr int kExitUnknown = 2;
inline constexpr int kExitUsage = 64;
inline constexpr int kExitDataErr = 65;

using CommandRunner = std::function<int()>;

// The width the command's output is cut or wrapped to: $COLUMNS, else the terminal's,
// else 120 (a CI log).
size_t terminal_columns();
// `text` wrapped at words to `width` columns, the lines after the first indented by `indent`.
std::string wrapped(std::string_view text, size_t width, size_t indent);
// A number of seconds as a person writes it: "20", "0.5" (not "20.000000").
inline std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}
// CLI11's help with every description wrapped to terminal_columns().
std::shared_ptr<CLI::Formatter> wrapping_formatter();

// Writes `data` to `p`, replacing it; false when it could not.
inline bool write_file(const std::filesystem::path& p, const std::string& data) {
  std::ofstream f(p, std::ios::binary);
  f << data;
  return static_cast<bool>(f);
}

CommandRunner add_run_command(CLI::App& app);
CommandRunner add_check_command(CLI::App& app);
CommandRunner add_report_command(CLI::App& app);
CommandRunner add_live_command(CLI::App& app);
CommandRunner add_fuzz_command(CLI::App& app);
CommandRunner add_sim_shell_command(CLI::App& app);
CommandRunner add_profiles_command(CLI::App& app);
CommandRunner add_matrix_command(CLI::App& app);

}  // namespace lockstep::cli
