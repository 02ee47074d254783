#include <charconv>
#include <memory>
#include <optional>

#include "lockstep/runner/workload.h"
#include "lockstep/algorithms.h"
#include "lockstep/gate.h"
#include "lockstep/locks.h"
#include "lockstep/scripts.h"
#include "workload/op_outcomes.h"

namespace lockstep::runner {

using checker::EventType;

LockParams lock_params(const LockSpec& spec) {
  LockParams p;
  p.key = spec.key;
  p.lease = Millis(spec.lease_ms);
  p.retry.count_max = spec.retry.count_max;
  p.retry.delay = Millis(spec.retry.delay_ms);
  p.retry.jitter = Millis(spec.retry.jitter_ms);
  p.command_timeout = Millis(spec.command_timeout_ms);
  for (auto it = spec.options.begin(); it != spec.options.end(); ++it) {
    if (it.value().is_number_integer()) p.options[it.key()] = it.value().get<int64_t>();
    if (it.value().is_boolean()) p.options[it.key()] = it.value().get<bool>() ? 1 : 0;
  }
  return p;
}

namespace {

bool parse_int(const std::string& s, int64_t& out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

// The write-back. With a token the write is recorded with it, so the checker can see a
// stale holder's write; with a fencing store the store itself refuses it.
Task<Reply> write_back(Connection& store, const WorkloadSpec& w, int64_t value, int64_t token, Nanos timeout) {
  if (w.fencing && token >= 0) {
    std::vector<std::string> eval{"EVAL", script("fenced_write"), "2", w.stock_key, w.stock_key + ":fence",
                                  std::to_string(value), std::to_string(token)};
    co_return co_await store.call(std::move(eval), timeout);
  }
  std::vector<std::string> set{"SET", w.stock_key, std::to_string(value)};
  co_return co_await store.call(std::move(set), timeout);
}

// One client's view of the run: its lock (one side of a read-write lock, or the lock),
// where it records, and the sale's store. The same for every lock of the registry: what a
// lock does not offer (an extend call, a callback when the hold is lost, an abort signal,
// reentrance) the workload simply does not use, as the scenario reader insists.
struct Client {
  Env& env;
  Recorder& rec;
  int64_t process;
  const LockSpec& lock;
  const WorkloadSpec& w;
  Lock& l;
  std::string side;  // "", "-read" or "-write"
  Nanos timeout;
  Nanos acquired_at{0};  // when the last acquire returned, on the monotonic clock

  Task<AcquireOutcome> acquire() {
    rec.op(EventType::Invoke, process, "acquire" + side, lock.key);
    const AcquireOutcome got = co_await l.acquire(Millis(w.wait_ms));
    acquired_at = env.now_mono();
    rec.op(completion(got), process, "acquire" + side, lock.key, to_string(got));
    co_return got;
  }

  Task<ReleaseOutcome> release() {
    rec.op(EventType::Invoke, process, "release" + side, lock.key);
    const ReleaseOutcome rel = co_await l.release();
    rec.op(completion(rel), process, "release" + side, lock.key, to_string(rel));
    co_return rel;
  }

  // Works for `ms` in steps of extend_every_ms, extending after each step while work is
  // left. False when an extension did not succeed, or the lock called to say the hold is
  // lost: the user stops working.
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

  // Sleeps `d`, or less when the lock calls to say the hold is lost (then true, and at
  // once: the work stops where it is). A lock that only leaves a signal to check
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

  // GET of the stock, recorded as a read; nullopt when no number came back.
  Task<std::optional<int64_t>> read_stock() {
    rec.op(EventType::Invoke, process, "read", w.stock_key);
    std::vector<std::string> get{"GET", w.stock_key};
    Reply r = co_await env.node(0).call(std::move(get), timeout);
    int64_t stock = 0;
    if (r.type != Reply::Type::Bulk || !parse_int(r.str, stock)) {
      rec.op(r.is_unknown() ? EventType::Info : EventType::Fail, process, "read", w.stock_key, to_short_text(r));
      co_return std::nullopt;
    }
    rec.op(EventType::Ok, process, "read", w.stock_key, stock);
    co_return stock;
  }

  // How long the work lasts: hold_ms, or with hold_for_validity what is left of the
  // validity the lock reported (the write goes out as it ends).
  int64_t hold_ms() const {
    if (!w.hold_for_validity) return w.hold_ms;
    const std::optional<Nanos> valid = l.validity();
    if (!valid) return w.hold_ms;
    return std::max<int64_t>(0, to_ms(*valid - (env.now_mono() - acquired_at)));
  }

  // Read, hold, write back: one sale under the lock the client holds.
  Task<void> sell() {
    const std::optional<int64_t> stock = co_await read_stock();
    if (!stock) co_return;
    const int64_t hold = hold_ms();
    const int64_t first = w.reentrant_hold_ms > 0 ? hold / 2 : hold;
    bool go_on = co_await work(first);
    if (go_on && w.reentrant_hold_ms > 0) {
      go_on = co_await nested();
      if (go_on) {
        go_on = co_await work(hold - first);
      }
    }
    // The library's documentation: check the abort signal before writing.
    if (!go_on || l.aborted() || *stock <= 0) co_return;
    const int64_t token = l.fencing_token();
    nlohmann::json value = *stock - 1;
    if (token >= 0) value = {{"value", *stock - 1}, {"token", token}};
    rec.op(EventType::Invoke, process, "write", w.stock_key, value);
    Reply wr = co_await write_back(env.node(0), w, *stock - 1, token, timeout);
    const bool written = wr.is_ok() || wr.is_integer(1);
    rec.op(written ? EventType::Ok : (wr.is_unknown() ? EventType::Info : EventType::Fail), process, "write",
           w.stock_key, value);
  }

  // Readers take the read side, read the stock, look at it for hold_ms and read it
  // again: a price page showing a consistent number. Under a working read-write lock no
  // sale can land between the two reads.
  Task<void> check_stock() {
    co_await read_stock();
    co_await env.sleep(Millis(w.hold_ms));
    co_await read_stock();
  }
};

}  // namespace

bool is_reader(const WorkloadSpec& w, int64_t process) { return process > w.clients - w.readers; }

Task<void> stock_client(Env& env, Recorder& rec, int64_t process, const LockSpec& lock, const WorkloadSpec& w) {
  const LockInfo* info = lock.info();
  if (!info) co_return;  // the reader accepts only locks of the registry
  // A read-write lock records which side each operation used, so the checker can tell
  // readers sharing the lock from two writers at once.
  const bool rw = info->read_write;
  const bool reader = rw && is_reader(w, process);
  std::unique_ptr<ReadWriteLock> sides;
  std::unique_ptr<Lock> plain;
  Lock* l = nullptr;
  if (rw) {
    sides = make_rw_lock(lock.algorithm, env, lock_params(lock));
    l = reader ? &sides->read_lock() : &sides->write_lock();
  } else {
    plain = build_lock(lock.algorithm, env, lock_params(lock), lock.options);
    l = plain.get();
  }
  // The lock's own renewals (a watchdog, an automatic extension), on threads of their own.
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
  Client c{env, rec, process, lock, w, *l, !rw ? "" : reader ? "-read" : "-write", Millis(lock.command_timeout_ms)};
  for (int attempt = 0; attempt < w.attempts_per_client; ++attempt) {
    AcquireOutcome got = co_await c.acquire();
    if (w.retry_until_wait) {
      // Bounded by the wait; an acquire that gives up without time passing would never
      // reach it, so that ends the loop too.
      const Nanos until = env.now_mono() + Millis(w.wait_ms);
      for (Nanos before = Nanos(-1); got == AcquireOutcome::NotAcquired && env.now_mono() < until &&
                                     env.now_mono() != before;) {
        before = env.now_mono();
        got = co_await c.acquire();
      }
    }
    if (got != AcquireOutcome::Acquired) continue;
    rec.truth(checker::truth::kCsEnter, process, lock.key, reader ? nlohmann::json("read") : nlohmann::json());
    if (reader) {
      co_await c.check_stock();
    } else {
      co_await c.sell();
    }
    rec.truth(checker::truth::kCsExit, process, lock.key);
    co_await c.release();
  }
  rec.truth(checker::truth::kFinish, process, "");
}

}  // namespace lockstep::runner
