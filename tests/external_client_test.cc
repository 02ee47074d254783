// External clients in the live world: a program written from docs/external-clients.md
// alone (tests/data/clients/shell_stock.sh, bash and redis-cli) runs unchanged — safe
// without faults, broken by a pause longer than its lease; faults on what the proxy sees
// it send land before the command reaches the server; a crash restarts it; programs that
// misbehave (a bad line, an early exit, a hang, no program at all) are named and make the
// verdict unknown, never a crash; nothing they started outlives the run; the simulator
// skips external scenarios with the reason.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string_view>
#include <vector>

#include "lockstep/live/client_process.h"
#include "lockstep/live/redis_server.h"
#include "lockstep/reports/writers.h"
#include "lockstep/runner/live_runner.h"
#include "lockstep/runner/sim_runner.h"
#include "scenario_files.h"

extern char** environ;

namespace lockstep::runner {
namespace {

namespace fs = std::filesystem;

const std::string kClients = std::string(LOCKSTEP_SOURCE_DIR) + "/tests/data/clients/";

bool can_run() { return !live::find_redis_server().empty() && !live::resolve_program("redis-cli", "").empty(); }

#define SKIP_WITHOUT_REDIS() \
  if (!can_run()) GTEST_SKIP() << "redis-server and redis-cli are needed: live tests start their own"

// A scenario whose command runs in tests/data/clients/, from its file format.
Scenario scenario(const std::string& json) {
  auto r = parse_scenario(json, kClients + "scenario.json");
  if (auto* e = std::get_if<ScenarioError>(&r)) ADD_FAILURE() << e->message();
  return std::get<Scenario>(r);
}

std::string shell_scenario(const std::string& workload, const std::string& faults, const std::string& expect,
                           int64_t duration_ms = 10000, const std::string& lock = R"({"lease_ms": 1000})") {
  return R"({"seed": 9, "duration_ms": )" + std::to_string(duration_ms) + R"(, "lock": )" + lock +
         R"(, "workload": {"kind": "external", "command": ["bash", "shell_stock.sh"], )" + workload +
         R"(}, "faults": )" + faults + R"(, "expect": {"violations": )" + expect + "}}";
}

const checker::Event* find(const RunOutcome& o, const std::function<bool(const checker::Event&)>& pred) {
  for (const auto& e : o.history.events) {
    if (pred(e)) return &e;
  }
  return nullptr;
}

std::vector<std::string> client_errors(const RunOutcome& o) {
  std::vector<std::string> out;
  for (const auto& e : o.report.stats.value("client_errors", nlohmann::json::array())) out.push_back(e);
  return out;
}

TEST(ExternalClient, ADocOnlyClientSellsTheStockSafely) {
  SKIP_WITHOUT_REDIS();
  const Scenario s = scenario(shell_scenario(R"("clients": 4, "initial_stock": 3, "hold_ms": 10, "wait_ms": 5000)",
                                             "[]", "[]", 10000, R"({"lease_ms": 5000})"));
  ASSERT_EQ(live_unsupported(s, {}), "");
  const RunOutcome o = run_live(s);
  ASSERT_TRUE(client_errors(o).empty()) << client_errors(o)[0];
  EXPECT_EQ(o.report.verdict, "safe") << o.history_jsonl;
  EXPECT_EQ(o.report.stats["sales"], 3);
  EXPECT_EQ(o.report.algorithm, "external");
  EXPECT_EQ(o.report.stats["checkable"].size(), 5u) << o.report.stats.dump();
  EXPECT_EQ(o.report.stats["clients"]["command"], nlohmann::json({"bash", "shell_stock.sh"}));
}

// Race 5 with someone else's code: client-1's bash and redis-cli are SIGSTOPped for 4 s
// against a 1 s lease as the reply to its stock read reaches the proxy (held there while
// it is stopped, so it reads the stock as it was); client-2 starts 2 s after it (a bash
// script's start-up takes far less) and takes the expired lock with 2 s to spare.
TEST(ExternalClient, ADocOnlyClientIsBrokenByAPauseLongerThanTheLease) {
  SKIP_WITHOUT_REDIS();
  const Scenario s = scenario(shell_scenario(
      R"("clients": 2, "initial_stock": 10, "hold_ms": 100, "wait_ms": 4000, "start_stagger_ms": 2000)",
      R"([{"kind": "pause", "target": "client-1", "duration_ms": 4000,
           "on": {"process": "client-1", "receives": "GET", "key": "stock"}}])",
      R"(["linearizability", "lost-update", "mutual-exclusion"])"));
  const RunOutcome o = run_live(s);
  ASSERT_TRUE(client_errors(o).empty()) << client_errors(o)[0];
  scenario_files::expect_shipped_verdict(o.report, s, o.history_jsonl);
  EXPECT_TRUE(o.report.as_expected());
}

