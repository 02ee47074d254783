// The routing half of a Redis Cluster client, as Redisson's or Lettuce's, shared by the
// simulator's and the live world's cluster connections so that both follow the cluster
// the same way: a map of which node serves each slot (from CLUSTER SLOTS), each command
// sent to the node of its key, redirections followed — MOVED updates the map and makes it
// stale, ASK sends ASKING first and changes nothing. The map is read again every 5 s
// (Redisson's scanInterval) and after any timeout, reset or CLUSTERDOWN, on the node that
// last answered it first.
//
// A world supplies the transport: its clock, one command to one node, and which of its
// nodes an address in a reply names.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "lockstep/env.h"

namespace lockstep {

class ClusterRouter {
 public:
  // Nodes the map is first read from are numbered 0..seeds-1 by the world.
  explicit ClusterRouter(std::vector<int> seeds);
  virtual ~ClusterRouter() = default;

  Task<Reply> call(std::vector<std::string> argv, Nanos timeout);

  static constexpr int kRedirectsMax = 5;
  static constexpr int64_t kScanIntervalNs = 5'000'000'000;
  static constexpr int64_t kRefreshTimeoutNs = 1'000'000'000;

 protected:
  virtual int64_t now_ns() = 0;
  // One command to node `target`, answered by `deadline_ns` or failed as a timeout.
  virtual Task<Reply> send(int target, std::vector<std::string> argv, int64_t deadline_ns) = 0;
  // The node an address in CLUSTER SLOTS or a redirection names; -1 if none.
  virtual int find(const std::string& host, int64_t port) = 0;

 private:
  Task<void> refresh(int64_t deadline_ns);

  std::vector<int> owner_;  // slot -> node, -1: unknown
  std::vector<int> seeds_;
  size_t refresh_from_ = 0;
  bool stale_ = true;
  int64_t next_refresh_ns_ = 0;
  int last_ = -1;  // where the last keyed command went
};

}  // namespace lockstep
