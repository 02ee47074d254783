#include "lockstep/scripts.h"

#include <cstdio>
#include <cstdlib>
#include <map>

namespace lockstep {

const std::string& script(const std::string& name) {
  static const std::map<std::string, std::string> kByName = [] {
    std::map<std::string, std::string> m;
    for (const auto& s : all_scripts()) m.emplace(s.name, s.text);
    return m;
  }();
  auto it = kByName.find(name);
  if (it == kByName.end()) {
    std::fprintf(stderr, "lockstep: no Lua script named %s in core/lua\n", name.c_str());
    std::abort();
  }
  return it->second;
}

}  // namespace lockstep
