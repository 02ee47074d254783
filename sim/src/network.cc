#include "lockstep/sim/network.h"

#include <algorithm>
#include <cmath>

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
  int64_t d = 0;
  switch (latency_.kind) {
    case Latency::Kind::Constant: d = latency_.a_ns; break;
    case Latency::Kind::Uniform: d = rng_.between(latency_.a_ns, latency_.b_ns); break;
    case Latency::Kind::Normal:
      d = latency_.a_ns + static_cast<int64_t>(std::llround(rng_.normal() * static_cast<double>(latency_.b_ns)));
      break;
    case Latency::Kind::LongTail:
      d = latency_.a_ns;
      // A slow message waits an exponentially distributed extra time: most messages are
      // quick, a few are very late — the shape that makes timeouts lie.
      if (rng_.chance(latency_.tail_probability)) {
        d += static_cast<int64_t>(-std::log(1.0 - rng_.uniform01()) * static_cast<double>(latency_.b_ns));
      }
      break;
  }
  d = std::max<int64_t>(d, 0);
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