// A program slow to reach its first acquire (client-1 sleeps 2 s first) still holds the
// lock first with start_after_hold: client-2 starts only once client-1 reports its `ok`.
// Without it, the same stagger of 0 starts both together and client-2 acquires first.
TEST(ExternalClient, StartAfterHoldKeepsTheStartOrderWhateverTheStartUpTakes) {
  SKIP_WITHOUT_REDIS();
  const auto first_ok_of_acquire = [](const RunOutcome& o) {
    return find(o, [](const checker::Event& e) { return e.f == "acquire" && e.type == checker::EventType::Ok; });
  };
  const auto first_event_of = [](const RunOutcome& o, int64_t process) {
    return find(o, [process](const checker::Event& e) { return e.process == process && e.f == "acquire"; });
  };
  for (const bool after_hold : {false, true}) {
    Scenario s = scenario(shell_scenario(R"("clients": 2, "initial_stock": 5, "hold_ms": 10, "wait_ms": 8000)", "[]",
                                         "[]", 20000, R"({"lease_ms": 5000})"));
    s.workload.command = {"bash", "-c", R"(if [ "$LOCKSTEP_CLIENT" = client-1 ]; then sleep 2; fi; exec bash shell_stock.sh)"};
    s.workload.start_after_hold = after_hold;
    const RunOutcome o = run_live(s);
    ASSERT_TRUE(client_errors(o).empty()) << client_errors(o)[0];
    EXPECT_EQ(o.report.verdict, "safe") << o.history_jsonl;
    const auto* ok = first_ok_of_acquire(o);
    const auto* second = first_event_of(o, 2);
    ASSERT_TRUE(ok && second) << o.history_jsonl;
    if (after_hold) {
      EXPECT_EQ(ok->process, 1) << o.history_jsonl;
      EXPECT_GT(second->time_ns, ok->time_ns) << "client-2 started before client-1 held the lock\n" << o.history_jsonl;
    } else {
      EXPECT_EQ(ok->process, 2) << "a 2 s head start should let client-2 acquire first\n" << o.history_jsonl;
    }
  }
}

// A client that start_after_hold never let start is named, and the run is unknown: it did
// not test what the scenario describes.
TEST(ExternalClient, AClientStartAfterHoldNeverLetStartMakesTheRunUnknown) {
  SKIP_WITHOUT_REDIS();
  Scenario s = scenario(shell_scenario(R"("clients": 2, "initial_stock": 5, "hold_ms": 10, "wait_ms": 1000)", "[]",
                                       "[]", 1500, R"({"lease_ms": 5000})"));
  s.workload.command = {"bash", "-c", R"(if [ "$LOCKSTEP_CLIENT" = client-1 ]; then sleep 30; fi; exec bash shell_stock.sh)"};
  s.workload.start_after_hold = true;
  const RunOutcome o = run_live(s);
  EXPECT_EQ(o.report.verdict, "unknown") << o.history_jsonl;
  const auto errors = client_errors(o);
  EXPECT_TRUE(std::any_of(errors.begin(), errors.end(),
                          [](const std::string& e) { return e.find("client-2 never started") != std::string::npos; }))
      << o.report.stats.dump();
}

// The crash lands before the write leaves the proxy: the server never sees it, and the
// stock is untouched however fast the client is.
TEST(ExternalClient, ACrashOnSendsLandsBeforeTheCommandReachesTheServer) {
  SKIP_WITHOUT_REDIS();
  const Scenario s = scenario(
      shell_scenario(R"("clients": 1, "initial_stock": 10, "hold_ms": 10, "wait_ms": 2000)",
                     R"([{"kind": "crash", "target": "client-1", "on": {"process": "client-1", "sends": "SET", "key": "stock"}}])",
                     "[]"));
  const RunOutcome o = run_live(s);
  ASSERT_TRUE(client_errors(o).empty()) << client_errors(o)[0];
  const auto* resource = find(o, [](const checker::Event& e) { return e.f == checker::truth::kResource; });
  ASSERT_NE(resource, nullptr);
  EXPECT_EQ(resource->value["final"], 10) << o.history_jsonl;
  EXPECT_NE(find(o, [](const checker::Event& e) { return e.f == "write" && e.type == checker::EventType::Invoke; }), nullptr)
      << "the client announced the write before it was cut off";
  EXPECT_EQ(find(o, [](const checker::Event& e) { return e.f == "write" && e.type == checker::EventType::Ok; }), nullptr);
  EXPECT_EQ(o.report.verdict, "safe") << o.history_jsonl;
}

