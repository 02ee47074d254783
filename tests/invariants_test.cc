#include "lockstep/checker/invariants.h"

#include <gtest/gtest.h>

namespace lockstep::checker {
namespace {

constexpr int64_t kMs = 1'000'000;

struct Builder {
  History h;
  Builder& truth(const char* f, int64_t process, int64_t t_ms, std::string key = "lock", nlohmann::json value = nullptr,
                 nlohmann::json extra = nullptr, int64_t node = 0) {
    Event e;
    e.type = EventType::Truth;
    e.f = f;
    e.process = process;
    e.key = std::move(key);
    e.value = std::move(value);
    e.extra = std::move(extra);
    e.node = node;
    e.time_ns = t_ms * kMs;
    h.events.push_back(std::move(e));
    return *this;
  }
  Builder& op(EventType type, int64_t process, const char* f, int64_t t_ms, std::string key = "lock") {
    Event e;
    e.type = type;
    e.process = process;
    e.f = f;
    e.key = std::move(key);
    e.time_ns = t_ms * kMs;
    h.events.push_back(std::move(e));
    return *this;
  }
};

TEST(MutualExclusion, DisjointSectionsAreFine) {
  Builder b;
  b.truth(truth::kCsEnter, 1, 0).truth(truth::kCsExit, 1, 10).truth(truth::kCsEnter, 2, 10).truth(truth::kCsExit, 2, 20);
  EXPECT_TRUE(check_mutual_exclusion(b.h).empty());
}

TEST(MutualExclusion, OverlapIsReportedWithBothProcessesAndTimes) {
  Builder b;
  b.truth(truth::kCsEnter, 1, 0).truth(truth::kCsEnter, 2, 1000).truth(truth::kCsExit, 2, 1100).truth(truth::kCsExit, 1, 1550);
  auto v = check_mutual_exclusion(b.h);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].property, "mutual-exclusion");
  EXPECT_EQ(v[0].processes, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(v[0].at_ns, 1000 * kMs);
  EXPECT_NE(v[0].explanation.find("client-2's critical section [1.000s, 1.100s]"), std::string::npos) << v[0].explanation;
  EXPECT_NE(v[0].explanation.find("client-1's critical section [0.000s, 1.550s]"), std::string::npos) << v[0].explanation;
}

TEST(MutualExclusion, ACrashEndsTheSection) {
  Builder b;
  b.truth(truth::kCsEnter, 1, 0).truth(truth::kCrash, 1, 5).truth(truth::kCsEnter, 2, 10).truth(truth::kCsExit, 2, 20);
  EXPECT_TRUE(check_mutual_exclusion(b.h).empty());
}

TEST(MutualExclusion, ASectionNeverExitedRunsToTheEnd) {
  Builder b;
  b.truth(truth::kCsEnter, 1, 0).truth(truth::kCsEnter, 2, 10).truth(truth::kCsExit, 2, 20);
  auto v = check_mutual_exclusion(b.h);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_NE(v[0].explanation.find("never exited"), std::string::npos);
}

TEST(LostUpdate, MatchingSalesAreFine) {
  Builder b;
  b.op(EventType::Ok, 1, "write", 1, "stock").op(EventType::Ok, 2, "write", 2, "stock");
  b.truth(truth::kResource, -1, 3, "stock", {{"initial", 10}, {"final", 8}});
  EXPECT_TRUE(check_lost_update(b.h, {}).empty());
}

TEST(LostUpdate, TwoSalesOfOneReadingAreCaught) {
  Builder b;
  b.op(EventType::Ok, 1, "write", 1, "stock").op(EventType::Ok, 2, "write", 2, "stock");
  b.truth(truth::kResource, -1, 3, "stock", {{"initial", 10}, {"final", 9}});
  auto v = check_lost_update(b.h, {});
  ASSERT_EQ(v.size(), 1u);
  EXPECT_NE(v[0].explanation.find("should be 8, but it ended at 9"), std::string::npos) << v[0].explanation;
}

TEST(LostUpdate, UnknownWritesMayHaveLanded) {
  Builder b;
  b.op(EventType::Ok, 1, "write", 1, "stock").op(EventType::Info, 2, "write", 2, "stock");
  b.truth(truth::kResource, -1, 3, "stock", {{"initial", 10}, {"final", 8}});
  EXPECT_TRUE(check_lost_update(b.h, {}).empty());
}

TEST(LostUpdate, AWriteCutShortByACrashMayHaveLanded) {
  Builder b;
  b.op(EventType::Ok, 1, "write", 1, "stock").op(EventType::Invoke, 2, "write", 2, "stock");
  b.truth(truth::kCrash, 2, 3).truth(truth::kResource, -1, 4, "stock", {{"initial", 10}, {"final", 8}});
  EXPECT_TRUE(check_lost_update(b.h, {}).empty());
}

TEST(LostUpdate, OversellIsCaught) {
  Builder b;
  b.truth(truth::kResource, -1, 3, "stock", {{"initial", 0}, {"final", -1}});
  ASSERT_EQ(check_lost_update(b.h, {}).size(), 1u);
}

TEST(ForeignUnlock, OwnDeleteIsFine) {
  Builder b;
  b.truth(truth::kKeySet, 1, 0).truth(truth::kKeyDel, 1, 5, "lock", nullptr, {{"owner", 1}});
  EXPECT_TRUE(check_foreign_unlock(b.h, {}).empty());
}

TEST(ForeignUnlock, DeletingAnotherClientsValueIsCaught) {
  Builder b;
  b.truth(truth::kKeySet, 2, 1000).truth(truth::kKeyDel, 1, 1053, "lock", nullptr, {{"owner", 2}});
  auto v = check_foreign_unlock(b.h, {});
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].processes, (std::vector<int64_t>{1, 2}));
  EXPECT_NE(v[0].explanation.find("client-1's unlock at t=1.053s deleted the lock client-2 had taken at t=1.000s"),
            std::string::npos)
      << v[0].explanation;
}

