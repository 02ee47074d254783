// Reply <-> Lua value conversions (redisProtocolToLuaType and luaReplyToRedisReply of
// Redis 7.0) and the error reply of a failed script.
#include "lua_convert.h"

#include <cmath>

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

// A table that is a special reply ({err=...}, {ok=...}, {double=...}) converts on its own;
// any other table is an array of its elements 1..n up to the first nil.
bool special_table_reply(lua_State* L, Reply& out) {
  std::string s;
  if (table_string_field(L, "err", s)) {
    out = error_from_text(s);
    return true;
  }
  if (table_string_field(L, "ok", s)) {
    out = Reply::status(map_crlf(s));
    return true;
  }
  lua_pushstring(L, "double");
  lua_rawget(L, -2);
  const bool is_double = lua_type(L, -1) == LUA_TNUMBER;
  if (is_double) out = Reply::bulk(format_double(lua_tonumber(L, -1)));
  lua_pop(L, 1);
  return is_double;
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

void push_reply(lua_State* L, const Reply& r) {
  using T = Reply::Type;
  lua_checkstack(L, 4);
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

// luaReplyToRedisReply recurses into nested tables; here the nesting lives in `open`, so
// a script returning thousands of levels cannot exhaust the C stack (sanitizer builds have
// much larger frames). Each open table stays on the Lua stack exactly as in the recursive
// version, so the depth where Lua's stack runs out, and the reply there, are Redis's own.
Reply lua_to_reply(lua_State* L) {
  struct OpenTable {
    std::vector<Reply> items;
    int next = 1;
  };
  std::vector<OpenTable> open;
  for (;;) {
    // Convert the value on top of the Lua stack, or open it when it is an array.
    Reply value;
    bool converted = true;
    if (!lua_checkstack(L, 4)) {
      value = Reply::error("ERR reached lua stack limit");
    } else {
      switch (lua_type(L, -1)) {
        case LUA_TSTRING: {
          size_t len = 0;
          const char* s = lua_tolstring(L, -1, &len);
          value = Reply::bulk(std::string(s, len));
          break;
        }
        case LUA_TBOOLEAN: value = lua_toboolean(L, -1) ? Reply::integer_of(1) : Reply::nil(); break;
        case LUA_TNUMBER: value = Reply::integer_of(truncate_number(lua_tonumber(L, -1))); break;
        case LUA_TTABLE:
          if (!special_table_reply(L, value)) {
            open.emplace_back();
            converted = false;
          }
          break;
        default: value = Reply::nil(); break;
      }
    }
    // Hand finished values to their tables and push the next element to convert.
    for (;;) {
      if (converted) {
        if (open.empty()) return value;  // the caller pops the outermost value
        open.back().items.push_back(std::move(value));
        lua_pop(L, 1);
        converted = false;
      }
      OpenTable& t = open.back();
      lua_rawgeti(L, -1, t.next++);
      if (lua_type(L, -1) != LUA_TNIL) break;
      lua_pop(L, 1);
      value = Reply::array(std::move(t.items));
      open.pop_back();
      converted = true;
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
