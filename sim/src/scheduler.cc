#include "lockstep/sim/scheduler.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace lockstep::sim {

namespace {
[[noreturn]] void fail(const char* why) {
  std::fprintf(stderr, "lockstep: scheduler: %s\n", why);
  std::abort();
}
}  // namespace

void Scheduler::check_place(int64_t t_ns, Ticket ticket) const {
  if (t_ns < now_ns_ || earlier(Key{t_ns, ticket.seq, 0}, last_run_) || ticket.seq >= next_seq_) {
    fail("an event was scheduled into a place that has passed");
  }
}

uint32_t Scheduler::take_slot() {
  if (!free_slots_.empty()) {
    const uint32_t i = free_slots_.back();
    free_slots_.pop_back();
    return i;
  }
  if ((slot_count_ & (kChunk - 1)) == 0) chunks_.push_back(std::make_unique<Slot[]>(kChunk));
  return slot_count_++;
}

void Scheduler::cancel(EventId id) {
  if (id.slot >= slot_count_) return;
  Slot& s = slot(id.slot);
  if (s.seq != id.seq || !s.queued || s.cancelled) return;  // ran already, or slot reused
  s.cancelled = true;
  s.fn = Fn();  // what it holds goes now, not when its time comes
  ++cancelled_;
}

void Scheduler::push_slow(const Key& k) {
  // The room before head_ is taken back only here, when the array would otherwise grow
  // or becomes a heap (which starts at 0), so a steady run moves its few keys down once
  // per capacity's worth of events. A heap's head_ is always 0.
  if (head_ > 0) {
    keys_.erase(keys_.begin(), keys_.begin() + static_cast<ptrdiff_t>(head_));
    head_ = 0;
  }
  if (keys_.size() >= kSortedMax) as_heap_ = true;
  if (as_heap_) {
    heap_push(k);
    return;
  }
  if (keys_.size() == keys_.capacity()) keys_.reserve(std::max<size_t>(2 * keys_.capacity(), 64));
  push_sorted(k);
}

void Scheduler::pop() {
  if (as_heap_) {
    heap_pop();
    if (keys_.size() <= kSortedMin) {
      std::sort(keys_.begin(), keys_.end(), earlier);
      as_heap_ = false;
    }
    return;
  }
  if (++head_ == keys_.size()) {
    keys_.clear();
    head_ = 0;
  }
}

void Scheduler::heap_push(const Key& k) {
  keys_.push_back(k);
  size_t pos = keys_.size() - 1;
  while (pos > 0) {
    const size_t parent = (pos - 1) / 2;
    if (!earlier(k, keys_[parent])) break;
    keys_[pos] = keys_[parent];
    pos = parent;
  }
  keys_[pos] = k;
}

void Scheduler::heap_pop() {
  const Key last = keys_.back();
  keys_.pop_back();
  const size_t n = keys_.size();
  if (n == 0) return;
  size_t pos = 0;
  for (size_t child = 1; child < n; child = 2 * pos + 1) {
    if (child + 1 < n && earlier(keys_[child + 1], keys_[child])) ++child;
    if (!earlier(keys_[child], last)) break;
    keys_[pos] = keys_[child];
    pos = child;
  }
  keys_[pos] = last;
}

bool Scheduler::run_until(int64_t t_end_ns, uint64_t event_count_max) {
  uint64_t ran = 0;
  while (!queue_empty() && earliest().time_ns <= t_end_ns) {
    const Key next = earliest();
    const uint32_t i = next.slot;
    Slot& s = slot(i);
    if (s.cancelled) {
      pop();
      s.queued = false;
      --cancelled_;
      free_slots_.push_back(i);
      continue;
    }
    if (ran++ >= event_count_max) return false;
    // Out of the queue before it runs (it may schedule or cancel events), but run in its
    // slot, which is only handed out again once it is done.
    pop();
    s.queued = false;
    now_ns_ = next.time_ns;
    last_run_ = next;
    ++executed_;
    s.fn();
    s.fn = Fn();
    free_slots_.push_back(i);
  }
  if (now_ns_ < t_end_ns) now_ns_ = t_end_ns;
  return true;
}

}  // namespace lockstep::sim
