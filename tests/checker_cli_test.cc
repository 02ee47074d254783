// `lockstep check` end to end: runs the built binary on fixture files and asserts its
// output lines and exit codes, and the most memory it held.
#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "test_shell.h"

extern char** environ;

namespace {

const std::string kData = std::string(LOCKSTEP_SOURCE_DIR) + "/tests/data/histories/";

struct CheckerRun {
  int code = -1;
  std::vector<std::string> lines;  // stdout and stderr, merged
};

CheckerRun checker_cli(const std::string& args) {
  auto r = lockstep::test_shell::run("cd '" + kData + "' && '" + std::string(LOCKSTEP_BINARY) + "' " + args + " 2>&1");
  return {r.code, lockstep::test_shell::lines_of(r.out)};
}

// The verdict line without its timing, which varies.
std::string verdict(const std::string& line) { return line.substr(0, line.find("  ms=")); }

TEST(CheckerCli, ValidFilesExitZero) {
  CheckerRun r = checker_cli("check mutex-valid.jsonl mutex-valid.jsonl");
  EXPECT_EQ(r.code, 0);
  ASSERT_EQ(r.lines.size(), 2u);
  EXPECT_EQ(verdict(r.lines[0]), "mutex-valid.jsonl: valid  ops=4");
}

TEST(CheckerCli, InvalidFileIsExplainedAndExitsOne) {
  CheckerRun r = checker_cli("check mutex-valid.jsonl mutex-two-owners.jsonl");
  EXPECT_EQ(r.code, 1);
  ASSERT_GE(r.lines.size(), 9u);
  EXPECT_EQ(verdict(r.lines[0]), "mutex-valid.jsonl: valid  ops=4");
  EXPECT_EQ(verdict(r.lines[1]), "mutex-two-owners.jsonl: invalid  ops=3");
  EXPECT_EQ(r.lines[2],
            "  process 3's acquire completed at t=1.204s while process 1 still held the lock since t=0.950s "
            "(not released until t=1.300s)");
  EXPECT_EQ(r.lines[3], "  smallest invalid prefix: events 1-4 of 6");
  EXPECT_EQ(r.lines[4], "  involved:");
  EXPECT_EQ(r.lines[5], "    event 1: process 1 invoke acquire  (t=0.900s)");
  EXPECT_EQ(r.lines[9], "  partial linearization that got furthest (1 ops): p1 acquire");
  EXPECT_EQ(r.lines[10], "  state after it: held by process 1");
}

TEST(CheckerCli, JsonOutputHasOneObjectPerFile) {
  CheckerRun r = checker_cli("check --json --model cas-register cas-register-valid.edn cas-register-invalid.log");
  EXPECT_EQ(r.code, 1);
  ASSERT_EQ(r.lines.size(), 2u);
  auto a = nlohmann::json::parse(r.lines[0]);
  auto b = nlohmann::json::parse(r.lines[1]);
  EXPECT_EQ(a["file"], "cas-register-valid.edn");
  EXPECT_EQ(a["verdict"], "valid");
  EXPECT_EQ(a["ops"], 5);
  EXPECT_TRUE(a["ms"].is_number_integer());
  EXPECT_EQ(b["verdict"], "invalid");
  EXPECT_EQ(b["failed_event"], 6);
  EXPECT_EQ(b["prefix_events"], 6);
  EXPECT_EQ(b["involved"].size(), 4u);
  EXPECT_EQ(b["partial_linearization"].size(), 2u);
  EXPECT_EQ(b["final_state"], "value 2");
  EXPECT_EQ(b["explanation"].get<std::string>().rfind("process 2 read 1", 0), 0u);
}

TEST(CheckerCli, UnknownModelOrFormatIsAUsageError) {
  EXPECT_EQ(checker_cli("check --model paxos mutex-valid.jsonl").code, 64);
  EXPECT_EQ(checker_cli("check --format xml mutex-valid.jsonl").code, 64);
  EXPECT_EQ(checker_cli("check").code, 64);
  CheckerRun r = checker_cli("check --model paxos mutex-valid.jsonl");
  ASSERT_FALSE(r.lines.empty());
  EXPECT_EQ(r.lines[0], "lockstep check: unknown model \"paxos\"");
  ASSERT_GE(r.lines.size(), 2u);
  EXPECT_EQ(r.lines[1], "Models: cas-register, counter, kv, mutex, register, reentrant-mutex, rw-lock");
}

TEST(CheckerCli, MalformedInputExits65WithFileAndLine) {
  CheckerRun r = checker_cli("check --model cas-register malformed.edn cas-register-valid.edn");
  EXPECT_EQ(r.code, 65);
  ASSERT_EQ(r.lines.size(), 2u);
  EXPECT_EQ(r.lines[0],
            "lockstep check: malformed.edn:3:47: unexpected '}', expected ']' to close the vector opened at 3:43");
  EXPECT_EQ(verdict(r.lines[1]), "cas-register-valid.edn: valid  ops=5");
  EXPECT_EQ(checker_cli("check malformed.jsonl").code, 65);
  CheckerRun u = checker_cli("check mutex-unpaired.jsonl");
  EXPECT_EQ(u.code, 65);
  ASSERT_FALSE(u.lines.empty());
  EXPECT_EQ(u.lines[0], "lockstep check: mutex-unpaired.jsonl: event 1: process 1 completed (ok) with no pending invocation");
}

TEST(CheckerCli, TimeLimitGivesUnknownAndExitTwo) {
  auto path = std::filesystem::temp_directory_path() / "lockstep-checker-cli-unknown.edn";
  {
    std::ofstream out(path);
    for (int p = 0; p < 40; ++p) out << "{:process " << p << ", :type :invoke, :f :write, :value " << p + 1 << "}\n";
    for (int p = 0; p < 40; ++p) out << "{:process " << p << ", :type :info, :f :write, :value " << p + 1 << "}\n";
    for (int v : {1, 2, 999}) {
      out << "{:process 40, :type :invoke, :f :read, :value nil}\n";
      out << "{:process 40, :type :ok, :f :read, :value " << v << "}\n";
    }
  }
  CheckerRun r = checker_cli("check --model cas-register --time-limit 0.2 '" + path.string() + "' cas-register-valid.edn");
  std::filesystem::remove(path);
  EXPECT_EQ(r.code, 2);
  ASSERT_EQ(r.lines.size(), 2u);
  EXPECT_NE(r.lines[0].find(": unknown  ops=43  ms="), std::string::npos) << r.lines[0];
  EXPECT_NE(r.lines[0].find("(time limit; explored "), std::string::npos) << r.lines[0];
}

// Jepsen logs with spaces between fields and Knossos-style list histories are read as
// Jepsen writes them.
TEST(CheckerCli, JepsenShapesAreRead) {
  CheckerRun r = checker_cli("check --model cas-register cas-register-spaces.log knossos-list.edn");
  EXPECT_EQ(r.code, 1);
  ASSERT_GE(r.lines.size(), 2u);
  EXPECT_EQ(verdict(r.lines[0]), "cas-register-spaces.log: invalid  ops=5");
  CheckerRun kv = checker_cli("check --model kv kv-append.edn kv-multiline.edn list-append.edn");
  EXPECT_EQ(kv.code, 0);
  ASSERT_EQ(kv.lines.size(), 3u);
  EXPECT_EQ(verdict(kv.lines[0]), "kv-append.edn: valid  ops=7");
}

TEST(CheckerCli, KvMissingChoiceIsAnOptionAndIsExplained) {
  CheckerRun r = checker_cli("check --model kv --kv-missing nil kv-append.edn");
  EXPECT_EQ(r.code, 1);
  ASSERT_GE(r.lines.size(), 2u);
  EXPECT_EQ(r.lines[1],
            "  process 1's get of key \"1\" returned \"\" (completed at event 3) but the key held nil (never "
            "written); a key never written reads as nil (--kv-missing nil)");
  EXPECT_EQ(checker_cli("check --model kv --kv-missing none kv-append.edn").code, 64);
}

std::string slurp_file(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

size_t occurrences(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos; at = haystack.find(needle, at + 1)) ++n;
  return n;
}

// A Porcupine etcd history (Jepsen's log lines, tab-separated, as Porcupine's
// test_data/jepsen/etcd_*.log): the page shows the partial linearization the search got
// to, step by step, and the read that no order could place.
TEST(CheckerCli, HtmlPageShowsThePartialLinearizationOfAPorcupineEtcdHistory) {
  const auto dir = std::filesystem::temp_directory_path() / ("lockstep-check-html-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  const auto page = dir / "etcd.html";
  CheckerRun r = checker_cli("check --model cas-register --html '" + page.string() + "' etcd-cas-register-invalid.log");
  EXPECT_EQ(r.code, 1);
  ASSERT_FALSE(r.lines.empty());
  EXPECT_EQ(r.lines.back(), "  page: " + page.string());
  const std::string html = slurp_file(page);
  ASSERT_FALSE(html.empty());
  EXPECT_NE(html.find("<span class=\"badge b-invalid\">invalid</span>"), std::string::npos);
  EXPECT_NE(html.find("process 3 read 4 (completed at event 23) but the register held 3"), std::string::npos);
  // Ten operations placed, in order, each with the state after it, then the one that was not.
  EXPECT_EQ(occurrences(html, "<li data-a="), 10u);
  EXPECT_NE(html.find(">p0 read<span class=\"state\">→ value nil</span>"), std::string::npos);
  EXPECT_NE(html.find(">p1 cas [1,4]<span class=\"state\">→ value 4</span>"), std::string::npos);
  EXPECT_NE(html.find(">p2 write 3 (outcome unknown)<span class=\"state\">→ value 3</span>"), std::string::npos);
  EXPECT_NE(html.find("✗ could not be placed: p3 read → 4</li>"), std::string::npos);
  // The same on the timeline: numbered boxes, and the failing read in red.
  EXPECT_EQ(occurrences(html, "class=\"opbox op-ok lin\""), 9u);
  EXPECT_EQ(occurrences(html, "class=\"opbox op-info lin\""), 1u);
  EXPECT_EQ(occurrences(html, "class=\"opbox op-ok stuck\""), 1u);
  EXPECT_NE(html.find("data-full=\"#1 read\""), std::string::npos);
  EXPECT_NE(html.find("data-property=\"linearizability\""), std::string::npos);
  EXPECT_NE(html.find("data-unit=\"events\""), std::string::npos) << "a log without times is drawn by event";
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find(" src="), std::string::npos);
  std::filesystem::remove_all(dir);
}

// Every format the checker reads gets its page; with several files --html is a folder.
TEST(CheckerCli, HtmlPagesForEveryFormat) {
  const auto dir = std::filesystem::temp_directory_path() / ("lockstep-check-pages-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  CheckerRun mutex = checker_cli("check --html '" + dir.string() + "' mutex-two-owners.jsonl mutex-valid.jsonl");
  EXPECT_EQ(mutex.code, 1);
  const std::string invalid = slurp_file(dir / "mutex-two-owners.jsonl.html");
  EXPECT_NE(invalid.find("✗ could not be placed: p3 acquire"), std::string::npos);
  EXPECT_NE(invalid.find("data-t=\"1100000000 1204000000\""), std::string::npos) << "drawn at the history's own times";
  EXPECT_NE(slurp_file(dir / "mutex-valid.jsonl.html").find("<span class=\"badge b-valid\">valid</span>"),
            std::string::npos);
  CheckerRun jepsen = checker_cli("check --model cas-register --html '" + dir.string() +
                                  "' cas-register-invalid.edn knossos-list.edn cas-register-invalid.log");
  EXPECT_EQ(jepsen.code, 1);
  for (const char* f : {"cas-register-invalid.edn", "knossos-list.edn", "cas-register-invalid.log"}) {
    const std::string html = slurp_file(dir / (std::string(f) + ".html"));
    EXPECT_NE(html.find("could not be placed"), std::string::npos) << f;
  }
  // A history of several keys is drawn for the key that failed.
  CheckerRun kv = checker_cli("check --model kv --html '" + dir.string() + "' kv-two-bad-keys.edn");
  EXPECT_NE(slurp_file(dir / "kv-two-bad-keys.edn.html").find("Only key &quot;c&quot; is drawn"), std::string::npos);
  // A page that cannot be written is bad output: exit 65, saying where.
  CheckerRun bad = checker_cli("check --html /proc/no-such-dir/x.html mutex-valid.jsonl");
  EXPECT_EQ(bad.code, 65);
  std::filesystem::remove_all(dir);
}

// The same report, word for word, whatever the number of threads.
TEST(CheckerCli, OutputIsTheSameForAnyThreadCount) {
  CheckerRun one = checker_cli("check --model kv --threads 1 kv-two-bad-keys.edn");
  EXPECT_EQ(one.code, 1);
  ASSERT_GE(one.lines.size(), 3u);
  EXPECT_EQ(one.lines[2], "  key: \"c\"");
  for (const char* threads : {"2", "4", "0"}) {
    CheckerRun r = checker_cli(std::string("check --model kv --threads ") + threads + " kv-two-bad-keys.edn");
    ASSERT_EQ(r.lines.size(), one.lines.size()) << threads;
    EXPECT_EQ(verdict(r.lines[0]), verdict(one.lines[0])) << threads;
    for (size_t i = 1; i < r.lines.size(); ++i) EXPECT_EQ(r.lines[i], one.lines[i]) << threads;
  }
}

// A history lockstep wrote (a lock, a resource and ground truth on several keys) is read
// with no flags: the lock key against its lock model, the resource as a register.
TEST(CheckerCli, ReadsLockstepsOwnRunHistoriesWithoutFlags) {
  const auto dir = std::filesystem::temp_directory_path() / ("lockstep-check-own-" + std::to_string(::getpid()));
  const std::string bin = "'" + std::string(LOCKSTEP_BINARY) + "'";
  const std::string scenarios = std::string(LOCKSTEP_SOURCE_DIR) + "/scenarios/";
  auto run = lockstep::test_shell::run(bin + " run --out '" + dir.string() + "' '" + scenarios +
                                       "05-set-px-del-slow-holder.json' '" + scenarios +
                                       "37-redisson-rw-readers-and-writers.json' '" + scenarios +
                                       "60-cache-aside-double-write-stale.json' >/dev/null 2>&1");
  ASSERT_EQ(run.code, 0);
  CheckerRun race = checker_cli("check '" + (dir / "05-set-px-del-slow-holder/history.jsonl").string() + "'");
  EXPECT_EQ(race.code, 1);
  ASSERT_GE(race.lines.size(), 2u);
  const std::string h05 = (dir / "05-set-px-del-slow-holder/history.jsonl").string();
  EXPECT_EQ(verdict(race.lines[0]), h05 + " [lock \"lock\" as mutex]: invalid  ops=4");
  EXPECT_EQ(race.lines[1],
            "  process 2's acquire completed at t=1.019s while process 1 still held the lock since t=0.002s (not "
            "released until t=1.304s)");
  EXPECT_EQ(verdict(race.lines.back()), h05 + " [resource \"stock\" as register]: valid  ops=5");
  CheckerRun rw = checker_cli("check '" + (dir / "37-redisson-rw-readers-and-writers/history.jsonl").string() + "'");
  EXPECT_EQ(rw.code, 0);
  ASSERT_EQ(rw.lines.size(), 2u);
  EXPECT_NE(rw.lines[0].find("[lock \"lock\" as rw-lock]: valid"), std::string::npos) << rw.lines[0];
  CheckerRun cache = checker_cli("check --json '" + (dir / "60-cache-aside-double-write-stale/history.jsonl").string() + "'");
  EXPECT_EQ(cache.code, 0);
  ASSERT_EQ(cache.lines.size(), 1u);
  const auto j = nlohmann::json::parse(cache.lines[0]);
  EXPECT_EQ(j["part"], (nlohmann::json{{"what", "resource"}, {"key", "item:0"}, {"model", "register"}}));
  EXPECT_EQ(j["verdict"], "valid");
  // Asked for a model, the checker takes the file as one object, as for any history.
  CheckerRun asked = checker_cli("check --model mutex '" + h05 + "'");
  EXPECT_EQ(asked.code, 65);
  std::filesystem::remove_all(dir);
}

// How `lockstep ARGS...` ended, run as a child of its own, and the most memory it held
// resident: the kernel's own account (getrusage's ru_maxrss of that child alone).
struct Peak {
  int code = -1;
  size_t max_rss_bytes = 0;
  std::string out;
};

Peak peak_of(const std::vector<std::string>& args) {
  const auto out = std::filesystem::temp_directory_path() / ("lockstep-checker-cli-peak-" + std::to_string(getpid()));
  std::vector<std::string> all = {LOCKSTEP_BINARY};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t io;
  posix_spawn_file_actions_init(&io);
  posix_spawn_file_actions_addopen(&io, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&io, 1, 2);
  Peak p;
  pid_t pid = -1;
  if (posix_spawn(&pid, argv[0], &io, nullptr, argv.data(), environ) == 0) {
    int status = 0;
    rusage ru{};
    if (wait4(pid, &status, 0, &ru) == pid && WIFEXITED(status)) p.code = WEXITSTATUS(status);
    p.max_rss_bytes = static_cast<size_t>(ru.ru_maxrss) * 1024;
  }
  posix_spawn_file_actions_destroy(&io);
  std::ifstream in(out);
  p.out.assign(std::istreambuf_iterator<char>(in), {});
  std::filesystem::remove(out);
  return p;
}

// --memory-limit bounds the process, not only what the search counts of itself. The
// history: two keys, each 70 writes that crashed (so each explored set of them takes two
// words) and reads no order of them explains, searched on two threads, so that each
// thread keeps blocks of its own, until the limit ends it `unknown`. The process's peak
// stays within the limit plus its size before it read anything, measured as the peak of
// a check of a six-line history, with 4 MiB of margin for what two runs of one binary
// differ by (the stacks of the second thread, a few pages of allocator bookkeeping).
TEST(CheckerCli, MemoryLimitBoundsTheProcessResidentSize) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer holds freed memory in quarantine and shadow memory beside every byte";
#endif
  constexpr size_t kLimitMiB = 32, kMarginMiB = 4;
  const auto path = std::filesystem::temp_directory_path() / ("lockstep-checker-cli-hard-" + std::to_string(getpid()));
  {
    std::ofstream out(path);
    int64_t t = 0;
    auto line = [&](int p, const char* type, const char* f, const std::string& value, const std::string& key) {
      out << R"({"type":")" << type << R"(","process":)" << p << R"(,"f":")" << f << R"(","key":")" << key
          << R"(","value":)" << value << R"(,"time_ns":)" << (t += 10'000'000) << "}\n";
    };
    for (int k = 0; k < 2; ++k) {
      const std::string key = "h" + std::to_string(k);
      for (int p = 0; p < 70; ++p) line(1000 * k + p, "invoke", "write", std::to_string(p + 1), key);
      for (int p = 0; p < 70; ++p) line(1000 * k + p, "info", "write", "null", key);
      for (const char* v : {"1", "2", "999"}) {
        line(1000 * k + 70, "invoke", "read", "null", key);
        line(1000 * k + 70, "ok", "read", v, key);
      }
    }
  }
  const Peak start = peak_of({"check", "--model", "mutex", kData + "mutex-valid.jsonl"});
  ASSERT_EQ(start.code, 0) << start.out;
  const Peak hard = peak_of({"check", "--model", "cas-register", "--threads", "2", "--time-limit", "600",
                             "--memory-limit", std::to_string(kLimitMiB), path.string()});
  std::filesystem::remove(path);
  EXPECT_EQ(hard.code, 2) << hard.out;
  EXPECT_NE(hard.out.find("(memory limit; "), std::string::npos) << hard.out;
  EXPECT_LE(hard.max_rss_bytes, start.max_rss_bytes + ((kLimitMiB + kMarginMiB) << 20))
      << "start-up " << (start.max_rss_bytes >> 20) << " MiB, limit " << kLimitMiB << " MiB\n" << hard.out;
}

}  // namespace
