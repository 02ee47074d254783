// Campaigns on every core: `--jobs N` for fuzz, matrix and run. Runs are handed out by
// index to N threads, and their results are taken back on the calling thread in index
// order, so everything a campaign decides, prints and writes is what one thread would
// have: a run's seed comes from its index, never from the thread that ran it, and the
// first finding is the lowest index that fails. Runs past that index may have started
// and are thrown away.
//
// Every simulation stays on the thread that started it (the simulator's rule): the
// per-thread pools and caches behind LOCKSTEP_FAST_PATHS are each thread's own, and
// nothing a simulation writes is shared with another.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace lockstep::runner {

// The machine's cores (std::thread::hardware_concurrency), at least 1.
unsigned default_jobs();

// Reads a `--jobs` value: a whole number from 1 up. "" with `out` set, or why not, in a
// sentence that names the value.
std::string parse_jobs(const std::string& text, unsigned& out);

struct InOrderPlan {
  unsigned jobs = 1;
  uint64_t count = std::numeric_limits<uint64_t>::max();  // indices 0 .. count-1
  // Asked before each index is handed out (a time limit): false ends the campaign there,
  // once the indices already handed out are taken.
  std::function<bool()> may_start = {};
  // How many results per job may wait to be taken: more lets the other jobs run on past a
  // slow run, at the cost of holding their results.
  unsigned ahead_per_job = 2;
  // Whether the calling thread is one of the jobs. For runs of a fraction of a
  // millisecond it should be: a thread that only takes results is woken for each, which
  // costs a fifth of such a run's work. For long runs it should not: the calling thread
  // then takes (prints, draws progress) each result as soon as it is ready, rather than
  // after a long run of its own.
  bool caller_runs = true;
};

// Runs `work(i)` for i = 0, 1, ... and gives each result to `take(i, result)` on the
// calling thread, in index order; `take` returns false to stop (no index after it is
// taken). `make_worker()` is called once on each thread that runs work (the calling
// thread too, with caller_runs) and returns that thread's `Result(uint64_t)` callable, so a
// worker may hold state of its own. With one job everything runs on the calling thread,
// one index after the other, exactly as a plain loop would. At most `ahead_per_job` results per job wait to be taken, so the
// runs after a slow one hold a bounded amount of memory. An exception thrown by
// a run reaches the caller when its index would have been taken.
template <class Result, class MakeWorker, class Take>
void run_in_order(const InOrderPlan& plan, MakeWorker make_worker, Take take) {
  // No more threads than indices: a single run stays on the calling thread.
  const unsigned jobs = static_cast<unsigned>(std::min<uint64_t>(plan.jobs, plan.count));
  if (jobs <= 1) {
    auto work = make_worker();
    for (uint64_t i = 0; i < plan.count; ++i) {
      if (plan.may_start && !plan.may_start()) return;
      if (!take(i, work(i))) return;
    }
    return;
  }
  struct Slot {
    std::optional<Result> result;
    std::exception_ptr error;
  };
  std::mutex m;
  std::condition_variable result_ready, room;
  std::map<uint64_t, Slot> ready;
  uint64_t next = 0, end = plan.count, taken = 0;
  const uint64_t window = uint64_t{jobs} * std::max(1u, plan.ahead_per_job);
  auto worker = [&] {
    std::optional<decltype(make_worker())> work;
    std::exception_ptr make_error;
    try {
      work.emplace(make_worker());
    } catch (...) {
      make_error = std::current_exception();
    }
    std::unique_lock lock(m);
    for (;;) {
      room.wait(lock, [&] { return next >= end || next < taken + window; });
      if (next >= end) return;
      if (plan.may_start && !plan.may_start()) {
        end = next;
        result_ready.notify_all();
        room.notify_all();
        return;
      }
      const uint64_t i = next++;
      lock.unlock();
      Slot slot;
      try {
        if (make_error) std::rethrow_exception(make_error);
        slot.result.emplace((*work)(i));
      } catch (...) {
        slot.error = std::current_exception();
      }
      lock.lock();
      ready.emplace(i, std::move(slot));
      // The calling thread waits for one index only.
      if (i == taken) result_ready.notify_all();
    }
  };
  std::vector<std::thread> threads;
  // Stops the handing out and waits for the runs under way, whichever way this returns.
  struct Joiner {
    std::mutex& m;
    std::condition_variable& room;
    uint64_t& end;
    uint64_t& taken;
    std::vector<std::thread>& threads;
    ~Joiner() {
      {
        std::lock_guard lock(m);
        end = std::min(end, taken);
      }
      room.notify_all();
      for (auto& t : threads) t.join();
    }
  } joiner{m, room, end, taken, threads};
  // When the calling thread is one of the jobs, it takes what is ready between its own
  // runs and sleeps only when it may not start another one.
  const unsigned spawned = plan.caller_runs ? jobs - 1 : jobs;
  threads.reserve(spawned);
  for (unsigned t = 0; t < spawned; ++t) threads.emplace_back(worker);
  std::optional<decltype(make_worker())> work;
  if (plan.caller_runs) work.emplace(make_worker());
  std::unique_lock lock(m);
  for (;;) {
    while (ready.count(taken) > 0) {
      Slot slot = std::move(ready.at(taken));
      ready.erase(taken);
      lock.unlock();
      if (slot.error) std::rethrow_exception(slot.error);
      const bool more = take(taken, std::move(*slot.result));
      lock.lock();
      ++taken;
      room.notify_all();
      if (!more) return;
    }
    if (taken >= end) return;
    if (work && next < end && next < taken + window) {
      if (plan.may_start && !plan.may_start()) {
        end = next;
        room.notify_all();
        continue;
      }
      const uint64_t i = next++;
      lock.unlock();
      Slot slot;
      try {
        slot.result.emplace((*work)(i));
      } catch (...) {
        slot.error = std::current_exception();
      }
      lock.lock();
      ready.emplace(i, std::move(slot));
      continue;
    }
    result_ready.wait(lock, [&] { return ready.count(taken) > 0 || taken >= end; });
  }
}

}  // namespace lockstep::runner
