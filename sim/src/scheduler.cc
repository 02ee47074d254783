#include "lockstep/sim/scheduler.h"

namespace lockstep::sim {

void Scheduler::at(int64_t t_ns, Fn fn) {
  if (t_ns < now_ns_) t_ns = now_ns_;
  queue_.push(Event{t_ns, next_seq_++, std::move(fn)});
}

bool Scheduler::run_until(int64_t t_end_ns, uint64_t event_count_max) {
  uint64_t ran = 0;
  while (!queue_.empty() && queue_.top().time_ns <= t_end_ns) {
    if (ran++ >= event_count_max) return false;
    // The event is moved out before it runs: it may schedule more events, which can
    // reallocate the queue under a reference.
    Event e = std::move(const_cast<Event&>(queue_.top()));
    queue_.pop();
    now_ns_ = e.time_ns;
    ++executed_;
    e.fn();
  }
  if (now_ns_ < t_end_ns) now_ns_ = t_end_ns;
  return true;
}

}  // namespace lockstep::sim
