// What the library profiles share: sending one command to every node at once and
// waiting until enough replies decide the round (the way goroutines, promises or
// futures of the libraries do), the random values libraries write into lock keys, and a
// few spellings of durations.
//
// Everything here runs on the profile's Env only; see profiles.h.
#pragma once

#include <coroutine>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lockstep/env.h"
#include "lockstep/gate.h"
#include "lockstep/profiles.h"

namespace lockstep::profiles {

using Argv = std::vector<std::string>;

// A library that sets no timeout of its own waits for a reply as long as its socket
// does; this stands for "no timeout" (a run never lasts this long).
inline constexpr Nanos kNoTimeout = std::chrono::hours(1);

inline std::string ms_string(int64_t ms) { return std::to_string(ms); }
inline int64_t wall_ms(Env& env) { return to_ms(env.now_wall()); }
inline int64_t mono_ms(Env& env) { return to_ms(env.now_mono()); }

// One command sent to every node at once. Replies land in `replies` as they come; the
// waiter wakes when `decided` says the round is decided (all replies in, by default).
// Replies that come later still land here: the round outlives its waiter.
struct Round {
  std::vector<std::optional<Reply>> replies;
  int answered = 0;
  std::function<bool(const Round&)> decided;
  Gate gate;

  bool all_in() const { return answered == static_cast<int>(replies.size()); }
};

// How a client library sends one command to one node: plain, or with the library's own
// handling of a broken connection.
using Caller = Task<Reply> (*)(Env& env, int node, Argv argv, Nanos timeout);
Task<Reply> plain_call(Env& env, int node, Argv argv, Nanos timeout);
// go-redis: a command that met a broken connection is tried again, up to MaxRetries (3)
// more times, after a backoff of 8 ms doubling up to 512 ms, drawn with jitter.
Task<Reply> goredis_call(Env& env, int node, Argv argv, Nanos timeout);
// ioredis: a command on a lost connection waits for the reconnection (retryStrategy:
// min(50 ms * attempt, 2 s)) and is sent again, up to maxRetriesPerRequest (20) times.
Task<Reply> ioredis_call(Env& env, int node, Argv argv, Nanos timeout);

// Sends argvs[i] to node i (all nodes at once) with `timeout` each, and returns once the
// round is decided. A null `decided` waits for every reply (a when_all, as RedLock's
// rounds are).
Task<std::shared_ptr<Round>> on_all_nodes(Env& env, std::vector<Argv> argvs, Nanos timeout,
                                          std::function<bool(const Round&)> decided = {},
                                          Caller caller = plain_call);
// The same command to every node.
std::vector<Argv> same_for_all(Env& env, const Argv& argv);

// Random lock values as the libraries make them: `bytes` random bytes as lowercase hex
// (node-redlock), as standard base64 (redsync), and `n` characters from [A-Za-z0-9]
// (redlock-py, redis-plus-plus).
std::string random_hex(Env& env, int bytes);
std::string random_base64(Env& env, int bytes);
std::string random_alnum(Env& env, int n);

// The per-process stand-in for a thread id in owner names ("<uuid>:<thread>").
inline constexpr const char* kThreadId = "1";

// Builders of each library's locks (one file per library).
std::unique_ptr<ProfileLock> make_redsync(const ProfileInfo& info, Env& env, const std::string& key,
                                          const nlohmann::json& options);
std::unique_ptr<ProfileLock> make_node_redlock(const ProfileInfo& info, Env& env, const std::string& key,
                                               const nlohmann::json& options);
std::unique_ptr<ProfileLock> make_redis_py(const ProfileInfo& info, Env& env, const std::string& key,
                                           const nlohmann::json& options);
std::unique_ptr<ProfileLock> make_redlock_py(const ProfileInfo& info, Env& env, const std::string& key,
                                             const nlohmann::json& options);
std::unique_ptr<ProfileLock> make_redis_plus_plus(const ProfileInfo& info, Env& env, const std::string& key,
                                                  const nlohmann::json& options);
std::unique_ptr<ProfileLock> make_redisson(const ProfileInfo& info, Env& env, const std::string& key,
                                           const nlohmann::json& options);

}  // namespace lockstep::profiles
