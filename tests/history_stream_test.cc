#include "lockstep/runner/history_stream.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "lockstep/reports/report.h"
#include "lockstep/runner/lock_checks.h"
#include "lockstep/runner/recorder.h"
#include "lockstep/runner/sim_runner.h"

namespace lockstep::runner {
namespace {

// Events of every shape the writer handles: plain values, an object, a string that needs
// escaping, a node and extra fields.
void record_mixed(Recorder& rec, int i) {
  switch (i % 5) {
    case 0: rec.op(checker::EventType::Invoke, i % 7, "acquire", "lock"); break;
    case 1: rec.op(checker::EventType::Ok, i % 7, "acquire", "lock", "acquired"); break;
    case 2: rec.op(checker::EventType::Ok, i % 7, "read", "stock", i); break;
    case 3: rec.truth(checker::truth::kKeySet, i % 7, "lock", "tok\"en\n" + std::to_string(i), 0); break;
    default: rec.truth(checker::truth::kKeyDel, -1, "lock", {{"n", i}}, 1, {{"owner", i % 7}}); break;
  }
}

struct Streamed {
  std::string jsonl;
  std::string sha256;
  std::string want_jsonl;
};

// Records `n` events through a stream whose writer starts at `start_at`; the history
// starts with no room, so it moves many times while the writer reads it.
Streamed record_streamed(int n, size_t start_at) {
  int64_t now = 0;
  Recorder rec([&now] { return now; });
  rec.history().events = {};
  rec.history().events.shrink_to_fit();
  HistoryStream stream(rec.history().events, start_at);
  rec.stream_to(&stream);
  for (int i = 0; i < n; ++i, now += 1000) record_mixed(rec, i);
  rec.stream_to(nullptr);
  stream.close();
  checker::History h = std::move(rec.history());  // moved after close, as the runner does
  HistoryStream::Written w = stream.take();
  return {std::move(w.jsonl), std::move(w.sha256), checker::to_jsonl(h)};
}

TEST(HistoryStream, WritesExactlyWhatToJsonlWritesWhileTheHistoryGrows) {
  for (size_t start_at : {size_t{1}, size_t{100}, kEventsWorthAThread}) {
    const Streamed s = record_streamed(20'000, start_at);
    EXPECT_EQ(s.jsonl, s.want_jsonl) << "writer started at " << start_at;
    EXPECT_EQ(s.sha256, reports::sha256_hex(s.want_jsonl)) << "writer started at " << start_at;
  }
}

TEST(HistoryStream, AShortHistoryIsWrittenByTakeAlone) {
  const Streamed s = record_streamed(50, kEventsWorthAThread);
  EXPECT_EQ(s.jsonl, s.want_jsonl);
  EXPECT_EQ(s.sha256, reports::sha256_hex(s.want_jsonl));
  const Streamed none = record_streamed(0, kEventsWorthAThread);
  EXPECT_EQ(none.jsonl, "");
  EXPECT_EQ(none.sha256, reports::sha256_hex(""));
}

TEST(HistoryStream, ALineThatCannotBeWrittenFailsTakeNotTheRun) {
  int64_t now = 0;
  Recorder rec([&now] { return now; });
  HistoryStream stream(rec.history().events, 1);
  rec.stream_to(&stream);
  for (int i = 0; i < 3000; ++i) record_mixed(rec, i);
  rec.op(checker::EventType::Ok, 1, "read", "stock", std::string("\xff\xfe not UTF-8"));
  for (int i = 0; i < 3000; ++i) record_mixed(rec, i);
  stream.close();
  EXPECT_THROW(stream.take(), nlohmann::json::type_error);
  EXPECT_THROW(checker::to_jsonl(rec.history()), nlohmann::json::type_error);
}

TEST(HistoryStream, AnAbandonedStreamStopsItsWriter) {
  int64_t now = 0;
  Recorder rec([&now] { return now; });
  {
    HistoryStream stream(rec.history().events, 1);
    rec.stream_to(&stream);
    for (int i = 0; i < 10'000; ++i) record_mixed(rec, i);
    rec.stream_to(nullptr);
  }  // neither closed nor taken, as when the run throws: the destructor must not hang
  EXPECT_EQ(rec.history().events.size(), 10'000u);
}

Scenario contended(int64_t duration_ms) {
  Scenario s;
  s.name = "stream-contended";
  s.seed = 7;
  s.duration_ms = duration_ms;
  s.network.latency.kind = LatencySpec::Kind::Uniform;
  s.network.latency.min_ms = 0.2;
  s.network.latency.max_ms = 0.6;
  s.lock.algorithm = "set-px-lua";
  s.lock.lease_ms = 5000;
  s.lock.retry = {100000, 1, 1};
  s.workload.clients = 10;
  s.workload.initial_stock = 1'000'000;
  s.workload.attempts_per_client = 1'000'000;
  s.workload.hold_ms = 0;
  s.workload.wait_ms = 1'000'000;
  return s;
}

// A run long enough to be written on the second thread and one short enough not to be:
// either way the outcome carries the history's lines and their digest.
TEST(HistoryStream, ASimulatedRunReportsTheDigestOfItsOwnLines) {
  for (int64_t ms : {20, 1000}) {
    const RunOutcome out = run_in_sim(contended(ms));
    EXPECT_EQ(ms > 100, out.history.events.size() >= kEventsWorthAThread) << ms;
    EXPECT_EQ(out.history_jsonl, checker::to_jsonl(out.history)) << ms;
    EXPECT_EQ(out.report.history_sha256, reports::sha256_hex(out.history_jsonl)) << ms;
  }
}

std::string describe(const reports::RunReport& r) {
  std::string out = r.verdict + " " + r.stats.dump() + "\n";
  for (const auto& v : r.violations) {
    out += std::string(checker::to_string(v.property)) + " at " + std::to_string(v.at_ns) + " x" + std::to_string(v.count) + ": " + v.explanation + " [";
    for (int64_t p : v.processes) out += std::to_string(p) + " ";
    out += "]\n";
  }
  return out;
}

// A run's report, whose history was written on a second thread while it ran, finds
// exactly what judging the finished history from scratch finds, and what a run for the
// verdict only (no history written) finds.
TEST(HistoryStream, AStreamedRunIsJudgedAsItsFinishedHistoryIs) {
  Scenario unsafe = contended(1000);
  unsafe.lock.algorithm = "set-px-del";  // its unlock deletes whoever's key is there
  unsafe.lock.lease_ms = 1;              // and every hold outlasts its lease
  unsafe.workload.hold_ms = 2;
  // Long runs whose holder crashes: a key with no expiry stays with it to the end while
  // the others keep trying, and one that expires long after the crash goes to an
  // acquisition that began before the expiry and ends after it. Both are deadlocks, and
  // their lock operations include the crash's release.
  Scenario stuck = contended(3000);
  stuck.lock.algorithm = "setnx";
  stuck.deadlock_bound_ms = 100;
  FaultSpec crash;
  crash.kind = FaultKind::Crash;
  crash.target = "client-1";
  crash.on = FaultTrigger{"client-1", FaultTrigger::Event::Enters, "critical-section", "", 60, 0};
  stuck.faults = {crash};
  Scenario expires = stuck;
  expires.lock.algorithm = "set-px-lua";
  expires.lock.lease_ms = 500;
  // Each run, and for a deadlock how its report says the hold ended (null: none).
  using Case = std::pair<Scenario, const char*>;
  for (const auto& [s, until] : {Case{contended(1000), nullptr}, Case{contended(20), nullptr}, Case{unsafe, nullptr},
                                 Case{stuck, "to the end of the run"}, Case{expires, "until t="}}) {
    const RunOutcome out = run_in_sim(s);
    const std::string got = describe(out.report);
    if (until) {
      EXPECT_GE(out.history.events.size(), kEventsWorthAThread) << s.lock.algorithm;
      EXPECT_NE(got.find("deadlock at "), std::string::npos) << got;
      EXPECT_NE(got.find(until), std::string::npos) << got;
    }
    EXPECT_EQ(got, describe(judge_run(s, s, out.history))) << s.lock.algorithm;
    RunOptions quick;
    quick.verdict_only = true;
    EXPECT_EQ(got, describe(run_in_sim(s, quick).report)) << s.lock.algorithm;
  }
  const RunOutcome bad = run_in_sim(unsafe);
  EXPECT_GE(bad.history.events.size(), kEventsWorthAThread);
  EXPECT_TRUE(bad.report.found_violations().count("linearizability")) << describe(bad.report);
  EXPECT_TRUE(bad.report.found_violations().count("mutual-exclusion")) << describe(bad.report);
}

// A long history is checked for linearizability on a second thread; the report lists
// what it found after the invariants, as for a short one.
TEST(JudgeRun, ALongHistoryListsTheInvariantsThenTheLinearizabilityViolation) {
  for (int holds : {10, 2000}) {
    checker::History h;
    auto add = [&h](checker::EventType type, int64_t p, const char* f, int64_t t, nlohmann::json v = nullptr) {
      checker::Event e;
      e.type = type;
      e.process = p;
      e.f = f;
      e.key = "lock";
      e.value = std::move(v);
      e.time_ns = t;
      h.events.push_back(std::move(e));
    };
    int64_t t = 0;
    for (int i = 0; i < holds; ++i, t += 100) {  // orderly holds, one after another
      add(checker::EventType::Invoke, 1 + i % 3, "acquire", t);
      add(checker::EventType::Ok, 1 + i % 3, "acquire", t + 10, "acquired");
      add(checker::EventType::Truth, 1 + i % 3, checker::truth::kCsEnter, t + 11);
      add(checker::EventType::Truth, 1 + i % 3, checker::truth::kCsExit, t + 20);
      add(checker::EventType::Invoke, 1 + i % 3, "release", t + 21);
      add(checker::EventType::Ok, 1 + i % 3, "release", t + 30, "released");
    }
    // Then two holders at once.
    add(checker::EventType::Invoke, 8, "acquire", t);
    add(checker::EventType::Ok, 8, "acquire", t + 10, "acquired");
    add(checker::EventType::Truth, 8, checker::truth::kCsEnter, t + 11);
    add(checker::EventType::Invoke, 9, "acquire", t + 20);
    add(checker::EventType::Ok, 9, "acquire", t + 30, "acquired");
    add(checker::EventType::Truth, 9, checker::truth::kCsEnter, t + 31);
    add(checker::EventType::Truth, 8, checker::truth::kCsExit, t + 40);
    add(checker::EventType::Truth, 9, checker::truth::kCsExit, t + 41);
    Scenario s;
    s.lock.algorithm = "set-px-lua";
    s.lock.key = "lock";
    const reports::RunReport r = judge_run(s, s, h, true);
    ASSERT_EQ(h.events.size() >= kEventsWorthAThread, holds > 100);
    ASSERT_GE(r.violations.size(), 2u) << holds;
    EXPECT_EQ(r.violations.front().property, checker::Property::MutualExclusion) << holds;
    EXPECT_EQ(r.violations.back().property, checker::Property::Linearizability) << holds;
    EXPECT_EQ(r.verdict, reports::verdict::kViolation);
  }
}

}  // namespace
}  // namespace lockstep::runner
