// The `lockstep` command's own front door, run as a user would: a bare call, a mistyped
// command, a scenario whose lock options are misspelt, and the progress line that long
// commands draw on a terminal and nowhere else.
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <gtest/gtest.h>

#include "lockstep/runner/progress.h"
#include "test_shell.h"

namespace {

using CliRun = lockstep::test_shell::Result;

CliRun lockstep_shell(const std::string& cmd_line) { return lockstep::test_shell::run(cmd_line + " 2>&1 </dev/null"); }

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
            "Commands: run, check, report, live, fuzz, sim-shell, profiles, matrix, help\n"
            "Run 'lockstep --help' for what each does.\n");
  CliRun far = lockstep("bogus");
  EXPECT_EQ(far.code, 64);
  EXPECT_EQ(far.out.substr(0, far.out.find('\n')), "lockstep: unknown command \"bogus\"");
  EXPECT_EQ(lockstep("--version").code, 0);
}

TEST(CliCommands, HelpCommandIsTheCommandsOwnHelp) {
  for (const char* command : {"run", "live", "check", "report", "fuzz", "matrix", "profiles", "sim-shell"}) {
    CliRun help = lockstep(std::string("help ") + command);
    CliRun own = lockstep(std::string(command) + " --help");
    EXPECT_EQ(help.code, 0) << command;
    EXPECT_EQ(help.out, own.out) << command;
  }
  CliRun list = lockstep("help");
  EXPECT_EQ(list.code, 0);
  EXPECT_EQ(list.out, lockstep("").out);
  CliRun typo = lockstep("help rnu");
  EXPECT_EQ(typo.code, 64);
  EXPECT_EQ(typo.out.substr(0, typo.out.find('\n')), "lockstep: unknown command \"rnu\" (did you mean \"run\"?)");
}

// A value that names something (an algorithm, a profile, a fault kind, a model, a
// format) and names nothing gets the nearest name and the list, as a mistyped command does.
TEST(CliCommands, MisspeltOptionValuesGetTheNearestNameAndTheList) {
  struct Case {
    const char* args;
    const char* first_line;
    const char* list;
  };
  const Case cases[] = {
      {"fuzz --algorithm redison --runs 1", "lockstep fuzz: unknown algorithm \"redison\" (did you mean \"redisson\"?)",
       "Algorithms: setnx, "},
      {"fuzz --profile redisson@3.43 --runs 1",
       "lockstep fuzz: unknown profile \"redisson@3.43\" (did you mean \"redisson@3.43.0\"?)", "Profiles: a library alone"},
      {"fuzz --faults pause,crsh --runs 1", "lockstep fuzz: unknown fault kind \"crsh\" (did you mean \"crash\"?)",
       "Fault kinds (or none): pause, crash, "},
      {"matrix --profiles redison --runs 1", "lockstep matrix: unknown profile \"redison\" (did you mean \"redisson\"?)",
       "Profiles: a library alone for all its versions (redsync, "},
      {"matrix --algorithms set-px-lau --runs 1",
       "lockstep matrix: unknown algorithm \"set-px-lau\" (did you mean \"set-px-lua\"?)", "Algorithms: "},
      {"matrix --faults nome --runs 1", "lockstep matrix: unknown fault kind \"nome\" (did you mean \"none\"?)",
       "Fault kinds: none, pause, "},
      {"check --model mutx x.jsonl", "lockstep check: unknown model \"mutx\" (did you mean \"mutex\"?)", "Models: "},
      {"check --format jsn x.jsonl", "lockstep check: unknown format \"jsn\" (did you mean \"json\"?)",
       "Formats: auto, json, edn, jepsen-log"},
      {"check --kv-missing nill x.jsonl",
       "lockstep check: unknown --kv-missing value \"nill\" (did you mean \"nil\"?)", "Values: empty, nil"},
  };
  for (const auto& c : cases) {
    CliRun r = lockstep(c.args);
    EXPECT_EQ(r.code, 64) << c.args;
    const auto lines = lockstep::test_shell::lines_of(r.out);
    ASSERT_GE(lines.size(), 2u) << c.args << "\n" << r.out;
    EXPECT_EQ(lines[0], c.first_line) << c.args;
    EXPECT_EQ(lines[1].rfind(c.list, 0), 0u) << c.args << "\n" << lines[1];
  }
}

