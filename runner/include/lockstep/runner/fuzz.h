// Fuzzing: RapidCheck generators over the scenario space (algorithm, clients, lease,
// hold time, and a fault schedule drawn from the fault kinds the user allows), a driver
// that runs generated scenarios until one violates a property, and shrinking — RapidCheck's
// own shrink tree, walked greedily — down to a small scenario that still fails.
//
// Generated scenarios are ordinary Scenario values: a counterexample is written as a
// scenario file and replays with `lockstep run`.
//
// Topology: one master (three for redlock and multilock), with a replica when failover
// is among the allowed faults. Targets: pause and crash hit clients (a node crash
// without persistence loses every lock by design); clock faults, delay, jitter and
// partitions hit clients or nodes; failover promotes a master's replica.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "lockstep/runner/scenario.h"
#include "lockstep/runner/run.h"
#include "lockstep/runner/sim_runner.h"

namespace lockstep::runner {

// Which faults a campaign draws, held against the lock's assumptions (its registry entry's
// Assumption list, for the configuration each scenario draws):
//  - Any: as drawn, whatever the lock claims;
//  - Within: every fault cut down to what the lock claims to tolerate (pauses clipped,
//    delays shortened, node restarts postponed, faults it claims nothing about dropped):
//    a failure is the lock's own;
//  - Beyond: at least one fault past what the lock claims (the first one that can be is
//    pushed past its bound; a scenario none of whose faults can be is not run).
// Shrinking never leaves the budget a campaign started in: every smaller scenario is
// held to the same rule.
enum class Budget { Any, Within, Beyond };
const char* to_string(Budget b);

struct FuzzSpace {
  // The locks drawn from (names of the one registry, lockstep/locks.h): lockstep's recipes,
  // drawn with a lease and retry around the generated faults, or library profiles, each
  // run taking one with its options drawn around the library's defaults; shrinking keeps
  // the lock a run drew.
  std::vector<std::string> locks;
  std::vector<FaultKind> fault_kinds;    // empty: no faults
  int64_t duration_ms = 6000;
  int clients_max = 4;
  int faults_max = 6;
  // Only violations of these properties, or of these severity classes, count as findings
  // (both empty: every violation). A claim such as "only the owner unlocks, whatever the
  // pauses" is checked this way, and `--stop-on two-holders,damage` passes over a lease
  // lost without harm.
  std::set<std::string> properties = {};
  std::set<checker::Severity> classes = {};
  // Every client's pauses together stay well inside the lease once the work is counted
  // (the assumption under which a lease lock without fencing promises mutual exclusion).
  bool pauses_within_lease = false;
  Budget budget = Budget::Any;
};

// Whether every fault of the scenario is within its lock's assumptions.
bool within_assumptions(const Scenario& s);

// Reads a `--stop-on` list (comma-separated property names and severity classes, or
// "all") into space.properties and space.classes. Returns "" or what is wrong with it.
std::string parse_stop_on(const std::string& list, FuzzSpace& space);
// The summary's counts by class as one phrase: "two-holders 1, lease-lost 12" ("none").
std::string by_class_text(const std::map<std::string, uint64_t>& by_class);

// One generated scenario for run `index` of a campaign with this base seed (pure: the
// same arguments give the same scenario).
Scenario generate_scenario(const FuzzSpace& space, uint64_t campaign_seed, uint64_t index);

struct FuzzFinding {
  Scenario original;
  Scenario shrunk;
  RunOutcome outcome;  // of the shrunk scenario
  uint64_t index = 0;  // which run found it
  int shrink_steps = 0;
};

struct FuzzOptions {
  uint64_t seed = 1;
  uint64_t runs = 100;
  double time_limit_s = 0;  // > 0: stop after this much wall time instead
  int shard = 0, shards = 1;
  int shrink_runs_max = 300;  // bound on scenario runs spent shrinking
  // Runs at once (lockstep/runner/jobs.h): the summary and the finding are the same for
  // any number (with a time limit, only how many runs fit in it changes). Shrinking runs
  // on the calling thread.
  unsigned jobs = 1;
};

struct FuzzSummary {
  uint64_t runs = 0;
  uint64_t violations = 0;  // runs that stopped the campaign (at most one: it stops there)
  // Every run's findings by severity class (a run counts once per class it showed),
  // those that stop the campaign and those it passes over alike, and the runs whose
  // verdict was unknown (they neither stop it nor count as safe).
  std::map<std::string, uint64_t> by_class;
  uint64_t unknown = 0;
  double seconds = 0;
  std::optional<FuzzFinding> finding;
};

// Runs generated scenarios until one shows a violation (then shrinks it) or the budget
// is spent. `progress(done, total)` is called after every run, on the calling thread, in
// run order.
FuzzSummary fuzz(const FuzzSpace& space, const FuzzOptions& options,
                 const std::function<void(uint64_t, uint64_t)>& progress = {});

}  // namespace lockstep::runner
