#include <charconv>

#include "lockstep/runner/workload.h"

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

EventType completion(AcquireOutcome o) {
  switch (o) {
    case AcquireOutcome::Acquired: return EventType::Ok;
    case AcquireOutcome::NotAcquired: return EventType::Fail;
    case AcquireOutcome::Unknown: return EventType::Info;
  }
  return EventType::Info;
}

EventType completion(ReleaseOutcome o) {
  switch (o) {
    case ReleaseOutcome::Released: return EventType::Ok;
    case ReleaseOutcome::NotOwner: return EventType::Fail;
    case ReleaseOutcome::Unknown: return EventType::Info;
  }
  return EventType::Info;
}

bool parse_int(const std::string& s, int64_t& out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

// Read, hold, write back: the critical section of one sale.
Task<void> sell_one(Env& env, Recorder& rec, int64_t process, const LockSpec& lock, const WorkloadSpec& w) {
  Connection& store = env.node(0);
  const Nanos timeout = Millis(lock.command_timeout_ms);
  rec.op(EventType::Invoke, process, "read", w.stock_key);
  std::vector<std::string> get{"GET", w.stock_key};
  Reply r = co_await store.call(std::move(get), timeout);
  int64_t stock = 0;
  if (r.type != Reply::Type::Bulk || !parse_int(r.str, stock)) {
    rec.op(r.is_unknown() ? EventType::Info : EventType::Fail, process, "read", w.stock_key, to_short_text(r));
    co_return;
  }
  rec.op(EventType::Ok, process, "read", w.stock_key, stock);
  co_await env.sleep(Millis(w.hold_ms));
  if (stock <= 0) co_return;
  rec.op(EventType::Invoke, process, "write", w.stock_key, stock - 1);
  std::vector<std::string> set{"SET", w.stock_key, std::to_string(stock - 1)};
  Reply wr = co_await store.call(std::move(set), timeout);
  rec.op(wr.is_ok() ? EventType::Ok : (wr.is_unknown() ? EventType::Info : EventType::Fail), process, "write",
         w.stock_key, stock - 1);
}

}  // namespace

Task<void> stock_client(Env& env, Recorder& rec, int64_t process, const LockSpec& lock, const WorkloadSpec& w) {
  std::unique_ptr<Lock> l = make_lock(lock.algorithm, env, lock_params(lock));
  for (int attempt = 0; attempt < w.attempts_per_client; ++attempt) {
    rec.op(EventType::Invoke, process, "acquire", lock.key);
    AcquireOutcome got = co_await l->acquire(Millis(w.wait_ms));
    rec.op(completion(got), process, "acquire", lock.key, to_string(got));
    if (got != AcquireOutcome::Acquired) continue;

    rec.truth(checker::truth::kCsEnter, process, lock.key);
    co_await sell_one(env, rec, process, lock, w);
    rec.truth(checker::truth::kCsExit, process, lock.key);

    rec.op(EventType::Invoke, process, "release", lock.key);
    ReleaseOutcome rel = co_await l->release();
    rec.op(completion(rel), process, "release", lock.key, to_string(rel));
  }
  rec.truth(checker::truth::kFinish, process, "");
}

}  // namespace lockstep::runner
