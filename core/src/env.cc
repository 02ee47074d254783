#include "lockstep/env.h"

#include <cstdio>

namespace lockstep {

std::string random_uuid(Env& env) {
  uint64_t a = env.random();
  uint64_t b = env.random();
  char buf[40];
  std::snprintf(buf, sizeof buf, "%08x-%04x-%04x-%04x-%012llx",
                static_cast<unsigned>(a >> 32), static_cast<unsigned>((a >> 16) & 0xffff),
                static_cast<unsigned>(a & 0xffff), static_cast<unsigned>(b >> 48),
                static_cast<unsigned long long>(b & 0xffffffffffffULL));
  return buf;
}

}  // namespace lockstep
