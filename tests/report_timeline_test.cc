// What the timeline says beyond lanes and bars: where a lease ran out (not where expiry
// noticed it), where the key went after a failover, when a fault waiting on an event
// really struck, the cause of a linearizability failure, and how long each acquire waited.
#include <gtest/gtest.h>

#include <algorithm>

#include "lockstep/reports/example.h"
#include "lockstep/reports/writers.h"

namespace lockstep::reports {
namespace {

constexpr int64_t kMillis = 1'000'000;
using checker::Event;
using checker::EventType;

Event truth(const char* f, int64_t process, int64_t ms, int64_t node, nlohmann::json value = nullptr,
            nlohmann::json extra = nullptr) {
  Event e;
  e.type = EventType::Truth;
  e.process = process;
  e.f = f;
  e.key = node >= 0 ? "lock" : "";
  e.time_ns = ms * kMillis;
  e.node = node;
  e.value = std::move(value);
  e.extra = std::move(extra);
  return e;
}

std::vector<Mark> marks_of(const Timeline& t, const std::string& kind) {
  std::vector<Mark> out;
  for (const auto& m : t.marks) {
    if (m.kind == kind) out.push_back(m);
  }
  return out;
}

const Lane& lane(const Timeline& t, const std::string& id) {
  for (const auto& l : t.lanes) {
    if (l.id == id) return l;
  }
  static const Lane kNone;
  ADD_FAILURE() << "no lane " << id;
  return kNone;
}

TEST(ReportLease, TheKeyEndsWhereItsLeaseRanOutNotWhereExpiryNoticed) {
  auto [r, h] = example_run();
  // Expiry noticed 10 ms after the 1 s lease set at 1 ms ran out (client-2's SET found it).
  for (auto& e : h.events) {
    if (e.f == "key-expire") e.time_ns = 1011 * kMillis;
  }
  const Timeline t = build_timeline(r, h);
  const auto& keys = lane(t, "node-1").keys;
  ASSERT_GE(keys.size(), 2u);
  EXPECT_EQ(keys[0].begin_ns, 1 * kMillis);
  EXPECT_EQ(keys[0].end_ns, 1001 * kMillis);
  EXPECT_EQ(keys[0].cls, "key");
  EXPECT_EQ(keys[1].cls, "key-expired");
  EXPECT_EQ(keys[1].begin_ns, 1001 * kMillis);
  EXPECT_EQ(keys[1].end_ns, 1011 * kMillis);
  const auto deadlines = marks_of(t, "deadline");
  ASSERT_EQ(deadlines.size(), 2u);
  EXPECT_EQ(deadlines[0].lane, "node-1");
  EXPECT_EQ(deadlines[1].lane, "client-1");  // it still believed it held the lock
  EXPECT_EQ(deadlines[1].at_ns, 1001 * kMillis);
  EXPECT_EQ(deadlines[1].title,
            "client-1's lease on node-1 ran out at 1.001s while it still believed it held the lock (until 1.554s)");
  EXPECT_NE(render_html(r, h).find("class=\"key-expired\""), std::string::npos);
}

// A library profile has no lease_ms: the judgment says the lease its own option set
// (stats.lease_ms), and the timeline draws that one.
TEST(ReportLease, AProfilesLeaseIsTheOneTheJudgmentFound) {
  auto [r, h] = example_run();
  r.scenario_json["lock"] = {{"profile", "redsync@4.17.0"}, {"key", "lock"}, {"options", {{"expiry", 1000}}}};
  r.stats["lease_ms"] = 1000;
  const auto deadlines = marks_of(build_timeline(r, h), "deadline");
  ASSERT_EQ(deadlines.size(), 2u);
  EXPECT_EQ(deadlines[0].at_ns, 1001 * kMillis);
  // The library's default (redsync: 8 s), which this key never reached.
  r.stats["lease_ms"] = 8000;
  EXPECT_TRUE(marks_of(build_timeline(r, h), "deadline").empty());
}

TEST(ReportLease, ARenewedKeyGetsNoDeadlineFromItsFirstLease) {
  auto [r, h] = example_run();
  // With a 100 ms lease the key outlived its lease by 900 ms: something renewed it (a
  // watchdog the history does not record), so the acquire's lease says nothing of its end.
  r.scenario_json["lock"]["lease_ms"] = 100;
  const Timeline t = build_timeline(r, h);
  EXPECT_TRUE(marks_of(t, "deadline").empty());
  EXPECT_EQ(lane(t, "node-1").keys[0].end_ns, 1001 * kMillis);
  EXPECT_EQ(lane(t, "node-1").keys[0].cls, "key");
}

checker::History failover_history(int64_t failover_node, int64_t new_key_node) {
  checker::History h;
  Event a;
  a.type = EventType::Invoke;
  a.process = 1;
  a.f = "acquire";
  a.key = "lock";
  h.events.push_back(a);
  h.events.push_back(truth("key-set", 1, 1, 0, "t1"));
  a.type = EventType::Ok;
  a.time_ns = 2 * kMillis;
  h.events.push_back(a);
  h.events.push_back(truth("crash", -1, 100, 0, "node-1"));
  h.events.push_back(truth("failover", -1, 500, failover_node, {{"from", "node-1"}, {"to", "node-1-replica-1"}}));
  h.events.push_back(truth("key-set", 2, 600, new_key_node, "t2"));
  return h;
}

RunReport sentinel_report() {
  auto [r, h] = example_run();
  r.violations.clear();
  r.faults = nlohmann::json::array();
  r.scenario_json["topology"] = {{"nodes", 1}, {"replicas", 1}, {"sentinels", 3}};
  return r;
}

TEST(ReportFailover, TheKeyIsDrawnOnThePromotedReplica) {
  const RunReport r = sentinel_report();
  // The simulator records the promoted replica by its own index (1); a live run keeps
  // polling the master's address (index 0), which now reaches the replica. Both draw the
  // second key on node-1-replica-1.
  for (int64_t node : {1, 0}) {
    const Timeline t = build_timeline(r, failover_history(node, node));
    const auto& replica = lane(t, "node-1-replica-1");
    ASSERT_EQ(replica.keys.size(), 1u) << "node " << node;
    EXPECT_EQ(replica.keys[0].owner, 2);
    EXPECT_EQ(replica.note, "master from 0.500s");
    EXPECT_EQ(lane(t, "node-1").keys.size(), 1u);
    const auto failovers = marks_of(t, "failover");
    ASSERT_EQ(failovers.size(), 1u);
    EXPECT_EQ(failovers[0].lane, "node-1");
    EXPECT_EQ(failovers[0].to_lane, "node-1-replica-1");
    EXPECT_EQ(failovers[0].at_ns, 500 * kMillis);
  }
}

TEST(ReportFailover, ServerNamesFollowTheTopology) {
  const nlohmann::json cluster = {{"nodes", 3}, {"replicas", 1}};
  EXPECT_EQ(server_name(cluster, 0), "node-1");
  EXPECT_EQ(server_name(cluster, 2), "node-3");
  EXPECT_EQ(server_name(cluster, 3), "node-1-replica-1");
  EXPECT_EQ(server_name(cluster, 4), "node-2-replica-1");
  const nlohmann::json two = {{"nodes", 2}, {"replicas", 2}};
  EXPECT_EQ(server_name(two, 3), "node-1-replica-2");
  EXPECT_EQ(server_name(two, 4), "node-2-replica-1");
  EXPECT_EQ(server_name(nullptr, 1), "node-2");
}

TEST(ReportFaults, AFaultOnAnEventIsPlacedWhenItStruckWithItsSentence) {
  auto [r, h] = example_run();
  const nlohmann::json spec = {{"kind", "pause"},
                               {"target", "client-1"},
                               {"at_ms", 0},
                               {"duration_ms", 1500},
                               {"on", {{"process", "client-1"}, {"enters", "critical-section"}, {"delay_ms", 48}}}};
  nlohmann::json struck = spec;
  struck["at_ms"] = 50;
  r.faults = nlohmann::json::array({spec});
  for (auto& e : h.events) {
    if (e.f == "fault-start" || e.f == "fault-end") e.value = struck;
    if (e.f == "fault-end") e.time_ns = 1549 * kMillis;
  }
  const Timeline t = build_timeline(r, h);
  ASSERT_EQ(t.faults.size(), 1u);
  EXPECT_EQ(t.faults[0].begin_ns, 50 * kMillis);
  EXPECT_EQ(t.faults[0].end_ns, 1549 * kMillis);  // when its end was recorded
  EXPECT_EQ(t.faults[0].sentence,
            "pause 1.5s on client-1 48ms after client-1 enters critical-section: struck at 0.050s, over at 1.549s");
  const auto rows = fault_rows(r, h);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].at, "0.050s");
  EXPECT_EQ(rows[0].details, "48ms after client-1 enters critical-section");
  const std::string html = render_html(r, h);
  EXPECT_EQ(html.find("delay_ms"), std::string::npos) << "no raw JSON in the page";
  EXPECT_NE(html.find("fault-start        pause 1.5s on client-1 48ms after client-1 enters critical-section"),
            std::string::npos)
      << "the excerpt says the fault in words";
  EXPECT_EQ(fault_rows(r).at(0).at, "on an event");
  // A record this version cannot read (a report.json from elsewhere) keeps its row, key by key.
  r.faults = nlohmann::json::array({{{"kind", "meteor"}, {"target", "node-1"}, {"at_ms", 5}}});
  const auto unread = fault_rows(r, h);
  ASSERT_EQ(unread.size(), 1u);
  EXPECT_EQ(unread[0].kind, "meteor");
  EXPECT_EQ(unread[0].details, "at_ms 5, target \"node-1\"");
}