// A pause on the same event holds the write in the proxy until the pause is over.
TEST(ExternalClient, APauseOnSendsHoldsTheCommandUntilThePauseEnds) {
  SKIP_WITHOUT_REDIS();
  const Scenario s = scenario(shell_scenario(
      R"("clients": 1, "initial_stock": 10, "hold_ms": 10, "wait_ms": 2000)",
      R"([{"kind": "pause", "target": "client-1", "duration_ms": 1000, "on": {"process": "client-1", "sends": "SET", "key": "stock"}}])",
      "[]", 10000, R"({"lease_ms": 5000})"));
  const RunOutcome o = run_live(s);
  ASSERT_TRUE(client_errors(o).empty()) << client_errors(o)[0];
  const auto* pause = find(o, [](const checker::Event& e) { return e.f == checker::truth::kFaultStart; });
  const auto* written = find(o, [](const checker::Event& e) { return e.f == "write" && e.type == checker::EventType::Ok; });
  ASSERT_NE(pause, nullptr);
  ASSERT_NE(written, nullptr) << o.history_jsonl;
  EXPECT_GE(written->time_ns - pause->time_ns, 1'000'000'000) << o.history_jsonl;
  EXPECT_EQ(o.report.stats["sales"], 1);
  EXPECT_EQ(o.report.verdict, "safe");
}

// A crashed program comes back as a new process with the next incarnation and does its
// work again; its old lock runs out under the lease.
TEST(ExternalClient, ACrashedClientRestartsAsItsNextIncarnation) {
  SKIP_WITHOUT_REDIS();
  const Scenario s = scenario(shell_scenario(
      R"("clients": 1, "initial_stock": 10, "hold_ms": 10, "wait_ms": 3000)",
      R"([{"kind": "crash", "target": "client-1", "restart_after_ms": 200, "on": {"process": "client-1", "enters": "critical-section"}}])",
      "[]"));
  const RunOutcome o = run_live(s);
  ASSERT_TRUE(client_errors(o).empty()) << client_errors(o)[0];
  const auto* restart = find(o, [](const checker::Event& e) { return e.f == checker::truth::kRestart; });
  ASSERT_NE(restart, nullptr);
  const auto* second = find(o, [](const checker::Event& e) {
    return e.f == checker::truth::kKeySet && e.value.is_string() &&
           e.value.get<std::string>().rfind("client-1-2-", 0) == 0;
  });
  ASSERT_NE(second, nullptr) << "incarnation 2 took the lock: " << o.history_jsonl;
  EXPECT_GT(second->time_ns, restart->time_ns);
  EXPECT_EQ(second->process, 1);
  EXPECT_EQ(o.report.verdict, "safe") << o.history_jsonl;
}

RunOutcome run_fixture(const std::vector<std::string>& command, int64_t duration_ms = 5000) {
  Scenario s = scenario(shell_scenario(R"("clients": 1)", "[]", "[]", duration_ms));
  s.workload.command = command;
  return run_live(s);
}

TEST(ExternalClient, AMalformedLineIsNamedAndTheVerdictIsUnknown) {
  SKIP_WITHOUT_REDIS();
  const RunOutcome o = run_fixture({"bash", "bad_line.sh"});
  EXPECT_EQ(o.report.verdict, "unknown");
  EXPECT_EQ(client_errors(o), std::vector<std::string>{"client-1 line 4: not JSON (at byte 1)"});
  EXPECT_EQ(o.report.stats["clients"]["ignored_lines"], 1);
  // Its acquire wrote no key either (the fixture only talks): that is said too.
  const auto reasons = reports::inconclusive_reasons(o.report);
  ASSERT_EQ(reasons.size(), 2u) << ::testing::PrintToString(reasons);
  EXPECT_NE(reasons[0].find("client-1 line 4"), std::string::npos) << reasons[0];
  EXPECT_NE(reasons[1].find("wrote nothing to the lock's key"), std::string::npos) << reasons[1];
}

TEST(ExternalClient, AClientThatDiesIsNamedWithItsStderr) {
  SKIP_WITHOUT_REDIS();
  const RunOutcome o = run_fixture({"bash", "exit_early.sh"});
  EXPECT_EQ(o.report.verdict, "unknown");
  // The quote starts at the error, not at the runtime's version line that ends the output.
  EXPECT_EQ(client_errors(o), std::vector<std::string>{
                                  "client-1 exited with status 3; its stderr ends: Error: cannot load the lock library | "
                                  "at Object.<anonymous> (/app/stock.js:12:11) | at Module._compile "
                                  "(node:internal/modules/cjs/loader:1256:14) | at node:internal/main/run_main_module:23:47"});
  const std::string tail = o.report.stats["clients"]["stderr"]["client-1"];
  EXPECT_EQ(tail.substr(0, 28), "starting up\n/app/stock.js:12");
  EXPECT_EQ(tail.substr(tail.size() - 16), "Node.js v18.19.0");
}

TEST(ExternalClient, AProgramThatCannotStartIsNamed) {
  SKIP_WITHOUT_REDIS();
  const RunOutcome o = run_fixture({"no-such-lockstep-client"});
  EXPECT_EQ(o.report.verdict, "unknown");
  EXPECT_EQ(client_errors(o),
            std::vector<std::string>{"client-1 could not start: cannot find no-such-lockstep-client on PATH"});
}

// A zombie is dead: whoever adopted it (the container's init may never) reaps it, not us.
bool alive(pid_t pid) {
  if (::kill(pid, 0) != 0) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const auto paren = text.rfind(')');
  return paren == std::string::npos || paren + 2 >= text.size() || text[paren + 2] != 'Z';
}

// The run ends at duration_ms; the program and what it started are killed and reaped.
TEST(ExternalClient, AClientThatHangsIsKilledWithEverythingItStarted) {
  SKIP_WITHOUT_REDIS();
  const fs::path pids = fs::path(::testing::TempDir()) / "lockstep-hang-pids";
  fs::remove(pids);
  const RunOutcome o = run_fixture({"bash", "hang.sh", pids.string()}, 1500);
  EXPECT_EQ(o.report.stats["clients"]["killed_at_end"],
            nlohmann::json({"client-1 was still running when the run ended: killed"}));
  // Killed in its acquire, it tested nothing: never a green verdict.
  EXPECT_EQ(o.report.verdict, "unknown");
  EXPECT_EQ(o.report.inconclusive,
            (std::vector<std::string>{"1 client was still waiting for the lock when the run ended (client-1): the run "
                                      "did not see the workload through.",
                                      "no operation completed in the whole run.",
                                      "client-1 was still running when the run ended: killed."}));
  std::ifstream in(pids);
  pid_t shell = 0, child = 0;
  ASSERT_TRUE(in >> shell >> child);
  EXPECT_FALSE(alive(shell));
  // The sleep is not lockstep's child: the kill reaches it through its process group.
  for (int i = 0; i < 100 && alive(child); ++i) usleep(10'000);
  EXPECT_FALSE(alive(child));
}

// A client sees its stdio, what it opened itself, and nothing of lockstep's: no
// connection to a server around its proxy, no proxy listener, no pipe of another client.
// The fixture also lists lockstep's descriptors that lack close-on-exec, which catches a
// descriptor left inheritable even where the child's own clean-up would hide it.
TEST(ExternalClient, AClientSeesNoDescriptorButItsOwn) {
  SKIP_WITHOUT_REDIS();
  const fs::path seen = fs::path(::testing::TempDir()) / "lockstep-descriptors";
  fs::remove(seen);
  // What the test process inherited from whoever started it (ctest's log) is not lockstep's.
  std::set<std::string> before;
  for (const auto& e : fs::directory_iterator("/proc/self/fd")) {
    const int fd = std::atoi(e.path().filename().c_str());
    const int flags = fcntl(fd, F_GETFD);
    if (flags >= 0 && !(flags & FD_CLOEXEC)) before.insert(e.path().filename().string());
  }
  // Two clients: the second starts while lockstep holds the first's connections. The run
  // ends when both have exited; the long duration is only a margin for a loaded machine.
  Scenario s = scenario(shell_scenario(R"("clients": 2, "start_stagger_ms": 300)", "[]", "[]", 20000));
  s.workload.command = {"bash", "descriptors.sh", seen.string()};
  const RunOutcome o = run_live(s);
  std::ifstream in(seen);
  auto partial = [&](const std::string& client) {
    std::ifstream f(seen.string() + "." + client);
    return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  };
  ASSERT_TRUE(in) << "the fixture wrote nothing: " << o.report.stats.dump() << "\nclient-1 got as far as: "
                  << partial("client-1") << "\nclient-2 got as far as: " << partial("client-2");
  std::string kind, proxy_port, pong;
  ASSERT_TRUE(in >> kind >> proxy_port && kind == "proxy");
  ASSERT_TRUE(in >> kind >> pong && kind == "pong");
  EXPECT_EQ(pong, "+PONG") << "the PING went through the proxy";
  std::vector<std::string> sockets, inheritable;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string what, fd, target, port;
    fields >> what >> fd >> target >> port;
    if (what == "own" && target.rfind("socket:", 0) == 0) sockets.push_back(fd + " -> port " + port);
    if (what == "inheritable" && !before.count(fd)) inheritable.push_back(fd + " " + target);
  }
  EXPECT_EQ(sockets, std::vector<std::string>{"3 -> port " + proxy_port}) << "the client's only socket is its own";
  EXPECT_TRUE(inheritable.empty()) << "lockstep descriptors a program would inherit: " << ::testing::PrintToString(inheritable);
}

// The run ends when every program has exited for good: a fault that could only touch the
// clients' links or processes is not waited for, one on a server still is (a node's state
// decides what the stock reads at the end).
TEST(ExternalClient, TheRunEndsWhenEveryClientHasExitedAndNoServerFaultIsToCome) {
  SKIP_WITHOUT_REDIS();
  const auto fault_started = [](const RunOutcome& o) {
    return find(o, [](const checker::Event& e) { return e.f == checker::truth::kFaultStart; }) != nullptr;
  };
  const RunOutcome clients_only = run_live(scenario(shell_scenario(
      R"("clients": 1, "initial_stock": 3, "hold_ms": 10, "wait_ms": 2000)",
      R"([{"kind": "pause", "target": "client-1", "at_ms": 30000, "duration_ms": 1000},
          {"kind": "partition", "at_ms": 30000, "duration_ms": 1000, "groups": [["client-1"], ["node-1"]]}])",
      "[]", 60000)));
  ASSERT_TRUE(client_errors(clients_only).empty()) << client_errors(clients_only)[0];
  EXPECT_FALSE(fault_started(clients_only)) << "the run waited for faults nobody could feel";
  EXPECT_EQ(clients_only.report.verdict, "safe");

  const RunOutcome server = run_live(scenario(shell_scenario(
      R"("clients": 1, "initial_stock": 3, "hold_ms": 10, "wait_ms": 2000)",
      R"([{"kind": "pause", "target": "node-1", "at_ms": 1500, "duration_ms": 100}])", "[]", 60000)));
  ASSERT_TRUE(client_errors(server).empty()) << client_errors(server)[0];
  EXPECT_TRUE(fault_started(server)) << "the run ended before a server fault still to come";
}

