// `--jobs N`: campaigns on several threads give what one thread gives. The hand-out of
// runs by index and their taking back in order (run_in_order), the fuzz campaign's summary
// and finding, and the three commands' stdout, exit codes and every file they write,
// compared byte for byte with --jobs 1 (wall-clock seconds aside).
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <mutex>
#include <regex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "lockstep/runner/fuzz.h"
#include "lockstep/runner/jobs.h"
#include "lockstep/runner/matrix.h"
#include "lockstep/runner/scenario.h"
#include "test_shell.h"

namespace {

namespace fs = std::filesystem;
using lockstep::runner::InOrderPlan;
using lockstep::runner::run_in_order;

// Which indices were taken, in the order they were taken.
std::vector<uint64_t> taken_order(unsigned jobs, uint64_t count, uint64_t stop_at, bool caller_runs) {
  std::vector<uint64_t> taken;
  run_in_order<uint64_t>(
      InOrderPlan{jobs, count, {}, 2, caller_runs}, [] { return [](uint64_t i) { return i * i; }; },
      [&](uint64_t i, uint64_t&& square) {
        EXPECT_EQ(square, i * i);
        taken.push_back(i);
        return i != stop_at;
      });
  return taken;
}

TEST(Jobs, ResultsAreTakenInIndexOrderUpToTheStop) {
  std::vector<uint64_t> all(50);
  for (uint64_t i = 0; i < all.size(); ++i) all[i] = i;
  const std::vector<uint64_t> first_18(all.begin(), all.begin() + 18);
  for (bool caller_runs : {true, false}) {
    for (unsigned jobs : {1u, 2u, 3u, 8u}) {
      EXPECT_EQ(taken_order(jobs, 50, 1000, caller_runs), all) << jobs << " jobs";
      // Runs past the stop may have run; none is taken.
      EXPECT_EQ(taken_order(jobs, 50, 17, caller_runs), first_18) << jobs << " jobs";
      EXPECT_EQ(taken_order(jobs, 0, 1000, caller_runs), std::vector<uint64_t>{}) << jobs << " jobs";
    }
  }
}

// A worker's state is its thread's own: make_worker runs on the thread that then runs
// every index it is handed, and the taking happens on the calling thread.
TEST(Jobs, EachWorkerStaysOnItsThreadAndTakingOnTheCaller) {
  for (const auto& [jobs, caller_runs] : {std::pair{1u, true}, std::pair{3u, true}, std::pair{3u, false}}) {
    std::mutex m;
    std::set<std::thread::id> made;
    std::atomic<bool> foreign{false};
    const auto caller = std::this_thread::get_id();
    std::vector<std::thread::id> ran_on;
    run_in_order<std::thread::id>(
        InOrderPlan{jobs, 40, {}, 2, caller_runs},
        [&] {
          const auto self = std::this_thread::get_id();
          {
            std::lock_guard lock(m);
            made.insert(self);
          }
          return [&foreign, self](uint64_t) {
            if (std::this_thread::get_id() != self) foreign = true;
            return self;
          };
        },
        [&](uint64_t, std::thread::id&& on) {
          EXPECT_EQ(std::this_thread::get_id(), caller);
          ran_on.push_back(on);
          return true;
        });
    EXPECT_FALSE(foreign);
    EXPECT_LE(made.size(), jobs);
    for (const auto& t : ran_on) EXPECT_EQ(made.count(t), 1u);
    if (jobs == 1) {
      EXPECT_EQ(made, std::set<std::thread::id>{caller});
    }
    if (!caller_runs) {
      EXPECT_EQ(made.count(caller), 0u) << "the calling thread only takes";
    }
  }
}

// A time limit says no before an index: the indices already handed out are taken, and
// what is taken is a prefix.
TEST(Jobs, MayStartEndsTheCampaignOnAPrefix) {
  for (unsigned jobs : {1u, 2u, 4u}) {
    std::atomic<int> asked{0};
    InOrderPlan plan{jobs, std::numeric_limits<uint64_t>::max(), [&asked] { return ++asked <= 25; }};
    std::vector<uint64_t> taken;
    run_in_order<uint64_t>(plan, [] { return [](uint64_t i) { return i; }; },
                           [&](uint64_t i, uint64_t&&) {
                             taken.push_back(i);
                             return true;
                           });
    ASSERT_EQ(taken.size(), 25u) << jobs << " jobs";
    for (uint64_t i = 0; i < taken.size(); ++i) EXPECT_EQ(taken[i], i);
  }
}

TEST(Jobs, AnExceptionInARunReachesTheCaller) {
  for (unsigned jobs : {1u, 3u}) {
    std::vector<uint64_t> taken;
    EXPECT_THROW(run_in_order<uint64_t>(
                     InOrderPlan{jobs, 30, {}},
                     [] {
                       return [](uint64_t i) -> uint64_t {
                         if (i == 7) throw std::runtime_error("run 7");
                         return i;
                       };
                     },
                     [&](uint64_t i, uint64_t&&) {
                       taken.push_back(i);
                       return true;
                     }),
                 std::runtime_error);
    EXPECT_EQ(taken.size(), 7u) << jobs << " jobs";
  }
}

TEST(Jobs, ParseJobsTakesAWholeNumberFromOne) {
  unsigned n = 0;
  EXPECT_EQ(lockstep::runner::parse_jobs("3", n), "");
  EXPECT_EQ(n, 3u);
  for (const char* bad : {"", "abc", "2x", "-1", "1.5", " 2"}) {
    const std::string why = lockstep::runner::parse_jobs(bad, n);
    EXPECT_EQ(why, std::string("--jobs: expected how many runs at once, a whole number from 1 up, found \"") + bad + "\"");
  }
  EXPECT_NE(lockstep::runner::parse_jobs("0", n).find("--jobs: 0 runs at once would run nothing"), std::string::npos);
  EXPECT_NE(lockstep::runner::parse_jobs("100000", n).find("more than the 1024"), std::string::npos);
  EXPECT_GE(lockstep::runner::default_jobs(), 1u);
}

// The library's campaign: summary and finding the same for 1, 2 and 3 jobs, for a
// campaign that stops on a violation (not at its first run) and for one that runs out.
TEST(Jobs, FuzzSummaryAndFindingDoNotDependOnJobs) {
  using namespace lockstep::runner;
  FuzzSpace found;
  found.locks = {"set-px-lua", "setnx", "redlock"};
  found.fault_kinds = {lockstep::FaultKind::Pause, lockstep::FaultKind::Crash, lockstep::FaultKind::ClockJump};
  FuzzSpace clean;
  clean.locks = {"set-px-lua"};
  clean.fault_kinds = {lockstep::FaultKind::Pause};
  clean.budget = Budget::Within;
  for (const auto& [space, runs] : {std::pair{found, uint64_t{300}}, std::pair{clean, uint64_t{150}}}) {
    FuzzOptions o;
    o.seed = 3;
    o.runs = runs;
    o.jobs = 1;
    const FuzzSummary one = fuzz(space, o);
    for (unsigned jobs : {2u, 3u}) {
      o.jobs = jobs;
      std::vector<uint64_t> progress;
      const FuzzSummary many = fuzz(space, o, [&](uint64_t done, uint64_t) { progress.push_back(done); });
      EXPECT_EQ(many.runs, one.runs) << jobs;
      EXPECT_EQ(many.violations, one.violations) << jobs;
      EXPECT_EQ(many.by_class, one.by_class) << jobs;
      EXPECT_EQ(many.unknown, one.unknown) << jobs;
      // Progress counts runs in order, one call each.
      ASSERT_EQ(progress.size(), many.runs) << jobs;
      for (size_t i = 0; i < progress.size(); ++i) EXPECT_EQ(progress[i], i + 1);
      ASSERT_EQ(many.finding.has_value(), one.finding.has_value()) << jobs;
      if (!one.finding) continue;
      EXPECT_GT(one.finding->index, 0u) << "the campaign should fail after some clean runs";
      EXPECT_EQ(many.finding->index, one.finding->index) << jobs;
      EXPECT_EQ(many.finding->shrink_steps, one.finding->shrink_steps) << jobs;
      EXPECT_EQ(to_json(many.finding->original).dump(), to_json(one.finding->original).dump()) << jobs;
      EXPECT_EQ(to_json(many.finding->shrunk).dump(), to_json(one.finding->shrunk).dump()) << jobs;
      EXPECT_EQ(many.finding->outcome.history_jsonl, one.finding->outcome.history_jsonl) << jobs;
    }
    EXPECT_EQ(one.finding.has_value(), runs == 300) << "the first campaign finds, the second does not";
  }
}

// The matrix's cells, and the calls its progress line is drawn from, in the same order
// with the same content at any number of jobs, with fewer cells than jobs too.
TEST(Jobs, MatrixCellsAndProgressDoNotDependOnJobs) {
  using namespace lockstep::runner;
  MatrixOptions o;
  o.profiles = {"redsync@4.0.3", "redlock-py@1.0.8"};
  o.faults = {"none", "pause"};
  o.runs = 30;
  auto run = [&o](unsigned jobs, std::vector<std::string>& calls) {
    o.jobs = jobs;
    return run_matrix(o, [&calls](size_t i, size_t total, const MatrixCell& c, bool done) {
      calls.push_back(std::to_string(i) + "/" + std::to_string(total) + " " + c.profile + " x " + c.fault +
                      (done ? std::string(" done ") + c.verdict() : ""));
    });
  };
  std::vector<std::string> calls_one;
  const auto one = run(1, calls_one);
  ASSERT_EQ(calls_one.size(), 8u);
  for (unsigned jobs : {3u, 8u}) {  // 8: two jobs per cell
    std::vector<std::string> calls;
    const auto many = run(jobs, calls);
    EXPECT_EQ(calls, calls_one) << jobs << " jobs";
    ASSERT_EQ(many.size(), one.size());
    for (size_t i = 0; i < one.size(); ++i) {
      EXPECT_EQ(many[i].summary.runs, one[i].summary.runs) << i;
      EXPECT_EQ(many[i].summary.by_class, one[i].summary.by_class) << i;
      ASSERT_EQ(many[i].broken(), one[i].broken()) << i;
      if (one[i].broken()) {
        EXPECT_EQ(to_json(many[i].summary.finding->shrunk).dump(), to_json(one[i].summary.finding->shrunk).dump());
      }
    }
  }
  size_t broken = 0;
  for (const auto& c : one) broken += c.broken();
  EXPECT_GT(broken, 0u) << "the table should have a broken cell to compare";
}

// ---- The commands, as a user runs them ----

struct Ran {
  int code = -1;
  std::string out;
  std::map<std::string, std::string> files;  // path under the working directory -> content
};

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

// Wall-clock seconds are the one thing two runs of a campaign do not share.
std::string without_seconds(const std::string& text) {
  static const std::regex json(R"("seconds": [0-9.e+-]+)"), html(R"(runs, [0-9.]+ s<)"), line(R"(; [0-9.]+s\n)");
  std::string s = std::regex_replace(text, json, "\"seconds\": S");
  s = std::regex_replace(s, html, "runs, S s<");
  return std::regex_replace(s, line, "; Ss\n");
}

// Runs `lockstep ARGS --jobs N` in a directory of its own, so that every path it prints
// and writes is the same relative one whatever N.
Ran run_in(const fs::path& dir, const std::string& args, unsigned jobs) {
  fs::remove_all(dir);
  fs::create_directories(dir);
  Ran r;
  const auto shell = lockstep::test_shell::run("cd '" + dir.string() + "' && '" + std::string(LOCKSTEP_BINARY) + "' " +
                                               args + " --jobs " + std::to_string(jobs) + " 2>&1 </dev/null");
  r.code = shell.code;
  r.out = without_seconds(shell.out);
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    // Only a campaign's summaries say how long it took (scenario reports do not).
    const std::string name = e.path().filename().string();
    const bool timed = name == "summary.json" || name == "matrix.json" || name == "matrix.html";
    r.files[fs::relative(e.path(), dir).string()] = timed ? without_seconds(read_all(e.path())) : read_all(e.path());
  }
  return r;
}