// A library named alone stands for every version lockstep has of it.
TEST(CliCommands, ALibraryAloneMeansAllItsVersions) {
  const auto dir = std::filesystem::temp_directory_path() / ("lockstep-cli-lib-" + std::to_string(::getpid()));
  CliRun r = lockstep("matrix --profiles redisson,redsync@4.17.0 --faults none --runs 1 --markdown --out " +
                      (dir / "m").string());
  EXPECT_NE(r.code, 64) << r.out;
  for (const char* row : {"redisson@3.23.0", "redisson@3.43.0", "redisson@3.44.0", "redsync@4.17.0"})
    EXPECT_NE(r.out.find(std::string("| ") + row + " |"), std::string::npos) << row << "\n" << r.out;
  EXPECT_EQ(r.out.find("redsync@4.0.3"), std::string::npos) << r.out;
  CliRun fuzz = lockstep("fuzz --profile redsync --faults none --runs 2 --out " + (dir / "f").string());
  EXPECT_EQ(fuzz.code, 0) << fuzz.out;
  std::filesystem::remove_all(dir);
}

// Each lock's assumptions in words, with the numbers its defaults give them.
TEST(CliCommands, ProfilesAssumptionsSayWhatEachLockClaims) {
  CliRun r = lockstep("profiles --assumptions");
  EXPECT_EQ(r.code, 0) << r.out;
  for (const char* line : {"redsync@4.17.0\n", "a client's requests delayed below its per-attempt deadline",
                           "redisson@3.44.0 (kind lock)", "claims nothing under partition, failover",
                           "set-px-lua (lease 10000 ms, command timeout 1000 ms)"})
    EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;
}

