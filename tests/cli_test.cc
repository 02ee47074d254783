// The `lockstep` command's own front door, run as a user would: a bare call, a mistyped
// command, and a scenario whose lock options are misspelt.
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

namespace {

struct CliRun {
  int code = -1;
  std::string out;  // stdout and stderr, merged
};

CliRun lockstep_shell(const std::string& cmd_line) {
  CliRun r;
  const std::string cmd = cmd_line + " 2>&1 </dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

CliRun lockstep(const std::string& args) { return lockstep_shell("'" + std::string(LOCKSTEP_BINARY) + "' " + args); }

TEST(CliCommands, BareCallPrintsTheHelp) {
  CliRun r = lockstep("");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("lockstep: deterministic simulation"), std::string::npos) << r.out;
  for (const char* command : {"run", "live", "fuzz", "matrix", "check", "report", "profiles", "sim-shell"})
    EXPECT_NE(r.out.find(command), std::string::npos) << command << " missing from\n" << r.out;
}

TEST(CliCommands, UnknownCommandIsNamedWithTheNearestAndTheList) {
  CliRun r = lockstep("rnu scenarios");
  EXPECT_EQ(r.code, 64);
  EXPECT_EQ(r.out,
            "lockstep: unknown command \"rnu\" (did you mean \"run\"?)\n"
            "Commands: run, check, report, live, fuzz, sim-shell, profiles, matrix\n"
            "Run 'lockstep --help' for what each does.\n");
  CliRun far = lockstep("bogus");
  EXPECT_EQ(far.code, 64);
  EXPECT_EQ(far.out.substr(0, far.out.find('\n')), "lockstep: unknown command \"bogus\"");
  EXPECT_EQ(lockstep("--version").code, 0);
}

TEST(CliCommands, MisspeltLockOptionStopsTheRunWithItsPath) {
  const auto dir = std::filesystem::temp_directory_path() / ("lockstep-cli-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto file = dir / "typo.json";
  std::ofstream(file) << R"({"lock": {"algorithm": "redisson", "lease_ms": 1000, "options": {"watchdgo": 1}},
                             "expect": {"violations": []}})";
  CliRun r = lockstep("run --out " + (dir / "out").string() + " " + file.string());
  EXPECT_EQ(r.code, 65);
  EXPECT_NE(r.out.find(file.string() + ": $.lock.options.watchdgo: expected an option of redisson (did you mean "
                                        "\"watchdog\"?), found unknown key \"watchdgo\""),
            std::string::npos)
      << r.out;
  std::filesystem::remove_all(dir);
}

}  // namespace
