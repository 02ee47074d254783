// The simulated network decides when (and whether) a message from one process reaches
// another. Each message's delay is drawn from the latency distribution, plus any extra
// delay or jitter a fault put on either end. Links are FIFO like a TCP connection: a
// message never overtakes an earlier one on the same directed link. Partitions drop
// messages on blocked directed pairs; loss drops at random.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
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
  bool blocked(int from, int to) const;

 private:
  // What the network knows of one directed pair of processes. Every message looks its
  // link up, so links sit in a flat table by (from, to), as wide as the highest process
  // seen (rounded up to a power of two); past kDenseMax processes, in a hash map (never
  // iterated).
  struct Link {
    int64_t last_arrival_ns = 0;  // FIFO: nothing may arrive before this
    int blocks = 0;                       // partitions cutting this direction
  };
  struct Faults {
    int64_t extra_delay_ns = 0;
    int64_t jitter_ns = 0;
  };

  int64_t draw_delay(int from, int to);
  Link& link(int from, int to);
  Link& link_slow(size_t f, size_t t);
  int64_t fault_delay(int from, int to);

  Rng rng_;
  Latency latency_;
  double loss_;
  std::vector<Faults> faults_;  // by process; grown on first use
  static constexpr size_t kDenseMax = 128;
  std::vector<Link> dense_;  // dense_[from * stride_ + to]
  size_t stride_ = 0;
  std::unordered_map<uint64_t, Link> sparse_;
  bool any_faults_ = false;     // delay or jitter ever set: most runs never pay for them
};

}  // namespace lockstep::sim
