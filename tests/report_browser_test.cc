// A real browser opens report.html: headless Chromium must load the page without a
// console error, run its script (which marks <body data-ok="1">), and lay out the SVG
// lanes. Skipped, saying so, only when Chromium is not installed (scripts/setup
// installs it).
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <string>

#include <unistd.h>

#include "lockstep/reports/example.h"
#include "lockstep/reports/writers.h"
#include "cdp_browser.h"
#include "test_shell.h"

namespace lockstep::reports {
namespace {

namespace fs = std::filesystem;

using Result = test_shell::Result;

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

class ReportBrowser : public ::testing::Test {
 protected:
  void SetUp() override {
    browser_ = test_browser::chromium_path();
    if (browser_.empty()) GTEST_SKIP() << "chromium is not installed (scripts/setup installs it); browser test skipped";
    // ctest runs the two browser tests at once: each needs a folder of its own, or one
    // wipes the page (and Chromium's profile) out from under the other.
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("lockstep-report-browser-" + std::string(info->name()) + "-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    auto [r, h] = example_run();
    std::string error;
    ASSERT_TRUE(write_scenario_reports(dir_ / r.scenario, r, h, error)) << error;
    ASSERT_TRUE(write_index(dir_, {r}, error)) << error;
    page_ = dir_ / r.scenario / "report.html";
  }

  // Headless, offline and without a profile: nothing but the file is loaded.
  std::string command(const std::string& action, const fs::path& file, const fs::path& log) const {
    return "timeout 60 '" + browser_ +
           "' --headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update "
           "--disable-sync --no-first-run --hide-scrollbars --user-data-dir='" + (dir_ / "profile").string() +
           "' --enable-logging=stderr --v=0 " + action + " 'file://" + file.string() + "' 2>'" + log.string() + "'";
  }

  static void expect_no_console_errors(const std::string& log) {
    EXPECT_EQ(log.find("Uncaught"), std::string::npos) << log;
    EXPECT_EQ(log.find("CONSOLE("), std::string::npos) << "the page wrote to the console:\n" << log;
    EXPECT_EQ(log.find("ERR_FILE_NOT_FOUND"), std::string::npos) << log;
  }

  void TearDown() override {
    if (!dir_.empty() && !HasFailure()) fs::remove_all(dir_);
  }

  std::string browser_;
  fs::path dir_, page_;
};

TEST_F(ReportBrowser, PageLoadsRunsItsScriptAndDrawsTheLanes) {
  const fs::path log = dir_ / "dom.log";
  Result r = test_shell::run(command("--dump-dom", page_, log));
  ASSERT_EQ(r.status, 0) << slurp(log);
  expect_no_console_errors(slurp(log));
  EXPECT_NE(r.out.find("data-ok=\"1\""), std::string::npos) << "the page's script did not run";
  for (const char* lane : {"client-1", "client-2", "node-1"}) {
    EXPECT_NE(r.out.find(std::string("data-lane=\"") + lane + "\""), std::string::npos) << lane;
  }
  EXPECT_NE(r.out.find("data-property=\"mutual-exclusion\""), std::string::npos);

  Result index = test_shell::run(command("--dump-dom", dir_ / "index.html", log));
  ASSERT_EQ(index.status, 0) << slurp(log);
  EXPECT_NE(index.out.find("data-ok=\"1\""), std::string::npos);
}

TEST_F(ReportBrowser, Screenshot) {
  const fs::path png = dir_ / "shot.png", log = dir_ / "shot.log";
  Result r = test_shell::run(command("--window-size=1400,1000 --screenshot='" + png.string() + "'", page_, log));
  ASSERT_EQ(r.status, 0) << slurp(log);
  expect_no_console_errors(slurp(log));
  const std::string data = slurp(png);
  ASSERT_GT(data.size(), 10'000u) << "screenshot missing or blank";
  EXPECT_EQ(data.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
}

}  // namespace
}  // namespace lockstep::reports