// A relative program is found from the scenario's folder once, also when the scenario is
// named with a folder in its path; a client hung until the end is named on the terminal.
TEST(ExternalClient, ARelativeProgramRunsFromAScenarioInAFolderAndAHungClientIsOnTheTerminal) {
  SKIP_WITHOUT_REDIS();
  const fs::path dir = fs::path(::testing::TempDir()) / "lockstep-relative";
  fs::remove_all(dir);
  fs::create_directories(dir / "clients");
  fs::copy_file(kClients + "shell_stock.sh", dir / "clients" / "stock.sh");
  fs::copy_file(kClients + "hang.sh", dir / "clients" / "hang.sh");
  std::ofstream(dir / "clients" / "stock.json")
      << R"({"seed": 1, "duration_ms": 10000, "lock": {"lease_ms": 5000}, "workload": {"kind": "external",
            "command": ["./stock.sh"], "clients": 1, "initial_stock": 2, "hold_ms": 10, "wait_ms": 2000},
            "expect": {"violations": []}})";
  std::ofstream(dir / "clients" / "hang.json")
      << R"({"seed": 1, "duration_ms": 1000, "lock": {"lease_ms": 5000}, "workload": {"kind": "external",
            "command": ["bash", "hang.sh", ")"
      << (dir / "pids").string() << R"("], "clients": 1}, "expect": {"violations": []}})";
  const std::string cmd = "cd " + dir.string() + " && " + LOCKSTEP_BINARY +
                          " live --out out clients/stock.json clients/hang.json > out.txt 2>&1";
  std::system(cmd.c_str());
  std::ifstream f(dir / "out.txt"), report(dir / "out" / "stock" / "report.json");
  std::stringstream text;
  text << f.rdbuf();
  ASSERT_TRUE(report) << text.str();
  const auto j = nlohmann::json::parse(report);
  EXPECT_EQ(j["verdict"], "safe") << text.str();
  EXPECT_NE(text.str().find("killed at the end, still running: client-1"), std::string::npos) << text.str();
}

