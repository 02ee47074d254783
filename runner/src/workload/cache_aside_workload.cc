// The cache-aside workload: a database beside Redis, the way applications cache reads.
// Writers write the database and then delete or overwrite the cached copy; readers read
// the cache and, on a miss, read the database and fill the cache with a TTL. Nothing but
// an optional read-write lock orders a reader's database read and fill against a writer's
// two steps, or two writers' steps against each other: the seed's races. The database is
// a node like any other (env.node(db_node - 1)), so it has the network's latency and takes
// faults; GET and SET on it stand for a query and an update.
#include "lockstep/algorithms.h"
#include "lockstep/runner/workload.h"
#include "workload/op_outcomes.h"

namespace lockstep::runner {
namespace {

using checker::EventType;

EventType outcome(const Reply& r, bool ok) {
  if (ok) return EventType::Ok;
  return r.is_unknown() ? EventType::Info : EventType::Fail;
}

// One command on a node, recorded as an operation `f` on the item key: invoke, then the
// completion with `value` (or, for a read, what came back: the string or null).
Task<Reply> recorded(Connection& node, Recorder& rec, int64_t process, std::string f, std::string item,
                     std::vector<std::string> argv, nlohmann::json value, bool read, Nanos timeout) {
  rec.op(EventType::Invoke, process, f, item, read ? nlohmann::json() : value);
  Reply r = co_await node.call(std::move(argv), timeout);
  if (read) {
    const bool ok = r.type == Reply::Type::Bulk || r.type == Reply::Type::Nil;
    rec.op(outcome(r, ok), process, f, item,
           r.type == Reply::Type::Bulk ? nlohmann::json(r.str) : ok ? nlohmann::json() : nlohmann::json(to_short_text(r)));
  } else {
    rec.op(outcome(r, r.is_ok() || r.type == Reply::Type::Integer), process, f, item, std::move(value));
  }
  co_return r;
}

// A writer's update of item k: the database first, then the cache. (Every argument of a
// coroutine call is a named local: GCC cannot copy a literal into a coroutine's frame.)
Task<void> write_item(Env& env, Recorder& rec, int64_t process, const CacheAsideSpec& c, int k, int op, Nanos timeout) {
  const std::string item = cache_aside_item(k);
  const std::string value = "client-" + std::to_string(process) + ":" + std::to_string(op + 1);
  const std::string db_write = "db-write";
  std::vector<std::string> set_db{"SET", cache_aside_db_key(k), value};
  const nlohmann::json v = value;
  Reply db = co_await recorded(env.node(c.db_node - 1), rec, process, db_write, item, std::move(set_db), v, false, timeout);
  if (!db.is_ok()) co_return;  // the update did not (surely) happen: leave the cache alone
  Connection& cache = env.node(c.cache_node - 1);
  const bool overwrite = c.after_write == "overwrite";
  const std::string f = overwrite ? "cache-write" : "cache-delete";
  std::vector<std::string> argv;
  if (overwrite) {
    argv = {"SET", cache_aside_cache_key(k), value, "PX", std::to_string(c.ttl_ms)};
  } else {
    argv = {"DEL", cache_aside_cache_key(k)};
  }
  const nlohmann::json written = overwrite ? v : nlohmann::json();
  co_await recorded(cache, rec, process, f, item, std::move(argv), written, false, timeout);
}

// A reader's look at item k: the cache, and on a miss the database and a fill.
Task<void> read_item(Env& env, Recorder& rec, int64_t process, const CacheAsideSpec& c, int k, Nanos timeout) {
  const std::string item = cache_aside_item(k);
  Connection& cache = env.node(c.cache_node - 1);
  const nlohmann::json none;
  const std::string cache_read = "cache-read", db_read = "db-read", cache_fill = "cache-fill";
  std::vector<std::string> get_cache{"GET", cache_aside_cache_key(k)};
  Reply hit = co_await recorded(cache, rec, process, cache_read, item, std::move(get_cache), none, true, timeout);
  if (hit.type != Reply::Type::Nil) co_return;  // a hit, or no answer: nothing to fill
  std::vector<std::string> get_db{"GET", cache_aside_db_key(k)};
  Reply db = co_await recorded(env.node(c.db_node - 1), rec, process, db_read, item, std::move(get_db), none, true, timeout);
  if (db.type != Reply::Type::Bulk) co_return;  // no row, or no answer
  std::vector<std::string> fill{"SET", cache_aside_cache_key(k), db.str, "PX", std::to_string(c.ttl_ms)};
  const nlohmann::json filled = db.str;
  co_await recorded(cache, rec, process, cache_fill, item, std::move(fill), filled, false, timeout);
}

}  // namespace

std::string cache_aside_item(int k) { return "item:" + std::to_string(k); }
std::string cache_aside_db_key(int k) { return "db:item:" + std::to_string(k); }
std::string cache_aside_cache_key(int k) { return "cache:item:" + std::to_string(k); }
std::string cache_aside_initial_value(int k) { return "initial:" + std::to_string(k); }

Task<void> cache_aside_client(Env& env, Recorder& rec, int64_t process, const LockSpec& lock, const WorkloadSpec& w) {
  const CacheAsideSpec& c = w.cache_aside;
  const bool reader = process > c.writers;
  const Nanos timeout = Millis(lock.command_timeout_ms);
  std::unique_ptr<ReadWriteLock> sides;
  Lock* l = nullptr;
  if (c.lock == "read-write") {
    // The scenario reader accepts "read-write" only with a read-write algorithm.
    sides = make_rw_lock(lock.algorithm, env, lock_params(lock));
    if (sides) l = reader ? &sides->read_lock() : &sides->write_lock();
  }
  const std::string side = reader ? "-read" : "-write";
  for (int op = 0; op < c.ops; ++op) {
    if (op > 0) co_await env.sleep(Millis(c.op_interval_ms));
    // Each client goes round the keys from its own starting point.
    const int k = static_cast<int>((process - 1 + op) % c.keys);
    if (l) {
      rec.op(EventType::Invoke, process, "acquire" + side, lock.key);
      AcquireOutcome got = co_await l->acquire(Millis(w.wait_ms));
      rec.op(completion(got), process, "acquire" + side, lock.key, to_string(got));
      if (got != AcquireOutcome::Acquired) continue;
      rec.truth(checker::truth::kCsEnter, process, lock.key, reader ? nlohmann::json("read") : nlohmann::json());
    }
    if (reader) {
      co_await read_item(env, rec, process, c, k, timeout);
    } else {
      co_await write_item(env, rec, process, c, k, op, timeout);
    }
    if (l) {
      rec.truth(checker::truth::kCsExit, process, lock.key);
      rec.op(EventType::Invoke, process, "release" + side, lock.key);
      ReleaseOutcome rel = co_await l->release();
      rec.op(completion(rel), process, "release" + side, lock.key, to_string(rel));
    }
  }
  rec.truth(checker::truth::kFinish, process, "");
}

}  // namespace lockstep::runner
