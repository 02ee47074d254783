// A run directory round-trips: what write_scenario_reports leaves, load_run_dir reads back
// field for field, bad files are named with what is wrong, and `lockstep report DIR`
// redraws the readable reports and the index with the documented exit codes.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "lockstep/reports/example.h"
#include "lockstep/reports/writers.h"

namespace lockstep::reports {
namespace {

namespace fs = std::filesystem;

fs::path fresh_dir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("lockstep-report-test-" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::string file_text(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

void spill(const fs::path& p, const std::string& s) { std::ofstream(p, std::ios::binary) << s; }

void write_example(const fs::path& dir) {
  auto [r, h] = example_run();
  std::string error;
  ASSERT_TRUE(write_scenario_reports(dir, r, h, error)) << error;
  spill(dir / "history.jsonl", checker::to_jsonl(h));
}

TEST(ReportRunDir, RoundTrips) {
  const fs::path dir = fresh_dir("roundtrip") / "example-gc-pause";
  write_example(dir);
  RunReport r;
  checker::History h;
  std::string error;
  ASSERT_TRUE(load_run_dir(dir, r, h, error)) << error;
  auto [want, want_h] = example_run();
  EXPECT_EQ(to_json(r).dump(), to_json(want).dump());
  EXPECT_EQ(checker::to_jsonl(h), checker::to_jsonl(want_h));
  EXPECT_EQ(render_html(r, h), file_text(dir / "report.html"));
  EXPECT_EQ(render_markdown(r, h), file_text(dir / "report.md"));
}

TEST(ReportRunDir, BadFilesAreNamedWithTheReason) {
  const fs::path dir = fresh_dir("bad") / "s";
  write_example(dir);
  RunReport r;
  checker::History h;
  std::string error;

  spill(dir / "report.json", "{\"scenario\": \"s\", ");
  EXPECT_FALSE(load_run_dir(dir, r, h, error));
  EXPECT_NE(error.find((dir / "report.json").string() + ": not valid JSON"), std::string::npos) << error;

  spill(dir / "report.json", R"({"scenario": "s", "seed": -1, "verdict": "safe", "violations": []})");
  EXPECT_FALSE(load_run_dir(dir, r, h, error));
  EXPECT_NE(error.find("report.json: \"seed\" must be a non-negative integer"), std::string::npos) << error;

  spill(dir / "report.json", R"({"scenario": "s", "seed": 1, "verdict": "safe", "violations": [{"property": 3}]})");
  EXPECT_FALSE(load_run_dir(dir, r, h, error));
  EXPECT_NE(error.find("\"violations[0].property\" must be a string"), std::string::npos) << error;

  spill(dir / "report.json",
        R"({"scenario": "s", "seed": 1, "verdict": "violation", "violations": [{"property": "mutual-exlusion"}]})");
  EXPECT_FALSE(load_run_dir(dir, r, h, error));
  EXPECT_NE(error.find("\"violations[0].property\" must be one of mutual-exclusion, lost-update"), std::string::npos) << error;
  EXPECT_NE(error.find("not \"mutual-exlusion\""), std::string::npos) << error;

  spill(dir / "report.json", R"({"scenario": "s", "seed": 1, "verdict": "maybe", "violations": []})");
  EXPECT_FALSE(load_run_dir(dir, r, h, error));
  EXPECT_NE(error.find("\"verdict\" must be one of violation, safe, unknown"), std::string::npos) << error;

  spill(dir / "report.json", R"({"scenario": "s", "seed": 1, "verdict": "safe", "violations": []})");
  spill(dir / "history.jsonl", "{\"type\":\"invoke\",\"f\":\"acquire\"}\nnot json\n");
  EXPECT_FALSE(load_run_dir(dir, r, h, error));
  EXPECT_NE(error.find("history.jsonl:2: not valid JSON"), std::string::npos) << error;
}

int run_report(const fs::path& dir, const fs::path& log) {
  const std::string cmd = std::string(LOCKSTEP_BINARY) + " report '" + dir.string() + "' >'" + log.string() + "' 2>&1";
  const int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(ReportCommand, RedrawsEveryScenarioAndTheIndex) {
  const fs::path out = fresh_dir("command");
  write_example(out / "example-gc-pause");
  fs::remove(out / "example-gc-pause" / "report.html");
  const fs::path log = out / "log.txt";
  ASSERT_EQ(run_report(out, log), 0) << file_text(log);
  EXPECT_TRUE(fs::exists(out / "example-gc-pause" / "report.html"));
  EXPECT_NE(file_text(out / "index.html").find("example-gc-pause/report.html"), std::string::npos);
  EXPECT_NE(file_text(log).find("index.html (1 scenarios)"), std::string::npos) << file_text(log);

  spill(out / "example-gc-pause" / "report.json", "[]");
  EXPECT_EQ(run_report(out, log), 65);
  EXPECT_NE(file_text(log).find("report.json: expected a JSON object"), std::string::npos) << file_text(log);

  EXPECT_EQ(run_report(out / "does-not-exist", log), 64);
  EXPECT_EQ(run_report(fresh_dir("empty"), log), 65);
}

}  // namespace
}  // namespace lockstep::reports
