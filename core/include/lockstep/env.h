// Env is everything a lock algorithm may use of the outside world: this process's clocks,
// sleeping, concurrent activities, a deterministic random stream and connections to Redis
// nodes. Lock code never touches a socket, thread, clock or random source directly, so
// the same code runs against the simulator (SimEnv) and against real servers (LiveEnv).
//
// What an Env promises:
//  - One Env belongs to one process. All of its coroutines run on one thread, one at a
//    time; a coroutine is only ever interrupted at a co_await.
//  - now_mono() never goes backwards and never jumps; it may run fast or slow (drift).
//  - now_wall() may jump either way at any moment (an NTP step); code that measures
//    elapsed time with it can be fooled, which is exactly what tests look for.
//  - random() is reproducible: the same seed gives the same stream in the simulator.
//  - A process may be paused (GC) or crashed at any co_await. A crash destroys every
//    coroutine of the process; nothing after the co_await runs.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "lockstep/reply.h"
#include "lockstep/sql.h"
#include "lockstep/task.h"

namespace lockstep {

class ZooKeeper;  // lockstep/zookeeper.h

using Nanos = std::chrono::nanoseconds;
using Millis = std::chrono::milliseconds;
using namespace std::chrono_literals;

inline constexpr int64_t kNsPerMs = 1'000'000;
inline int64_t to_ms(Nanos d) { return std::chrono::duration_cast<Millis>(d).count(); }

// A message received on a subscribed channel, or a timeout when none came in time.
struct Message {
  bool timed_out = false;
  std::string channel;
  std::string payload;
};

// A live subscription to one channel on one node. Messages published after subscribe()
// returned are queued until next() takes them. Destroying it unsubscribes.
class Subscription {
 public:
  virtual ~Subscription() = default;
  virtual Task<Message> next(Nanos timeout) = 0;
};

// A command a lock builds once and sends on every attempt (its SET with its key, token
// and lease never change): shared and never changed, so a world may read it in place
// instead of copying it for every send.
using Command = std::shared_ptr<const std::vector<std::string>>;

// One Redis node as this process sees it: commands go out in order and replies come back
// in order, as over one TCP connection.
class Connection {
 public:
  virtual ~Connection() = default;
  // Sends one command. The reply is the server's answer, or Timeout when none arrived
  // within `timeout` (the command may still have run), or IoError.
  virtual Task<Reply> call(std::vector<std::string> argv, Nanos timeout) = 0;
  // The same for a shared command; by default, a copy of it is sent.
  virtual Task<Reply> call(Command command, Nanos timeout) { return call(*command, timeout); }
  virtual Task<std::unique_ptr<Subscription>> subscribe(std::string channel) = 0;
};

// A command's argv. A braced list copies each argument twice (an initializer_list cannot
// be moved from), which for a script body or a token is an allocation per copy on the
// path of every lock command; this copies or moves each argument once.
template <typename... A>
std::vector<std::string> make_argv(A&&... args) {
  std::vector<std::string> v;
  v.reserve(sizeof...(A));
  (v.emplace_back(std::forward<A>(args)), ...);
  return v;
}

// A Command from its arguments.
template <typename... A>
Command make_command(A&&... args) {
  return std::make_shared<const std::vector<std::string>>(make_argv(std::forward<A>(args)...));
}

class Env {
 public:
  virtual ~Env() = default;

  virtual Nanos now_wall() = 0;  // since the Unix epoch, as this process's clock says
  virtual Nanos now_mono() = 0;  // since an arbitrary origin; never jumps
  virtual Task<void> sleep(Nanos d) = 0;
  // Starts `t` as a concurrent activity of this process (e.g. a watchdog). It runs until
  // it finishes or the process crashes.
  virtual void spawn(Task<void> t) = 0;
  virtual uint64_t random() = 0;
  virtual int node_count() const = 0;
  virtual Connection& node(int index) = 0;  // 0-based
  // A short stable name for this process ("client-3"), used in lock owner ids.
  virtual std::string process_name() const = 0;
  // A new session with this world's MySQL server (lockstep/sql.h), connected by its first
  // statement. By default the world has none: every statement fails with kNoServer.
  virtual std::unique_ptr<SqlSession> sql_session() { return std::make_unique<NoSqlServer>(); }
  // This process's session with the ZooKeeper ensemble (lockstep/zookeeper.h), or
  // nullptr: this world has no ZooKeeper ensemble.
  virtual ZooKeeper* zookeeper() { return nullptr; }
};

// A uniformly random integer in [lo, hi] from the Env's stream.
inline int64_t random_between(Env& env, int64_t lo, int64_t hi) {
  if (hi <= lo) return lo;
  return lo + static_cast<int64_t>(env.random() % static_cast<uint64_t>(hi - lo + 1));
}

// A random 128-bit identifier in the usual 8-4-4-4-12 hex form, drawn from the Env so that
// simulated runs stay reproducible.
std::string random_uuid(Env& env);

}  // namespace lockstep
