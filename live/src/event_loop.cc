#include "lockstep/live/event_loop.h"

#include <event2/event.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace lockstep::live {

namespace {
Nanos read_clock(clockid_t id) {
  timespec ts{};
  clock_gettime(id, &ts);
  return Nanos(int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec);
}

timeval to_timeval(Nanos d) {
  const int64_t us = std::max<int64_t>(d.count() / 1000, 0);
  return timeval{static_cast<time_t>(us / 1'000'000), static_cast<suseconds_t>(us % 1'000'000)};
}
}  // namespace

Nanos mono_clock() { return read_clock(CLOCK_MONOTONIC); }
Nanos wall_clock() { return read_clock(CLOCK_REALTIME); }

struct EventLoop::Timer {
  EventLoop* loop = nullptr;
  TimerId id = 0;
  event* ev = nullptr;
  Nanos due{0};  // never runs before this, by mono_clock()
  std::function<void()> fn;
  ~Timer() {
    if (ev) event_free(ev);
  }
};

// Precise timers: libevent's default coarse monotonic clock ticks in milliseconds and
// can fire a timer before its time as mono_clock() measures it.
// The epoll changelist: hiredis adds and removes its read and write interest around every
// command; with the changelist, changes that cancel out within a loop turn cost no
// epoll_ctl, which is most of them on one busy connection.
event_base* new_base() {
  event_config* cfg = event_config_new();
  if (!cfg) return nullptr;
  event_config_set_flag(cfg, EVENT_BASE_FLAG_PRECISE_TIMER);
  event_config_set_flag(cfg, EVENT_BASE_FLAG_EPOLL_USE_CHANGELIST);
  event_base* base = event_base_new_with_config(cfg);
  event_config_free(cfg);
  return base;
}

EventLoop::EventLoop() : base_(new_base()) {
  if (!base_) {
    std::fputs("lockstep live: cannot create a libevent base\n", stderr);
    std::abort();
  }
  drain_event_ = event_new(base_, -1, 0, &EventLoop::on_drain, this);
  int fds[2];
  if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) {
    std::fputs("lockstep live: cannot create the event loop's inbox\n", stderr);
    std::abort();
  }
  inbox_read_fd_ = fds[0];
  inbox_->write_fd_ = fds[1];
  inbox_event_ = event_new(base_, inbox_read_fd_, EV_READ | EV_PERSIST, &EventLoop::on_inbox, this);
  event_add(inbox_event_, nullptr);
}

void Inbox::post(std::function<void()> fn) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!open_) return;
  const bool wake = queue_.empty();
  queue_.push_back(std::move(fn));
  if (wake) {
    const char byte = 1;
    [[maybe_unused]] ssize_t n = write(write_fd_, &byte, 1);  // a full pipe is already a wake-up
  }
}

void EventLoop::on_inbox(int fd, short, void* arg) {
  auto* loop = static_cast<EventLoop*>(arg);
  char buf[64];
  while (read(fd, buf, sizeof buf) > 0) {
  }
  std::vector<std::function<void()>> batch;
  {
    std::lock_guard<std::mutex> lock(loop->inbox_->mu_);
    batch.swap(loop->inbox_->queue_);
  }
  for (auto& fn : batch) loop->defer(std::move(fn));
}

EventLoop::~EventLoop() {
  // Timer functions may own coroutine state; they go before the base they are bound to.
  {
    std::lock_guard<std::mutex> lock(inbox_->mu_);
    inbox_->open_ = false;
    inbox_->queue_.clear();
    close(inbox_->write_fd_);
  }
  event_free(inbox_event_);
  close(inbox_read_fd_);
  timers_.clear();
  deferred_.clear();
  event_free(drain_event_);
  event_base_free(base_);
}

EventLoop::TimerId EventLoop::after(Nanos d, std::function<void()> fn) {
  auto t = std::make_unique<Timer>();
  t->loop = this;
  t->id = next_id_++;
  t->fn = std::move(fn);
  t->due = now() + d;
  t->ev = evtimer_new(base_, &EventLoop::on_timer, t.get());
  event_base_update_cache_time(base_);
  timeval tv = to_timeval(d);
  evtimer_add(t->ev, &tv);
  const TimerId id = t->id;
  timers_.emplace(id, std::move(t));
  return id;
}

void EventLoop::cancel(TimerId id) { timers_.erase(id); }

void EventLoop::on_timer(int, short, void* arg) {
  auto* t = static_cast<Timer*>(arg);
  EventLoop* loop = t->loop;
  auto it = loop->timers_.find(t->id);
  if (it == loop->timers_.end()) return;
  // Code waiting for a timer relies on its time having come (a pause ends exactly when
  // it says); a timer that libevent fires early waits out the rest.
  if (const Nanos left = t->due - loop->now(); left > Nanos(0)) {
    timeval tv = to_timeval(left + Nanos(1000));
    evtimer_add(t->ev, &tv);
    return;
  }
  // Taken out first: fn may add or cancel timers, including (harmlessly) its own id.
  std::unique_ptr<Timer> owned = std::move(it->second);
  loop->timers_.erase(it);
  std::function<void()> fn = std::move(owned->fn);
  owned.reset();
  fn();
}

void EventLoop::defer(std::function<void()> fn) {
  deferred_.push_back(std::move(fn));
  if (!drain_armed_) {
    drain_armed_ = true;
    event_active(drain_event_, 0, 0);
  }
}

void EventLoop::on_drain(int, short, void* arg) { static_cast<EventLoop*>(arg)->drain(); }

void EventLoop::drain() {
  drain_armed_ = false;
  // Only what was queued before this turn: work deferred by deferred work waits for the
  // next turn, so timers and sockets are never starved.
  auto batch = std::move(deferred_);
  deferred_.clear();
  for (auto& fn : batch) fn();
}

void EventLoop::on_wake(int, short, void*) {}

// A turn ends at the next event; the wake-up timers only bound how long it can block.
// They are armed once per call rather than once per turn: re-arming the earliest timer
// costs a timerfd syscall, which on a busy connection was one per round trip.
bool EventLoop::run_until(const std::function<bool()>& done, Nanos limit) {
  const Nanos deadline = now() + limit;
  event* tick = event_new(base_, -1, EV_PERSIST, &EventLoop::on_wake, nullptr);
  event* end = evtimer_new(base_, &EventLoop::on_wake, nullptr);
  const timeval tick_tv = to_timeval(Millis(10));
  const timeval end_tv = to_timeval(limit);
  event_add(tick, &tick_tv);
  event_add(end, &end_tv);
  bool finished = true;
  // Bounded by the deadline: each turn blocks for at most 10 ms.
  while (!done()) {
    if (deadline - now() <= Nanos(0)) {
      finished = false;
      break;
    }
    event_base_loop(base_, EVLOOP_ONCE);
  }
  event_free(end);
  event_free(tick);
  return finished;
}

}  // namespace lockstep::live
