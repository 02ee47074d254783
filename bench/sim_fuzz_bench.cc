// Fuzzing throughput: generated scenarios run and judged per wall second.
//
// BM_FuzzCampaign is the figure behind `fuzz_runs_per_s`: the first 200 runs of one fixed
// campaign — set-px-lua with pauses, two clients, campaign seed 1, the default six
// simulated seconds per run — each generated, simulated, recorded and judged exactly as
// `lockstep fuzz` does for every run (verdict only: a run's history is written out and
// hashed when it is a counterexample, run again). Unlike `lockstep fuzz` it does not stop
// at the first violation (a campaign that stops after 20 runs measures nothing), and it
// does not shrink: shrinking is more runs of the same kind.
#include <benchmark/benchmark.h>

#include "lockstep/runner/fuzz.h"
#include "lockstep/runner/memory.h"
#include "lockstep/runner/sim_runner.h"

namespace {

// As the lockstep binary does: runs reuse the memory the previous run freed.
const bool kKeepMemory = (lockstep::runner::keep_freed_memory_for_reuse(), true);

constexpr uint64_t kRuns = 200;

lockstep::runner::FuzzSpace campaign_space() {
  lockstep::runner::FuzzSpace sp;
  sp.locks = {"set-px-lua"};
  sp.fault_kinds = {lockstep::FaultKind::Pause};
  sp.clients_max = 2;
  return sp;
}

void BM_FuzzCampaign(benchmark::State& state) {
  const auto space = campaign_space();
  lockstep::runner::RunOptions options;
  options.verdict_only = true;
  uint64_t runs = 0, violations = 0;
  for (auto _ : state) {
    for (uint64_t i = 0; i < kRuns; ++i) {
      const auto outcome = lockstep::runner::run_in_sim(lockstep::runner::generate_scenario(space, 1, i), options);
      violations += outcome.report.violations.empty() ? 0 : 1;
      ++runs;
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(runs));
  state.counters["violating_runs"] = static_cast<double>(violations) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_FuzzCampaign)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
