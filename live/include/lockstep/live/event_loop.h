// EventLoop is the one libevent loop of a live run. Every live client's coroutines, every
// hiredis callback, every timer and every fault of the run happen on the thread that
// calls run_until(); nothing in the live world is thread-safe and nothing needs to be.
//
// Invariants:
//  - now() is CLOCK_MONOTONIC: it never jumps, whatever the wall clock does.
//  - Work handed to defer() never runs inside the caller: it runs from the loop, in the
//    order it was deferred. Live code resumes coroutines only from deferred work, never
//    from inside a hiredis callback, so a coroutine that closes a connection can never
//    free a hiredis context that is in the middle of calling back.
//  - A cancelled timer never fires; a timer's function is destroyed when it fires, is
//    cancelled, or the loop is destroyed.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "lockstep/env.h"

struct event_base;
struct event;

namespace lockstep::live {

// The one door into the loop from other threads (a client library's own threads): work
// posted here is deferred on the loop's thread in the order it was posted, and dropped
// once the loop is gone. Whoever posts keeps the inbox alive by its shared_ptr.
class Inbox {
 public:
  void post(std::function<void()> fn);

 private:
  friend class EventLoop;
  std::mutex mu_;
  bool open_ = true;
  int write_fd_ = -1;
  std::vector<std::function<void()>> queue_;
};

// CLOCK_MONOTONIC and CLOCK_REALTIME, as Nanos.
Nanos mono_clock();
Nanos wall_clock();

class EventLoop {
 public:
  using TimerId = uint64_t;

  EventLoop();
  ~EventLoop();
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  event_base* base() { return base_; }
  Nanos now() const { return mono_clock(); }

  // Runs fn once, d from now (d <= 0: on the next loop turn). Returns an id for cancel().
  TimerId after(Nanos d, std::function<void()> fn);
  void cancel(TimerId id);
  void defer(std::function<void()> fn);
  const std::shared_ptr<Inbox>& inbox() { return inbox_; }

  // Runs the loop until done() holds or `limit` has passed. Returns done(). done() is
  // checked between loop turns, and a turn never blocks longer than 10 ms.
  bool run_until(const std::function<bool()>& done, Nanos limit);
  void run_for(Nanos d) {
    run_until([] { return false; }, d);
  }

 private:
  struct Timer;
  static void on_timer(int, short, void* arg);
  static void on_drain(int, short, void* arg);
  static void on_wake(int, short, void* arg);
  static void on_inbox(int fd, short, void* arg);
  void drain();

  event_base* base_ = nullptr;
  event* drain_event_ = nullptr;
  bool drain_armed_ = false;
  std::deque<std::function<void()>> deferred_;
  TimerId next_id_ = 1;
  std::unordered_map<TimerId, std::unique_ptr<Timer>> timers_;
  std::shared_ptr<Inbox> inbox_ = std::make_shared<Inbox>();
  int inbox_read_fd_ = -1;
  event* inbox_event_ = nullptr;
};

}  // namespace lockstep::live
