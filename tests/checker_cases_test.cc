// Hand-written histories for the classic linearizability cases, per model, and the
// explanations the checker gives for them.
#include <chrono>
#include <string>

#include <gtest/gtest.h>

#include "checker_builder.h"
#include "lockstep/checker/linearizability.h"

namespace lockstep::checker {
namespace {

using nlohmann::json;

// Each case is also checked with its operations paired one event at a time beforehand,
// as the simulator pairs them while it records: both must give the same result.
LinResult check(const Builder& b, const std::string& model, double time_limit_s = 5.0) {
  auto m = make_model(model);
  EXPECT_NE(m, nullptr) << model;
  const Limits limits{time_limit_s, size_t{256} << 20};
  LinResult whole = check_linearizable(b.history(), *m, limits);
  OperationCollector collected;
  for (const Event& e : b.history().events) collected.add(e);
  const LinResult paired = check_linearizable(b.history(), std::move(collected), *m, limits);
  EXPECT_EQ(paired.verdict, whole.verdict);
  EXPECT_EQ(paired.error, whole.error);
  EXPECT_EQ(paired.ops, whole.ops);
  EXPECT_EQ(paired.explanation_sentence, whole.explanation_sentence);
  EXPECT_EQ(paired.failed_event_index, whole.failed_event_index);
  EXPECT_EQ(paired.involved_indices, whole.involved_indices);
  return whole;
}

TEST(CheckerMutex, TwoOwnersIsInvalidAndSaysWhoHeldTheLock) {
  Builder b;
  b.at(900).invoke(1, "acquire").at(940).ok(1, "acquire").at(1100).invoke(3, "acquire").at(1194).ok(3, "acquire");
  LinResult r = check(b, "mutex");
  ASSERT_EQ(r.verdict, Verdict::Invalid);
  EXPECT_EQ(r.explanation_sentence,
            "process 3's acquire completed at t=1.204s while process 1 still held the lock since t=0.950s "
            "(acquired, never released)");
  EXPECT_EQ(r.failed_event_index, 3u);
  EXPECT_EQ(r.prefix.size(), 4u);
  ASSERT_EQ(r.partial_linearization.size(), 1u);
  EXPECT_EQ(r.partial_linearization[0].process, 1);
  EXPECT_EQ(r.involved.size(), 4u);
  EXPECT_EQ(r.final_state, "held by process 1");
}

// The shape fuzzing shrinks a pause race to: the holder's lease runs out while it is
// paused, its release fails, and it acquires again. No second holder ever overlaps it,
// but as a mutex the history is invalid, and the sentence must say why in those terms
// rather than "process 1 still held the lock" against process 1.
TEST(CheckerMutex, HolderReacquiringAfterAFailedReleaseSaysTheLockWasLost) {
  Builder b;
  b.at(0).invoke(1, "acquire").at(181).ok(1, "acquire");
  b.at(201).invoke(1, "release").at(203).fail(1, "release");
  b.at(203).invoke(1, "acquire").at(205).ok(1, "acquire");
  LinResult r = check(b, "mutex");
  ASSERT_EQ(r.verdict, Verdict::Invalid);
  EXPECT_NE(r.explanation_sentence.find("although process 1 had not released the lock it took at"), std::string::npos)
      << r.explanation_sentence;
  EXPECT_NE(r.explanation_sentence.find("failed, so the lock was lost while held"), std::string::npos)
      << r.explanation_sentence;
}

TEST(CheckerMutex, ForeignReleaseIsInvalid) {
  Builder b;
  b.op(1, "acquire").op(2, "release");
  LinResult r = check(b, "mutex");
  ASSERT_EQ(r.verdict, Verdict::Invalid);
  EXPECT_NE(r.explanation_sentence.find("process 2's release"), std::string::npos) << r.explanation_sentence;
  EXPECT_NE(r.explanation_sentence.find("process 2 did not own it"), std::string::npos) << r.explanation_sentence;
}

TEST(CheckerMutex, ReleaseOfAFreeLockIsInvalid) {
  Builder b;
  b.op(1, "acquire").op(1, "release").op(1, "release");
  LinResult r = check(b, "mutex");
  ASSERT_EQ(r.verdict, Verdict::Invalid);
  EXPECT_NE(r.explanation_sentence.find("the lock was free (last released by process 1"), std::string::npos)
      << r.explanation_sentence;
}

TEST(CheckerMutex, ConcurrentAcquiresWithOneWinnerAreValid) {
  Builder b;
  b.invoke(1, "acquire").invoke(2, "acquire").ok(2, "acquire").fail(1, "acquire");
  b.invoke(1, "acquire").invoke(2, "release").ok(1, "acquire").ok(2, "release").op(1, "release");
  EXPECT_EQ(check(b, "mutex").verdict, Verdict::Valid);
}

// Clients queued on a lock, as a contended run records them: every acquire is in flight
// while the others take and release the lock in turn. The search tries the op whose
// return comes first before the others, so it linearizes one op per step instead of
// lifting and giving up each waiting acquire at every turn (about n^2/2 configurations).
TEST(CheckerMutex, QueuedAcquirersAreLinearizedOneStepPerOp) {
  constexpr int n = 40;
  Builder b;
  for (int p = 0; p < n; ++p) b.invoke(p, "acquire");
  for (int p = n - 1; p >= 0; --p) b.ok(p, "acquire").op(p, "release");
  LinResult r = check(b, "mutex");
  ASSERT_EQ(r.verdict, Verdict::Valid);
  EXPECT_EQ(r.stats.states_visited, 2u * n);
  // The same history with one release too many is still found, and explained as the
  // invocation-order search explains it.
  b.op(n - 1, "release");
  r = check(b, "mutex");
  ASSERT_EQ(r.verdict, Verdict::Invalid);
  EXPECT_NE(r.explanation_sentence.find("process 39's release"), std::string::npos) << r.explanation_sentence;
}

TEST(CheckerMutex, InfoAcquireMayNeverHaveTakenEffect) {
  Builder b;
  b.invoke(1, "acquire").info(1, "acquire").op(2, "acquire").op(2, "release");
  EXPECT_EQ(check(b, "mutex").verdict, Verdict::Valid);
}

TEST(CheckerMutex, InfoAcquireMayHaveTakenEffect) {
  Builder b;
  b.invoke(1, "acquire").info(1, "acquire").invoke(1, "release").ok(1, "release");
  EXPECT_EQ(check(b, "mutex").verdict, Verdict::Valid);
}

TEST(CheckerMutex, PendingInvokeCountsAsInfoAndTruthIsIgnored) {
  Builder b;
  b.truth("cs-enter").op(1, "acquire").invoke(2, "acquire").invoke(1, "release").ok(1, "release").truth("crash");
  LinResult r = check(b, "mutex");
  EXPECT_EQ(r.verdict, Verdict::Valid);
  EXPECT_EQ(r.ops, 3u);
}

TEST(CheckerMutex, FailedAcquireIsDropped) {
  Builder b;
  b.op(1, "acquire").invoke(2, "acquire").fail(2, "acquire").op(1, "release");
  EXPECT_EQ(check(b, "mutex").verdict, Verdict::Valid);
}

TEST(CheckerMutex, UnknownOpIsAnError) {
  Builder b;
  b.op(1, "lock");
  LinResult r = check(b, "mutex");
  EXPECT_EQ(r.verdict, Verdict::Unknown);
  EXPECT_NE(r.error.find("unknown f \"lock\""), std::string::npos) << r.error;
}

TEST(CheckerHistory, CompletionWithoutInvocationIsAnError) {
  Builder b;
  b.ok(1, "acquire");
  LinResult r = check(b, "mutex");
  EXPECT_NE(r.error.find("event 1: process 1 completed (ok) with no pending invocation"), std::string::npos)
      << r.error;
}

TEST(CheckerHistory, SecondInvocationWhilePendingIsAnError) {
  Builder b;
  b.invoke(1, "acquire").invoke(1, "release");
  EXPECT_FALSE(check(b, "mutex").error.empty());
}

TEST(CheckerHistory, EmptyHistoryIsValid) {
  EXPECT_EQ(check(Builder{}, "mutex").verdict, Verdict::Valid);
}

TEST(CheckerMutex, LocksOnDifferentKeysAreIndependent) {
  Builder b;
  b.op(1, "acquire", nullptr, nullptr, "a").op(2, "acquire", nullptr, nullptr, "b");
  EXPECT_EQ(check(b, "mutex").verdict, Verdict::Valid);
  b.op(3, "acquire", nullptr, nullptr, "b");
  LinResult r = check(b, "mutex");
  EXPECT_EQ(r.verdict, Verdict::Invalid);
  EXPECT_EQ(r.key, "b");
}

TEST(CheckerReentrantMutex, CountsAcquisitions) {
  Builder b;
  b.op(1, "acquire").op(1, "acquire").op(1, "release").op(2, "acquire");
  LinResult r = check(b, "reentrant-mutex");
  ASSERT_EQ(r.verdict, Verdict::Invalid);
  EXPECT_NE(r.explanation_sentence.find("while process 1 held the lock since"), std::string::npos)
      << r.explanation_sentence;
  Builder v;
  v.op(1, "acquire").op(1, "acquire").op(1, "release").op(1, "release").op(2, "acquire");
  EXPECT_EQ(check(v, "reentrant-mutex").verdict, Verdict::Valid);
}

// The hold began with the first acquire, not with a nested one that completed after the
// operation being explained.
TEST(CheckerReentrantMutex, HoldIsDatedFromItsFirstAcquire) {
  Builder b;
  b.op(1, "acquire").invoke(1, "acquire").invoke(2, "acquire").ok(2, "acquire").ok(1, "acquire");
  LinResult r = check(b, "reentrant-mutex");
  ASSERT_EQ(r.verdict, Verdict::Invalid);
  EXPECT_NE(r.explanation_sentence.find("process 2's acquire completed at t=0.050s while process 1 held the lock, "
                                        "taken 2 times over (reentrant) since t=0.020s"),
            std::string::npos)
      << r.explanation_sentence;
}

// A holder whose release failed still holds (the lock counts it), so its next acquire
// nests: the sentence says the release failed rather than that it held the lock twice.
TEST(CheckerReentrantMutex, AFailedReleaseIsNamedNotCountedAsASecondHold) {
  Builder b;
  b.op(1, "acquire").invoke(1, "release").fail(1, "release").op(1, "acquire").op(2, "acquire");
  LinResult r = check(b, "reentrant-mutex");
  ASSERT_EQ(r.verdict, Verdict::Invalid);
  EXPECT_EQ(r.explanation_sentence.find("time(s)"), std::string::npos) << r.explanation_sentence;
  EXPECT_EQ(r.explanation_sentence.find("2 times"), std::string::npos) << r.explanation_sentence;
  EXPECT_NE(r.explanation_sentence.find("failed, so that hold never ended"), std::string::npos)
      << r.explanation_sentence;
}

TEST(CheckerRwLock, WriterWhileReaderHoldsIsInvalid) {
  Builder b;
  b.op(1, "acquire-read").op(2, "acquire-read").op(3, "acquire-write");
  LinResult r = check(b, "rw-lock");
  ASSERT_EQ(r.verdict, Verdict::Invalid);
  EXPECT_NE(r.explanation_sentence.find("process 3's acquire-write"), std::string::npos);
  EXPECT_NE(r.explanation_sentence.find("held a read lock"), std::string::npos) << r.explanation_sentence;
}

TEST(CheckerRwLock, WriterMayAlsoReadAndReadersShare) {
  Builder b;
  b.op(1, "acquire-write").op(1, "acquire-read").op(1, "release-write").op(2, "acquire-read");
  b.op(1, "release-read").op(2, "release-read").op(3, "acquire-write");
  EXPECT_EQ(check(b, "rw-lock").verdict, Verdict::Valid);
  Builder r;
  r.op(1, "acquire-write").op(2, "acquire-read");
  EXPECT_EQ(check(r, "rw-lock").verdict, Verdict::Invalid);
}

TEST(CheckerRegister, StaleReadIsInvalid) {
  Builder b;
  b.op(1, "write", 1).op(1, "write", 2).op(2, "read", nullptr, 1);
  LinResult r = check(b, "register");
  ASSERT_EQ(r.verdict, Verdict::Invalid);
  EXPECT_NE(r.explanation_sentence.find("process 2 read 1"), std::string::npos) << r.explanation_sentence;
  EXPECT_NE(r.explanation_sentence.find("the register held 2 (set by process 1's write 2"), std::string::npos)
      << r.explanation_sentence;
}

TEST(CheckerRegister, ReadConcurrentWithWriteMaySeeEither) {
  for (int seen : {1, 2}) {
    Builder b;
    b.op(1, "write", 1).invoke(1, "write", 2).invoke(2, "read").ok(2, "read", seen).ok(1, "write", 2);
    EXPECT_EQ(check(b, "register").verdict, Verdict::Valid) << seen;
  }
}

TEST(CheckerRegister, InfoWriteMayTakeEffectLate) {
  Builder b;
  b.invoke(1, "write", 1).info(1, "write").op(2, "read", nullptr, nullptr).op(2, "read", nullptr, 1);
  EXPECT_EQ(check(b, "register").verdict, Verdict::Valid);
  Builder early;  // read 1 completes before the write is even invoked
  early.op(2, "read", nullptr, 1).invoke(1, "write", 1).info(1, "write");
  EXPECT_EQ(check(early, "register").verdict, Verdict::Invalid);
}

TEST(CheckerCasRegister, LostCasIsInvalid) {
  Builder b;
  b.op(1, "write", 0).op(1, "cas", json::array({0, 1})).op(2, "cas", json::array({0, 2}));
  LinResult r = check(b, "cas-register");
  ASSERT_EQ(r.verdict, Verdict::Invalid);
  EXPECT_NE(r.explanation_sentence.find("process 2's cas [0 2] succeeded"), std::string::npos)
      << r.explanation_sentence;
  EXPECT_NE(r.explanation_sentence.find("held 1"), std::string::npos) << r.explanation_sentence;
}

TEST(CheckerCasRegister, FailedCasIsDroppedAndConcurrentCasesOrder) {
  Builder b;
  b.op(1, "write", 0).invoke(1, "cas", json::array({0, 1})).invoke(2, "cas", json::array({1, 2}));
  b.ok(2, "cas", json::array({1, 2})).ok(1, "cas", json::array({0, 1})).invoke(3, "cas", json::array({0, 3}));
  b.fail(3, "cas").op(3, "read", nullptr, 2);
  EXPECT_EQ(check(b, "cas-register").verdict, Verdict::Valid);
}

TEST(CheckerCounter, ReadMustMatchSomeSetOfAdds) {
  Builder b;
  b.invoke(1, "add", 1).invoke(2, "add", 2).op(3, "read", nullptr, 2).ok(1, "add", 1).ok(2, "add", 2);
  b.op(3, "read", nullptr, 3);
  EXPECT_EQ(check(b, "counter").verdict, Verdict::Valid);
  Builder bad;
  bad.op(1, "add", 1).op(2, "add", 2).op(3, "read", nullptr, 2);
  LinResult r = check(bad, "counter");
  ASSERT_EQ(r.verdict, Verdict::Invalid);
  EXPECT_NE(r.explanation_sentence.find("process 3 read 2"), std::string::npos) << r.explanation_sentence;
  EXPECT_NE(r.explanation_sentence.find("sum to 3 and none could be in flight"), std::string::npos)
      << r.explanation_sentence;
}

TEST(CheckerExplanation, InvolvedOpsAreThoseConcurrentWithTheFailure) {
  Builder b;
  b.op(1, "write", 1).invoke(4, "write", 3).op(2, "write", 2).invoke(3, "read").ok(3, "read", 1).ok(4, "write", 3);
  LinResult r = check(b, "register");
  ASSERT_EQ(r.verdict, Verdict::Invalid);
  // The failing read, the concurrent write 3 (still open), and write 2 which set the state.
  std::vector<int64_t> procs;
  for (const Event& e : r.involved) procs.push_back(e.process);
  EXPECT_EQ(procs, (std::vector<int64_t>{4, 2, 2, 3, 3, 4}));
  EXPECT_EQ(r.failed_event_index, 6u);
}

// Many concurrent writes of unknown outcome followed by an impossible read: every subset
// and order of the writes is a distinct configuration, so the search must give up.
Builder pathological(int writes) {
  Builder b;
  for (int p = 0; p < writes; ++p) b.invoke(p, "write", p + 1);
  for (int p = 0; p < writes; ++p) b.info(p, "write");
  b.op(writes, "read", nullptr, 1).op(writes, "read", nullptr, 2).op(writes, "read", nullptr, 999);
  return b;
}

TEST(CheckerLimits, PathologicalHistoryEndsUnknownOnTime) {
  auto start = std::chrono::steady_clock::now();
  LinResult r = check(pathological(40), "cas-register", 0.2);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.verdict, Verdict::Unknown);
  EXPECT_EQ(r.unknown_reason, "time limit");
  EXPECT_GT(r.stats.states_visited, 0u);
  EXPECT_GT(r.stats.cache_entries, 0u);
  EXPECT_LT(s, 10.0);  // bounded, with plenty of slack for sanitizers
}

TEST(CheckerLimits, MemoryLimitEndsUnknown) {
  auto m = make_model("cas-register");
  LinResult r = check_linearizable(pathological(40).history(), *m, Limits{60.0, size_t{512} << 10});
  EXPECT_EQ(r.verdict, Verdict::Unknown);
  EXPECT_EQ(r.unknown_reason, "memory limit");
  EXPECT_LE(r.stats.peak_bytes, size_t{512} << 10);
}

TEST(CheckerLimits, ManyConcurrentMutexOpsEndUnknown) {
  Builder b;
  for (int p = 0; p < 60; ++p) b.invoke(p, "acquire");
  for (int p = 0; p < 60; ++p) b.info(p, "acquire");
  for (int p = 0; p < 60; ++p) b.invoke(p, "release");
  b.op(99, "release");  // never acquired: no configuration gets past it
  for (int p = 0; p < 60; ++p) b.ok(p, "release");
  LinResult r = check(b, "mutex", 0.2);
  EXPECT_EQ(r.verdict, Verdict::Unknown);
}

}  // namespace
}  // namespace lockstep::checker
