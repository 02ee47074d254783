// Runs a scenario in the live world: real redis-server processes started (and removed)
// by lockstep, the same workload and lock code as the simulator on a LiveEnv, the fault
// timeline played in real time, and a history judged by the same invariant checks.
//
// Ground truth is weaker live than in the simulator, and the report says so: critical
// sections are recorded by the clients themselves (as in the simulator), but which value
// the lock key holds comes from polling every node every ~2 ms, and who deleted a key is
// known only when a client's delete reply says so. report.stats.checkable lists the
// properties this run's truth could decide.
//
// A live run is not reproducible bit for bit: the seed fixes tokens and jitter, the
// machine decides the timing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lockstep/runner/scenario.h"
#include "lockstep/runner/run.h"

namespace lockstep::runner {

struct LiveOptions {
  // "HOST:PORT" of a server the user runs. Only keys under lockstep:<run-id>: are
  // touched; topologies with more than one server and faults on the server are refused.
  std::optional<std::string> redis;
  std::string run_id;        // default: <unix-ms>-<pid>
  std::string replay_path;   // how the scenario file is named in the replay command
  std::string client;        // the --client command as typed, for the replay command
  // Stop as soon as every client has finished (rather than at duration_ms); faults
  // scheduled after that point do not happen.
  bool stop_when_idle = true;
  int64_t poll_interval_ms = 2;
};

// Why the scenario cannot run live with these options ("" if it can): a world list
// without "live", faults the live world cannot inject, or --redis limits.
std::string live_unsupported(const Scenario& s, const LiveOptions& o);

// Never throws; a setup failure (no redis-server, a server that does not start) gives
// verdict "unknown" with stats.error.
RunOutcome run_live(const Scenario& s, const LiveOptions& o = {});

}  // namespace lockstep::runner
