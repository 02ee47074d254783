#include "profile_workload.h"

#include <charconv>
#include <memory>
#include <optional>

#include "lockstep/gate.h"
#include "lockstep/profiles.h"
#include "op_outcomes.h"

namespace lockstep::runner {
namespace {

using checker::EventType;

// One client's view of the run: its lock, where it records, and the sale's store.
struct Client {
  Env& env;
  Recorder& rec;
  int64_t process;
  const LockSpec& lock;
  const WorkloadSpec& w;
  ProfileLock& l;
  Nanos timeout;

  Task<AcquireOutcome> acquire() {
    rec.op(EventType::Invoke, process, "acquire", lock.key);
    const AcquireOutcome got = co_await l.acquire(Millis(w.wait_ms));
    rec.op(completion(got), process, "acquire", lock.key, to_string(got));
    co_return got;
  }

  Task<ReleaseOutcome> release() {
    rec.op(EventType::Invoke, process, "release", lock.key);
    const ReleaseOutcome rel = co_await l.release();
    rec.op(completion(rel), process, "release", lock.key, to_string(rel));
    co_return rel;
  }

  // Works for `ms` in steps of extend_every_ms, extending after each step while work is
  // left. False when an extension did not succeed, or the library called to say the hold
  // is lost: the user stops working.
  Task<bool> work(int64_t ms) {
    const int64_t every = w.extend_every_ms;
    int64_t left = ms;
    constexpr int kStepsMax = 10'000'000;
    for (int i = 0; i < kStepsMax && left > 0; ++i) {
      const int64_t step = every > 0 ? std::min(every, left) : left;
      const bool told = co_await sleep_unless_told(Millis(step));
      if (told) co_return false;
      left -= step;
      if (every == 0 || left == 0) continue;
      rec.op(EventType::Invoke, process, "extend", lock.key);
      const ExtendOutcome o = co_await l.extend();
      rec.op(completion(o), process, "extend", lock.key, to_string(o));
      if (o != ExtendOutcome::Extended) co_return false;
    }
    co_return true;
  }

  // Sleeps `d`, or less when the library calls to say the hold is lost (then true, and
  // at once: the work stops where it is). A library that only leaves a signal to check
  // (node-redlock's abort signal) is checked before the write instead.
  Task<bool> sleep_unless_told(Nanos d) {
    if (!l.tells_when_lost()) {
      co_await env.sleep(d);
      co_return false;
    }
    if (l.aborted()) co_return true;
    auto wake = std::make_shared<Wake>();
    l.on_told_lost = [wake] {
      wake->told = true;
      wake->gate.open();
    };
    env.spawn(open_after(env, d, wake));
    co_await wake->gate.wait();
    l.on_told_lost = nullptr;
    co_return wake->told;
  }
  struct Wake {
    Gate gate;
    bool told = false;
  };
  // The sleep beside the callback; it outlives the wait when the callback comes first.
  static Task<void> open_after(Env& env, Nanos d, std::shared_ptr<Wake> wake) {
    co_await env.sleep(d);
    wake->gate.open();
  }

  // A helper that takes the same (reentrant) lock: a failed unlock throws out of it.
  // (Outcomes are named before they are compared: GCC 12 miscompiles a co_await inside
  // the condition of an if that opens a coroutine.)
  Task<bool> nested() {
    const AcquireOutcome got = co_await acquire();
    if (got != AcquireOutcome::Acquired) co_return false;
    co_await env.sleep(Millis(w.reentrant_hold_ms));
    const ReleaseOutcome rel = co_await release();
    co_return rel == ReleaseOutcome::Released;
  }

  Task<std::optional<int64_t>> read_stock() {
    rec.op(EventType::Invoke, process, "read", w.stock_key);
    Reply r = co_await env.node(0).call(make_argv("GET", w.stock_key), timeout);
    int64_t stock = 0;
    const bool number = r.type == Reply::Type::Bulk &&
                        std::from_chars(r.str.data(), r.str.data() + r.str.size(), stock).ec == std::errc();
    if (!number) {
      rec.op(r.is_unknown() ? EventType::Info : EventType::Fail, process, "read", w.stock_key, to_short_text(r));
      co_return std::nullopt;
    }
    rec.op(EventType::Ok, process, "read", w.stock_key, stock);
    co_return stock;
  }

  Task<void> write_stock(int64_t value) {
    rec.op(EventType::Invoke, process, "write", w.stock_key, value);
    Reply r = co_await env.node(0).call(make_argv("SET", w.stock_key, std::to_string(value)), timeout);
    rec.op(r.is_ok() ? EventType::Ok : (r.is_unknown() ? EventType::Info : EventType::Fail), process, "write",
           w.stock_key, value);
  }

  // One sale under the lock the client holds.
  Task<void> sell() {
    std::optional<int64_t> stock = co_await read_stock();
    bool go_on = stock.has_value();
    const int64_t first = w.reentrant_hold_ms > 0 ? w.hold_ms / 2 : w.hold_ms;
    if (go_on) {
      go_on = co_await work(first);
    }
    if (go_on && w.reentrant_hold_ms > 0) {
      go_on = co_await nested();
      if (go_on) {
        go_on = co_await work(w.hold_ms - first);
      }
    }
    // The library's documentation: check the abort signal before writing.
    if (go_on && !l.aborted() && *stock > 0) co_await write_stock(*stock - 1);
  }
};

}  // namespace

Task<void> profile_stock_client(Env& env, Recorder& rec, int64_t process, const LockSpec& lock,
                                const WorkloadSpec& w) {
  std::unique_ptr<ProfileLock> l = make_profile_lock(lock.profile, env, lock.key, lock.options);
  if (!l) co_return;  // the reader accepts only known profiles
  l->on_background_extend = [&rec, process, key = lock.key](const ExtendNote& n) {
    checker::Event e;
    e.type = n.begin ? EventType::Invoke : completion(n.outcome);
    e.process = process;
    e.thread = 1 + n.lane;
    e.f = "extend";
    e.key = key;
    if (!n.begin) e.value = n.detail;
    e.time_ns = rec.now();
    rec.record(std::move(e));
  };
  Client c{env, rec, process, lock, w, *l, Millis(lock.command_timeout_ms)};
  for (int attempt = 0; attempt < w.attempts_per_client; ++attempt) {
    const AcquireOutcome got = co_await c.acquire();
    if (got != AcquireOutcome::Acquired) continue;
    rec.truth(checker::truth::kCsEnter, process, lock.key);
    co_await c.sell();
    rec.truth(checker::truth::kCsExit, process, lock.key);
    co_await c.release();
  }
  rec.truth(checker::truth::kFinish, process, "");
}

}  // namespace lockstep::runner