// A watchdog thread extends the lock every fifth of its 3 s lease while the main thread
// works 3.5 s inside it: the extends are the client's own thread's, interleaved with the
// main thread's lines, and they keep client-2 out, so the run is safe (a stall of the
// watchdog of 2.4 s would let client-2 in).
TEST(ExternalClient, AWatchdogThreadReportsItsExtendsBesideTheMainThread) {
  SKIP_WITHOUT_REDIS();
  if (!fs::exists("/usr/lib/python3/dist-packages/redis/lock.py")) GTEST_SKIP() << "Debian's python3-redis is not installed";
  Scenario s = scenario(shell_scenario(R"("clients": 2, "initial_stock": 5, "hold_ms": 3500, "wait_ms": 15000)", "[]",
                                       "[]", 25000, R"({"lease_ms": 3000})"));
  s.workload.command = {"/usr/bin/python3", "watchdog.py"};
  const RunOutcome o = run_live(s);
  ASSERT_TRUE(client_errors(o).empty()) << client_errors(o)[0];
  std::string found;
  for (const auto& v : o.report.violations) found += std::string(checker::to_string(v.property)) + ": " + v.explanation + "\n";
  EXPECT_EQ(o.report.verdict, "safe") << found << o.history_jsonl;
  EXPECT_EQ(o.report.stats["sales"], 2);
  // client-1's watchdog extended while its main thread was between its write's invoke
  // and ok or its read's ok and write's invoke: threads interleave.
  int extends_ok = 0;
  bool inside_hold = false;
  int64_t read_ok = -1, write_invoke = -1;
  for (const auto& e : o.history.events) {
    if (e.process != 1) continue;
    if (e.f == "read" && e.type == checker::EventType::Ok) read_ok = e.time_ns;
    if (e.f == "write" && e.type == checker::EventType::Invoke) write_invoke = e.time_ns;
    if (e.f != "extend") continue;
    EXPECT_EQ(e.thread, 1);
    EXPECT_EQ(e.extra.value("client_thread", ""), "watchdog");
    if (e.type == checker::EventType::Ok) ++extends_ok;
    if (read_ok >= 0 && write_invoke < 0) inside_hold = true;
  }
  EXPECT_GE(extends_ok, 3) << o.history_jsonl;
  EXPECT_TRUE(inside_hold) << o.history_jsonl;
  EXPECT_NE(o.history_jsonl.find(R"("client_thread":"watchdog")"), std::string::npos);
}