// A pause past the lease breaks set-px-lua only beyond its assumptions.
TEST(CliCommands, FuzzBudgetKeepsFaultsWithinOrBeyondTheLocksAssumptions) {
  const auto dir = std::filesystem::temp_directory_path() / ("lockstep-cli-budget-" + std::to_string(::getpid()));
  CliRun within = lockstep("fuzz --algorithm set-px-lua --faults pause --budget within --runs 60 --out " +
                           (dir / "w").string());
  EXPECT_EQ(within.code, 0) << within.out;
  CliRun beyond = lockstep("fuzz --algorithm set-px-lua --faults pause --budget beyond --runs 60 --out " +
                           (dir / "b").string());
  EXPECT_EQ(beyond.code, 1) << beyond.out;
  CliRun bad = lockstep("fuzz --budget inside --runs 1 --out " + (dir / "x").string());
  EXPECT_EQ(bad.code, 64) << bad.out;
  EXPECT_NE(bad.out.find("--budget"), std::string::npos) << bad.out;
  std::filesystem::remove_all(dir);
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

// --- Progress: on a terminal only, and a line that fits it. ---

using lockstep::runner::format_progress;

// A run that tested nothing is never a success: `live` on a file made for the simulator
// alone says it skipped it, says that nothing ran, and exits 1.
TEST(CliCommands, NothingRanIsNotASuccess) {
  const auto dir = std::filesystem::temp_directory_path() / ("lockstep-cli-none-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string file = (dir / "sim-only.json").string();
  std::ofstream(file) << R"({"lock": {"algorithm": "set-px-lua"}, "expect": {"violations": []}})";
  CliRun live = lockstep("live --out " + (dir / "live").string() + " " + file);
  EXPECT_EQ(live.code, 1) << live.out;
  EXPECT_NE(live.out.find("skipped   sim-only"), std::string::npos) << live.out;
  EXPECT_NE(live.out.find("its worlds do not include \"live\""), std::string::npos) << live.out;
  EXPECT_NE(live.out.find("nothing ran: every scenario was skipped, so nothing was tested"), std::string::npos)
      << live.out;
  const std::string external = std::string(LOCKSTEP_SOURCE_DIR) + "/scenarios/external/redis-py-stock-demo.json";
  CliRun run = lockstep("run --out " + (dir / "run").string() + " " + external);
  EXPECT_EQ(run.code, 1) << run.out;
  EXPECT_NE(run.out.find("nothing ran"), std::string::npos) << run.out;
  std::filesystem::remove_all(dir);
}

// The catalogue's run fits a 120-column terminal: one line per scenario with its result,
// its verdict or most severe class and the first sentence of what it found.
TEST(CliCommands, TheCatalogueRunFitsTheTerminal) {
  const auto dir = std::filesystem::temp_directory_path() / ("lockstep-cli-cols-" + std::to_string(::getpid()));
  const std::string scenarios = std::string(LOCKSTEP_SOURCE_DIR) + "/scenarios";
  for (const char* columns : {"120", "80"}) {
    CliRun r = lockstep_shell(std::string("COLUMNS=") + columns + " '" + LOCKSTEP_BINARY + "' run --out " +
                              (dir / columns).string() + " " + scenarios);
    EXPECT_EQ(r.code, 0) << r.out;
    size_t lines = 0;
    for (const auto& line : lockstep::test_shell::lines_of(r.out)) {
      ++lines;
      EXPECT_LE(line.size(), static_cast<size_t>(std::stoi(columns))) << line;
    }
    EXPECT_GE(lines, 80u);
    EXPECT_NE(r.out.find("ok        05-set-px-del-slow-holder"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("seed="), std::string::npos) << "a batch prints no header per scenario";
  }
  CliRun full = lockstep_shell("COLUMNS=120 '" + std::string(LOCKSTEP_BINARY) + "' run --out " + (dir / "one").string() +
                               " " + scenarios + "/08-set-px-lua-pause-in-unlock.json");
  EXPECT_NE(full.out.find("lease-lost   lease lost while held: process 3's acquire"), std::string::npos) << full.out;
  EXPECT_NE(full.out.find("seed=1004 algorithm=set-px-lua"), std::string::npos) << "one file: its header first";
  EXPECT_NE(full.out.find("1 scenario: 1 as expected, 0 mismatched"), std::string::npos) << full.out;
  CliRun quiet = lockstep_shell("COLUMNS=120 '" + std::string(LOCKSTEP_BINARY) + "' run -q --out " +
                                (dir / "q").string() + " " + scenarios);
  EXPECT_EQ(quiet.code, 0);
  EXPECT_EQ(lockstep::test_shell::lines_of(quiet.out).size(), 3u) << quiet.out;
  std::filesystem::remove_all(dir);
}

// Help and listings wrap at words to the terminal's width rather than running past it.
TEST(CliCommands, HelpAndListingsFitTheTerminal) {
  for (const char* args : {"--help", "run --help", "live --help", "fuzz --help", "matrix --help", "check --help",
                           "report --help", "profiles", "profiles --options"}) {
    CliRun r = lockstep_shell("COLUMNS=120 '" + std::string(LOCKSTEP_BINARY) + "' " + args);
    EXPECT_EQ(r.code, 0) << args;
    for (const auto& line : lockstep::test_shell::lines_of(r.out)) EXPECT_LE(line.size(), 120u) << args << ": " << line;
  }
  CliRun fuzz = lockstep("fuzz --algorithm set-px-lua --faults none --time-limit 0.2 --out /dev/null");
  EXPECT_NE(fuzz.out.find(" time-limit=0.2s"), std::string::npos) << fuzz.out;
}

TEST(CliCommands, StopOnNamesClassesAndPropertiesOrSaysWhatItTakes) {
  CliRun r = lockstep("fuzz --algorithm set-px-lua --runs 1 --stop-on two-holder --out /dev/null");
  EXPECT_EQ(r.code, 64);
  EXPECT_NE(r.out.find("lockstep fuzz: --stop-on: unknown class or property \"two-holder\" (did you mean "
                       "\"two-holders\"?)"),
            std::string::npos)
      << r.out;
  CliRun m = lockstep("matrix --profiles redis-py@5.0.0 --faults none --runs 1 --stop-on bogus --out /dev/null");
  EXPECT_EQ(m.code, 64);
  EXPECT_NE(m.out.find("lockstep matrix: --stop-on: unknown class or property \"bogus\""), std::string::npos) << m.out;
}

TEST(CliProgress, LineShowsBarCountShareNameAndTimeLeft) {
  EXPECT_EQ(format_progress("run", 12, 48, "09-set-px-lua-gc-pause", 42.9, 200),
            "run  [#####               ] 12/48  25%  09-set-px-lua-gc-pause  0:42, ~2:08 left");
  EXPECT_EQ(format_progress("run", 0, 3, "a", 0, 200), "run  [                    ] 0/3  0%  a  0:00");
  EXPECT_EQ(format_progress("matrix", 3, 3, "", 3725, 200), "matrix  [####################] 3/3  100%  1:02:05");
  // A time-limited campaign has no total: it counts.
  EXPECT_EQ(format_progress("fuzz", 1234, 0, "", 61, 200), "fuzz  1234 runs  1:01");
}

TEST(CliProgress, LineNeverOutgrowsTheTerminal) {
  const std::string name(100, 'x');
  const std::string line = format_progress("run", 1, 2, name, 5, 60);
  EXPECT_EQ(line.size(), 60u) << line;
  EXPECT_EQ(line, "run  [##########          ] 1/2  50%  x...  0:05, ~0:05 left");
  // Too narrow for the name: it goes, the count stays.
  EXPECT_EQ(format_progress("run", 1, 2, name, 5, 45), "run  [##########          ] 1/2  50%  0:05, ~");
  EXPECT_EQ(format_progress("run", 1, 2, name, 5, 0), "");
}

struct SplitRun {
  int code = -1;
  std::string out, err;
};

// stdout and stderr apart, both pipes: what a CI job sees.
SplitRun lockstep_piped(const std::string& args, const std::filesystem::path& dir) {
  const auto err_file = dir / "stderr.txt";
  const CliRun run =
      lockstep::test_shell::run("'" + std::string(LOCKSTEP_BINARY) + "' " + args + " 2>'" + err_file.string() + "' </dev/null");
  SplitRun r{run.code, run.out, {}};
  std::ifstream in(err_file);
  r.err.assign(std::istreambuf_iterator<char>(in), {});
  return r;
}

TEST(CliProgress, QuietWhenStderrIsNotATerminal) {
  const auto dir = std::filesystem::temp_directory_path() / ("lockstep-progress-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string scenarios = std::string(LOCKSTEP_SOURCE_DIR) + "/scenarios/";
  SplitRun run = lockstep_piped("run --out " + (dir / "run").string() + " " + scenarios + "01-setnx-crash-deadlock.json " +
                                    scenarios + "02-set-px-lua-crash-recovers.json",
                                dir);
  EXPECT_EQ(run.code, 0) << run.out << run.err;
  EXPECT_EQ(run.err, "");
  EXPECT_EQ(run.out.find('\r'), std::string::npos);
  SplitRun fuzz = lockstep_piped("fuzz --algorithm set-px-lua --faults none --runs 30 --out " + (dir / "fuzz").string(), dir);
  EXPECT_EQ(fuzz.code, 0) << fuzz.out << fuzz.err;
  EXPECT_EQ(fuzz.err, "");
  SplitRun matrix = lockstep_piped("matrix --profiles redsync@4.17.0 --faults none --runs 3 --out " + (dir / "m").string(), dir);
  EXPECT_EQ(matrix.err, "");
  EXPECT_EQ(matrix.out.find('\r'), std::string::npos);
  std::filesystem::remove_all(dir);
}

// Under a pseudo-terminal (script(1), from bsdutils) the same run draws its line.
TEST(CliProgress, DrawnOnATerminal) {
  if (std::system("command -v script >/dev/null 2>&1") != 0) GTEST_SKIP() << "script(1) is not installed";
  const auto dir = std::filesystem::temp_directory_path() / ("lockstep-tty-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string scenarios = std::string(LOCKSTEP_SOURCE_DIR) + "/scenarios/";
  const std::string inner = std::string(LOCKSTEP_BINARY) + " run --out " + (dir / "run").string() + " " + scenarios +
                            "01-setnx-crash-deadlock.json " + scenarios + "02-set-px-lua-crash-recovers.json";
  CliRun r = lockstep_shell("script -qec \"" + inner + "\" /dev/null");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("\r\033[Krun  [          "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("0/2  0%  01-setnx-crash-deadlock"), std::string::npos) << r.out;
  // Its estimate of the time left may shorten the name on a narrow terminal.
  EXPECT_NE(r.out.find("1/2  50%  02-set-px-lua"), std::string::npos) << r.out;
  std::filesystem::remove_all(dir);
}

}  // namespace
