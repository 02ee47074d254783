// GoogleTest assertions over claims (lockstep/runner/claims.h), for a user's own suite:
//
//   EXPECT_TRUE(lockstep::runner::ClaimHolds("my-lock", claim));
//   EXPECT_TRUE(lockstep::runner::ClaimBroken("my-buggy-lock", claim, {"foreign-unlock"}));
//   EXPECT_TRUE(lockstep::runner::ScenarioAsExpected("scenarios/my-lock-pause.json"));
//
// A failure prints the shrunk scenario's faults, the checker's sentences and the replay
// command. Header-only, so lockstep itself does not depend on the user's GoogleTest.
#pragma once

#include <gtest/gtest.h>

#include "lockstep/runner/claims.h"

namespace lockstep::runner {

// Succeeds when no generated scenario breaks the claim.
inline ::testing::AssertionResult ClaimHolds(const std::string& algorithm, const Claim& claim,
                                             const ClaimOptions& options = {}) {
  auto r = check_claim(algorithm, claim, options);
  if (auto* e = std::get_if<ClaimError>(&r)) return ::testing::AssertionFailure() << e->message;
  const auto& result = std::get<ClaimResult>(r);
  if (result.holds()) return ::testing::AssertionSuccess() << result.message();
  return ::testing::AssertionFailure() << result.message();
}

// Succeeds when the claim is broken and the counterexample violates every property in
// `expected` (the bug a test means to demonstrate, not some other one).
inline ::testing::AssertionResult ClaimBroken(const std::string& algorithm, const Claim& claim,
                                              const std::set<std::string>& expected,
                                              const ClaimOptions& options = {}) {
  auto r = check_claim(algorithm, claim, options);
  if (auto* e = std::get_if<ClaimError>(&r)) return ::testing::AssertionFailure() << e->message;
  const auto& result = std::get<ClaimResult>(r);
  if (result.holds()) return ::testing::AssertionFailure() << result.message() << ", but a violation was expected";
  const auto found = result.broken();
  for (const auto& p : expected) {
    if (!found.count(p)) return ::testing::AssertionFailure() << "expected " << p << " among the violations\n" << result.message();
  }
  return ::testing::AssertionSuccess() << result.message();
}

// Succeeds when the file's runs give the verdicts it expects.
inline ::testing::AssertionResult ScenarioAsExpected(const std::string& path, bool live = false) {
  ScenarioVerdict v = run_scenario_file(path, live);
  if (v.as_expected) return ::testing::AssertionSuccess() << v.message();
  return ::testing::AssertionFailure() << v.message();
}

}  // namespace lockstep::runner
