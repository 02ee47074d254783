// The readable reports (HTML, Markdown, JUnit) say what happened: one lane per process and
// node, faults shaded, the violating overlap in red, text escaped, and they stay small
// on huge histories.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "lockstep/reports/example.h"
#include "lockstep/reports/report.h"
#include "lockstep/reports/writers.h"

namespace lockstep::reports {
namespace {

constexpr int64_t kMs = 1'000'000;

size_t count(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos; at = haystack.find(needle, at + 1)) ++n;
  return n;
}

TEST(ReportTimeline, OneLanePerProcessAndNode) {
  auto [r, h] = example_run();
  const Timeline t = build_timeline(r, h);
  ASSERT_EQ(t.lanes.size(), 3u);
  EXPECT_EQ(t.lanes[0].id, "client-1");
  EXPECT_EQ(t.lanes[1].id, "client-2");
  EXPECT_EQ(t.lanes[2].id, "node-1");
  EXPECT_EQ(t.lanes[2].keys.size(), 2u);
  EXPECT_EQ(t.lanes[2].keys[0].owner, 1);
  EXPECT_EQ(t.lanes[2].keys[1].owner, 2);
  // client-1 believed it held the lock from its acquire to its failed release.
  ASSERT_EQ(t.lanes[0].holds.size(), 1u);
  EXPECT_EQ(t.lanes[0].holds[0].begin_ns, 2 * kMs);
  EXPECT_EQ(t.lanes[0].holds[0].end_ns, 1554 * kMs);
}

TEST(ReportTimeline, FaultBandAndOverlapHighlight) {
  auto [r, h] = example_run();
  const Timeline t = build_timeline(r, h);
  ASSERT_EQ(t.faults.size(), 1u);
  EXPECT_EQ(t.faults[0].kind, "pause");
  EXPECT_EQ(t.faults[0].lanes, std::vector<std::string>{"client-1"});
  EXPECT_EQ(t.faults[0].begin_ns, 50 * kMs);
  EXPECT_EQ(t.faults[0].end_ns, 1550 * kMs);
  ASSERT_EQ(t.highlights.size(), 2u);
  EXPECT_EQ(t.highlights[0].property, "mutual-exclusion");
  EXPECT_EQ(t.highlights[0].begin_ns, 1013 * kMs);
  EXPECT_EQ(t.highlights[0].end_ns, 1116 * kMs);
  EXPECT_EQ(t.highlights[0].lanes, (std::vector<std::string>{"client-1", "client-2"}));
  // The damage a lost-update verdict only counts: client-1's write, computed from its read
  // of 10 before the pause, overwrote client-2's sale.
  EXPECT_EQ(t.highlights[1].property, "lost-update");
  EXPECT_EQ(t.highlights[1].label, "lost write");
  EXPECT_EQ(t.highlights[1].begin_ns, 1552 * kMs);
  EXPECT_EQ(t.highlights[1].lanes, std::vector<std::string>{"client-1"});
  EXPECT_EQ(t.highlights[1].title,
            "client-1 wrote 9 at 1.552s, computed from its read of 10 at 0.004s; client-2's write of 9 at 1.116s came "
            "in between and was overwritten: its update was lost.");
}

TEST(ReportTimeline, ForeignUnlockIsAMarkerOnTheNode) {
  auto [r, h] = example_run();
  checker::Event del;
  del.type = checker::EventType::Truth;
  del.process = 1;
  del.f = "key-del";
  del.key = "lock";
  del.node = 0;
  del.time_ns = 1100 * kMs;
  del.extra = {{"owner", 2}};
  h.events.insert(h.events.begin() + 16, del);
  r.violations = {{checker::Property::ForeignUnlock, "client-1's unlock deleted client-2's lock.", {1, 2}, 1100 * kMs, 1}};
  const Timeline t = build_timeline(r, h);
  ASSERT_EQ(t.highlights.size(), 1u);
  EXPECT_EQ(t.highlights[0].begin_ns, t.highlights[0].end_ns);
  EXPECT_EQ(t.highlights[0].lanes, (std::vector<std::string>{"node-1", "client-1"}));
  const std::string html = render_html(r, h);
  EXPECT_NE(html.find("data-property=\"foreign-unlock\""), std::string::npos);
  EXPECT_NE(html.find("class=\"marker-head\""), std::string::npos);
}

TEST(ReportTimeline, TicksAreRoundNumbers) {
  EXPECT_EQ(tick_step_ns(1600 * kMs, 10), 200 * kMs);
  EXPECT_EQ(tick_step_ns(10'000 * kMs, 10), 1000 * kMs);
  EXPECT_EQ(tick_label(400 * kMs, 200 * kMs, 1600 * kMs), "400ms");
  EXPECT_EQ(tick_label(2500 * kMs, 500 * kMs, 6000 * kMs), "2.5s");
  EXPECT_EQ(tick_label(3000 * kMs, 1000 * kMs, 9000 * kMs), "3s");
}

TEST(ReportHtml, LanesFaultsAndOverlapInThePage) {
  auto [r, h] = example_run();
  const std::string html = render_html(r, h);
  EXPECT_EQ(count(html, "data-lane=\"client-1\""), 1u);
  EXPECT_EQ(count(html, "data-lane=\"client-2\""), 1u);
  EXPECT_EQ(count(html, "data-lane=\"node-1\""), 1u);
  EXPECT_NE(html.find("class=\"fault f-pause\""), std::string::npos);
  EXPECT_NE(html.find("pause 1.5s"), std::string::npos);
  EXPECT_NE(html.find("data-property=\"mutual-exclusion\""), std::string::npos);
  EXPECT_NE(html.find("overlap 103ms"), std::string::npos);
  EXPECT_NE(html.find("lockstep run --seed 1005 scenarios/example-gc-pause.json"), std::string::npos);
  EXPECT_NE(html.find("both held the lock for 0.103s."), std::string::npos);
}

TEST(ReportHtml, SelfContainedAndDeterministic) {
  auto [r, h] = example_run();
  const std::string html = render_html(r, h);
  EXPECT_EQ(html, render_html(r, h));
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find(" src="), std::string::npos);
  EXPECT_EQ(html.find("url(http"), std::string::npos);
  EXPECT_EQ(count(html, "http"), count(html, "http://www.w3.org/2000/svg"));
}

TEST(ReportHtml, EscapesText) {
  auto [r, h] = example_run();
  r.description = "x <script>alert(1)</script> & \"y\"";
  r.violations[0].explanation = "a<b & c>d";
  const std::string html = render_html(r, h);
  EXPECT_EQ(html.find("<script>alert"), std::string::npos);
  EXPECT_NE(html.find("x &lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;y&quot;"), std::string::npos);
  EXPECT_NE(html.find("a&lt;b &amp; c&gt;d"), std::string::npos);
  EXPECT_EQ(html.find("a<b & c>d"), std::string::npos);
}

TEST(ReportMarkdown, SentenceReplayAndExcerpt) {
  auto [r, h] = example_run();
  const std::string md = render_markdown(r, h);
  EXPECT_NE(md.find("**VIOLATION** (as expected)"), std::string::npos);
  EXPECT_NE(md.find("- **mutual-exclusion** (two holders): client-2's critical section [1.013s, 1.116s]"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("Found: two-holders: mutual-exclusion; damage: lost-update."), std::string::npos) << md;
  EXPECT_NE(md.find("```sh\nlockstep run --seed 1005 scenarios/example-gc-pause.json\n```"), std::string::npos);
  EXPECT_NE(md.find("| pause | client-1 | 50ms | 1.5s |"), std::string::npos);
  EXPECT_NE(md.find("```text\n"), std::string::npos);
  EXPECT_NE(md.find("key-expire  lock   \"tok-1\" owner=client-1"), std::string::npos);
}

TEST(ReportExcerpt, CoversTheOverlappingSections) {
  auto [r, h] = example_run();
  const Excerpt ex = history_excerpt(r, h);
  ASSERT_FALSE(ex.lines.empty());
  // Lead-in: how client-1 got into its section.
  EXPECT_NE(ex.lines.front().find("0.000000s  client-1  invoke acquire"), std::string::npos) << ex.lines.front();
  EXPECT_NE(ex.lines[2].find("0.002000s  client-1  ok     acquire"), std::string::npos) << ex.lines[2];
  EXPECT_NE(ex.lines.back().find("1.552000s"), std::string::npos);
  const Excerpt capped = history_excerpt(r, h, 6);
  EXPECT_EQ(capped.lines.size(), 7u);  // 3 + "… N events elided …" + 3
  EXPECT_EQ(capped.elided, ex.lines.size() - 6);
}

std::vector<RunReport> junit_rows() {
  auto [ok, h] = example_run();
  RunReport mismatch = ok;
  mismatch.scenario = "b<&>";
  mismatch.expected = reports::Expectation::safe();
  mismatch.violations[0].explanation = "x < y & \"z\"";
  RunReport unknown = ok;
  unknown.scenario = "c";
  unknown.verdict = "unknown";
  unknown.algorithm = "";
  return {ok, mismatch, unknown};
}

TEST(ReportJunit, CountsFailuresAndEscapes) {
  const std::string xml = render_junit(junit_rows(), "catalogue");
  EXPECT_EQ(xml.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", 0), 0u);
  EXPECT_NE(xml.find("<testsuite name=\"catalogue\" tests=\"3\" failures=\"2\" errors=\"0\""), std::string::npos);
  EXPECT_EQ(count(xml, "<testcase "), 3u);
  EXPECT_EQ(count(xml, "<failure "), 2u);
  EXPECT_NE(xml.find("name=\"b&lt;&amp;&gt;\""), std::string::npos);
  EXPECT_NE(xml.find("message=\"expected safe, found two-holders: mutual-exclusion; damage: lost-update\""),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("x &lt; y &amp; &quot;z&quot;"), std::string::npos);
  EXPECT_NE(xml.find("<failure type=\"unknown\""), std::string::npos);
  EXPECT_NE(xml.find("classname=\"catalogue\" name=\"c\""), std::string::npos);
  EXPECT_NE(xml.find("replay: lockstep run --seed 1005"), std::string::npos);
  EXPECT_EQ(count(xml, "<testcase "), count(xml, "</testcase>"));
}

TEST(ReportIndex, LinksEveryScenarioWithItsVerdict) {
  const std::string html = render_index(junit_rows());
  EXPECT_NE(html.find("<a href=\"example-gc-pause/report.html\">example-gc-pause</a>"), std::string::npos);
  EXPECT_NE(html.find("<a href=\"b%3C%26%3E/report.html\">b&lt;&amp;&gt;</a>"), std::string::npos);
  EXPECT_NE(html.find("<title>lockstep run — 3 scenarios</title>"), std::string::npos);
  EXPECT_NE(html.find("3 scenarios run in the simulator, 1 as expected, 2 mismatched."), std::string::npos);
  EXPECT_NE(html.find("MISMATCH"), std::string::npos);
  // Each row says what the scenario is about.
  EXPECT_NE(html.find("<td class=\"desc\" title=\"A GC pause (1.5 s) outlives the lease (1 s): client-2 takes the "
                      "expired lock.\">"),
            std::string::npos);
  EXPECT_NE(html.find("<input class=\"filter\""), std::string::npos);
  EXPECT_NE(html.find("<th data-sort>scenario</th>"), std::string::npos);
}

TEST(ReportIndex, SkippedScenariosAreListedWithTheReasonAndTheWorldIsInTheTitle) {
  auto rows = junit_rows();
  for (auto& r : rows) r.world = "live";
  IndexInfo info{"", {{"ext-client", "node-redlock 5.0.0", "Race 5 with node-redlock.", "needs the live world"}}};
  const std::string html = render_index({rows[0]}, info);
  EXPECT_NE(html.find("<title>lockstep live — 2 scenarios</title>"), std::string::npos);
  EXPECT_NE(html.find("<h1>lockstep live</h1>"), std::string::npos);
  EXPECT_NE(html.find("1 scenario run against real redis-server, 1 as expected, 0 mismatched, 1 skipped."),
            std::string::npos);
  EXPECT_NE(html.find("<tr class=\"skipped\" data-status=\"skipped\""), std::string::npos);
  EXPECT_NE(html.find("Race 5 with node-redlock.<br><b>Skipped:</b> needs the live world</td>"), std::string::npos);
  EXPECT_NE(render_index({rows[0]}, {"run", {}}).find("<title>lockstep run — 1 scenario</title>"), std::string::npos);

  // skipped.json keeps them for `lockstep report`, which redraws the index from files.
  const auto dir = std::filesystem::temp_directory_path() / ("lockstep-index-" + std::to_string(::getpid()));
  std::string error;
  ASSERT_TRUE(write_index(dir, {rows[0]}, error, info)) << error;
  std::vector<Skipped> back;
  ASSERT_TRUE(read_skipped(dir, back, error)) << error;
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].reason, "needs the live world");
  ASSERT_TRUE(write_index(dir, {rows[0]}, error)) << error;
  EXPECT_FALSE(std::filesystem::exists(dir / "skipped.json")) << "a later batch with none skipped removes the list";
  std::filesystem::remove_all(dir);
}

// 500 clients taking turns, 200 000 events: the page must stay under the cap and say
// what it left out.
checker::History huge_history(int clients, size_t events) {
  checker::History h;
  auto add = [&](checker::EventType t, int64_t p, const char* f, int64_t time, int64_t node = -1) {
    checker::Event e;
    e.type = t;
    e.process = p;
    e.f = f;
    e.key = "lock";
    e.time_ns = time;
    e.node = node;
    if (std::string(f) == "key-del") e.extra = {{"owner", p}};
    h.events.push_back(std::move(e));
  };
  using T = checker::EventType;
  int64_t t = 0;
  for (int64_t i = 0; h.events.size() < events; ++i) {
    const int64_t p = 1 + i % clients;
    add(T::Invoke, p, "acquire", t);
    add(T::Truth, p, "key-set", t + 1000, 0);
    add(T::Ok, p, "acquire", t + 2000);
    add(T::Truth, p, "cs-enter", t + 2000);
    add(T::Truth, p, "cs-exit", t + 50'000);
    add(T::Invoke, p, "release", t + 50'000);
    add(T::Truth, p, "key-del", t + 51'000, 0);
    add(T::Ok, p, "release", t + 52'000);
    t += 60'000;
  }
  return h;
}

TEST(ReportHtml, HugeHistoryStaysUnderTheCap) {
  auto [r, small] = example_run();
  const checker::History h = huge_history(500, 200'000);
  r.violations[0].processes = {7, 8};
  r.violations[0].at_ns = 7 * 60'000 + 2000;
  const std::string html = render_html(r, h);
  EXPECT_LE(html.size(), 3'000'000u);
  EXPECT_NE(html.find("data-lane=\"client-7\""), std::string::npos);
  EXPECT_NE(html.find("data-lane=\"others\""), std::string::npos);
  EXPECT_EQ(html.find("data-lane=\"client-300\""), std::string::npos);
  EXPECT_NE(html.find("other clients"), std::string::npos);
  EXPECT_NE(html.find("drawn as one"), std::string::npos);

  // Two clients with 100 000 turns each: no lanes to fold, so bars are merged instead.
  const std::string two = render_html(r, huge_history(2, 200'000));
  EXPECT_LE(two.size(), 3'000'000u);
  EXPECT_NE(two.find("drawn as one"), std::string::npos);

  // A tighter budget drops detail step by step (smaller history: each step re-renders).
  const checker::History medium = huge_history(500, 20'000);
  const std::string full = render_html(r, medium);
  HtmlOptions tight;
  tight.max_bytes = full.size() * 3 / 4;
  const std::string capped = render_html(r, medium, tight);
  EXPECT_LE(capped.size(), tight.max_bytes);
  EXPECT_NE(capped.find("detail was dropped"), std::string::npos);
}

}  // namespace
}  // namespace lockstep::reports

// Published SHA-256 test vectors, and lengths on either side of the padding boundaries
// (55/56/63/64 bytes), where hashing whole blocks in place and padding only the tail
// could go wrong.
TEST(HistoryDigest, MatchesSha256TestVectors) {
  using lockstep::reports::sha256_hex;
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  EXPECT_EQ(sha256_hex(std::string(55, 'a')), "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  EXPECT_EQ(sha256_hex(std::string(56, 'a')), "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
  EXPECT_EQ(sha256_hex(std::string(64, 'a')), "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
}
