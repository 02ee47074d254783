#include "lockstep/sim/network.h"

#include <algorithm>

namespace lockstep::sim {

Network::Network(uint64_t root_seed, Latency latency, double loss)
    : rng_(root_seed, "network"), latency_(latency), loss_(loss) {}

int64_t& Network::slot(std::vector<int64_t>& v, int process) {
  if (static_cast<size_t>(process) >= v.size()) v.resize(process + 1, 0);
  return v[process];
}

void Network::add_extra_delay(int process, int64_t delay_ns) { slot(extra_delay_ns_, process) += delay_ns; }
void Network::add_jitter(int process, int64_t jitter_ns) { slot(jitter_ns_, process) += jitter_ns; }

void Network::block(int from, int to, int delta) {
  int& n = blocked_[{from, to}];
  n += delta;
  if (n <= 0) blocked_.erase({from, to});
}

int64_t Network::draw_delay(int from, int to) {
  int64_t d = latency_.draw(rng_);
  d += slot(extra_delay_ns_, from) + slot(extra_delay_ns_, to);
  const int64_t jitter = slot(jitter_ns_, from) + slot(jitter_ns_, to);
  if (jitter > 0) d += rng_.between(0, jitter);
  return d;
}

std::optional<int64_t> Network::transit(int from, int to, int64_t now_ns) {
  if (blocked_.count({from, to})) return std::nullopt;
  if (loss_ > 0 && rng_.chance(loss_)) return std::nullopt;
  int64_t arrival = now_ns + draw_delay(from, to);
  int64_t& last = last_arrival_ns_[{from, to}];
  arrival = std::max(arrival, last);
  last = arrival;
  return arrival;
}

}  // namespace lockstep::sim
