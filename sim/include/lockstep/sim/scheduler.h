// The Scheduler owns true time in the simulator: an int64 count of nanoseconds that only
// moves when the next event is taken. Events run in (time, sequence) order, where the
// sequence number is the order they were scheduled in, so two runs that schedule the same
// events run them in the same order — nothing depends on pointer values or hashing.
//
// Single-threaded by design: an event runs to completion (including any coroutine it
// resumes, up to that coroutine's next suspension) before the next one starts.
#pragma once

#include <cstdint>
#include <functional>
#include <queue>
#include <vector>

namespace lockstep::sim {

class Scheduler {
 public:
  using Fn = std::function<void()>;

  int64_t now() const { return now_ns_; }
  size_t pending() const { return queue_.size(); }
  uint64_t executed() const { return executed_; }

  // Runs fn at true time t; a time in the past is treated as now.
  void at(int64_t t_ns, Fn fn);
  void after(int64_t delay_ns, Fn fn) { at(now_ns_ + delay_ns, std::move(fn)); }

  // Runs every event due at or before t_end in order, then sets the time to t_end.
  // Stops early (returning false) if `event_count_max` events ran: the bound that keeps
  // a runaway scenario from spinning forever.
  bool run_until(int64_t t_end_ns, uint64_t event_count_max = UINT64_MAX);

 private:
  struct Event {
    int64_t time_ns;
    uint64_t seq;
    Fn fn;
  };
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      return a.time_ns != b.time_ns ? a.time_ns > b.time_ns : a.seq > b.seq;
    }
  };

  int64_t now_ns_ = 0;
  uint64_t next_seq_ = 0;
  uint64_t executed_ = 0;
  std::priority_queue<Event, std::vector<Event>, Later> queue_;
};

}  // namespace lockstep::sim
