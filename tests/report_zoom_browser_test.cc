// The timeline in a real browser, driven as a person drives it: a two-minute run whose 19
// overlaps all happen in its first second, where at the first view they share a few
// pixel columns. The test zooms with Ctrl+wheel, the keyboard, a drag along the time axis
// and the toolbar, pans by dragging, then steps through every violation with the "next"
// button, and reads the DOM after each step: every overlap must be there, on screen, its
// own width. Skipped, saying so, only when Chromium is not installed (scripts/setup
// installs it).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <set>
#include <string>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cdp_browser.h"
#include "test_shell.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using test_browser::CdpBrowser;

json read_json(const fs::path& p) {
  std::ifstream f(p);
  return json::parse(f, nullptr, false);
}

// A test's own folder, the lockstep binary, and a browser to open what it writes there.
// Skipped, saying so, when Chromium is not installed.
class BrowserPage : public ::testing::Test {
 protected:
  void SetUp() override {
    chromium_ = test_browser::chromium_path();
    if (chromium_.empty()) GTEST_SKIP() << "chromium is not installed (scripts/setup installs it); browser test skipped";
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("lockstep-" + std::string(info->test_suite_name()) + "-" + info->name() + "-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }

  void TearDown() override {
    browser_.stop();
    if (!dir_.empty() && !HasFailure()) fs::remove_all(dir_);
  }

  // `lockstep ARGS`, its output and exit code.
  static test_shell::Result lockstep(const std::string& args) {
    return test_shell::run("'" + std::string(LOCKSTEP_BINARY) + "' " + args + " 2>&1");
  }

  // Starts the browser on a page of the test's folder.
  void open(const std::string& page, int width, int height) {
    std::string error;
    ASSERT_TRUE(browser_.start(chromium_, dir_ / "profile", width, height, error)) << error;
    ASSERT_TRUE(browser_.open("file://" + (dir_ / page).string())) << browser_.last_error();
  }

  // Clicks the first element `selector` matches: `dx` from its left edge, or its middle.
  void click(const std::string& selector, double dx = -1) {
    const json at = json::parse(browser_.eval("JSON.stringify((function(){var r=document.querySelector('" + selector +
                                              "').getBoundingClientRect();return {x:r.left+(" + std::to_string(dx) +
                                              "<0?r.width/2:" + std::to_string(dx) + "),y:r.top+r.height/2};})())")
                                     .get<std::string>());
    browser_.click(at["x"].get<double>(), at["y"].get<double>());
  }

  std::string chromium_;
  fs::path dir_;
  CdpBrowser browser_;
};

class ReportZoom : public BrowserPage {
 protected:
  void SetUp() override {
    BrowserPage::SetUp();
    if (IsSkipped()) return;
    const std::string scenario = std::string(LOCKSTEP_SOURCE_DIR) + "/tests/data/good_scenarios/long-run-overlaps.json";
    test_shell::Result run = lockstep("run --out '" + (dir_ / "out").string() + "' '" + scenario + "'");
    ASSERT_EQ(run.code, 0) << run.out;
    const json report = read_json(dir_ / "out/long-run-overlaps/report.json");
    for (const auto& v : report["violations"]) {
      if (v["property"] == "mutual-exclusion") overlaps_ = v["count"].get<int>();
    }
    ASSERT_GE(overlaps_, 10) << "the run should overlap again and again";
    open("out/long-run-overlaps/report.html", 1400, 900);
    ASSERT_EQ(browser_.eval("document.querySelector('.chart').getAttribute('data-zoom-ready')"), "1")
        << browser_.last_error();
    measure();
  }

  // Where the plot is on screen now.
  void measure() {
    box_ = json::parse(browser_.eval(R"(JSON.stringify((function(){var c=document.querySelector('.chart'),
        s=c.querySelector('svg').getBoundingClientRect(),k=s.width/+c.getAttribute('data-width');
        return {left:s.left+k*+c.getAttribute('data-plot-x'),width:k*+c.getAttribute('data-plot-w'),
                top:s.top,axis:s.top+k*10,lanes:s.top+k*120,end:+c.getAttribute('data-end')};})()))")
                           .get<std::string>());
  }

  // The view as the page says it is: [begin, end] in ns.
  std::pair<double, double> view() {
    const std::string v = browser_.eval("document.querySelector('.chart').getAttribute('data-view')").get<std::string>();
    const size_t sp = v.find(' ');
    return {std::stod(v.substr(0, sp)), std::stod(v.substr(sp + 1))};
  }

  // Every overlap's box as the browser lays it out: {begin_ns, left, width, top} in pixels.
  json overlap_boxes() {
    return json::parse(browser_.eval(R"(JSON.stringify([].map.call(
        document.querySelectorAll('g.violation[data-property="mutual-exclusion"]'),function(g){
          var r=g.querySelector('rect.overlap').getBoundingClientRect();
          return {begin:+g.getAttribute('data-begin'),left:r.left,width:r.width,top:r.top,height:r.height};})))")
                           .get<std::string>());
  }

  // The x on screen where time t is in the current view.
  double x_of(double t) {
    auto [a, b] = view();
    return box_["left"].get<double>() + (t - a) / (b - a) * box_["width"].get<double>();
  }

  double first_overlap_ns() {
    double first = 1e30;
    for (const auto& o : overlap_boxes()) first = std::min(first, o["begin"].get<double>());
    return first;
  }

  json box_;
  int overlaps_ = 0;
};

