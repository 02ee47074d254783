// Claims about a lock, checked from a user's own test suite.
//
// A claim says which properties a lock keeps under which faults ("only the owner
// unlocks, whatever the pauses"; "mutual exclusion while pauses fit in the lease"). To
// check one, lockstep's fuzzer draws scenarios for the named algorithm (built-in or
// registered with register_algorithm) with faults of the claimed kinds, runs them in the
// simulator and, at the first run that breaks a claimed property, shrinks it to a small
// scenario: the same driver as `lockstep fuzz`. The result carries that scenario, the
// checker's sentences and the command that replays it, so a failing test says what
// happened, not merely that something did.
//
// Everything is deterministic: the same claim, options and lock give the same runs.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "lockstep/fault_plan.h"
#include "lockstep/runner/run.h"
#include "lockstep/runner/scenario.h"

namespace lockstep::runner {

struct Claim {
  // Property names as scenario files write them (property_names()): "mutual-exclusion",
  // "foreign-unlock", "deadlock", "lost-update", ... The claim is that none of these is
  // violated. Empty: none of any.
  std::set<std::string> keeps;
  // The faults the lock is claimed to survive, drawn in every combination; empty: none.
  std::vector<FaultKind> under;
  // Each client's pauses together stay inside the lease, work included: the assumption
  // of a lease lock without fencing tokens.
  bool pauses_within_lease = false;
};

struct ClaimOptions {
  uint64_t seed = 1;
  // Scenarios are cheap (a millisecond or two each); some bugs need hundreds to show.
  uint64_t runs = 1000;
  int clients_max = 4;
  int64_t duration_ms = 6000;
  // Where the shrunk counterexample (a scenario file) is written; "" for nowhere.
  std::string out_dir = "lockstep-claims";
};

struct ClaimResult {
  std::string algorithm;
  uint64_t runs = 0;  // scenarios run before the finding (or all of them)
  // Set when a claimed property was broken: the shrunk scenario, and its run.
  std::optional<Scenario> counterexample;
  std::optional<RunOutcome> outcome;
  std::string counterexample_file;  // "" when not written
  // The command that replays it, naming replay_program() (lockstep/runner/run.h): set
  // that to your own command line (lockstep/cli.h), which knows your lock.
  std::string replay;

  bool holds() const { return !counterexample.has_value(); }
  // The claimed properties the counterexample breaks.
  std::set<std::string> broken() const;
  // Several lines: the verdict, the faults of the shrunk scenario, the checker's
  // sentence for each violation, where the scenario is and how to replay it.
  std::string message() const;
};

// Checks a claim; never throws for bad input: an unknown algorithm, property or an
// empty run budget is a ClaimError.
struct ClaimError {
  std::string message;
};
std::variant<ClaimResult, ClaimError> check_claim(const std::string& algorithm, const Claim& claim,
                                                  const ClaimOptions& options = {});

// One scenario file run in the simulator (and live as well when `live` is set and the
// file's worlds include live): whether every run's verdict was what the file expects.
struct ScenarioVerdict {
  bool as_expected = false;
  std::string error;  // a file that does not load or a world that cannot run it
  std::vector<reports::RunReport> reports;  // one per world run
  std::string message() const;
};
ScenarioVerdict run_scenario_file(const std::string& path, bool live = false);

}  // namespace lockstep::runner
