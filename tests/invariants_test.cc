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
  EXPECT_EQ(v[0].property, Property::MutualExclusion);
  EXPECT_EQ(v[0].processes, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(v[0].at_ns, 1000 * kMs);
  EXPECT_NE(v[0].explanation.find("client-2's critical section [1.000s, 1.100s]"), std::string::npos) << v[0].explanation;
  EXPECT_NE(v[0].explanation.find("client-1's critical section [0.000s, 1.550s]"), std::string::npos) << v[0].explanation;
}

// An overlap under a millisecond (a RedLock restart race fuzzing found: 0.444 ms) must
// not read "both held the lock for 0.000s" between times that look equal.
TEST(MutualExclusion, SubMillisecondOverlapIsGivenInMicroseconds) {
  Builder b;
  b.truth(truth::kCsEnter, 1, 3).truth(truth::kCsEnter, 2, 24).truth(truth::kCsExit, 1, 25).truth(truth::kCsExit, 2, 47);
  b.h.events[1].time_ns = 24'556'186;  // 0.444 ms before client-1 leaves
  auto v = check_mutual_exclusion(b.h);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_NE(v[0].explanation.find("both held the lock for 0.444ms (client-2 entered at t=0.024556s, client-1 left at "
                                  "t=0.025000s)."),
            std::string::npos)
      << v[0].explanation;
}

TEST(MutualExclusion, ReadSectionsMayOverlapButNotAWriteSection) {
  Builder b;
  b.truth(truth::kCsEnter, 1, 0, "lock", "read").truth(truth::kCsEnter, 2, 5, "lock", "read");
  b.truth(truth::kCsExit, 1, 20).truth(truth::kCsExit, 2, 25);
  EXPECT_TRUE(check_mutual_exclusion(b.h).empty()) << "two readers share a read-write lock";
  b.truth(truth::kCsEnter, 3, 30, "lock", "read").truth(truth::kCsEnter, 4, 35).truth(truth::kCsExit, 4, 40);
  b.truth(truth::kCsExit, 3, 50);
  auto v = check_mutual_exclusion(b.h);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].processes, (std::vector<int64_t>{3, 4}));
  EXPECT_NE(v[0].explanation.find("client-4's critical section [0.035s, 0.040s] began while client-3's read section"),
            std::string::npos)
      << v[0].explanation;
}

TEST(StaleRead, TwoReadsUnderOneReadLockMustAgree) {
  Builder b;
  auto read = [&](int64_t p, int64_t t, int64_t v) {
    b.op(EventType::Invoke, p, "read", t, "stock");
    b.op(EventType::Ok, p, "read", t + 1, "stock");
    b.h.events.back().value = v;
  };
  b.truth(truth::kCsEnter, 2, 0, "lock", "read");
  read(2, 1, 10);
  read(2, 10, 10);
  b.truth(truth::kCsExit, 2, 12);
  // A writer's own read-then-write is not a read section: values may change there.
  b.truth(truth::kCsEnter, 1, 20);
  read(1, 21, 10);
  read(1, 30, 9);
  b.truth(truth::kCsExit, 1, 32);
  EXPECT_TRUE(check_stale_read(b.h, {}).empty());

  b.truth(truth::kCsEnter, 3, 40, "lock", "read");
  read(3, 41, 9);
  read(3, 50, 8);
  b.truth(truth::kCsExit, 3, 52);
  auto v = check_stale_read(b.h, {});
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].property, Property::StaleRead);
  EXPECT_EQ(v[0].processes, (std::vector<int64_t>{3}));
  EXPECT_EQ(v[0].at_ns, 51 * kMs);
  EXPECT_EQ(v[0].explanation,
            "client-3 read \"stock\" = 9 at t=0.042s and 8 at t=0.051s under one read lock: a write landed while it "
            "held the lock for reading.");
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

// An extension is judged against the lock key on the lock's nodes: a majority held by the
// extending client from its request to its answer makes it true; fewer, on every node
// through that time and a margin around it, makes its "extended" a lie (redsync 4.0.3's
// Extend counted every reply as a success, PR #61).
TEST(FalseExtend, AnExtensionOfAKeyStillHeldOnAMajorityIsTrue) {
  Builder b;
  b.truth(truth::kKeySet, 1, 0, "lock", nullptr, nullptr, 0).truth(truth::kKeySet, 1, 0, "lock", nullptr, nullptr, 1);
  b.truth(truth::kKeySet, 1, 0, "lock", nullptr, nullptr, 2);
  b.truth(truth::kKeyDel, -1, 200, "lock", nullptr, {{"owner", 1}}, 2);  // one master restarts empty
  b.op(EventType::Invoke, 1, "extend", 1000).op(EventType::Ok, 1, "extend", 1003);
  InvariantOptions o;
  o.lock_nodes = 3;
  EXPECT_TRUE(check_false_extend(b.h, o).empty());
}