TEST(ForeignUnlock, ExpiryIsNotAnUnlock) {
  Builder b;
  b.truth(truth::kKeySet, 2, 0).truth(truth::kKeyExpire, -1, 5, "lock", nullptr, {{"owner", 2}});
  EXPECT_TRUE(check_foreign_unlock(b.h, {}).empty());
}

TEST(Deadlock, LockHeldByACrashedProcessWhileOthersWait) {
  Builder b;
  b.truth(truth::kKeySet, 1, 1).truth(truth::kCrash, 1, 50).op(EventType::Invoke, 2, "acquire", 60);
  b.truth(truth::kFinish, 2, 9000).truth(truth::kResource, -1, 10000, "stock");
  auto v = check_deadlock(b.h, {});
  ASSERT_EQ(v.size(), 1u);
  EXPECT_NE(v[0].explanation.find("stayed with crashed client-1 from t=0.050s to the end of the run"), std::string::npos)
      << v[0].explanation;
}

TEST(Deadlock, ExpiryWithinTheBoundIsFine) {
  Builder b;
  b.truth(truth::kKeySet, 1, 1).truth(truth::kCrash, 1, 50).op(EventType::Invoke, 2, "acquire", 60);
  b.truth(truth::kKeyExpire, -1, 2001, "lock", nullptr, {{"owner", 1}}).truth(truth::kResource, -1, 10000, "stock");
  EXPECT_TRUE(check_deadlock(b.h, {}).empty());
}

TEST(Deadlock, NobodyWaitingIsNoDeadlock) {
  Builder b;
  b.truth(truth::kKeySet, 1, 1).truth(truth::kCrash, 1, 50).truth(truth::kResource, -1, 10000, "stock");
  EXPECT_TRUE(check_deadlock(b.h, {}).empty());
}

}  // namespace
}  // namespace lockstep::checker