TEST_F(ReportZoom, EveryOverlapIsMarkedAndCrowdedAtTheFirstView) {
  const json boxes = overlap_boxes();
  ASSERT_EQ(boxes.size(), static_cast<size_t>(overlaps_)) << "one mark per overlap, not only the first";
  // The reason zoom exists: at the whole run's view they share a handful of pixel columns.
  std::set<int> columns;
  for (const auto& b : boxes) columns.insert(static_cast<int>(b["left"].get<double>()));
  EXPECT_LT(columns.size(), boxes.size());
  EXPECT_EQ(browser_.console(), std::vector<std::string>{});
}

TEST_F(ReportZoom, CtrlWheelKeysAndAxisDragZoomAndPan) {
  const double end = box_["end"].get<double>();
  EXPECT_EQ(view(), std::make_pair(0.0, end));
  // Ctrl+wheel over the first overlap: the view narrows around it.
  const double t = first_overlap_ns();
  for (int i = 0; i < 6; ++i) browser_.wheel(x_of(t), box_["lanes"].get<double>(), -400, 2);
  auto [a, b] = view();
  EXPECT_LT(b - a, end / 50);
  EXPECT_LE(a, t);
  EXPECT_GE(b, t);
  // A plain wheel is left to the page (it scrolls); the view stays.
  browser_.wheel(x_of(t), box_["lanes"].get<double>(), -400, 0);
  EXPECT_EQ(view(), std::make_pair(a, b));

  // Dragging the plot to the left shows later times.
  browser_.drag(box_["left"].get<double>() + 600, box_["lanes"].get<double>(), box_["left"].get<double>() + 300,
                box_["lanes"].get<double>());
  auto [a2, b2] = view();
  EXPECT_GT(a2, a);
  EXPECT_NEAR(b2 - a2, b - a, (b - a) * 1e-6);

  // Keyboard: 0 shows the whole run, + zooms in around the middle, → moves later.
  browser_.key("0");
  EXPECT_EQ(view(), std::make_pair(0.0, end));
  browser_.key("+");
  auto [a3, b3] = view();
  EXPECT_NEAR(b3 - a3, end / 2, end * 1e-6);
  browser_.click(box_["left"].get<double>() + 10, box_["lanes"].get<double>());  // focus the chart
  browser_.key("ArrowRight");
  EXPECT_GT(view().first, a3);

  // A drag along the time axis zooms into exactly that span.
  browser_.key("0");
  const double from = box_["left"].get<double>() + 100, to = box_["left"].get<double>() + 300;
  browser_.drag(from, box_["axis"].get<double>(), to, box_["axis"].get<double>());
  auto [a4, b4] = view();
  const double px_ns = end / box_["width"].get<double>();
  EXPECT_NEAR(a4, 100 * px_ns, px_ns);
  EXPECT_NEAR(b4, 300 * px_ns, px_ns);
  EXPECT_EQ(browser_.console(), std::vector<std::string>{});
}

