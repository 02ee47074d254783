// Commands per second of the simulated Redis node alone (no network, no scheduler):
// the ceiling for everything the simulator does on top.
#include <benchmark/benchmark.h>

#include "lockstep/scripts.h"
#include "lockstep/sim/redis_node.h"

namespace {

using lockstep::sim::ClientState;
using lockstep::sim::RedisNode;

void BM_SimNodeSet(benchmark::State& state) {
  RedisNode node;
  ClientState c;
  std::vector<std::string> argv{"SET", "key", "value"};
  int64_t now = 1'767'225'600'000;
  for (auto _ : state) benchmark::DoNotOptimize(node.execute(c, argv, ++now));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SimNodeSet);

void BM_SimNodeGet(benchmark::State& state) {
  RedisNode node;
  ClientState c;
  node.execute(c, {"SET", "key", "value"}, 0);
  std::vector<std::string> argv{"GET", "key"};
  int64_t now = 1'767'225'600'000;
  for (auto _ : state) benchmark::DoNotOptimize(node.execute(c, argv, ++now));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SimNodeGet);

// The reentrant-lock acquire script, re-entered by its owner every time (the path a
// held lock takes on each reentry), through EVAL with the full script text as clients send it.
void BM_SimNodeEvalReentrantLock(benchmark::State& state) {
  RedisNode node;
  ClientState c;
  std::vector<std::string> argv{"EVAL", lockstep::script("reentrant_lock"), "1", "lock", "30000", "owner:1"};
  int64_t now = 1'767'225'600'000;
  for (auto _ : state) benchmark::DoNotOptimize(node.execute(c, argv, ++now));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SimNodeEvalReentrantLock);

}  // namespace