class JobsCli : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("lockstep-jobs-" + std::to_string(::getpid()));
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  // The same command at 1, 2 and 3 jobs: stdout, exit code and every file alike.
  Ran expect_same_at_any_jobs(const std::string& args) {
    const Ran one = run_in(root_ / "j1", args, 1);
    for (unsigned jobs : {2u, 3u}) {
      const Ran many = run_in(root_ / ("j" + std::to_string(jobs)), args, jobs);
      EXPECT_EQ(many.code, one.code) << args << " --jobs " << jobs << "\n" << many.out;
      EXPECT_EQ(many.out, one.out) << args << " --jobs " << jobs;
      std::set<std::string> names, names_one;
      for (const auto& [name, content] : many.files) names.insert(name);
      for (const auto& [name, content] : one.files) names_one.insert(name);
      EXPECT_EQ(names, names_one) << args << " --jobs " << jobs;
      for (const auto& [name, content] : one.files) {
        auto it = many.files.find(name);
        if (it != many.files.end()) {
          EXPECT_EQ(it->second, content) << name << " at --jobs " << jobs;
        }
      }
    }
    return one;
  }

  fs::path root_;
};

TEST_F(JobsCli, FuzzFindsTheSameCounterexample) {
  const Ran r = expect_same_at_any_jobs(
      "fuzz --faults pause,crash,clock-jump --runs 300 --seed 3 --out out --junit junit.xml");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("violation after 37 runs"), std::string::npos) << r.out;
  EXPECT_EQ(r.files.count("out/counterexample-1.json"), 1u);
  EXPECT_EQ(r.files.count("out/counterexample-1/report.json"), 1u);
  EXPECT_EQ(r.files.count("junit.xml"), 1u);
}