TEST(FalseExtend, AnExtensionReportedForAKeyLostOnAMajorityIsALie) {
  Builder b;
  for (int node = 0; node < 3; ++node) b.truth(truth::kKeySet, 1, 0, "lock", nullptr, nullptr, node);
  b.truth(truth::kKeyDel, -1, 200, "lock", nullptr, {{"owner", 1}}, 1);
  b.truth(truth::kKeyDel, -1, 200, "lock", nullptr, {{"owner", 1}}, 2);
  b.op(EventType::Invoke, 1, "extend", 1000).op(EventType::Ok, 1, "extend", 1003);
  // A failed extension tells the truth, and is no violation.
  b.op(EventType::Invoke, 1, "extend", 2000).op(EventType::Fail, 1, "extend", 2003);
  // Nor is a background renewal, which answers no caller (thread 1 here).
  b.op(EventType::Invoke, 1, "extend", 2100).op(EventType::Ok, 1, "extend", 2103);
  b.h.events[b.h.events.size() - 2].thread = 1;
  b.h.events.back().thread = 1;
  InvariantOptions o;
  o.lock_nodes = 3;
  auto v = check_false_extend(b.h, o);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].property, Property::FalseExtend);
  EXPECT_EQ(v[0].count, 1);
  EXPECT_NE(v[0].explanation.find("client-1's extend answered at t=1.003s that the lock was extended, but its key was "
                                  "on 1 of the lock's 3 nodes"),
            std::string::npos)
      << v[0].explanation;
  // Another client's key on those nodes is no help; with the node count unknown, no check.
  o.lock_nodes = 0;
  EXPECT_TRUE(check_false_extend(b.h, o).empty());
}

// After a failover the promoted replica holds the key its master replicated to it: the
// replica's write is nobody's, its value is the holder's.
TEST(FalseExtend, AReplicatedKeyBelongsToTheClientWhoseValueItIs) {
  Builder b;
  b.truth(truth::kKeySet, 1, 1, "lock", "v1", nullptr, 0).truth(truth::kKeySet, -1, 22, "lock", "v1", nullptr, 1);
  b.truth(truth::kKeyDel, -1, 23, "lock", "v1", {{"owner", -1}}, 0);  // the old master is gone
  b.op(EventType::Invoke, 1, "extend", 70).op(EventType::Ok, 1, "extend", 72);
  InvariantOptions o;
  o.lock_nodes = 1;
  EXPECT_TRUE(check_false_extend(b.h, o).empty());
}

TEST(FalseExtend, AKeyThatExpiresWhileTheExtensionIsUnderWayWasStillHeld) {
  Builder b;
  b.truth(truth::kKeySet, 1, 0).truth(truth::kKeyExpire, -1, 1001, "lock", nullptr, {{"owner", 1}});
  b.op(EventType::Invoke, 1, "extend", 1000).op(EventType::Ok, 1, "extend", 1002);
  InvariantOptions o;
  o.lock_nodes = 1;
  EXPECT_TRUE(check_false_extend(b.h, o).empty());
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

TEST(Fencing, RisingTokensAreFine) {
  Builder b;
  b.op(EventType::Ok, 1, "write", 1, "stock").h.events.back().value = {{"value", 9}, {"token", 1}};
  b.op(EventType::Ok, 2, "write", 2, "stock").h.events.back().value = {{"value", 8}, {"token", 2}};
  EXPECT_TRUE(check_fencing(b.h, {}).empty());
}

TEST(Fencing, AStaleTokenAcceptedIsCaught) {
  Builder b;
  b.op(EventType::Ok, 2, "write", 1000, "stock").h.events.back().value = {{"value", 9}, {"token", 2}};
  b.op(EventType::Ok, 1, "write", 1552, "stock").h.events.back().value = {{"value", 9}, {"token", 1}};
  b.op(EventType::Fail, 3, "write", 1600, "stock").h.events.back().value = {{"value", 9}, {"token", 0}};
  auto v = check_fencing(b.h, {});
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].count, 1);  // the rejected write does not count
  EXPECT_NE(v[0].explanation.find("accepted client-1's write with token 1 at t=1.552s after client-2 had written with "
                                  "token 2 at t=1.000s"),
            std::string::npos)
      << v[0].explanation;
}

}  // namespace
}  // namespace lockstep::checker
