// Shared between world.cc and sim_env.cc: the in-flight state of one command.
#pragma once

#include <coroutine>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "lockstep/reply.h"
#include "lockstep/sim/redis_node.h"
#include "lockstep/sim/world.h"

namespace lockstep::sim {

// A client's view of one connection to a node. When the node crashes, its side of every
// connection is gone; the next command that reaches it notices the old incarnation,
// fails with "connection reset" and reconnects, as a real client library would.
struct ConnState {
  ClientState state;
  int node_pid = -1;  // the server it is connected to (a failover moves clients)
  uint64_t node_epoch = 0;
};

// Completed by whichever comes first: the reply, or the caller's timeout. An answered
// call drops its timeout event, so the scheduler does not carry one stale event per call
// until the timeout would have passed.
struct PendingCall {
  bool done = false;
  Reply reply;
  std::coroutine_handle<> waiter;
  Scheduler* scheduler = nullptr;  // set together with timeout
  Scheduler::EventId timeout;

  void finish(Reply r) {
    if (done) return;
    done = true;
    if (scheduler) scheduler->cancel(timeout);
    reply = std::move(r);
    if (waiter) std::exchange(waiter, {}).resume();
  }
};

// Holds a raw pointer on purpose: GCC 12 may destroy a prvalue awaiter twice, which
// would release a shared_ptr member twice. The awaiting frame owns the PendingCall.
struct PendingAwaiter {
  PendingCall* call;
  bool await_ready() const noexcept { return call->done; }
  void await_suspend(std::coroutine_handle<> h) noexcept { call->waiter = h; }
  Reply await_resume() { return std::move(call->reply); }
};

struct World::Request {
  int client_pid = 0;
  uint64_t client_epoch = 0;
  int node_pid = 0;
  std::vector<std::string> argv;
  std::shared_ptr<ConnState> conn;
  PendingCall pending;
  Reply answer;  // the node's reply while it travels back to the client
};

}  // namespace lockstep::sim