// The same program without a flush: Python buffers the pipe, every line arrives at its
// exit, the first one 2 s after the SET it announces went through the proxy.
TEST(ExternalClient, AClientThatBuffersItsOutputIsNamedAndTheVerdictIsUnknown) {
  SKIP_WITHOUT_REDIS();
  if (!fs::exists("/usr/lib/python3/dist-packages/redis/lock.py")) GTEST_SKIP() << "Debian's python3-redis is not installed";
  Scenario s = scenario(shell_scenario(R"("clients": 1, "initial_stock": 5, "hold_ms": 2000, "wait_ms": 5000)", "[]",
                                       "[]", 15000, R"({"lease_ms": 1500})"));
  s.workload.command = {"/usr/bin/python3", "watchdog.py", "--buffered"};
  const RunOutcome o = run_live(s);
  EXPECT_EQ(o.report.verdict, "unknown") << o.history_jsonl;
  const auto errors = client_errors(o);
  ASSERT_EQ(errors.size(), 1u) << ::testing::PrintToString(errors);
  EXPECT_EQ(errors[0].rfind("client-1 line 1 came ", 0), 0u) << errors[0];
  EXPECT_NE(errors[0].find(" s after the proxy passed its SET on " + s.lock.key + ", which no line read before it announced"),
            std::string::npos)
      << errors[0];
  EXPECT_NE(errors[0].find("flush stdout after every line"), std::string::npos) << errors[0];
}

// An ok reported 3 s after the reply that decided it, with nothing else under way, is
// named; the same program reporting at once is not.
TEST(ExternalClient, AnOkReportedLongAfterItsReplyIsNamedAndTheVerdictIsUnknown) {
  SKIP_WITHOUT_REDIS();
  const auto run = [](const char* delay_s) {
    Scenario s = scenario(shell_scenario(R"("clients": 1)", "[]", "[]", 10000, R"({"lease_ms": 8000})"));
    s.workload.command = {"env", std::string("OK_DELAY_S=") + delay_s, "bash", "late_ok.sh"};
    return run_live(s);
  };
  const RunOutcome late = run("3");
  EXPECT_EQ(late.report.verdict, "unknown") << late.history_jsonl;
  const auto errors = client_errors(late);
  ASSERT_EQ(errors.size(), 1u) << ::testing::PrintToString(errors);
  EXPECT_EQ(errors[0].rfind("client-1 line 2 (ok of acquire) came ", 0), 0u) << errors[0];
  EXPECT_NE(errors[0].find(" s after the proxy handed it the last reply it waited for, and it sent nothing since"),
            std::string::npos)
      << errors[0];
  EXPECT_NE(errors[0].find("flush stdout after every line"), std::string::npos) << errors[0];

  const RunOutcome prompt = run("0");
  EXPECT_TRUE(client_errors(prompt).empty()) << client_errors(prompt)[0];
  EXPECT_EQ(prompt.report.verdict, "safe") << prompt.history_jsonl;
}

// A library that stores the lock under a prefix of the name it is given: lockstep learns
// the key from what the first acquire wrote, and the truth follows it. client-1 is paused
// past its lease as its stock read comes back; client-2 takes the expired lock, and on
// its second hold client-1's owner-blind DEL removes client-2's key: a foreign unlock,
// visible only because the prefixed key is watched.
TEST(ExternalClient, ALockKeyUnderAPrefixIsLearntAndJudged) {
  SKIP_WITHOUT_REDIS();
  Scenario s = scenario(shell_scenario(
      R"("clients": 2, "initial_stock": 10, "hold_ms": 2000, "wait_ms": 6000, "start_stagger_ms": 3500,
          "attempts_per_client": 2)",
      R"([{"kind": "pause", "target": "client-1", "duration_ms": 4000,
           "on": {"process": "client-1", "receives": "GET", "key": "stock"}}])",
      "[]", 15000, R"({"lease_ms": 3000})"));
  s.workload.command = {"env", "LOCK_PREFIX=mutex:", "LOCK_RELEASE=del", "bash", "shell_stock.sh"};
  const RunOutcome o = run_live(s);
  ASSERT_TRUE(client_errors(o).empty()) << client_errors(o)[0];
  const auto& learnt = o.report.stats["clients"]["lock_key"];
  EXPECT_EQ(learnt["key"], "mutex:" + s.lock.key) << o.report.stats.dump();
  EXPECT_EQ(learnt["learnt_from"], "client-1's acquire (line 2)");
  const auto checkable = o.report.stats["checkable"];
  EXPECT_NE(std::find(checkable.begin(), checkable.end(), "foreign-unlock"), checkable.end()) << checkable;
  EXPECT_NE(std::find(checkable.begin(), checkable.end(), "deadlock"), checkable.end()) << checkable;
  EXPECT_NE(find(o, [](const checker::Event& e) { return e.f == checker::truth::kKeySet; }), nullptr) << o.history_jsonl;
  std::vector<std::string> found;
  for (const auto& v : o.report.violations) found.push_back(checker::to_string(v.property));
  EXPECT_NE(std::find(found.begin(), found.end(), "foreign-unlock"), found.end())
      << ::testing::PrintToString(found) << o.history_jsonl;
}

