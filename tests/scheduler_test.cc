#include "lockstep/sim/scheduler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
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

// The queue is a sorted array at a few pending events and a heap at many; the order
// must not change as a run moves between the two, cancellations and all. Each event
// checks that it is the earliest of a reference set kept beside the scheduler, then
// schedules more or none, so the pending count climbs past the array's limit (32) twice
// and drains below the heap's (12) between.
TEST(Scheduler, OrderHoldsAsThePendingCountRisesAndFalls) {
  Scheduler s;
  std::set<std::pair<int64_t, uint64_t>> expected;  // (time, scheduling order)
  std::map<uint64_t, std::pair<int64_t, Scheduler::EventId>> ids;  // by scheduling order: time, id
  uint64_t scheduled = 0, ran = 0;
  size_t most = 0, fewest_after_most = SIZE_MAX, second_peak = 0;
  uint64_t lcg = 12345;
  auto next = [&lcg] {
    lcg = lcg * 6364136223846793005ULL + 1442695040888963407ULL;
    return lcg >> 33;
  };
  std::function<void(uint64_t)> body;
  auto schedule = [&](int64_t t) {
    const uint64_t seq = scheduled++;
    expected.insert({t, seq});
    ids[seq] = {t, s.at(t, [&body, seq] { body(seq); })};
  };
  body = [&](uint64_t seq) {
    ASSERT_FALSE(expected.empty());
    ASSERT_EQ(expected.begin()->second, seq) << "event " << seq << " ran out of order";
    ASSERT_EQ(expected.begin()->first, s.now());
    expected.erase(expected.begin());
    ids.erase(seq);
    ++ran;
    // Grow to several hundred pending, drain to a handful and stay there a while, grow
    // again, drain to the end.
    int children = 0;
    if (ran < 400 || (ran > 1200 && ran < 1500)) children = 2 + static_cast<int>(next() % 2);
    else if (ran < 1200 && expected.size() < 8) children = 2;
    for (int c = 0; c < children; ++c) schedule(s.now() + static_cast<int64_t>(next() % 50));
    // Now and then cancel a pending event: its key stays queued until its turn.
    if (next() % 7 == 0 && !ids.empty()) {
      auto it = ids.upper_bound(next() % scheduled);
      if (it == ids.end()) it = ids.begin();
      expected.erase({it->second.first, it->first});
      s.cancel(it->second.second);
      ids.erase(it);
    }
    most = std::max(most, expected.size());
    if (ran > 400 && ran < 1200) fewest_after_most = std::min(fewest_after_most, expected.size());
    if (ran > 1200) second_peak = std::max(second_peak, expected.size());
  };
  for (int i = 0; i < 5; ++i) schedule(static_cast<int64_t>(next() % 10));
  s.run_until(INT64_MAX / 2);
  EXPECT_TRUE(expected.empty());
  EXPECT_EQ(s.pending(), 0u);
  // The run went through both shapes, and back.
  EXPECT_GT(most, 300u);
  EXPECT_LT(fewest_after_most, 12u);
  EXPECT_GT(second_peak, 200u);
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