TEST_F(ReportZoom, StepsThroughEveryViolationAndEachOverlapStandsAlone) {
  const int total = browser_.eval("document.querySelectorAll('g.violation').length").get<int>();
  ASSERT_GE(total, overlaps_);
  double left = box_["left"].get<double>(), right = left + box_["width"].get<double>();
  std::set<int> seen;
  for (int i = 1; i <= total; ++i) {
    click(".zoombar button[data-act=next]");
    ASSERT_EQ(browser_.eval("document.querySelector('.chart').getAttribute('data-current')"), std::to_string(i));
    EXPECT_EQ(browser_.eval("document.querySelector('.vcur').textContent"), std::to_string(i));
    const json current = json::parse(browser_.eval(R"(JSON.stringify((function(){
        var g=document.querySelector('g.violation.current'),m=g.querySelector('rect.overlap,.marker-head');
        var r=m.getBoundingClientRect();
        return {property:g.getAttribute('data-property'),i:+g.getAttribute('data-i'),left:r.left,width:r.width};})()))")
                                     .get<std::string>());
    // It is on screen, inside the plot, and wide enough to see and to hover.
    EXPECT_GE(current["left"].get<double>() + current["width"].get<double>(), left) << current;
    EXPECT_LE(current["left"].get<double>(), right) << current;
    EXPECT_GE(current["width"].get<double>(), 2) << current;
    if (current["property"] == "mutual-exclusion") seen.insert(current["i"].get<int>());
  }
  EXPECT_EQ(seen.size(), static_cast<size_t>(overlaps_)) << "the next button reached every overlap";

  // Zoomed on the first second, every overlap has pixels of its own: no two share a box
  // (two overlaps may begin together, when a third client entered beside two: then they
  // sit on different pairs of lanes).
  browser_.key("0");
  measure();
  const double px_ns = box_["end"].get<double>() / box_["width"].get<double>();
  double last_overlap = 0;
  for (const auto& o : overlap_boxes()) last_overlap = std::max(last_overlap, o["begin"].get<double>());
  const double axis_y = box_["axis"].get<double>();
  left = box_["left"].get<double>();
  right = left + box_["width"].get<double>();
  browser_.drag(left - 1, axis_y, left + (last_overlap + 50e6) / px_ns + 3, axis_y);
  json boxes = overlap_boxes();
  EXPECT_LT(view().second, box_["end"].get<double>() / 50);
  for (size_t i = 0; i < boxes.size(); ++i) {
    EXPECT_GE(boxes[i]["width"].get<double>(), 2) << boxes[i];
    EXPECT_GE(boxes[i]["left"].get<double>(), left - 1) << boxes[i];
    EXPECT_LE(boxes[i]["left"].get<double>() + boxes[i]["width"].get<double>(), right + 1) << boxes[i];
    for (size_t j = 0; j < i; ++j) {
      const bool same = std::abs(boxes[i]["left"].get<double>() - boxes[j]["left"].get<double>()) < 0.5 &&
                        std::abs(boxes[i]["top"].get<double>() - boxes[j]["top"].get<double>()) < 0.5 &&
                        std::abs(boxes[i]["height"].get<double>() - boxes[j]["height"].get<double>()) < 0.5;
      EXPECT_FALSE(same) << boxes[i] << " and " << boxes[j];
    }
  }
  EXPECT_EQ(browser_.console(), std::vector<std::string>{});
}

