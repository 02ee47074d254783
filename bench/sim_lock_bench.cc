// Throughput of the whole simulator on lock work: acquire + hold + release cycles of the
// stock workload (10 clients, network model on), and simulated seconds per wall second
// for the seed-001 demo. Items are lock cycles; the counter sim_s_per_wall_s is time.
#include <benchmark/benchmark.h>

#include "lockstep/runner/sim_runner.h"

namespace {

using lockstep::runner::Scenario;

Scenario cycles_scenario(int64_t duration_ms) {
  Scenario s;
  s.name = "bench-cycles";
  s.seed = 1;
  s.duration_ms = duration_ms;
  s.network.latency.kind = lockstep::runner::LatencySpec::Kind::Uniform;
  s.network.latency.min_ms = 0.2;
  s.network.latency.max_ms = 0.6;
  s.lock.algorithm = "set-px-lua";
  s.lock.lease_ms = 5000;
  s.lock.retry = {100000, 1, 1};
  s.workload.clients = 10;
  s.workload.initial_stock = 1'000'000'000;
  s.workload.attempts_per_client = 1'000'000;
  s.workload.hold_ms = 0;
  s.workload.wait_ms = 1'000'000;
  return s;
}

void BM_SimLockCycles(benchmark::State& state) {
  const Scenario s = cycles_scenario(2000);
  int64_t cycles = 0;
  for (auto _ : state) {
    auto out = lockstep::runner::run_in_sim(s);
    cycles += out.report.stats["acquisitions"].get<int64_t>();
  }
  state.SetItemsProcessed(cycles);
  state.counters["cycles_per_run"] = static_cast<double>(cycles) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_SimLockCycles)->Unit(benchmark::kMillisecond);

void BM_SimStockDemo(benchmark::State& state) {
  Scenario s;
  s.name = "bench-demo";
  s.seed = 2001;
  s.duration_ms = 10000;
  s.network.latency.kind = lockstep::runner::LatencySpec::Kind::Uniform;
  s.network.latency.min_ms = 0.5;
  s.network.latency.max_ms = 2;
  s.lock.algorithm = "set-px-lua";
  s.lock.lease_ms = 30000;
  s.lock.retry = {1000, 10, 10};
  s.workload.clients = 100;
  s.workload.initial_stock = 90;
  s.workload.hold_ms = 1;
  s.workload.wait_ms = 5000;
  for (auto _ : state) benchmark::DoNotOptimize(lockstep::runner::run_in_sim(s));
  state.counters["sim_s_per_wall_s"] =
      benchmark::Counter(10.0 * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_SimStockDemo)->Unit(benchmark::kMillisecond);

}  // namespace