TEST_F(JobsCli, FuzzWithoutAFindingCountsTheSame) {
  const Ran r = expect_same_at_any_jobs(
      "fuzz --algorithm set-px-lua --faults pause,clock-drift --budget within --runs 200 --out out --junit junit.xml");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("200 runs, 0 stopped on a violation"), std::string::npos) << r.out;
}

TEST_F(JobsCli, MatrixTableAndCounterexamplesAreTheSame) {
  const Ran r = expect_same_at_any_jobs(
      "matrix --profiles redsync@4.0.3,redlock-py@1.0.8 --faults none,pause --runs 30 --markdown --out m --junit "
      "junit.xml");
  EXPECT_NE(r.out.find("limit"), std::string::npos) << r.out;
  EXPECT_EQ(r.files.count("m/redlock-py@1.0.8--pause/counterexample.json"), 1u) << r.out;
  EXPECT_EQ(r.files.count("m/matrix.json"), 1u);
}

TEST_F(JobsCli, RunOfTheCatalogueIsTheSame) {
  const Ran r = expect_same_at_any_jobs("run --out out --junit junit.xml '" + std::string(LOCKSTEP_SOURCE_DIR) +
                                        "/scenarios'");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("as expected, 0 mismatched"), std::string::npos) << r.out;
  EXPECT_EQ(r.files.count("out/index.html"), 1u);
  // -v prints each scenario's header line before its row, as with one job.
  expect_same_at_any_jobs("run -v --out out '" + std::string(LOCKSTEP_SOURCE_DIR) + "/scenarios/01-setnx-crash-deadlock.json' '" +
                          std::string(LOCKSTEP_SOURCE_DIR) + "/scenarios/09-set-px-lua-gc-pause.json'");
}

TEST(JobsCliUsage, ZeroOrNotANumberIsAUsageError) {
  const std::string scenario = std::string(LOCKSTEP_SOURCE_DIR) + "/scenarios/01-setnx-crash-deadlock.json";
  const std::vector<std::string> commands = {"fuzz --runs 1 --out /dev/null",
                                             "matrix --profiles redsync@4.17.0 --faults none --runs 1 --out /dev/null",
                                             "run --out /dev/null " + scenario};
  for (const std::string& command : commands) {
    const std::string name = command.substr(0, command.find(' '));
    for (const std::string value : {"0", "two"}) {
      const auto r = lockstep::test_shell::run("'" + std::string(LOCKSTEP_BINARY) + "' " + command + " --jobs " + value +
                                               " 2>&1 </dev/null");
      EXPECT_EQ(r.code, 64) << command << " --jobs " << value << "\n" << r.out;
      const std::string first = r.out.substr(0, r.out.find('\n'));
      EXPECT_EQ(first.rfind("lockstep " + name + ": --jobs: ", 0), 0u) << first;
      EXPECT_NE(first.find(value == "0" ? "give 1 or more" : "found \"two\""), std::string::npos) << first;
    }
  }
}

}  // namespace
