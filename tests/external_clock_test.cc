// lockstep's clock library in an external client: preloaded into Python and Node, it
// moves what time.time / Date.now (the wall clock) and time.monotonic /
// process.hrtime (the monotonic clock) read, and a sleep on a shifted clock still takes
// its own length; programs it cannot reach are named before a run needs them.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "lockstep/live/client_process.h"
#include "lockstep/live/external_control.h"
#include "lockstep/live/redis_server.h"
#include "lockstep/runner/live_runner.h"

namespace lockstep::live {
namespace {

namespace fs = std::filesystem;

const std::string kClients = std::string(LOCKSTEP_SOURCE_DIR) + "/tests/data/clients/";
constexpr int64_t kHourNs = 3'600'000'000'000;

// A clock file as clock_file.h lays it out: both clocks an hour ahead, no drift.
std::string hour_ahead_clock(const fs::path& dir) {
  const std::string path = (dir / "clock").string();
  const int64_t cells[7] = {0, kHourNs, 0, 0, kHourNs, 0, 0};
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(cells), sizeof cells);
  return path;
}

struct Reading {
  double wall_s = 0, mono_s = 0;
  Nanos real_wall{0}, real_mono{0};  // lockstep's own clocks when the line came in
};

// Runs `argv` with the clock library preloaded and returns its one JSON line; bounded, so
// a sleep the library got wrong (an hour) fails the test instead of hanging it.
std::optional<Reading> read_clocks(const std::vector<std::string>& argv) {
  // One folder per test: ctest runs them at once, and a clock file rewritten under a
  // running program would move its clock mid-sleep.
  const fs::path dir = fs::path(::testing::TempDir()) /
                       ("lockstep-clock-reach-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
  fs::create_directories(dir);
  EventLoop loop;
  ClientProcessSpec spec{"client-1", argv, kClients, {}, (dir / "stderr").string(), hour_ahead_clock(dir)};
  ClientProcess p(loop, spec);
  std::optional<Reading> out;
  p.on_line = [&](std::string_view line, bool) {
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_object()) return;
    out = Reading{j.value("wall_s", 0.0), j.value("mono_s", 0.0), wall_clock(), mono_clock()};
  };
  if (auto why = p.start(); !why.empty()) {
    ADD_FAILURE() << why;
    return std::nullopt;
  }
  loop.run_until([&] { return out.has_value(); }, Millis(30'000));
  if (!out) ADD_FAILURE() << "no line; stderr: " << p.stderr_tail(10);
  return out;
}

void expect_hour_ahead(const Reading& r) {
  // Generous bounds: an hour is what is asserted, not the program's start-up time.
  const double wall_ahead = r.wall_s - static_cast<double>(r.real_wall.count()) / 1e9;
  const double mono_ahead = r.mono_s - static_cast<double>(r.real_mono.count()) / 1e9;
  EXPECT_NEAR(wall_ahead, 3600, 60);
  EXPECT_NEAR(mono_ahead, 3600, 60);
}

TEST(ExternalClock, ReachesPythonsTimeAndMonotonicClocks) {
  if (find_clock_library().empty()) GTEST_SKIP() << "liblockstep_clock.so not built";
  if (resolve_program("/usr/bin/python3", "").empty()) GTEST_SKIP() << "no /usr/bin/python3";
  auto r = read_clocks({"/usr/bin/python3", "clock.py"});
  ASSERT_TRUE(r);
  expect_hour_ahead(*r);
}

TEST(ExternalClock, ReachesNodesDateNowAndHrtime) {
  if (find_clock_library().empty()) GTEST_SKIP() << "liblockstep_clock.so not built";
  if (resolve_program("node", "").empty()) GTEST_SKIP() << "node is not installed";
  auto r = read_clocks({"node", "clock.js"});
  ASSERT_TRUE(r);
  expect_hour_ahead(*r);
}

TEST(ExternalClock, ProgramsTheLibraryCannotReachAreNamed) {
  EXPECT_EQ(clock_unreachable_reason(kClients + "shell_stock.sh"), "") << "a script runs on its interpreter";
  if (const std::string node = resolve_program("node", ""); !node.empty()) {
    EXPECT_EQ(clock_unreachable_reason(node), "");
  }
  // Debian's ldconfig is linked statically (static-pie).
  if (!fs::exists("/sbin/ldconfig")) GTEST_SKIP() << "no /sbin/ldconfig to try a static program on";
  EXPECT_EQ(clock_unreachable_reason("/sbin/ldconfig"),
            "/sbin/ldconfig is statically linked: a preloaded library cannot replace its clock functions");
  const Capabilities caps = external_capabilities(true, {"/sbin/ldconfig"}, "");
  EXPECT_TRUE(caps.has(Capability::PauseClient));
  EXPECT_FALSE(caps.has(Capability::ClockJumpClient));
  EXPECT_FALSE(caps.has(Capability::Failover));
  // The run is refused before it starts, with that reason.
  auto parsed = runner::parse_scenario(R"({"lock": {}, "workload": {"kind": "external", "command": ["/sbin/ldconfig"]},
      "faults": [{"kind": "clock-jump", "target": "client-1", "at_ms": 10, "jump_ms": 5000}],
      "expect": {"violations": []}})", "s.json");
  ASSERT_TRUE(std::holds_alternative<runner::Scenario>(parsed)) << std::get<runner::ScenarioError>(parsed).message();
  EXPECT_NE(runner::live_unsupported(std::get<runner::Scenario>(parsed), {}).find("statically linked"), std::string::npos);
}

}  // namespace
}  // namespace lockstep::live
