// The simulated network decides when (and whether) a message from one process reaches
// another. Each message's delay is drawn from the latency distribution, plus any extra
// delay or jitter a fault put on either end. Links are FIFO like a TCP connection: a
// message never overtakes an earlier one on the same directed link. Partitions drop
// messages on blocked directed pairs; loss drops at random.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "lockstep/latency.h"
#include "lockstep/random.h"

namespace lockstep::sim {

using Latency = lockstep::Latency;

class Network {
 public:
  Network(uint64_t root_seed, Latency latency, double loss);

  // When a message sent now from `from` to `to` arrives; nullopt if it is lost.
  std::optional<int64_t> transit(int from, int to, int64_t now_ns);

  // Fault hooks: counters so overlapping faults on the same process compose.
  void add_extra_delay(int process, int64_t delay_ns);
  void add_jitter(int process, int64_t jitter_ns);
  void block(int from, int to, int delta);  // +1 to block, -1 to heal
  bool blocked(int from, int to) const { return blocked_.count({from, to}) > 0; }

 private:
  int64_t draw_delay(int from, int to);
  int64_t& slot(std::vector<int64_t>& v, int process);

  Rng rng_;
  Latency latency_;
  double loss_;
  std::vector<int64_t> extra_delay_ns_;
  std::vector<int64_t> jitter_ns_;
  std::map<std::pair<int, int>, int> blocked_;
  std::map<std::pair<int, int>, int64_t> last_arrival_ns_;
};

}  // namespace lockstep::sim
