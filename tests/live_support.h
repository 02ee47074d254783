// What the live test files share: whether a redis-server is installed to test against,
// the configuration of a server or replica they start themselves, and waiting on a loop.
#pragma once

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/types.h>

#include <cerrno>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "lockstep/live/event_loop.h"
#include "lockstep/live/live_world.h"
#include "lockstep/live/redis_server.h"

namespace lockstep::live_support {

// A server of its own with the given persistence.
inline live::ServerConfig persisted_config(std::string name, Persistence persistence = Persistence::None) {
  live::ServerConfig c;
  c.name = std::move(name);
  c.persistence = persistence;
  return c;
}

// One command on a connection of its own, blocking: for checks outside the loop.
inline Reply sync(const live::NodeAddress& a, std::vector<std::string> argv, Nanos timeout = Millis(1000)) {
  return live::sync_command(a, argv, timeout);
}

// Every server (or other process) a test started must be gone when it ends.
inline void expect_all_gone(const std::vector<pid_t>& pids) {
  for (pid_t pid : pids) {
    errno = 0;
    EXPECT_EQ(::kill(pid, 0), -1) << "process " << pid << " left running";
    EXPECT_EQ(errno, ESRCH);
  }
}

inline bool has_redis() { return !live::find_redis_server().empty(); }

inline live::ServerConfig server_config(std::string name, std::optional<live::NodeAddress> replica_of = std::nullopt) {
  live::ServerConfig c;
  c.name = std::move(name);
  c.replica_of = std::move(replica_of);
  return c;
}

// Runs the loop (proxies and relays need it) until check() holds, asking every 20 ms.
inline bool run_until(live::EventLoop& loop, const std::function<bool()>& check, Nanos limit) {
  Nanos next{0};
  return loop.run_until(
      [&] {
        if (live::mono_clock() < next) return false;
        next = live::mono_clock() + Millis(20);
        return check();
      },
      limit);
}

}  // namespace lockstep::live_support
