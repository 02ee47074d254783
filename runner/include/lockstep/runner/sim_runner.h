// Runs a scenario in the simulated world: builds the topology, starts the workload's
// clients, plays the fault plan, records the history with ground truth, and judges it.
// The same scenario and seed always give a byte-identical history.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "lockstep/runner/run.h"
#include "lockstep/runner/scenario.h"

namespace lockstep::runner {

struct RunOptions {
  std::optional<uint64_t> seed;  // overrides the scenario's seed
  std::string replay_path;       // how the scenario file is named in the replay command
  // Only the verdict and violations are wanted, as for a fuzz run that is thrown away
  // unless it fails (the counterexample is run again in full): the outcome has no JSON
  // lines, the report no history digest, scenario definition or fault list. Writing
  // those was a fifth of a fuzz run. The history itself is the same.
  bool verdict_only = false;
};

// Why the simulator cannot run the scenario ("" if it can): its worlds leave out "sim",
// or its workload is an external program, which only the live world can start.
std::string sim_unsupported(const Scenario& scenario);

// A scenario the simulator cannot run gives verdict "unknown" with stats.error.
RunOutcome run_in_sim(const Scenario& scenario, const RunOptions& options = {});

}  // namespace lockstep::runner
