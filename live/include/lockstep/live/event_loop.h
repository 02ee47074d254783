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
#include <unordered_map>

#include "lockstep/env.h"

struct event_base;
struct event;

namespace lockstep::live {

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
  void drain();

  event_base* base_ = nullptr;
  event* drain_event_ = nullptr;
  bool drain_armed_ = false;
  std::deque<std::function<void()>> deferred_;
  TimerId next_id_ = 1;
  std::unordered_map<TimerId, std::unique_ptr<Timer>> timers_;
};

}  // namespace lockstep::live
