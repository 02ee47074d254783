// Conversions between Redis replies and Lua values, with Redis 7.0's rules (RESP2).
#pragma once

#include <string>

#include "lockstep/reply.h"

struct lua_State;

namespace lockstep::sim {

// Pushes {err="CODE message"} as luaPushErrorBuff does: "-CODE msg" keeps its code,
// a bare message gets "ERR", a trailing CR/LF is dropped.
void push_error_table(lua_State* L, const std::string& error);
// Redis -> Lua: integer -> number, bulk -> string, nil -> false, array -> table,
// status -> {ok=...}, error -> {err=...}.
void push_reply(lua_State* L, const Reply& r);
// Lua -> Redis for the value on top of the stack: number -> integer (truncated), string
// -> bulk, table -> error/status/array, true -> 1, false and nil -> nil bulk.
Reply lua_to_reply(lua_State* L);
// The reply for a script that raised an error (the error object is on top).
Reply script_error_reply(lua_State* L, const std::string& sha);

}  // namespace lockstep::sim
