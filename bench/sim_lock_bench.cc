// Throughput of the simulator on lock work.
//
// BM_SimLockCycles is the headline figure (sim_lock_cycles_per_s): 10 simulated clients,
// each cycling acquire + hold 1 ms + release on a lock key of its own with the real
// set-px-lua lock code (SET NX PX, then the compare-and-delete script), against one
// simulated node over the network model (uniform 0.2-0.6 ms per message). Every cycle
// succeeds, so the figure counts the simulator's full path per cycle — coroutines,
// scheduler, network, command execution and Lua — and nothing else: no history is
// recorded and nothing is checked.
//
// BM_SimLockCyclesContended is the whole run of a stock scenario instead: 10 clients
// fighting over one key with 1 ms retries (most simulated work is failed attempts), the
// history recorded, then the invariants and the linearizability checker run over it.
//
// BM_SimStockDemo reports simulated seconds per wall second for the seed-001 demo.
//
// Rates are per wall second (UseRealTime), as the figures are defined; on a shared
// machine that makes them pessimistic, never flattering.
#include <benchmark/benchmark.h>

#include "lockstep/lock.h"
#include "lockstep/runner/memory.h"
#include "lockstep/runner/sim_runner.h"
#include "lockstep/sim/world.h"

namespace {

// As the lockstep binary does: runs reuse the memory the previous run freed.
const bool kKeepMemory = (lockstep::runner::keep_freed_memory_for_reuse(), true);

using lockstep::runner::Scenario;
constexpr int64_t kMs = 1'000'000;

lockstep::Task<void> cycle_forever(lockstep::Env& env, int client, int64_t& cycles) {
  lockstep::LockParams p;
  p.key = "lock:" + std::to_string(client);
  p.lease = lockstep::Millis(30000);
  p.command_timeout = lockstep::Millis(1000);
  std::unique_ptr<lockstep::Lock> lock = lockstep::make_lock("set-px-lua", env, p);
  for (;;) {  // bounded by the world's end time: the frame is destroyed with the world
    if (co_await lock->acquire(lockstep::Millis(1000)) != lockstep::AcquireOutcome::Acquired) continue;
    co_await env.sleep(lockstep::Millis(1));
    if (co_await lock->release() == lockstep::ReleaseOutcome::Released) ++cycles;
  }
}

// One world, `clients` independent lock keys, `sim_s` simulated seconds; returns cycles.
int64_t run_cycles(int clients, int64_t sim_s) {
  lockstep::sim::WorldOptions o;
  o.seed = 1;
  o.latency = {lockstep::sim::Latency::Kind::Uniform, kMs / 5, 3 * kMs / 5, 0};
  lockstep::sim::World world(o);
  world.add_node("node-1", lockstep::sim::Clock());
  int64_t cycles = 0;
  for (int i = 1; i <= clients; ++i) {
    const int pid = world.add_client("client-" + std::to_string(i), i, lockstep::sim::Clock());
    world.env(pid).spawn(cycle_forever(world.env(pid), i, cycles));
  }
  world.scheduler().run_until(sim_s * 1000 * kMs);
  return cycles;
}

void BM_SimLockCycles(benchmark::State& state) {
  int64_t cycles = 0;
  for (auto _ : state) cycles += run_cycles(10, 10);
  state.SetItemsProcessed(cycles);
  state.counters["cycles_per_run"] = static_cast<double>(cycles) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_SimLockCycles)->Unit(benchmark::kMillisecond)->UseRealTime();

Scenario contended_scenario(int64_t duration_ms) {
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

void BM_SimLockCyclesContended(benchmark::State& state) {
  const Scenario s = contended_scenario(2000);
  int64_t cycles = 0;
  for (auto _ : state) {
    auto out = lockstep::runner::run_in_sim(s);
    cycles += out.report.stats["acquisitions"].get<int64_t>();
  }
  state.SetItemsProcessed(cycles);
  state.counters["cycles_per_run"] = static_cast<double>(cycles) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_SimLockCyclesContended)->Unit(benchmark::kMillisecond)->UseRealTime();

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
BENCHMARK(BM_SimStockDemo)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
