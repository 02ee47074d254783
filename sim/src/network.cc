#include "lockstep/sim/network.h"

#include <algorithm>

namespace lockstep::sim {

Network::Network(uint64_t root_seed, Latency latency, double loss)
    : rng_(root_seed, "network"), latency_(latency), loss_(loss) {}

// Every message looks its link up: the table read is inlined into transit, the rest
// (widening, the sparse map) is not.
inline Network::Link& Network::link(int from, int to) {
  const auto f = static_cast<size_t>(from), t = static_cast<size_t>(to);
  if (f < stride_ && t < stride_) [[likely]] return dense_[f * stride_ + t];
  return link_slow(f, t);
}

Network::Link& Network::link_slow(size_t f, size_t t) {
  if (f >= kDenseMax || t >= kDenseMax) return sparse_[static_cast<uint64_t>(f) << 32 | t];
  // Re-laid out wider; rare, since processes are added before a run starts.
  size_t stride = std::max<size_t>(stride_, 8);
  while (stride <= std::max(f, t)) stride *= 2;
  std::vector<Link> wider(stride * stride);
  for (size_t i = 0; i < stride_; ++i) {
    std::copy_n(dense_.begin() + static_cast<ptrdiff_t>(i * stride_), stride_,
                wider.begin() + static_cast<ptrdiff_t>(i * stride));
  }
  dense_ = std::move(wider);
  stride_ = stride;
  return dense_[f * stride_ + t];
}

bool Network::blocked(int from, int to) const {
  const auto f = static_cast<size_t>(from), t = static_cast<size_t>(to);
  if (f < stride_ && t < stride_) return dense_[f * stride_ + t].blocks > 0;
  auto it = sparse_.find(static_cast<uint64_t>(f) << 32 | t);
  return it != sparse_.end() && it->second.blocks > 0;
}

void Network::add_extra_delay(int process, int64_t delay_ns) {
  if (static_cast<size_t>(process) >= faults_.size()) faults_.resize(process + 1);
  faults_[process].extra_delay_ns += delay_ns;
  any_faults_ = true;
}

void Network::add_jitter(int process, int64_t jitter_ns) {
  if (static_cast<size_t>(process) >= faults_.size()) faults_.resize(process + 1);
  faults_[process].jitter_ns += jitter_ns;
  any_faults_ = true;
}

void Network::block(int from, int to, int delta) {
  Link& l = link(from, to);
  l.blocks = std::max(0, l.blocks + delta);
}

inline int64_t Network::draw_delay(int from, int to) {
  const int64_t d = latency_.draw(rng_);
  return any_faults_ ? d + fault_delay(from, to) : d;
}

// Delay and jitter faults on either end; the jitter draw happens only while some is set,
// as it always did, so runs without these faults draw the same numbers.
int64_t Network::fault_delay(int from, int to) {
  auto at = [this](int p) { return static_cast<size_t>(p) < faults_.size() ? faults_[p] : Faults{}; };
  const Faults a = at(from), b = at(to);
  const int64_t jitter = a.jitter_ns + b.jitter_ns;
  return a.extra_delay_ns + b.extra_delay_ns + (jitter > 0 ? rng_.between(0, jitter) : 0);
}

std::optional<int64_t> Network::transit(int from, int to, int64_t now_ns) {
  Link& l = link(from, to);
  if (l.blocks > 0) return std::nullopt;
  if (loss_ > 0 && rng_.chance(loss_)) return std::nullopt;
  const int64_t arrival = std::max(now_ns + draw_delay(from, to), l.last_arrival_ns);
  l.last_arrival_ns = arrival;
  return arrival;
}

}  // namespace lockstep::sim
