// What the differential tests share to talk to a real redis-server of their own through
// hiredis: finding the binary, a loopback port for it, and its replies as lockstep's.
#pragma once

#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "lockstep/reply.h"

namespace lockstep::hiredis_support {

// `name` on the PATH, or "" when it is not installed.
inline std::string find_binary(const char* name) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/bin:/usr/local/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    const std::string candidate = dir + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return {};
}

// Binds port 0 so the kernel chooses; the short window before the server binds it is
// acceptable for a test.
inline int free_loopback_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  int port = -1;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
    port = ntohs(addr.sin_port);
  ::close(fd);
  return port;
}

// hiredis cannot tell a nil bulk from a nil array: both come back as Nil.
inline Reply from_hiredis(const redisReply* r) {
  if (!r) return Reply::io_error("no reply");
  switch (r->type) {
    case REDIS_REPLY_STATUS: return Reply::status(std::string(r->str, r->len));
    case REDIS_REPLY_ERROR: return Reply::error(std::string(r->str, r->len));
    case REDIS_REPLY_INTEGER: return Reply::integer_of(r->integer);
    case REDIS_REPLY_STRING: return Reply::bulk(std::string(r->str, r->len));
    case REDIS_REPLY_ARRAY: {
      std::vector<Reply> items;
      for (size_t i = 0; i < r->elements; ++i) items.push_back(from_hiredis(r->element[i]));
      return Reply::array(std::move(items));
    }
    default: return Reply::nil();
  }
}

inline Reply send(redisContext* c, const std::vector<std::string>& argv) {
  std::vector<const char*> ptrs;
  std::vector<size_t> lens;
  for (const auto& a : argv) {
    ptrs.push_back(a.data());
    lens.push_back(a.size());
  }
  auto* r = static_cast<redisReply*>(redisCommandArgv(c, static_cast<int>(argv.size()), ptrs.data(), lens.data()));
  Reply out = from_hiredis(r);
  if (r) freeReplyObject(r);
  return out;
}

}  // namespace lockstep::hiredis_support
