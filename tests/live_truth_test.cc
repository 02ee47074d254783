// Live ground truth from polls and replies: what LockTruth may conclude, and what not.
#include <gtest/gtest.h>

#include "../runner/src/world/live_truth.h"
#include "lockstep/checker/history.h"

namespace lockstep::runner {
namespace {

constexpr int64_t kMs = 1'000'000;

Reply poll(const std::string& value, int64_t pttl_ms) {
  if (value.empty()) return Reply::array({Reply::status("none"), Reply::nil(), Reply::integer_of(-2)});
  return Reply::array({Reply::status("string"), Reply::bulk(value), Reply::integer_of(pttl_ms)});
}

std::vector<std::string> truths(const Recorder& rec) {
  std::vector<std::string> out;
  for (const auto& e : rec.history().events) {
    if (e.type == checker::EventType::Truth) out.push_back(e.f + ":" + std::to_string(e.process));
  }
  return out;
}

// Both holders write the same value ("1"): the lease runs out and the next client's SET NX
// lands between two polls, which see "1" both times. The NX success proves the key was
// gone in between, so the truth shows client 1's key expiring and client 2 setting it;
// without that, client 2's DEL would look like a foreign unlock of client 1's key.
TEST(LiveTruth, SameValueSetAgainBetweenTwoPollsIsAnExpiryAndANewHolder) {
  Recorder rec([] { return int64_t{0}; });
  LockTruth t(rec, "lock", 1);
  const std::vector<std::string> set = {"SET", "lock", "1", "NX", "PX", "100"};
  t.sent(1, set);
  t.replied(1, 0, set, Reply::ok(), 1 * kMs, 2 * kMs);
  t.observe(0, poll("1", 100), 3 * kMs, 4 * kMs);
  t.observe(0, poll("1", 5), 96 * kMs, 97 * kMs);
  t.sent(2, set);
  t.replied(2, 0, set, Reply::ok(), 102 * kMs, 103 * kMs);
  t.observe(0, poll("1", 99), 104 * kMs, 105 * kMs);
  const std::vector<std::string> del = {"DEL", "lock"};
  t.replied(2, 0, del, Reply::integer_of(1), 150 * kMs, 151 * kMs);
  t.observe(0, poll("", -2), 152 * kMs, 153 * kMs);
  t.settle_all(200 * kMs);
  EXPECT_EQ(truths(rec), (std::vector<std::string>{"key-set:1", "key-expire:-1", "key-set:2", "key-del:2"}));
  const auto& events = rec.history().events;
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[3].extra.value("owner", int64_t{-9}), 2);
}

// A poll and a client's commands race on the server: a SET NX answered after the poll
// was sent may have run after the poll read the key, so it proves nothing about what
// the poll saw (here: client 1 unlocked and client 2 locked right after the poll).
TEST(LiveTruth, ASetAnsweredAfterThePollLeftIsNoReset) {
  Recorder rec([] { return int64_t{0}; });
  LockTruth t(rec, "lock", 1);
  const std::vector<std::string> set1 = {"SET", "lock", "a", "NX", "PX", "100"};
  const std::vector<std::string> set2 = {"SET", "lock", "b", "NX", "PX", "100"};
  t.sent(1, set1);
  t.replied(1, 0, set1, Reply::ok(), 1 * kMs, 2 * kMs);
  t.observe(0, poll("a", 100), 3 * kMs, 4 * kMs);
  const std::vector<std::string> unlock = {"EVAL", "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0", "1", "lock", "a"};
  t.replied(1, 0, unlock, Reply::integer_of(1), 10 * kMs, 12 * kMs);
  t.sent(2, set2);
  t.replied(2, 0, set2, Reply::ok(), 11 * kMs, 13 * kMs);
  t.observe(0, poll("a", 90), 9 * kMs, 14 * kMs);
  t.observe(0, poll("b", 99), 15 * kMs, 16 * kMs);
  t.settle_all(200 * kMs);
  EXPECT_EQ(truths(rec), (std::vector<std::string>{"key-set:1", "key-del:1", "key-set:2"}));
}

// A plain SET succeeds whether or not the key exists: it proves nothing went away.
TEST(LiveTruth, PlainSetOfTheSameValueIsNotAReset) {
  Recorder rec([] { return int64_t{0}; });
  LockTruth t(rec, "lock", 1);
  const std::vector<std::string> set = {"SET", "lock", "1", "PX", "100"};
  t.sent(1, set);
  t.replied(1, 0, set, Reply::ok(), 1 * kMs, 2 * kMs);
  t.observe(0, poll("1", 100), 3 * kMs, 4 * kMs);
  t.replied(1, 0, set, Reply::ok(), 50 * kMs, 51 * kMs);
  t.observe(0, poll("1", 99), 52 * kMs, 53 * kMs);
  t.settle_all(200 * kMs);
  EXPECT_EQ(truths(rec), (std::vector<std::string>{"key-set:1"}));
}

}  // namespace
}  // namespace lockstep::runner
