#include "lockstep/sim/scheduler.h"

#include <gtest/gtest.h>

#include <string>

namespace lockstep::sim {
namespace {

TEST(Scheduler, RunsEventsInTimeThenSchedulingOrder) {
  Scheduler s;
  std::string order;
  s.at(20, [&] { order += "c"; });
  s.at(10, [&] { order += "a"; });
  s.at(10, [&] { order += "b"; });  // same time: after "a", which was scheduled first
  s.at(5, [&] { order += "0"; });
  s.run_until(100);
  EXPECT_EQ(order, "0abc");
  EXPECT_EQ(s.now(), 100);
}

TEST(Scheduler, EventsScheduledWhileRunningKeepOrder) {
  Scheduler s;
  std::string order;
  s.at(10, [&] {
    order += "a";
    s.at(10, [&] { order += "c"; });  // same instant, runs after already-queued "b"
  });
  s.at(10, [&] { order += "b"; });
  s.run_until(10);
  EXPECT_EQ(order, "abc");
}

TEST(Scheduler, PastTimesRunNowAndTimeNeverGoesBack) {
  Scheduler s;
  s.run_until(50);
  int64_t seen = -1;
  s.at(10, [&] { seen = s.now(); });
  s.run_until(60);
  EXPECT_EQ(seen, 50);
}

TEST(Scheduler, EventsAfterTheHorizonWait) {
  Scheduler s;
  bool ran = false;
  s.at(101, [&] { ran = true; });
  s.run_until(100);
  EXPECT_FALSE(ran);
  EXPECT_EQ(s.pending(), 1u);
  s.run_until(101);
  EXPECT_TRUE(ran);
}

TEST(Scheduler, EventBoundStopsARunawayLoop) {
  Scheduler s;
  std::function<void()> again = [&] { s.after(1, again); };
  s.at(0, again);
  EXPECT_FALSE(s.run_until(1'000'000'000, 1000));
  EXPECT_LE(s.executed(), 1000u);
}

}  // namespace
}  // namespace lockstep::sim
