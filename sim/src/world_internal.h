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
#include "lockstep/task.h"

namespace lockstep::sim {

// A client's view of one connection to a node. When the node crashes, its side of every
// connection is gone; the next command that reaches it notices the old incarnation,
// fails with "connection reset" and reconnects, as a real client library would.
struct ConnState {
  ClientState state;
  int node_pid = -1;  // the server it is connected to (a failover moves clients)
  uint64_t node_epoch = 0;
};

// A Nil reply that keeps the string and element buffers it had.
inline void clear_keeping_buffers(Reply& r) {
  r.type = Reply::Type::Nil;
  r.integer = 0;
  r.str.clear();
  r.elements.clear();
}

// Completed by whichever comes first: the reply, or the caller's timeout. An answered
// call drops its timeout event, so the scheduler does not carry one stale event per call
// until the timeout would have passed.
struct PendingCall {
  bool done = false;
  Reply reply;
  std::coroutine_handle<> waiter;
  Scheduler* scheduler = nullptr;  // set together with timeout
  Scheduler::EventId timeout;

  // Back to a new call's state, the reply's buffers kept (a reused request's).
  void reset() {
    done = false;
    clear_keeping_buffers(reply);
    waiter = {};
    scheduler = nullptr;
    timeout = {};
  }

  void finish(Reply&& r) {
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
  // A reference: the caller moves the reply once, straight to where it goes.
  Reply&& await_resume() { return std::move(call->reply); }
};

// One command in flight. It is shared by the caller's frame and the events that carry
// it (arrival, reply, timeout, a WAIT), through RequestRef: a count in the request
// itself, not a separate atomic control block. Every command makes one and frees it, so
// a finished request goes back to a per-thread list (World::Request::make). A shared
// Command is read in place: the request holds a reference to it instead of a copy.
struct World::Request {
  int client_pid = 0;
  uint64_t client_epoch = 0;
  int node_pid = 0;
  std::vector<std::string> argv;
  Command shared;  // a shared command, in place of argv
  const std::vector<std::string>& args() const { return shared ? *shared : argv; }
  std::shared_ptr<ConnState> conn;
  PendingCall pending;
  Reply answer;  // the node's reply while it travels back to the client
  // The caller's timeout: its place in the schedule is taken when the command is sent,
  // the event itself only made once the reply might not come first (World::arm_timeout).
  int64_t deadline_ns = 0;
  Scheduler::Ticket timeout_ticket;
  bool timeout_armed = false;
  uint32_t refs = 0;

  // A request as new, apart from its argv (which the caller replaces or borrows around),
  // from the list or the heap; finished() hands it back, resetting each field above by
  // hand (assigning a new Request cost 3% of a lock cycle), so a field added here must be
  // reset there too: make() asserts that a reused request is as new, and world.cc checks
  // the size of Request so that a new field cannot go unnoticed. The list is a fast path
  // (lockstep/fast_paths.h); under AddressSanitizer a kept request is poisoned, so that a
  // use after the last reference is still caught.
  static Request* make();
  static void finished(Request* r);
  // Every field finished() resets is as a new request has it.
  bool as_new() const;
};

class RequestRef {
 public:
  RequestRef() = default;
  explicit RequestRef(World::Request* r) : r_(r) { ++r_->refs; }
  RequestRef(const RequestRef& o) noexcept : r_(o.r_) {
    if (r_) ++r_->refs;
  }
  RequestRef(RequestRef&& o) noexcept : r_(std::exchange(o.r_, nullptr)) {}
  RequestRef& operator=(RequestRef o) noexcept {
    std::swap(r_, o.r_);
    return *this;
  }
  ~RequestRef() {
    if (r_) release(r_);
  }
  World::Request* operator->() const { return r_; }
  World::Request& operator*() const { return *r_; }

 private:
  // Out of line: inlined into the destructors of the lambdas that carry a request, it
  // trips GCC 12's use-after-free warning, which cannot tell that the count was above 1.
  static void release(World::Request* r);
  World::Request* r_ = nullptr;
};

struct World::Waiter {
  RequestRef req;
  int64_t replicas_min;
  uint64_t offset;
  bool done = false;
};

}  // namespace lockstep::sim