// lock.keys declares the lock's key: one key is watched from the start; a glob picks,
// among what an acquire writes, the key to watch. Only an external workload takes it.
TEST(ExternalClient, DeclaredLockKeysAreWatched) {
  SKIP_WITHOUT_REDIS();
  const auto run = [](const std::string& keys) {
    Scenario s = scenario(shell_scenario(R"("clients": 1, "initial_stock": 2, "hold_ms": 10, "wait_ms": 2000)", "[]",
                                         "[]", 10000, R"({"lease_ms": 5000, "keys": )" + keys + "}"));
    s.workload.command = {"env", "LOCK_PREFIX=app:mutex:", "bash", "shell_stock.sh"};
    return run_live(s);
  };
  for (const auto& [keys, from] : {std::pair{std::string(R"(["app:mutex:lock"])"), std::string("lock.keys")},
                                   std::pair{std::string(R"(["app:*", "other:*"])"),
                                             std::string("client-1's acquire (line 2)")}}) {
    const RunOutcome o = run(keys);
    ASSERT_TRUE(client_errors(o).empty()) << client_errors(o)[0];
    EXPECT_EQ(o.report.stats["clients"]["lock_key"],
              nlohmann::json({{"key", "app:mutex:lock"}, {"learnt_from", from}}))
        << keys;
    EXPECT_EQ(o.report.verdict, "safe") << keys << o.history_jsonl;
    EXPECT_NE(find(o, [](const checker::Event& e) { return e.f == checker::truth::kKeySet; }), nullptr) << keys;
  }
  auto r = parse_scenario(
      R"({"duration_ms": 1000, "lock": {"algorithm": "set-px-lua", "keys": ["x"]}, "expect": {"violations": []}})",
      "s.json");
  ASSERT_TRUE(std::holds_alternative<ScenarioError>(r));
  EXPECT_NE(std::get<ScenarioError>(r).message().find("$.lock.keys"), std::string::npos)
      << std::get<ScenarioError>(r).message();
}

// A client that says it holds the lock but wrote no key while acquiring: nobody can tell
// who held what, so the run is unknown and the key's checks are not listed as made.
TEST(ExternalClient, AnAcquireThatWritesNoKeyLeavesTheVerdictUnknown) {
  SKIP_WITHOUT_REDIS();
  const RunOutcome o = run_fixture({"bash", "no_lock.sh"});
  EXPECT_EQ(o.report.verdict, "unknown");
  ASSERT_FALSE(o.report.inconclusive.empty());
  EXPECT_NE(o.report.inconclusive[0].find("client-1 reported ok of acquire (line 2) but wrote nothing to the lock's key"),
            std::string::npos)
      << o.report.inconclusive[0];
  EXPECT_EQ(o.report.stats["checkable"], nlohmann::json({"mutual-exclusion", "linearizability", "lost-update"}));
}

