// A SentinelFollower keeps a LiveWorld's nodes pointed where Sentinel says the masters
// are, the way Sentinel-aware Redis clients do: it subscribes to +switch-master on every
// sentinel and, when one announces a new address for a master it follows, re-points
// that node (LiveWorld::set_node_address). Lock code never learns of it: its next call
// simply reaches the new master, or fails with an I/O error if it was in flight.
//
// Invariants:
//  - Runs on the EventLoop's thread; a switch is applied from deferred work, never from
//    inside a hiredis callback.
//  - Every sentinel announces the same switch; the first announcement moves the node,
//    the others find it already there and change nothing.
//  - Only masters named in the constructor are followed; other names are ignored.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "lockstep/live/live_world.h"

namespace lockstep::live {

class SentinelFollower {
 public:
  // master_names[i] is the name Sentinel knows node i by.
  SentinelFollower(LiveWorld& world, std::vector<std::string> master_names);
  ~SentinelFollower();
  SentinelFollower(const SentinelFollower&) = delete;
  SentinelFollower& operator=(const SentinelFollower&) = delete;

  // Subscribes to +switch-master on each sentinel. Returns "" or why not. The loop must
  // run for the subscriptions to be confirmed.
  std::string follow(const std::vector<NodeAddress>& sentinels);
  // True once every sentinel confirmed the subscription.
  bool subscribed() const;

  // Called after a node was re-pointed.
  std::function<void(int node, const NodeAddress& from, const NodeAddress& to)> on_switch;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace lockstep::live
