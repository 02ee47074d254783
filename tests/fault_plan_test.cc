// The fault plan plays every kind on any WorldControl the same way: here on a recording
// world that only writes down what it was asked to do and when, so the plan's schedule
// and records are checked apart from either real world.
#include "lockstep/fault_plan.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace lockstep {
namespace {

// A world whose timeline is a sorted list of calls, and whose actions are lines of text.
class RecordingWorld : public WorldControl {
 public:
  explicit RecordingWorld(Capabilities caps = Capabilities::all()) : caps_(std::move(caps)) {
    on_truth = [this](Truth kind, int64_t process, nlohmann::json value, int64_t node, nlohmann::json) {
      static const char* kNames[] = {"fault-start", "fault-end", "crash", "restart", "failover", "failover-requested"};
      log.push_back(at_ms() + " truth " + kNames[static_cast<int>(kind)] + " p" + std::to_string(process) + " n" +
                    std::to_string(node) + " " + value.dump());
    };
  }

  // Runs everything scheduled, in (time, order of scheduling).
  void run(Nanos until = Nanos::max()) {
    while (!queue_.empty() && queue_.begin()->first.first <= until) {
      auto it = queue_.begin();
      now_ = it->first.first;
      auto fn = std::move(it->second);
      queue_.erase(it);
      fn();
    }
  }

  const Capabilities& capabilities() const override { return caps_; }
  Nanos now() const override { return now_; }
  void at(Nanos t, std::function<void()> fn) override { queue_.emplace(std::make_pair(t, seq_++), std::move(fn)); }
  std::optional<ProcessRef> process(std::string_view name) const override {
    if (name == "client-1") return ProcessRef{0, "client-1", false, 1, -1};
    if (name == "node-1") return ProcessRef{1, "node-1", true, -1, 0};
    return std::nullopt;
  }
  void pause(const ProcessRef& p, Nanos d) override { act("pause " + p.name + " " + std::to_string(to_ms(d))); }
  void crash(const ProcessRef& p) override { act("crash " + p.name); }
  void restart(const ProcessRef& p) override { act("restart " + p.name); }
  void jump_wall_clock(const ProcessRef& p, Nanos by) override {
    act("jump " + p.name + " " + std::to_string(to_ms(by)));
  }
  void set_clock_drift(const ProcessRef& p, double ppm) override {
    act("drift " + p.name + " " + std::to_string(static_cast<int>(ppm)));
  }
  void advance(Nanos t) { now_ = t; }
  void add_link_delay(const ProcessRef& p, Nanos d) override { act("delay " + p.name + " " + std::to_string(to_ms(d))); }
  void add_link_jitter(const ProcessRef& p, Nanos d) override {
    act("jitter " + p.name + " " + std::to_string(to_ms(d)));
  }
  void block_link(const ProcessRef& a, const ProcessRef& b, int delta) override {
    act("block " + a.name + "->" + b.name + " " + std::to_string(delta));
  }
  void fail_over(const ProcessRef& p) override { act("failover " + p.name); }
  Env& env(const ProcessRef&) override { std::abort(); }
  Reply admin(int, const std::vector<std::string>&) override { std::abort(); }
  int node_of_key(const std::string&) const override { return 0; }
  int node_count() const override { return 1; }

  std::vector<std::string> log;

 private:
  std::string at_ms() const { return std::to_string(to_ms(now_)) + "ms"; }
  void act(const std::string& what) { log.push_back(at_ms() + " " + what); }

