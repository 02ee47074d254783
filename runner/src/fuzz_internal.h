// The pieces of the fuzz generators shared between lockstep's algorithms (fuzz.cc) and
// the library profiles (fuzz_profiles.cc).
#pragma once

#include <rapidcheck.h>

#include "lockstep/runner/fuzz.h"

namespace lockstep::runner {

// The leases a generated scenario chooses from: around the pauses and delays generated.
inline const std::vector<int64_t> kLeases = {200, 500, 1000, 2000};

bool needs_replica(FaultKind kind);

// A schedule of faults of the allowed kinds on these processes, shrinking fault by fault.
rc::Gen<std::vector<FaultSpec>> faults_gen(const FuzzSpace& sp, int clients, int nodes, int replicas);

// Scenarios for the space's profiles.
rc::Gen<Scenario> profile_scenario_gen(const FuzzSpace& sp);

}  // namespace lockstep::runner