TEST(ReportLinearizability, TheFindingIsDrawnWithItsCauseAndExcerpted) {
  auto [r, h] = example_run();
  r.violations = {{checker::Property::Linearizability,
                   "the lock's operations are not linearizable as a mutex: process 2's acquire completed at t=1.013s "
                   "while process 1 still held the lock since t=0.002s (not released until t=1.554s).",
                   {2},
                   1013 * kMillis,
                   1}};
  r.expected = Expectation::at_least({"linearizability"});
  const Timeline t = build_timeline(r, h);
  ASSERT_EQ(t.highlights.size(), 1u);
  const Highlight& hl = t.highlights[0];
  EXPECT_TRUE(hl.cause);
  EXPECT_EQ(hl.label, "not linearizable");
  EXPECT_EQ(hl.begin_ns, 2 * kMillis);  // client-1's acquire: the cause
  EXPECT_EQ(hl.end_ns, 1013 * kMillis);  // client-2's acquire: what could not be placed
  EXPECT_EQ(hl.lanes, (std::vector<std::string>{"client-2", "client-1"}));

  const Excerpt ex = history_excerpt(r, h);
  EXPECT_EQ(ex.caption,
            "linearizability: from client-1 taking the lock to client-2's acquire, which could not be placed while "
            "client-1 held it (0.002s to 1.013s)");
  const bool has_cause = std::any_of(ex.lines.begin(), ex.lines.end(), [](const std::string& l) {
    return l.find("client-1  ok     acquire") != std::string::npos;
  });
  EXPECT_TRUE(has_cause) << "the excerpt shows client-1 taking the lock";
  EXPECT_NE(render_html(r, h).find("data-property=\"linearizability\""), std::string::npos);
}

