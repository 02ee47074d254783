#include "lockstep/scripts.h"

#include <cstdio>
#include <cstdlib>
#include <map>

#include "lockstep/fast_paths.h"

namespace lockstep {

const std::string& script(std::string_view name) {
  static const std::map<std::string, std::string, std::less<>> kByName = [] {
    std::map<std::string, std::string, std::less<>> m;
    for (const auto& s : all_scripts()) m.emplace(s.name, s.text);
    return m;
  }();
  // Lock code asks for the same script on every release or renewal: remembering the
  // last answer spares walking the map (and its string compares) each time (a fast path,
  // lockstep/fast_paths.h).
  thread_local std::string_view last_name;
  thread_local const std::string* last_text = nullptr;
  if (kFastPaths && last_text && name == last_name) return *last_text;
  auto it = kByName.find(name);
  if (it == kByName.end()) {
    std::fprintf(stderr, "lockstep: no Lua script named %.*s in locks/lua\n", static_cast<int>(name.size()), name.data());
    std::abort();
  }
  last_name = it->first;
  last_text = &it->second;
  return it->second;
}

}  // namespace lockstep
