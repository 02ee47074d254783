// Workloads drive a lock the way an application would and record what they did. Like the
// locks, a workload is written once against Env and runs in both worlds.
//
// `stock` is the flash-sale example the whole lock story starts from: a stock counter
// lives in Redis; each client takes the lock, reads the counter, works for hold_ms,
// writes back counter - 1 if it was positive, and unlocks. The read-modify-write is
// deliberately not atomic: the lock is the only thing keeping two sales from reading
// the same value, so a broken lock shows up as a lost update.
#pragma once

#include <cstdint>

#include "lockstep/env.h"
#include "lockstep/lock.h"
#include "lockstep/runner/recorder.h"
#include "lockstep/runner/scenario.h"

namespace lockstep::runner {

LockParams lock_params(const LockSpec& spec);

// Whether client number `process` (1-based) is one of the workload's readers.
bool is_reader(const WorkloadSpec& w, int64_t process);

// With `readers` > 0 (a read-write lock), the last `readers` clients only look: they
// take the read side, read the stock, hold, and read it again.
//
// One client's whole life in the stock workload: attempts_per_client rounds of
// acquire / read / hold / write / release (or, for a reader, acquire-read / read / hold /
// read / release-read).
Task<void> stock_client(Env& env, Recorder& rec, int64_t process, const LockSpec& lock, const WorkloadSpec& w);

// Cache writer number `writer` (1-based, process cache-N): c.writes SETs of c.value_bytes
// bytes at c.rate_per_s, cycling over c.keys keys (cache_workload.cc).
Task<void> cache_writer(Env& env, const CacheSpec& c, int writer);

// Cache-aside client number `process` (1-based; the first w.cache_aside.writers are
// writers, the rest readers): w.cache_aside.ops operations, each under the read-write lock
// when cache_aside.lock says so (cache_aside_workload.cc).
Task<void> cache_aside_client(Env& env, Recorder& rec, int64_t process, const LockSpec& lock, const WorkloadSpec& w);

// The names of cache-aside item k: as the history records it ("item:k"), its row in the
// database ("db:item:k"), its cached copy ("cache:item:k"), and the database's value
// before any writer ("initial:k").
std::string cache_aside_item(int k);
std::string cache_aside_db_key(int k);
std::string cache_aside_cache_key(int k);
std::string cache_aside_initial_value(int k);

}  // namespace lockstep::runner
