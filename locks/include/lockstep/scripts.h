// The Lua scripts the lock algorithms send with EVAL. They live as files in locks/lua/ and
// are compiled into the binary, so the simulated node and a real redis-server run the
// very same text.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace lockstep {

struct ScriptSource {
  const char* name;  // file name without .lua
  const char* text;
};

const std::vector<ScriptSource>& all_scripts();

// The text of locks/lua/<name>.lua; aborts if there is no such script (a build error).
// Takes a view: lock code asks by literal on every release, and a std::string parameter
// built a string from the literal each time just to look it up.
const std::string& script(std::string_view name);

}  // namespace lockstep
