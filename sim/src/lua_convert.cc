// Reply <-> Lua value conversions (redisProtocolToLuaType and luaReplyToRedisReply of
// Redis 7.0) and the error reply of a failed script.
#include "lua_convert.h"

#include <cmath>
#include <optional>
#include <vector>

#include "lua.h"
#include "redis_impl.h"

namespace lockstep::sim {

namespace {

std::string trim_crlf(std::string s) {
  while (!s.empty() && (s.back() == '\r' || s.back() == '\n')) s.pop_back();
  size_t i = 0;
  while (i < s.size() && (s[i] == '\r' || s[i] == '\n')) ++i;
  return s.substr(i);
}

// Error replies may not contain CR/LF in the middle: Redis maps them to spaces.
std::string map_crlf(std::string s) {
  for (auto& c : s)
    if (c == '\r' || c == '\n') c = ' ';
  return s;
}

// (long long)d in C: what x86 produces for NaN and out-of-range values is INT64_MIN,
// which Redis then sends; doing the cast directly would be undefined behaviour.
int64_t truncate_number(double d) {
  if (std::isnan(d) || d >= 9223372036854775808.0 || d < -9223372036854775808.0)
    return INT64_MIN;
  return static_cast<int64_t>(d);
}

bool table_string_field(lua_State* L, const char* name, std::string& out) {
  lua_pushstring(L, name);
  lua_rawget(L, -2);
  const bool ok = lua_type(L, -1) == LUA_TSTRING;
  if (ok) {
    size_t len = 0;
    const char* s = lua_tolstring(L, -1, &len);
    out.assign(s, len);
  }
  lua_pop(L, 1);
  return ok;
}

// addReplyErrorFormat("-%s", msg): a leading '-' means the text carries its own code.
Reply error_from_text(const std::string& text) {
  std::string s = map_crlf(trim_crlf("-" + text));
  if (s.empty() || s[0] != '-') return Reply::error("ERR " + s);
  return Reply::error(s.substr(1));
}

// A table that stands for one value rather than an array: {err=...}, {ok=...}, {double=...}.
std::optional<Reply> table_as_value(lua_State* L) {
  std::string s;
  if (table_string_field(L, "err", s)) return error_from_text(s);
  if (table_string_field(L, "ok", s)) return Reply::status(map_crlf(s));
  lua_pushstring(L, "double");
  lua_rawget(L, -2);
  if (lua_type(L, -1) == LUA_TNUMBER) {
    const double d = lua_tonumber(L, -1);
    lua_pop(L, 1);
    return Reply::bulk(format_double(d));
  }
  lua_pop(L, 1);
  return std::nullopt;
}

Reply scalar_to_reply(lua_State* L) {
  switch (lua_type(L, -1)) {
    case LUA_TSTRING: {
      size_t len = 0;
      const char* s = lua_tolstring(L, -1, &len);
      return Reply::bulk(std::string(s, len));
    }
    case LUA_TBOOLEAN: return lua_toboolean(L, -1) ? Reply::integer_of(1) : Reply::nil();
    case LUA_TNUMBER: return Reply::integer_of(truncate_number(lua_tonumber(L, -1)));
    default: return Reply::nil();
  }
}

}  // namespace

void push_error_table(lua_State* L, const std::string& error) {
  std::string code = "ERR";
  std::string msg = error;
  if (!error.empty() && error[0] == '-') {
    const size_t sp = error.find(' ');
    if (sp == std::string::npos) {
      msg = error.substr(1);
    } else {
      code = error.substr(1, sp - 1);
      msg = error.substr(sp + 1);
    }
  }
  const std::string final_msg = code + " " + trim_crlf(msg);
  lua_newtable(L);
  lua_pushstring(L, "err");
  lua_pushlstring(L, final_msg.data(), final_msg.size());
  lua_settable(L, -3);
}

// Scalars need one slot, which a C function always has; only the aggregates ask for room.
void push_reply(lua_State* L, const Reply& r) {
  using T = Reply::Type;
  if (r.type != T::Integer && r.type != T::Bulk) lua_checkstack(L, 4);
  switch (r.type) {
    case T::Integer: lua_pushnumber(L, static_cast<lua_Number>(r.integer)); return;
    case T::Bulk: lua_pushlstring(L, r.str.data(), r.str.size()); return;
    case T::Status:
      lua_newtable(L);
      lua_pushstring(L, "ok");
      lua_pushlstring(L, r.str.data(), r.str.size());
      lua_settable(L, -3);
      return;
    case T::Error:
      push_error_table(L, "-" + r.str);
      lua_pushstring(L, "ignore_error_stats_update");
      lua_pushboolean(L, 1);
      lua_settable(L, -3);
      return;
    case T::Array:
      lua_createtable(L, static_cast<int>(r.elements.size()), 0);
      for (size_t i = 0; i < r.elements.size(); ++i) {
        push_reply(L, r.elements[i]);
        lua_rawseti(L, -2, static_cast<int>(i + 1));
      }
      return;
    default: lua_pushboolean(L, 0); return;  // nil bulk, nil array
  }
}

// Nested arrays are walked with a stack of open levels rather than by recursion: a reply
// may nest as deep as Lua's stack allows (about 8000 levels), which in a sanitizer build
// is more native stack than a thread has. Each open array keeps its table on the Lua
// stack, as the recursive walk of luaReplyToRedisReply does, so the stack limit is met at
// the same depth.
Reply lua_to_reply(lua_State* L) {
  // A script's usual result, a number, a string or nil, needs none of the walk below;
  // the room the walk asks for is always there for the value a call just returned.
  if (lua_type(L, -1) != LUA_TTABLE) return scalar_to_reply(L);
  struct Level {
    std::vector<Reply> items;
    int next = 1;  // the Lua index read next
  };
  std::vector<Level> open;  // the arrays being filled, outermost first
  for (;;) {
    // The value on top of the Lua stack: the argument, or an element just pushed.
    Reply done;
    bool opened = false;
    if (!lua_checkstack(L, 4)) {
      done = Reply::error("ERR reached lua stack limit");
    } else if (lua_type(L, -1) != LUA_TTABLE) {
      done = scalar_to_reply(L);
    } else if (auto v = table_as_value(L)) {
      done = std::move(*v);
    } else {
      open.emplace_back();
      opened = true;
    }
    if (!opened) {
      if (open.empty()) return done;
      lua_pop(L, 1);
      open.back().items.push_back(std::move(done));
    }
    // Push the innermost open array's next element; close the arrays that have no more.
    for (;;) {
      lua_rawgeti(L, -1, open.back().next++);
      if (lua_type(L, -1) != LUA_TNIL) break;
      lua_pop(L, 1);
      Reply array = Reply::array(std::move(open.back().items));
      open.pop_back();
      if (open.empty()) return array;
      lua_pop(L, 1);
      open.back().items.push_back(std::move(array));
    }
  }
}

// luaCallFunction's error path: the handler made a table {err, source, line}; the reply
// is the message followed by where in the script it was raised.
Reply script_error_reply(lua_State* L, const std::string& sha) {
  if (lua_type(L, -1) != LUA_TTABLE) {
    const char* msg = lua_isstring(L, -1) ? lua_tostring(L, -1) : "execution failure";
    return Reply::error(map_crlf("ERR Error running script " + sha + ", " +
                                 std::string(msg).substr(0, 100)));
  }
  std::string msg, source, line;
  lua_getfield(L, -1, "err");
  if (lua_isstring(L, -1)) msg = lua_tostring(L, -1);
  else msg = "ERR unknown error";  // Redis 7.0 crashes on error({}); we do not
  lua_pop(L, 1);
  lua_getfield(L, -1, "source");
  const bool has_source = lua_isstring(L, -1);
  if (has_source) source = lua_tostring(L, -1);
  lua_pop(L, 1);
  lua_getfield(L, -1, "line");
  const bool has_line = lua_isstring(L, -1);
  if (has_line) line = lua_tostring(L, -1);
  lua_pop(L, 1);
  std::string text = "-" + msg;
  if (has_source && has_line) text += " script: " + sha + ", on " + source + ":" + line + ".";
  return Reply::error(map_crlf(text).substr(1));
}

}  // namespace lockstep::sim
