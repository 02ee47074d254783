// The Scheduler owns true time in the simulator: an int64 count of nanoseconds that only
// moves when the next event is taken. Events run in (time, sequence) order, where the
// sequence number is the order they were scheduled in, so two runs that schedule the same
// events run them in the same order — nothing depends on pointer values or hashing.
// Cancelling an event marks it; it leaves the queue when its turn comes, without running
// and without counting. (time, sequence) keys are unique, so which events run in what
// order never depends on how the queue holds them: a sorted array while few events are
// pending (a run of a few clients has a dozen), a binary heap beyond that.
//
// Single-threaded by design: an event runs to completion (including any coroutine it
// resumes, up to that coroutine's next suspension) before the next one starts.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "lockstep/sim/callback.h"

namespace lockstep::sim {

class Scheduler {
 public:
  using Fn = Callback;
  // Names one scheduled event for cancel(); stays harmless after the event ran.
  struct EventId {
    uint32_t slot = 0;
    uint64_t seq = UINT64_MAX;
  };

  // A place in the order, taken now for an event that may or may not be scheduled
  // later: scheduled with at(t, ticket), it runs exactly where it would have run had it
  // been scheduled when the ticket was taken; never scheduled, it leaves no trace (the
  // events after it keep their order). It must be scheduled before anything at or after
  // its place has run. This is how a call's timeout stays off the schedule unless its
  // reply might not beat it.
  struct Ticket {
    uint64_t seq = UINT64_MAX;
  };

  int64_t now() const { return now_ns_; }
  size_t pending() const { return keys_.size() - head_ - cancelled_; }
  uint64_t executed() const { return executed_; }

  // Runs fn (any void() callable, or a Fn) at true time t; a time in the past is treated
  // as now.
  template <typename F>
  EventId at(int64_t t_ns, F&& fn) {
    if (t_ns < now_ns_) t_ns = now_ns_;
    return insert(t_ns, next_seq_++, std::forward<F>(fn));
  }
  template <typename F>
  EventId after(int64_t delay_ns, F&& fn) {
    return at(now_ns_ + delay_ns, std::forward<F>(fn));
  }
  Ticket reserve() { return Ticket{next_seq_++}; }
  // Runs fn at true time t in the place `ticket` took. Aborts if that place has passed:
  // the order of events would then depend on when the event was scheduled.
  template <typename F>
  EventId at(int64_t t_ns, Ticket ticket, F&& fn) {
    check_place(t_ns, ticket);
    return insert(t_ns, ticket.seq, std::forward<F>(fn));
  }
  // Drops the event if it has not run yet (a timeout whose call was answered): it then
  // neither runs nor counts towards run_until's bound.
  void cancel(EventId id);

  // Runs every event due at or before t_end in order, then sets the time to t_end.
  // Stops early (returning false) if `event_count_max` events ran: the bound that keeps
  // a runaway scenario from spinning forever.
  bool run_until(int64_t t_end_ns, uint64_t event_count_max = UINT64_MAX);

 private:
  // The queue holds small keys; callbacks stay put in slots, so sifting moves 24 bytes
  // rather than a function object. Slots live in fixed-size chunks that never move, so
  // an event's callback runs where it lies even when it schedules more events.
  struct Key {
    int64_t time_ns;
    uint64_t seq;
    uint32_t slot;
  };
  static bool earlier(const Key& a, const Key& b) {
    return a.time_ns != b.time_ns ? a.time_ns < b.time_ns : a.seq < b.seq;
  }
  struct Slot {
    Fn fn;
    uint64_t seq = 0;
    bool queued = false;
    bool cancelled = false;
  };
  static constexpr uint32_t kChunkBits = 8;
  static constexpr uint32_t kChunk = 1u << kChunkBits;

  Slot& slot(uint32_t i) { return chunks_[i >> kChunkBits][i & (kChunk - 1)]; }
  uint32_t take_slot();
  // Places a key in the queue; the usual case (sorted, with room) is inline.
  void push(const Key& k) {
    if (as_heap_ || keys_.size() == keys_.capacity() || keys_.size() - head_ >= kSortedMax) [[unlikely]] {
      push_slow(k);
      return;
    }
    push_sorted(k);
  }
  // An insertion sort's step from the back: most new events land among the latest.
  void push_sorted(const Key& k) {
    keys_.push_back(k);
    size_t i = keys_.size() - 1;
    while (i > head_ && earlier(k, keys_[i - 1])) {
      keys_[i] = keys_[i - 1];
      --i;
    }
    keys_[i] = k;
  }
  void push_slow(const Key& k);
  void pop();  // removes the earliest key
  bool queue_empty() const { return head_ == keys_.size(); }
  const Key& earliest() const { return keys_[head_]; }  // a heap keeps head_ at 0
  void heap_push(const Key& k);
  void heap_pop();

  void check_place(int64_t t_ns, Ticket ticket) const;
  template <typename F>
  EventId insert(int64_t t_ns, uint64_t seq, F&& fn) {
    const uint32_t i = take_slot();
    Slot& s = slot(i);
    s.fn.assign(std::forward<F>(fn));
    s.seq = seq;
    s.queued = true;
    s.cancelled = false;
    push(Key{t_ns, seq, i});
    return EventId{i, seq};
  }

  int64_t now_ns_ = 0;
  Key last_run_{INT64_MIN, 0, 0};  // the place of the event that ran last
  uint64_t next_seq_ = 0;
  uint64_t executed_ = 0;
  size_t cancelled_ = 0;  // keys still queued whose events were cancelled
  // The queued keys. Sorted, keys_[head_..] in order and taken from the front by moving
  // head_: taking the earliest costs nothing and placing one a few steps from the back,
  // cheaper than a heap's sifting at a dozen keys. Past kSortedMax keys, where those
  // steps get long, it becomes a binary min-heap over keys_[0..] (a sorted array already
  // is one) until it is down to kSortedMin again.
  std::vector<Key> keys_;
  size_t head_ = 0;
  bool as_heap_ = false;
  static constexpr size_t kSortedMax = 32;
  static constexpr size_t kSortedMin = 12;
  std::vector<std::unique_ptr<Slot[]>> chunks_;
  uint32_t slot_count_ = 0;
  std::vector<uint32_t> free_slots_;
};

}  // namespace lockstep::sim
