#include "lockstep/scripts.h"

#include <cstdio>
#include <cstdlib>
#include <map>

namespace lockstep {

const std::string& script(std::string_view name) {
  static const std::map<std::string, std::string, std::less<>> kByName = [] {
    std::map<std::string, std::string, std::less<>> m;
    for (const auto& s : all_scripts()) m.emplace(s.name, s.text);
    return m;
  }();
  auto it = kByName.find(name);
  if (it == kByName.end()) {
    std::fprintf(stderr, "lockstep: no Lua script named %.*s in core/lua\n", static_cast<int>(name.size()), name.data());
    std::abort();
  }
  return it->second;
}

}  // namespace lockstep
