// What the live test files share: whether a redis-server is installed to test against,
// the configuration of a server or replica they start themselves, and waiting on a loop.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "lockstep/live/event_loop.h"
#include "lockstep/live/redis_server.h"

namespace lockstep::live_support {

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
