// What the live test files share: whether a redis-server is installed to test against,
// and the configuration of a server or replica they start themselves.
#pragma once

#include <optional>
#include <string>

#include "lockstep/live/redis_server.h"

namespace lockstep::live_support {

inline bool has_redis() { return !live::find_redis_server().empty(); }

inline live::ServerConfig server_config(std::string name, std::optional<live::NodeAddress> replica_of = std::nullopt) {
  live::ServerConfig c;
  c.name = std::move(name);
  c.replica_of = std::move(replica_of);
  return c;
}

}  // namespace lockstep::live_support