// Ctrl-C in the middle of a run: lockstep's handler kills every program it started, and
// what they started, before it dies of the signal itself.
TEST(ExternalClient, AnInterruptedRunLeavesNoClientBehind) {
  SKIP_WITHOUT_REDIS();
  const fs::path dir = fs::path(::testing::TempDir()) / "lockstep-external-interrupted";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path pids = dir / "pids";
  // A process killed by a signal leaves its temporary folders: these land in ours.
  fs::create_directories(dir / "tmp");
  // Built before fork: after it, the child only makes async-signal-safe calls.
  std::vector<std::string> env_strings = {"TMPDIR=" + (dir / "tmp").string()};
  for (char** e = environ; *e; ++e) {
    if (std::string_view(*e).rfind("TMPDIR=", 0) != 0) env_strings.emplace_back(*e);
  }
  std::vector<char*> envp;
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::string binary = LOCKSTEP_BINARY, live = "live", out_flag = "--out", out = (dir / "out").string(),
              scenario = (dir / "hang.json").string();
  char* argv[] = {binary.data(), live.data(), out_flag.data(), out.data(), scenario.data(), nullptr};
  std::ofstream(dir / "hang.json") << R"({"duration_ms": 60000, "lock": {}, "workload": {"kind": "external", "command": ["bash", ")"
                                   << kClients << R"(hang.sh", ")" << pids.string()
                                   << R"("]}, "expect": {"violations": []}})";
  const pid_t lockstep = fork();
  ASSERT_GE(lockstep, 0);
  if (lockstep == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    const int devnull = ::open("/dev/null", O_WRONLY);
    ::dup2(devnull, STDOUT_FILENO);
    ::dup2(devnull, STDERR_FILENO);
    ::execve(argv[0], argv, envp.data());
    ::_exit(127);
  }
  pid_t shell = 0, child = 0;
  // Bounded: the client writes its pids as soon as it runs (10 s at most).
  for (int i = 0; i < 500 && child == 0; ++i) {
    usleep(20'000);
    std::ifstream in(pids);
    in >> shell >> child;
  }
  ASSERT_NE(child, 0) << "the client never started";
  ::kill(lockstep, SIGINT);
  int status = 0;
  ASSERT_EQ(::waitpid(lockstep, &status, 0), lockstep);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT) << status;
  for (pid_t pid : {shell, child}) {
    for (int i = 0; i < 100 && alive(pid); ++i) usleep(20'000);
    EXPECT_FALSE(alive(pid)) << "pid " << pid << " outlived the interrupted run";
  }
}

TEST(ExternalClient, TheSimulatorSkipsExternalWorkloadsWithTheReason) {
  const Scenario s = scenario(shell_scenario(R"("clients": 1)", "[]", "[]"));
  EXPECT_EQ(sim_unsupported(s),
            "an external workload runs your own program, which only the live world starts (lockstep live) "
            "(workload.kind \"external\")");
  const RunOutcome o = run_in_sim(s);
  EXPECT_EQ(o.report.verdict, "unknown");
  EXPECT_NE(o.report.stats.value("error", "").find("external workload runs your own program"), std::string::npos);
  // `lockstep run scenarios` reaches scenarios/external/ and passes over it cleanly.
  const std::string out = ::testing::TempDir() + "/lockstep-run-external";
  const std::string cmd = std::string(LOCKSTEP_BINARY) + " run --out " + out + " " + LOCKSTEP_SOURCE_DIR +
                          "/scenarios/external > " + out + ".txt 2>&1";
  const int rc = std::system(cmd.c_str());
  std::ifstream f(out + ".txt");
  std::stringstream text;
  text << f.rdbuf();
  EXPECT_EQ(WEXITSTATUS(rc), 1) << "nothing ran: " << text.str();
  const auto shipped = std::count_if(fs::directory_iterator(fs::path(LOCKSTEP_SOURCE_DIR) / "scenarios/external"), {},
                                     [](const fs::directory_entry& e) { return e.path().extension() == ".json"; });
  EXPECT_NE(text.str().find("0 scenarios: 0 as expected, 0 mismatched, " + std::to_string(shipped) + " skipped"),
            std::string::npos)
      << text.str();
  EXPECT_NE(text.str().find("skipped   redis-py-stock-demo"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("an external workload runs your own program"), std::string::npos)
      << text.str();
}

// `lockstep live --client CMD` runs a catalogue scenario with the user's program as its
// clients: race 5's long-lease counterpart stays safe, and the replay says how.
TEST(ExternalClient, TheClientOptionRunsACatalogueScenarioWithYourProgram) {
  SKIP_WITHOUT_REDIS();
  const std::string out = ::testing::TempDir() + "/lockstep-live-client";
  const std::string cmd = "cd " + kClients + " && " + LOCKSTEP_BINARY + " live --client 'bash shell_stock.sh' --out " +
                          out + " " + LOCKSTEP_SOURCE_DIR + "/scenarios/10-set-px-lua-lease-outlasts-pause.json > " +
                          out + ".txt 2>&1";
  const int rc = std::system(cmd.c_str());
  std::ifstream f(out + ".txt"), report(out + "/10-set-px-lua-lease-outlasts-pause/report.json");
  std::stringstream text;
  text << f.rdbuf();
  ASSERT_EQ(WEXITSTATUS(rc), 0) << text.str();
  const auto j = nlohmann::json::parse(report);
  EXPECT_EQ(j["verdict"], "safe");
  EXPECT_EQ(j["algorithm"], "external");
  EXPECT_NE(j["replay"].get<std::string>().find("--client 'bash shell_stock.sh'"), std::string::npos) << j["replay"];
  EXPECT_EQ(WEXITSTATUS(std::system((std::string(LOCKSTEP_BINARY) + " live --client \"'\" x.json >/dev/null 2>&1").c_str())),
            64)
      << "an unclosed quote is a usage error";
  EXPECT_EQ(WEXITSTATUS(std::system((std::string(LOCKSTEP_BINARY) + " live --client '' x.json >/dev/null 2>&1").c_str())), 64)
      << "an empty command is a usage error, not lockstep's own clients";
}

}  // namespace
}  // namespace lockstep::runner