// `lockstep check --html` on a Porcupine etcd history: a click on a step of the partial
// linearization shows that operation on the timeline, and the one that could not be
// placed is there, in red, on screen.
TEST_F(BrowserPage, CheckPageShowsTheStepClicked) {
  const std::string history = std::string(LOCKSTEP_SOURCE_DIR) + "/tests/data/histories/etcd-cas-register-invalid.log";
  test_shell::Result run = lockstep("check --model cas-register --html '" + (dir_ / "etcd.html").string() + "' '" + history + "'");
  ASSERT_EQ(run.code, 1) << run.out;
  open("etcd.html", 1400, 1400);
  EXPECT_EQ(browser_.eval("document.body.getAttribute('data-ok')"), "1");
  EXPECT_EQ(browser_.eval("document.querySelectorAll('ol.lin li').length"), 11);

  click("ol.lin li:nth-child(6)", 20);  // p1 cas [1 4]
  EXPECT_EQ(browser_.eval("document.querySelector('ol.lin li.picked').textContent"), "p1 cas [1,4]→ value 4");
  const std::string view = browser_.eval("document.querySelector('.chart').getAttribute('data-view')").get<std::string>();
  EXPECT_NE(view, browser_.eval("'0 '+document.querySelector('.chart').getAttribute('data-end')").get<std::string>());

  click("ol.lin li.stuck", 20);
  const json stuck = json::parse(browser_.eval(R"(JSON.stringify((function(){
      var c=document.querySelector('.chart'),s=c.querySelector('svg').getBoundingClientRect(),k=s.width/+c.getAttribute('data-width');
      var r=document.querySelector('rect.opbox.stuck').getBoundingClientRect();
      return {left:r.left,width:r.width,plot:s.left+k*+c.getAttribute('data-plot-x'),plotw:k*+c.getAttribute('data-plot-w'),
              text:document.querySelector('text.optext[data-full="read → 4"]').textContent};})()))")
                                     .get<std::string>());
  EXPECT_GE(stuck["left"].get<double>(), stuck["plot"].get<double>() - 1) << stuck;
  EXPECT_LE(stuck["left"].get<double>() + stuck["width"].get<double>(),
            stuck["plot"].get<double>() + stuck["plotw"].get<double>() + 1)
      << stuck;
  EXPECT_GT(stuck["width"].get<double>(), 100) << "zoomed in on it";
  EXPECT_EQ(stuck["text"], "read → 4");
  EXPECT_EQ(browser_.console(), std::vector<std::string>{});
}

// index.html in a real browser: typing in the filter keeps the rows that match every word,
// a status button keeps its rows, and a click on a header sorts by that column.
TEST_F(BrowserPage, IndexFiltersAndSorts) {
  const std::string catalogue = std::string(LOCKSTEP_SOURCE_DIR) + "/scenarios";
  test_shell::Result run = lockstep("run --out '" + (dir_ / "out").string() + "' '" + catalogue +
                                    "/01-setnx-crash-deadlock.json' '" + catalogue + "/02-set-px-lua-crash-recovers.json' '" +
                                    catalogue + "/05-set-px-del-slow-holder.json' '" + catalogue +
                                    "/external/redis-py-gc-pause.json'");
  ASSERT_EQ(run.code, 0) << run.out;
  open("out/index.html", 1400, 1000);
  ASSERT_EQ(browser_.eval("document.body.getAttribute('data-ok')"), "1");
  const int all = browser_.eval("document.querySelectorAll('table.runs tbody tr').length").get<int>();
  const int skipped = browser_.eval("document.querySelectorAll('tr.skipped').length").get<int>();
  EXPECT_GT(skipped, 0) << "the live-only scenarios are listed as skipped";
  EXPECT_EQ(browser_.eval("document.body.getAttribute('data-shown')"), std::to_string(all));
  const auto visible = [&] {
    return browser_.eval("[].filter.call(document.querySelectorAll('table.runs tbody tr'),function(r){return !r.hidden;})"
                        ".map(function(r){return r.cells[0].textContent;}).join(' ')")
        .get<std::string>();
  };

  click("input.filter", 10);
  for (char c : std::string("lua crash")) browser_.key(std::string(1, c));
  EXPECT_EQ(visible(), "02-set-px-lua-crash-recovers") << "every word, anywhere in the row";
  for (int i = 0; i < 9; ++i) browser_.key("Backspace");
  EXPECT_EQ(browser_.eval("document.querySelector('input.filter').value"), "");

  click(".tools button[data-status=skipped]");
  EXPECT_EQ(browser_.eval("document.body.getAttribute('data-shown')"), std::to_string(skipped));
  click(".tools button[data-status=all]");
  EXPECT_EQ(browser_.eval("document.body.getAttribute('data-shown')"), std::to_string(all));

  click("th[data-sort]:nth-child(6)");  // verdict, a to z: safe before skipped before violation
  EXPECT_EQ(browser_.eval("document.querySelector('table.runs tbody tr').cells[5].textContent"), "safe");
  click("th[data-sort]:nth-child(6)");
  EXPECT_EQ(browser_.eval("document.querySelector('table.runs tbody tr').cells[5].textContent"), "violation");
  EXPECT_EQ(browser_.console(), std::vector<std::string>{});
}

}  // namespace
}  // namespace lockstep
