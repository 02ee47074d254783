#include "lockstep/sim/scheduler.h"

#include <gtest/gtest.h>

#include <array>
#include <string>
#include <vector>

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

// A ticket keeps an event's place from the moment it was taken: scheduled later, the
// event runs exactly where it would have run had it been scheduled then.
TEST(Scheduler, TicketsKeepThePlaceTheyTook) {
  Scheduler s;
  std::string order;
  s.at(10, [&] { order += "a"; });
  const Scheduler::Ticket t = s.reserve();
  s.at(10, [&] { order += "c"; });
  s.at(5, [&] {
    order += "0";
    s.at(10, t, [&] { order += "b"; });  // placed after "c", runs before it
  });
  s.run_until(100);
  EXPECT_EQ(order, "0abc");
}

TEST(Scheduler, UnusedTicketsLeaveNoTrace) {
  Scheduler s;
  std::string order;
  s.at(10, [&] { order += "a"; });
  (void)s.reserve();
  s.at(10, [&] { order += "b"; });
  s.run_until(100);
  EXPECT_EQ(order, "ab");
  EXPECT_EQ(s.executed(), 2u);
}

TEST(SchedulerDeathTest, ATicketWhosePlaceHasPassedAborts) {
  Scheduler s;
  const Scheduler::Ticket t = s.reserve();
  s.at(10, [] {});
  s.run_until(10);
  EXPECT_DEATH(s.at(10, t, [] {}), "place that has passed");
  EXPECT_DEATH(s.at(5, s.reserve(), [] {}), "place that has passed");
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

TEST(Scheduler, CancelledEventsNeitherRunNorCount) {
  Scheduler s;
  std::string order;
  s.at(10, [&] { order += "a"; });
  auto b = s.at(10, [&] { order += "b"; });
  s.at(20, [&] { order += "c"; });
  s.cancel(b);
  s.cancel(b);  // twice is harmless
  EXPECT_EQ(s.pending(), 2u);
  s.run_until(100);
  EXPECT_EQ(order, "ac");
  EXPECT_EQ(s.executed(), 2u);
}

TEST(Scheduler, CancellingAfterTheEventRanTouchesNothingElse) {
  Scheduler s;
  std::string order;
  auto a = s.at(10, [&] { order += "a"; });
  s.run_until(10);
  s.at(20, [&] { order += "b"; });  // may reuse a's slot
  s.cancel(a);
  s.run_until(30);
  EXPECT_EQ(order, "ab");
}

// Cancelling from anywhere in the heap keeps (time, sequence) order for the rest.
TEST(Scheduler, OrderSurvivesCancellations) {
  Scheduler s;
  std::vector<int> ran;
  std::vector<Scheduler::EventId> ids;
  for (int i = 0; i < 200; ++i) {
    const int64_t t = (i * 37) % 23;
    ids.push_back(s.at(t, [&ran, i] { ran.push_back(i); }));
  }
  for (int i = 0; i < 200; i += 3) s.cancel(ids[i]);
  s.run_until(100);
  std::vector<int> expected;
  for (int64_t t = 0; t < 23; ++t) {
    for (int i = 0; i < 200; ++i) {
      if (i % 3 != 0 && (i * 37) % 23 == t) expected.push_back(i);
    }
  }
  EXPECT_EQ(ran, expected);
}

TEST(Scheduler, LargeCapturesWork) {
  Scheduler s;
  std::string big(1000, 'x');
  std::array<int64_t, 16> many{};
  many[15] = 7;
  std::string seen;
  int64_t last = 0;
  s.at(1, [&seen, big] { seen = big; });
  s.at(2, [&last, many] { last = many[15]; });
  s.run_until(10);
  EXPECT_EQ(seen.size(), 1000u);
  EXPECT_EQ(last, 7);
}

}  // namespace
}  // namespace lockstep::sim
