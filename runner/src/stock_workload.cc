#include <charconv>
#include <optional>

#include "lockstep/runner/workload.h"
#include "lockstep/algorithms.h"
#include "lockstep/scripts.h"
#include "op_outcomes.h"
#include "profile_workload.h"

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

// Read, hold, write back: the critical section of one sale.
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

// GET of the stock, recorded as a read; nullopt when no number came back.
Task<std::optional<int64_t>> read_stock(Connection& store, Recorder& rec, int64_t process, const WorkloadSpec& w,
                                        Nanos timeout) {
  rec.op(EventType::Invoke, process, "read", w.stock_key);
  std::vector<std::string> get{"GET", w.stock_key};
  Reply r = co_await store.call(std::move(get), timeout);
  int64_t stock = 0;
  if (r.type != Reply::Type::Bulk || !parse_int(r.str, stock)) {
    rec.op(r.is_unknown() ? EventType::Info : EventType::Fail, process, "read", w.stock_key, to_short_text(r));
    co_return std::nullopt;
  }
  rec.op(EventType::Ok, process, "read", w.stock_key, stock);
  co_return stock;
}

Task<void> sell_one(Env& env, Recorder& rec, int64_t process, const LockSpec& lock, const WorkloadSpec& w,
                    int64_t token) {
  Connection& store = env.node(0);
  const Nanos timeout = Millis(lock.command_timeout_ms);
  std::optional<int64_t> read = co_await read_stock(store, rec, process, w, timeout);
  if (!read) co_return;
  const int64_t stock = *read;
  co_await env.sleep(Millis(w.hold_ms));
  if (stock <= 0) co_return;
  nlohmann::json value = stock - 1;
  if (token >= 0) value = {{"value", stock - 1}, {"token", token}};
  rec.op(EventType::Invoke, process, "write", w.stock_key, value);
  Reply wr = co_await write_back(store, w, stock - 1, token, timeout);
  const bool written = wr.is_ok() || wr.is_integer(1);
  rec.op(written ? EventType::Ok : (wr.is_unknown() ? EventType::Info : EventType::Fail), process, "write",
         w.stock_key, value);
}

// Readers take the read side, read the stock, look at it for hold_ms and read it again:
// a price page showing a consistent number. Under a working read-write lock no sale can
// land between the two reads.
Task<void> check_stock(Env& env, Recorder& rec, int64_t process, const LockSpec& lock, const WorkloadSpec& w) {
  Connection& store = env.node(0);
  const Nanos timeout = Millis(lock.command_timeout_ms);
  co_await read_stock(store, rec, process, w, timeout);
  co_await env.sleep(Millis(w.hold_ms));
  co_await read_stock(store, rec, process, w, timeout);
}

}  // namespace

bool is_reader(const WorkloadSpec& w, int64_t process) { return process > w.clients - w.readers; }

Task<void> stock_client(Env& env, Recorder& rec, int64_t process, const LockSpec& lock, const WorkloadSpec& w) {
  if (!lock.profile.empty()) {
    co_await profile_stock_client(env, rec, process, lock, w);
    co_return;
  }
  // A read-write lock records which side each operation used, so the checker can tell
  // readers sharing the lock from two writers at once.
  const bool rw = is_read_write_algorithm(lock.algorithm);
  const bool reader = is_reader(w, process);
  std::unique_ptr<ReadWriteLock> sides;
  std::unique_ptr<Lock> plain;
  Lock* l = nullptr;
  if (rw) {
    sides = make_rw_lock(lock.algorithm, env, lock_params(lock));
    l = reader ? &sides->read_lock() : &sides->write_lock();
  } else {
    plain = make_lock(lock.algorithm, env, lock_params(lock));
    l = plain.get();
  }
  const std::string side = !rw ? "" : reader ? "-read" : "-write";
  const std::string acquire_f = "acquire" + side;
  const std::string release_f = "release" + side;
  for (int attempt = 0; attempt < w.attempts_per_client; ++attempt) {
    rec.op(EventType::Invoke, process, acquire_f, lock.key);
    AcquireOutcome got = co_await l->acquire(Millis(w.wait_ms));
    rec.op(completion(got), process, acquire_f, lock.key, to_string(got));
    if (got != AcquireOutcome::Acquired) continue;

    rec.truth(checker::truth::kCsEnter, process, lock.key, reader ? nlohmann::json("read") : nlohmann::json());
    if (reader) {
      co_await check_stock(env, rec, process, lock, w);
    } else {
      co_await sell_one(env, rec, process, lock, w, l->fencing_token());
    }
    rec.truth(checker::truth::kCsExit, process, lock.key);

    rec.op(EventType::Invoke, process, release_f, lock.key);
    ReleaseOutcome rel = co_await l->release();
    rec.op(completion(rel), process, release_f, lock.key, to_string(rel));
  }
  rec.truth(checker::truth::kFinish, process, "");
}

}  // namespace lockstep::runner
