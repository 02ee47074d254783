// A LagRelay sits between a replica and its master and holds the replication stream
// (bytes from the master) for `lag` before passing them on; bytes from the replica pass
// at once. It is the live form of the simulator's topology.replication_lag_ms: on
// loopback a replica otherwise has every write within microseconds, so a master crash
// could never take an acknowledged write with it.
//
// Invariants:
//  - It listens on 127.0.0.1 on a port the kernel picks, and connects only to the one
//    upstream it was given (a server lockstep started).
//  - Bytes from the master reach the replica in order, each no earlier than `lag` after
//    it arrived here.
//  - When the master side closes (a crash), whatever is still held is dropped and the
//    replica side is closed: the write dies with the master's replication buffer, as in
//    the simulator. When the replica side closes, the master side is closed too.
//  - While hold(true) is in force (the master is paused), nothing is passed on: a paused
//    master sends nothing, in the simulator too.
//  - Everything runs on the EventLoop's thread, and only while that loop runs.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "lockstep/live/event_loop.h"
#include "lockstep/live/live_world.h"

struct evconnlistener;
struct sockaddr;

namespace lockstep::live {

class LagRelay {
 public:
  LagRelay(EventLoop& loop, NodeAddress upstream, Nanos lag);
  ~LagRelay();
  LagRelay(const LagRelay&) = delete;
  LagRelay& operator=(const LagRelay&) = delete;

  // Starts listening. Returns "" or why it could not.
  std::string start();
  NodeAddress address() const { return NodeAddress{"127.0.0.1", port_}; }
  const NodeAddress& upstream() const { return upstream_; }
  // Stops (true) or resumes (false) passing bytes on; what fell due meanwhile goes at once.
  void hold(bool on);
  Nanos lag() const { return lag_; }
  // Bytes dropped because the master side closed while they were held.
  int64_t dropped_bytes() const { return dropped_bytes_; }

 private:
  struct Pair;
  friend struct Pair;
  static void on_accept(evconnlistener*, int fd, ::sockaddr*, int, void* arg);
  void close_pair(uint64_t id, bool upstream_closed);

  EventLoop& loop_;
  NodeAddress upstream_;
  Nanos lag_;
  int port_ = 0;
  evconnlistener* listener_ = nullptr;
  uint64_t next_id_ = 1;
  std::map<uint64_t, std::unique_ptr<Pair>> pairs_;
  int64_t dropped_bytes_ = 0;
  bool held_ = false;
};

}  // namespace lockstep::live
