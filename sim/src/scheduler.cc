#include "lockstep/sim/scheduler.h"

#include <cstdio>
#include <cstdlib>

namespace lockstep::sim {

Scheduler::EventId Scheduler::at(int64_t t_ns, Fn fn) {
  if (t_ns < now_ns_) t_ns = now_ns_;
  return insert(t_ns, next_seq_++, std::move(fn));
}

Scheduler::EventId Scheduler::at(int64_t t_ns, Ticket ticket, Fn fn) {
  if (t_ns < now_ns_ || earlier(Key{t_ns, ticket.seq, 0}, last_run_) || ticket.seq >= next_seq_) {
    std::fprintf(stderr, "lockstep: an event was scheduled into a place that has passed\n");
    std::abort();
  }
  return insert(t_ns, ticket.seq, std::move(fn));
}

Scheduler::EventId Scheduler::insert(int64_t t_ns, uint64_t seq, Fn fn) {
  uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    slot = static_cast<uint32_t>(slots_.size());
    slots_.emplace_back();
  }
  slots_[slot].fn = std::move(fn);
  slots_[slot].seq = seq;
  heap_.push_back(Key{t_ns, seq, slot});
  sift_up(static_cast<uint32_t>(heap_.size() - 1), heap_.back());
  return EventId{slot, seq};
}

void Scheduler::cancel(EventId id) {
  if (id.slot >= slots_.size()) return;
  const Slot& s = slots_[id.slot];
  if (s.seq != id.seq || s.heap_pos == kNotQueued) return;  // ran already, or slot reused
  remove_at(s.heap_pos);
}

void Scheduler::sift_up(uint32_t pos, Key k) {
  while (pos > 0) {
    const uint32_t parent = (pos - 1) / 2;
    if (!earlier(k, heap_[parent])) break;
    place(pos, heap_[parent]);
    pos = parent;
  }
  place(pos, k);
}

void Scheduler::sift_down(uint32_t pos, Key k) {
  const auto n = static_cast<uint32_t>(heap_.size());
  for (;;) {
    uint32_t child = 2 * pos + 1;
    if (child >= n) break;
    if (child + 1 < n && earlier(heap_[child + 1], heap_[child])) ++child;
    if (!earlier(heap_[child], k)) break;
    place(pos, heap_[child]);
    pos = child;
  }
  place(pos, k);
}

Scheduler::Fn Scheduler::remove_at(uint32_t pos) {
  const uint32_t slot = heap_[pos].slot;
  const Key last = heap_.back();
  heap_.pop_back();
  if (pos < heap_.size()) {
    // The last key fills the hole; it may belong above or below it.
    if (pos > 0 && earlier(last, heap_[(pos - 1) / 2])) sift_up(pos, last);
    else sift_down(pos, last);
  }
  Slot& s = slots_[slot];
  s.heap_pos = kNotQueued;
  Fn fn = std::move(s.fn);
  free_slots_.push_back(slot);
  return fn;
}

bool Scheduler::run_until(int64_t t_end_ns, uint64_t event_count_max) {
  uint64_t ran = 0;
  while (!heap_.empty() && heap_.front().time_ns <= t_end_ns) {
    if (ran++ >= event_count_max) return false;
    // Taken out before it runs: it may schedule or cancel events.
    now_ns_ = heap_.front().time_ns;
    last_run_ = heap_.front();
    Fn fn = remove_at(0);
    ++executed_;
    fn();
  }
  if (now_ns_ < t_end_ns) now_ns_ = t_end_ns;
  return true;
}

}  // namespace lockstep::sim
