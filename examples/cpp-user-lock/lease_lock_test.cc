// What the team claims about its lock, checked by lockstep on generated fault schedules.
// The same seed drives both variants, so the difference in outcome is the release code.
#include <gtest/gtest.h>

#include <lockstep/runner/claims_gtest.h>

#include "lease_lock.h"

namespace {

using lockstep::FaultKind;
using lockstep::runner::Claim;
using lockstep::runner::ClaimBroken;
using lockstep::runner::ClaimHolds;
using lockstep::runner::ClaimOptions;

class LeaseLockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    acme::register_lease_locks();
    // Only our own command line knows our locks, so replay commands should name it.
    lockstep::runner::set_replay_program("my-lockstep");
  }
  // Both variants see the same generated scenarios.
  ClaimOptions options() const {
    ClaimOptions o;
    o.seed = 1;
    o.runs = 1000;
    o.out_dir = "lockstep-claims";
    return o;
  }
};

// A client paused past its lease finds its lock taken over; only its own lock may go
// when it then unlocks. A crash must not wedge the lock either: the lease frees it.
const Claim kOnlyOwnerUnlocks{{"foreign-unlock", "deadlock"}, {FaultKind::Pause, FaultKind::Crash}};

// Without fencing tokens, a lease lock promises mutual exclusion while pauses fit in the lease.
const Claim kExclusiveWhilePausesFit{{"mutual-exclusion"}, {FaultKind::Pause}, true};

TEST_F(LeaseLockTest, FixedVariantOnlyLetsTheOwnerUnlock) {
  EXPECT_TRUE(ClaimHolds("lease-lock", kOnlyOwnerUnlocks, options()));
}

TEST_F(LeaseLockTest, FixedVariantIsExclusiveWhilePausesFitInTheLease) {
  EXPECT_TRUE(ClaimHolds("lease-lock", kExclusiveWhilePausesFit, options()));
}

// The first version's plain DEL removes whoever holds the lock by then.
TEST_F(LeaseLockTest, FirstVersionUnlocksSomeoneElsesLock) {
  EXPECT_TRUE(ClaimBroken("lease-lock-v1", kOnlyOwnerUnlocks, {"foreign-unlock"}, options()));
}

// Scenario files name the registered locks like built-in ones; each file says which
// properties it expects broken, so these pass only if the verdicts are exactly those.
TEST_F(LeaseLockTest, ScenarioFilesGiveTheExpectedVerdicts) {
  EXPECT_TRUE(lockstep::runner::ScenarioAsExpected(LEASE_LOCK_SCENARIOS "/lease-lock-v1-long-pause.json"));
  EXPECT_TRUE(lockstep::runner::ScenarioAsExpected(LEASE_LOCK_SCENARIOS "/lease-lock-long-pause.json"));
}

}  // namespace
