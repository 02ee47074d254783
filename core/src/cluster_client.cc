#include "lockstep/cluster_client.h"

#include <algorithm>

#include "lockstep/cluster_slot.h"

namespace lockstep {

ClusterRouter::ClusterRouter(std::vector<int> seeds) : owner_(kClusterSlots, -1), seeds_(std::move(seeds)) {}

Task<Reply> ClusterRouter::call(std::vector<std::string> argv, Nanos timeout) {
  const int64_t deadline = now_ns() + std::max<int64_t>(timeout.count(), 0);
  if (stale_ || now_ns() >= next_refresh_ns_) co_await refresh(deadline);
  const auto key = routing_key(argv);
  int target = key ? owner_[key_hash_slot(*key)] : last_;
  if (target < 0) target = seeds_[refresh_from_];
  bool asking = false;
  for (int hop = 0;; ++hop) {  // bounded: kRedirectsMax
    if (asking) {
      std::vector<std::string> ask{"ASKING"};
      co_await send(target, std::move(ask), deadline);
    }
    Reply r = co_await send(target, argv, deadline);
    if (r.type == Reply::Type::Timeout || r.type == Reply::Type::IoError ||
        (r.is_error() && r.str.starts_with("CLUSTERDOWN"))) {
      stale_ = true;
      co_return r;
    }
    const auto redirect = r.is_error() && hop < kRedirectsMax ? parse_redirect(r.str) : std::nullopt;
    const int to = redirect ? find(redirect->host, redirect->port) : -1;
    if (to < 0) {
      if (key) last_ = target;
      co_return r;
    }
    if (!redirect->ask) {
      owner_[redirect->slot] = to;
      stale_ = true;
    }
    asking = redirect->ask;
    target = to;
  }
}

// CLUSTER SLOTS from the first node that answers, each given at most kRefreshTimeoutNs.
Task<void> ClusterRouter::refresh(int64_t deadline) {
  for (size_t tried = 0; tried < seeds_.size() && now_ns() < deadline; ++tried) {
    const int node = seeds_[refresh_from_];
    std::vector<std::string> argv{"CLUSTER", "SLOTS"};
    Reply r = co_await send(node, std::move(argv), std::min(deadline, now_ns() + kRefreshTimeoutNs));
    if (r.type == Reply::Type::Array) {
      for (const Reply& range : r.elements) {
        if (range.elements.size() < 3 || range.elements[2].elements.size() < 2) continue;
        const Reply& master = range.elements[2];
        const int owner = find(master.elements[0].str, master.elements[1].integer);
        for (int64_t slot = range.elements[0].integer; slot <= range.elements[1].integer && slot < kClusterSlots; ++slot) {
          owner_[static_cast<size_t>(slot)] = owner;
        }
      }
      stale_ = false;
      next_refresh_ns_ = now_ns() + kScanIntervalNs;
      co_return;
    }
    refresh_from_ = (refresh_from_ + 1) % seeds_.size();
  }
}

}  // namespace lockstep