TEST(ReportAvailability, EveryAcquireWaitIsInTheStrip) {
  auto [r, h] = example_run();
  const Timeline t = build_timeline(r, h);
  ASSERT_EQ(t.waits.size(), 2u);
  EXPECT_EQ(t.waits[0].lane, "client-1");
  EXPECT_EQ(t.waits[0].end_ns - t.waits[0].begin_ns, 2 * kMillis);
  EXPECT_EQ(t.waits[1].lane, "client-2");
  EXPECT_EQ(t.waits[1].begin_ns, 5 * kMillis);
  EXPECT_EQ(t.waits[1].end_ns, 1013 * kMillis);
  EXPECT_EQ(t.waits[1].outcome, "ok");
  EXPECT_EQ(t.waits[1].title, "client-2 waited 1.008s for the lock [0.005s, 1.013s] and got the lock");
  TimelineOptions few;
  few.max_waits = 1;
  const Timeline capped = build_timeline(r, h, few);
  EXPECT_EQ(capped.waits.size(), 1u);
  EXPECT_EQ(capped.waits[0].lane, "client-2");  // the longest wait is the one kept
}

// An external client's watchdog extends on a thread of its own, overlapping its main
// thread's operation: both are drawn, and the extend's hover text names the thread.
TEST(ReportOperations, AnExternalClientsNamedThreadIsSaid) {
  auto [r, h] = example_run();
  for (const EventType type : {EventType::Invoke, EventType::Ok}) {
    Event e;
    e.type = type;
    e.process = 1;
    e.thread = 1;
    e.f = "extend";
    e.key = "lock";
    e.time_ns = (type == EventType::Invoke ? 3 : 4) * kMillis;
    e.extra = {{"client_thread", "watchdog"}};
    h.events.push_back(e);
  }
  std::stable_sort(h.events.begin(), h.events.end(), [](const Event& a, const Event& b) { return a.time_ns < b.time_ns; });
  const Timeline t = build_timeline(r, h);
  int named = 0;
  for (const auto& op : lane(t, "client-1").ops) {
    if (op.text == "extend") {
      EXPECT_EQ(op.title.rfind("client-1 (thread watchdog) extend lock → ok", 0), 0u) << op.title;
      ++named;
    } else {
      EXPECT_EQ(op.title.find("thread"), std::string::npos) << op.title;
    }
  }
  EXPECT_EQ(named, 1);
}

}  // namespace
}  // namespace lockstep::reports