  Capabilities caps_;
  Nanos now_{0};
  uint64_t seq_ = 0;
  std::map<std::pair<Nanos, uint64_t>, std::function<void()>> queue_;
};

FaultSpec fault(FaultKind kind, std::string target, int64_t at_ms) {
  FaultSpec f;
  f.kind = kind;
  f.target = std::move(target);
  f.at_ms = at_ms;
  return f;
}

TEST(FaultPlan, CrashWithRestartIsRecordedAroundTheWorldsActions) {
  FaultSpec crash = fault(FaultKind::Crash, "client-1", 10);
  crash.restart_after_ms = 5;
  RecordingWorld w;
  FaultPlan plan({crash}, w);
  w.run();
  EXPECT_EQ(w.log, (std::vector<std::string>{
                       R"(10ms truth fault-start p1 n-1 {"at_ms":10,"kind":"crash","restart_after_ms":5,"target":"client-1"})",
                       "10ms crash client-1",
                       R"(10ms truth crash p1 n-1 "client-1")",
                       R"(15ms truth restart p1 n-1 "client-1")",
                       "15ms restart client-1",
                   }));
}

TEST(FaultPlan, TimedFaultsUndoWhatTheyDidAndMarkTheirEnd) {
  FaultSpec delay = fault(FaultKind::Delay, "node-1", 0);
  delay.duration_ms = 100;
  delay.delay_ms = 30;
  FaultSpec part = fault(FaultKind::Partition, "", 50);
  part.groups = {{"client-1"}, {"node-1"}};
  part.duration_ms = 10;
  part.one_way = true;
  RecordingWorld w;
  FaultPlan plan({delay, part}, w);
  w.run();
  EXPECT_EQ(w.log, (std::vector<std::string>{
                       R"(0ms truth fault-start p-1 n0 {"at_ms":0,"delay_ms":30,"duration_ms":100,"kind":"delay","target":"node-1"})",
                       "0ms delay node-1 30",
                       R"(50ms truth fault-start p-1 n-1 {"at_ms":50,"duration_ms":10,"groups":[["client-1"],["node-1"]],"kind":"partition","one_way":true})",
                       "50ms block client-1->node-1 1",
                       "60ms block client-1->node-1 -1",
                       R"(60ms truth fault-end p-1 n-1 {"at_ms":50,"duration_ms":10,"groups":[["client-1"],["node-1"]],"kind":"partition","one_way":true})",
                       "100ms delay node-1 -30",
                       R"(100ms truth fault-end p-1 n0 {"at_ms":0,"delay_ms":30,"duration_ms":100,"kind":"delay","target":"node-1"})",
                   }));
}

TEST(FaultPlan, ATriggeredFaultStrikesOnTheNthMatchingEventAfterItsDelay) {
  FaultSpec pause = fault(FaultKind::Pause, "client-1", 0);
  pause.duration_ms = 300;
  pause.on = FaultTrigger{"client-1", FaultTrigger::Event::Sends, "del", "lock", 2, 0};
  FaultSpec crash = fault(FaultKind::Crash, "client-1", 0);
  crash.on = FaultTrigger{"client-1", FaultTrigger::Event::Receives, "GET", "", 1, 40};
  RecordingWorld w;
  FaultPlan plan({pause, crash}, w);
  auto sends_del = [](std::string_view key) { return WorldEvent{WorldEvent::Kind::Sends, "client-1", "DEL", key}; };
  w.advance(Millis(5));
  EXPECT_FALSE(w.event(sends_del("lock")));  // the first DEL: not yet
  EXPECT_FALSE(w.event(sends_del("other")));  // another key does not count
  EXPECT_FALSE(w.event({WorldEvent::Kind::Sends, "client-2", "DEL", "lock"}));  // nor another client
  w.advance(Millis(12));
  EXPECT_TRUE(w.event(sends_del("lock")));  // the second: the pause is due now
  EXPECT_FALSE(w.event(sends_del("lock")));  // a fault strikes once
  // A delayed fault does not hold the event back.
  EXPECT_FALSE(w.event({WorldEvent::Kind::Receives, "client-1", "get", ""}));
  w.run();
  EXPECT_EQ(w.log, (std::vector<std::string>{
                       R"(12ms truth fault-start p1 n-1 {"at_ms":12,"duration_ms":300,"kind":"pause","on":{"key":"lock","nth":2,"process":"client-1","sends":"del"},"target":"client-1"})",
                       "12ms pause client-1 300",
                       R"(52ms truth fault-start p1 n-1 {"at_ms":52,"kind":"crash","on":{"delay_ms":40,"process":"client-1","receives":"GET"},"target":"client-1"})",
                       "52ms crash client-1",
                       R"(52ms truth crash p1 n-1 "client-1")",
                       R"(312ms truth fault-end p1 n-1 {"at_ms":12,"duration_ms":300,"kind":"pause","on":{"key":"lock","nth":2,"process":"client-1","sends":"del"},"target":"client-1"})",
                   }));
  EXPECT_TRUE(plan.unfired().empty());
  EXPECT_EQ(describe_fault(pause), "pause 300ms on client-1 when client-1 sends del lock (the 2nd time)");
  EXPECT_EQ(describe_fault(crash), "crash on client-1 40ms after client-1 receives GET");
}

TEST(FaultPlan, AnEventThatNeverCameLeavesItsFaultUnfired) {
  FaultSpec crash = fault(FaultKind::Crash, "client-1", 0);
  crash.on = FaultTrigger{"client-1", FaultTrigger::Event::Enters, "critical-section", "", 3, 0};
  RecordingWorld w;
  {
    FaultPlan plan({crash}, w);
    EXPECT_FALSE(w.event({WorldEvent::Kind::Enters, "client-1", "critical-section", ""}));
    EXPECT_FALSE(w.event({WorldEvent::Kind::Enters, "client-1", "critical-section", ""}));
    w.run();
    EXPECT_TRUE(w.log.empty());
    ASSERT_EQ(plan.unfired().size(), 1u);
    EXPECT_EQ(plan.unfired()[0], crash);
  }
  EXPECT_FALSE(w.on_event) << "a plan that is gone no longer listens";
}

TEST(FaultPlan, EveryKindHasWordsARecordThatReadsBackAndASpan) {
  for (const auto& k : fault_kinds()) {
    FaultSpec f = sized_fault(k.kind, k.target == FaultTarget::Groups ? "" : "node-1", 7, 1200, true);
    if (k.target == FaultTarget::Groups) f.groups = {{"client-1"}, {"node-1"}};
    EXPECT_EQ(fault_kind_named(k.name), k.kind);
    EXPECT_EQ(fault_from_record(fault_record(f)), f) << k.name;
    FaultSpec triggered = f;
    triggered.on = FaultTrigger{"node-1", FaultTrigger::Event::Deletes, "lock", "", 2, 5};
    EXPECT_EQ(fault_from_record(fault_record(triggered)), triggered) << k.name;
    EXPECT_EQ(fault_file_json(f)["kind"], k.name);
    EXPECT_EQ(fault_file_json(f).size(), k.keys.size() + 1) << k.name;
    EXPECT_NE(describe_fault(f).find(" at 7ms"), std::string::npos) << describe_fault(f);
    EXPECT_FALSE(fault_label(f).empty());
  }
  FaultSpec pause = sized_fault(FaultKind::Pause, "client-1", 50, 1500, false);
  EXPECT_EQ(describe_fault(pause), "pause 1.5s on client-1 at 50ms");
  EXPECT_EQ(fault_span_ms(pause), 1500);
  EXPECT_EQ(fault_span_ms(sized_fault(FaultKind::ClockDrift, "node-1", 0, 5, false)), std::nullopt);
  EXPECT_EQ(fault_span_ms(sized_fault(FaultKind::ClockJump, "node-1", 0, 5, false)), 0);
  EXPECT_EQ(fault_span_ms(sized_fault(FaultKind::Crash, "node-1", 0, 5, false)), std::nullopt);
  EXPECT_EQ(fault_from_record(nlohmann::json{{"kind", "meteor"}}), std::nullopt);
  EXPECT_EQ(command_key({"EVAL", "return 1", "2", "lock", "stock", "token"}), "lock");
  EXPECT_EQ(command_key({"evalsha", "abc", "0"}), "");
  EXPECT_EQ(command_key({"SET", "lock", "1"}), "lock");
  EXPECT_EQ(command_key({"PING"}), "");
}

TEST(FaultPlan, AWorldWithoutACapabilityRefusesWithItsReason) {
  Capabilities caps = Capabilities::all();
  caps.deny(Capability::PauseServer, "servers here cannot stop");
  FaultSpec on_client = sized_fault(FaultKind::Pause, "client-1", 0, 10, false);
  FaultSpec on_server = sized_fault(FaultKind::Pause, "node-1", 0, 10, false);
  EXPECT_EQ(unplayable({on_client}, caps), "");
  EXPECT_EQ(unplayable({on_client, on_server}, caps), "servers here cannot stop (pause 10ms on node-1 at 0ms)");
}

TEST(FaultPlan, ACostlyCapabilityCheckRunsOnlyWhenAskedAndOnce) {
  int checks = 0;
  Capabilities caps = Capabilities::all();
  caps.allow_if(Capability::ClockJumpServer, [&checks] {
    ++checks;
    return std::string("no clock library");
  });
  EXPECT_EQ(unplayable({sized_fault(FaultKind::Pause, "node-1", 0, 10, false)}, caps), "");
  EXPECT_EQ(checks, 0);
  EXPECT_FALSE(caps.has(Capability::ClockJumpServer));
  EXPECT_EQ(caps.why_not(Capability::ClockJumpServer), "no clock library");
  EXPECT_EQ(checks, 1);
}

}  // namespace
}  // namespace lockstep
