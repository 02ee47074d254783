// The embedded interpreter: the Redis 7.0 scripting environment (libraries, readonly
// globals, the error handler that tags errors with the script line) and the redis.*
// functions scripts call. Lua is built as C++ here, so lua_error unwinds with a C++
// exception: destructors of locals run, and nothing escapes lua_pcall.
#include "lua_bridge.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "lauxlib.h"
#include "lua.h"
#include "lualib.h"
#include "lua_convert.h"
#include "redis_scripting.h"

namespace lockstep::sim {

namespace {

LuaEngine& engine(lua_State* L) {
  return *static_cast<LuaEngine*>(lua_touserdata(L, lua_upvalueindex(1)));
}

// Lua numbers become arguments through %.17g, not Lua's own %.14g: 0.1 reaches the
// command as "0.10000000000000001", exactly as Redis 7.0 passes it. `out` is a reused
// buffer: its strings keep their capacity from one call to the next, so arguments are
// copied into place rather than allocated. Answers how many were strings or numbers,
// stopping at the first that is neither.
size_t lua_args(lua_State* L, Args& out) {
  const int argc = lua_gettop(L);
  out.resize(static_cast<size_t>(argc));
  for (int j = 1; j <= argc; ++j) {
    std::string& arg = out[static_cast<size_t>(j - 1)];
    const int type = lua_type(L, j);
    if (type == LUA_TNUMBER) {
      char buf[64];
      const int n = std::snprintf(buf, sizeof buf, "%.17g", static_cast<double>(lua_tonumber(L, j)));
      arg.assign(buf, static_cast<size_t>(n));
    } else if (type == LUA_TSTRING) {
      size_t len = 0;
      const char* s = lua_tolstring(L, j, &len);
      arg.assign(s, len);
    } else {
      return static_cast<size_t>(j - 1);
    }
  }
  return static_cast<size_t>(argc);
}

int call_generic(lua_State* L, bool raise) {
  const int argc = lua_gettop(L);
  LuaEngine& e = engine(L);
  LuaEngine::ArgsLease lease(e);
  Args& args = lease.args();
  std::string err;
  if (argc == 0) {
    err = "Please specify at least one argument for this redis lib call";
  } else if (const size_t strings = lua_args(L, args); strings < static_cast<size_t>(argc)) {
    err = "Lua redis lib command arguments must be strings or integers";
    e.unsent_args(args, strings);
  }
  lua_settop(L, 0);
  if (!err.empty()) {
    push_error_table(L, err);
    return raise ? lua_error(L) : 1;
  }
  Reply r = e.redis_call(args, err);
  if (!err.empty()) {
    push_error_table(L, err);
    lua_pushstring(L, "ignore_error_stats_update");
    lua_pushboolean(L, 1);
    lua_settable(L, -3);
    return raise ? lua_error(L) : 1;
  }
  if (r.type == Reply::Type::Bulk) e.push_string(L, lua_upvalueindex(2), r.str.data(), r.str.size());
  else push_reply(L, r);
  return (raise && r.is_error()) ? lua_error(L) : 1;
}

int redis_call(lua_State* L) { return call_generic(L, true); }
int redis_pcall(lua_State* L) { return call_generic(L, false); }

int redis_sha1hex(lua_State* L) {
  if (lua_gettop(L) != 1) {
    lua_pushstring(L, "wrong number of arguments");
    return lua_error(L);
  }
  size_t len = 0;
  const char* s = lua_tolstring(L, 1, &len);
  const std::string hex = sha1_hex(s ? std::string(s, len) : std::string());
  lua_pushlstring(L, hex.data(), hex.size());
  return 1;
}

int redis_error_reply(lua_State* L) {
  if (lua_gettop(L) != 1 || lua_type(L, -1) != LUA_TSTRING) {
    push_error_table(L, "wrong number or type of arguments");
    return 1;
  }
  std::string e = lua_tostring(L, -1);
  push_error_table(L, e.empty() || e[0] != '-' ? "-" + e : e);
  return 1;
}

int redis_status_reply(lua_State* L) {
  if (lua_gettop(L) != 1 || lua_type(L, -1) != LUA_TSTRING) {
    push_error_table(L, "wrong number or type of arguments");
    return 1;
  }
  lua_newtable(L);
  lua_pushstring(L, "ok");
  lua_pushvalue(L, -3);
  lua_settable(L, -3);
  return 1;
}

// Logging goes nowhere in the simulator, but the argument checks stay: a script that
// misuses redis.log fails here as it would on a server.
int redis_log(lua_State* L) {
  if (lua_gettop(L) < 2) {
    push_error_table(L, "redis.log() requires two arguments or more.");
    return lua_error(L);
  }
  if (!lua_isnumber(L, 1)) {
    push_error_table(L, "First argument must be a number (log level).");
    return lua_error(L);
  }
  const lua_Number level = lua_tonumber(L, 1);
  if (level < 0 || level > 3) {
    push_error_table(L, "Invalid debug level.");
    return lua_error(L);
  }
  return 0;
}

int redis_noop(lua_State*) { return 0; }
int redis_true(lua_State* L) {
  lua_pushboolean(L, 1);
  return 1;
}
int redis_false(lua_State* L) {
  lua_pushboolean(L, 0);
  return 1;
}

// redisLrand48: the classic 48-bit LCG, the same on every platform, so math.random
// gives a replica or a replay the same numbers.
int32_t lrand48_next(uint64_t& x) {
  x = (0x5DEECE66DULL * x + 0xB) & ((1ULL << 48) - 1);
  return static_cast<int32_t>(x >> 17);
}

int math_random(lua_State* L) {
  constexpr int32_t kMax = 2147483647;
  const lua_Number r =
      static_cast<lua_Number>(lrand48_next(engine(L).rand48_state()) % kMax) / kMax;
  switch (lua_gettop(L)) {
    case 0: lua_pushnumber(L, r); break;
    case 1: {
      const int u = luaL_checkint(L, 1);
      luaL_argcheck(L, 1 <= u, 1, "interval is empty");
      lua_pushnumber(L, std::floor(r * u) + 1);
      break;
    }
    case 2: {
      const int l = luaL_checkint(L, 1);
      const int u = luaL_checkint(L, 2);
      luaL_argcheck(L, l <= u, 2, "interval is empty");
      lua_pushnumber(L, std::floor(r * (u - l + 1)) + l);
      break;
    }
    default: return luaL_error(L, "wrong number of arguments");
  }
  return 1;
}

int math_randomseed(lua_State* L) {
  const int32_t seed = luaL_checkint(L, 1);
  engine(L).rand48_state() = (uint64_t(uint32_t(seed)) << 16) | 0x330E;
  return 0;
}

// An error outside any protected call: only a bug of ours can raise one.
int panic(lua_State* L) {
  std::fprintf(stderr, "lockstep: unprotected error in the simulated node's Lua: %s\n", lua_tostring(L, -1));
  std::abort();
}

// A real server would let a runaway script run until SCRIPT KILL; a simulation has no
// one to send it, so a script gets a (generous) instruction budget and then fails.
constexpr int kHookEvery = 100000;
constexpr int64_t kInstructionBudget = 100000000;

LuaEngine* registered_engine(lua_State* L) {
  lua_getfield(L, LUA_REGISTRYINDEX, "lockstep_engine");
  auto* e = static_cast<LuaEngine*>(lua_touserdata(L, -1));
  lua_pop(L, 1);
  return e;
}

bool over_budget(lua_State* L) {
  LuaEngine* e = registered_engine(L);
  return e && e->charge(0) > kInstructionBudget;
}

void budget_hook(lua_State* L, lua_Debug*) {
  LuaEngine* e = registered_engine(L);
  if (e && e->charge(kHookEvery) > kInstructionBudget)
    luaL_error(L, "script exceeded the simulator's instruction budget");
}

// Redis 7.0 replaces Lua's pcall so that a caught redis.call error reads as its message:
// `local ok, e = pcall(redis.call, ...)` gives e = "WRONGTYPE ...", not {err=...}.
int redis_lua_pcall(lua_State* L) {
  const int argc = lua_gettop(L);
  if (argc == 0) {  // Redis ends up calling its own result placeholder
    lua_pushboolean(L, 0);
    lua_pushstring(L, "attempt to call a boolean value");
    return 2;
  }
  lua_pushboolean(L, 1);
  lua_insert(L, 1);
  if (lua_pcall(L, argc - 1, LUA_MULTRET, 0) != 0) {
    if (over_budget(L)) return lua_error(L);  // a runaway script may not catch its stop
    lua_remove(L, 1);
    if (lua_istable(L, -1)) {
      lua_getfield(L, -1, "err");
      if (lua_isstring(L, -1)) lua_replace(L, -2);
      else lua_pop(L, 1);
    }
    lua_pushboolean(L, 0);
    lua_insert(L, 1);
  }
  return lua_gettop(L);
}

// Tables made at their final size rather than grown key by key (each growth rehashes
// the table): the redis table's entries below, and the globals (the base library, the
// library tables, redis). Growing them was a tenth of opening Lua.
constexpr int kRedisTableSize = 32;
constexpr int kGlobalsSize = 64;

// The engine is the function's first upvalue; `second`, an absolute stack index when
// given, becomes its second.
void set_fn(lua_State* L, LuaEngine* e, const char* name, lua_CFunction f, int second = 0) {
  lua_pushstring(L, name);
  lua_pushlightuserdata(L, e);
  if (second != 0) lua_pushvalue(L, second);
  lua_pushcclosure(L, f, second != 0 ? 2 : 1);
  lua_settable(L, -3);
}

void set_num(lua_State* L, const char* name, lua_Number v) {
  lua_pushstring(L, name);
  lua_pushnumber(L, v);
  lua_settable(L, -3);
}

// redis.call and redis.pcall also hold the engine's strings table (see
// LuaEngine::push_string), given here at `strings`.
void open_redis_table(lua_State* L, LuaEngine* e, int strings) {
  lua_createtable(L, 0, kRedisTableSize);
  set_fn(L, e, "call", redis_call, strings);
  set_fn(L, e, "pcall", redis_pcall, strings);
  set_fn(L, e, "sha1hex", redis_sha1hex);
  set_fn(L, e, "error_reply", redis_error_reply);
  set_fn(L, e, "status_reply", redis_status_reply);
  set_fn(L, e, "log", redis_log);
  set_fn(L, e, "setresp", redis_noop);
  set_fn(L, e, "set_repl", redis_noop);
  set_fn(L, e, "replicate_commands", redis_true);
  set_fn(L, e, "breakpoint", redis_false);
  set_fn(L, e, "debug", redis_noop);
  set_num(L, "LOG_DEBUG", 0);
  set_num(L, "LOG_VERBOSE", 1);
  set_num(L, "LOG_NOTICE", 2);
  set_num(L, "LOG_WARNING", 3);
  set_num(L, "REPL_NONE", 0);
  set_num(L, "REPL_AOF", 1);
  set_num(L, "REPL_SLAVE", 2);
  set_num(L, "REPL_REPLICA", 2);
  set_num(L, "REPL_ALL", 3);
  set_num(L, "REDIS_VERSION_NUM", 0x0007000f);
  lua_pushstring(L, "REDIS_VERSION");
  lua_pushstring(L, "7.0.15");
  lua_settable(L, -3);
  lua_setglobal(L, "redis");
}

// Runs after the libraries are in place. The error handler is Redis's own
// (__redis__err__handler): it turns any error into an {err=...} table tagged with the
// script line that raised it, skipping C frames and this file's helpers. Then globals are
// made readonly: Redis 7.0 patches Lua with readonly tables; stock Lua gets the same
// observable behaviour from proxy tables whose __newindex refuses every assignment.
// The globals proxy reads through to the real table with a table __index, which the VM
// follows without calling any function; only a miss reaches the real table's own
// __index, which raises Redis's error. (A function on the proxy cost a Lua call for
// every KEYS, ARGV and redis a script touched.) Strings' methods are read through the
// readonly string library, whose metatable refuses new fields, and rawset and
// setmetatable refuse every readonly table, real or proxy, as Redis's patched rawset
// and setmetatable do (an existing field of the strings' metatable stays writable:
// stock Lua reads metamethods raw). The real table refuses new names too
// (existing ones it cannot protect: stock Lua calls __newindex only for absent keys),
// and a script has no getfenv to reach it by, so a script that assigns no global may run
// with the real table as its environment (see LuaEngine::load).
const char* kInitChunk = R"lua(
local dbg, real = debug, _G
local setmetatable, rawget, error, tostring, type = setmetatable, rawget, error, tostring, type
local function handler(err)
  local level = 2
  local i = dbg.getinfo(level, 'nSl')
  while i and (i.what == 'C' or i.source == '=lockstep') do
    level = level + 1
    i = dbg.getinfo(level, 'nSl')
  end
  if type(err) ~= 'table' then err = {err = 'ERR ' .. tostring(err)} end
  if i then
    err['source'] = i.source
    err['line'] = i.currentline
  end
  return err
end
real.debug = nil
local readonly, libs = {}, {}
local function deny() error("Attempt to modify a readonly table", 2) end
for _, name in ipairs({"string", "math", "table", "redis", "coroutine"}) do
  local lib = real[name]
  libs[name] = lib
  real[name] = setmetatable({}, {__index = lib, __newindex = deny, __metatable = false})
  readonly[lib], readonly[real[name]] = true, true
end
local strings = getmetatable('')
strings.__index = real.string
setmetatable(strings, {__newindex = deny, __metatable = false})
readonly[strings] = true
local proxy = setmetatable({}, {__index = real, __newindex = deny, __metatable = false})
readonly[proxy], readonly[real] = true, true
real._G = proxy
local rawset_of_lua = rawset
real.rawset = function(t, k, v)
  if readonly[t] then error("Attempt to modify a readonly table", 0) end
  return rawset_of_lua(t, k, v)
end
real.setmetatable = function(t, mt)
  if readonly[t] then error("Attempt to modify a readonly table", 0) end
  return setmetatable(t, mt)
end
local guard = {
  __index = function(_, n)
    error("Script attempted to access nonexistent global variable '" .. tostring(n) .. "'", 2)
  end,
  __newindex = deny,
  __metatable = false,
}
setmetatable(real, guard)
local direct = {}
for k, v in next, real do direct[k] = v end
for name, lib in next, libs do direct[name] = lib end
readonly[direct] = true
setmetatable(direct, guard)
return handler, proxy, real, direct
)lua";

int append_to_string(lua_State*, const void* p, size_t n, void* out) {
  static_cast<std::string*>(out)->append(static_cast<const char*>(p), n);
  return 0;
}

// The init chunk compiled once per process; every interpreter loads it as bytecode (the
// same function, debug information and chunk name included). Parsing it was most of
// what creating a simulated node cost, and every fuzz run creates its nodes afresh.
const std::string& init_chunk_bytecode() {
  static const std::string code = [] {
    std::string out;
    lua_State* L = luaL_newstate();
    if (luaL_loadbuffer(L, kInitChunk, std::char_traits<char>::length(kInitChunk), "=lockstep") != 0 ||
        lua_dump(L, append_to_string, &out) != 0) {
      std::fputs("lockstep: the simulated node's Lua init chunk does not compile\n", stderr);
      std::abort();
    }
    lua_close(L);
    return out;
  }();
  return code;
}

// Scripts compiled before in this thread, by body: their SHA-1 and bytecode. Every fuzz
// run and catalogue run creates its nodes afresh, and each used to hash and parse the
// same few lock scripts again. The bytecode is the whole function (debug information and
// chunk name included), so a script loaded from it behaves, and fails, as if parsed.
struct CompiledScript {
  std::string sha;
  std::string code;
  LuaEngine::Traits traits;
  unsigned flags = 0;  // ScriptFlag
};

// Reads the functions of a chunk as lua_dump writes them (Lua 5.1's format, checked
// against this build's header) and tells what the chunk cannot do. Anything it cannot
// follow answers false throughout, which keeps every safeguard.
class ChunkReader {
 public:
  explicit ChunkReader(std::string_view dump) : d_(dump) { read_ok_ = read(); }

  LuaEngine::Traits traits() const {
    LuaEngine::Traits t;
    // It assigns no global (no SETGLOBAL in any of its functions), so it may read its
    // globals straight from the real table rather than through the readonly proxy.
    t.direct_globals = read_ok_ && !writes_;
    // It can change no table that outlives it: no SETTABLE either, and the only globals
    // it reads are names in kHarmless, none of which hands a script a way to change a
    // table (rawset, setmetatable, table.insert and the like are not among them, nor
    // _G). It leaves KEYS and ARGV as it found them (see LuaEngine::set_array).
    t.keeps_tables = t.direct_globals && !sets_fields_ && !reads_other_;
    // It runs each of its instructions at most once: no loop, no backward jump and no
    // function of its own, and no global that could hand it a Lua function to call
    // (loadstring, say: kHarmless names only, all C functions and their tables). It
    // cannot run away, so it runs without the instruction budget's hook (see
    // LuaEngine::run).
    t.bounded = read_ok_ && !reads_other_ && !loops_;
    return t;
  }

 private:
  static constexpr int kOpGetGlobal = 5;  // lopcodes.h: the opcode is the low 6 bits,
  static constexpr int kOpSetGlobal = 7;  // Bx the top 18
  static constexpr int kOpSetTable = 9;
  static constexpr int kOpJmp = 22;
  static constexpr int kOpForLoop = 31;
  static constexpr int kOpTForLoop = 33;
  static constexpr int kOpClosure = 36;
  static constexpr uint32_t kJmpZero = (1u << 18) / 2 - 1;  // sBx is Bx minus this
  static constexpr int kDepthMax = 200;   // Lua's own limit on nested functions is lower

  bool read() {
    // ESC "Lua", version 5.1, official format, little-endian, and the sizes of int,
    // size_t, Instruction and lua_Number this reader assumes; numbers not integral.
    static constexpr unsigned char kHeader[] = {0x1b, 'L', 'u', 'a', 0x51, 0, 1, 4, 8, 4, 8, 0};
    if (d_.size() < sizeof kHeader || std::memcmp(d_.data(), kHeader, sizeof kHeader) != 0) return false;
    at_ = sizeof kHeader;
    return function(0) && at_ == d_.size();
  }

  static bool harmless(std::string_view name) {
    static constexpr std::string_view kHarmless[] = {
        "KEYS", "ARGV", "redis", "tonumber", "tostring", "type", "string", "math",
        "error", "assert", "unpack", "select", "ipairs", "pcall", "_VERSION",
    };
    for (std::string_view h : kHarmless) {
      if (name == h) return true;
    }
    return false;
  }

  bool function(int depth) {
    if (depth > kDepthMax || !string() || !skip(4 + 4 + 4)) return false;  // source, lines, sizes
    int32_t n = 0;
    if (!count(n)) return false;
    std::vector<uint32_t> names;  // the constants GETGLOBAL reads by
    for (int32_t i = 0; i < n; ++i) {
      uint32_t instruction = 0;
      if (!u32(instruction)) return false;
      switch (instruction & 0x3f) {
        case kOpGetGlobal: names.push_back(instruction >> 14); break;
        case kOpSetGlobal: writes_ = true; break;
        case kOpSetTable: sets_fields_ = true; break;
        case kOpForLoop:
        case kOpTForLoop:
        case kOpClosure: loops_ = true; break;
        case kOpJmp:
          if ((instruction >> 14) < kJmpZero) loops_ = true;
          break;
        default: break;
      }
    }
    if (!count(n)) return false;
    std::vector<std::string_view> strings(static_cast<size_t>(n));  // "" where not a string
    for (int32_t i = 0; i < n; ++i) {
      if (at_ >= d_.size()) return false;
      switch (d_[at_++]) {
        case 0: break;                                // nil
        case 1: if (!skip(1)) return false; break;   // boolean
        case 3: if (!skip(8)) return false; break;   // number
        case 4: if (!string(&strings[static_cast<size_t>(i)])) return false; break;
        default: return false;
      }
    }
    for (uint32_t k : names) {
      if (k >= strings.size() || !harmless(strings[k])) reads_other_ = true;
    }
    if (!count(n)) return false;
    for (int32_t i = 0; i < n; ++i) {
      if (!function(depth + 1)) return false;
    }
    if (!count(n) || !skip(static_cast<size_t>(n) * 4)) return false;  // line numbers
    if (!count(n)) return false;
    for (int32_t i = 0; i < n; ++i) {  // locals: name, first and last pc
      if (!string() || !skip(8)) return false;
    }
    if (!count(n)) return false;
    for (int32_t i = 0; i < n; ++i) {  // upvalue names
      if (!string()) return false;
    }
    return true;
  }

  bool skip(size_t n) {
    if (n > d_.size() - at_) return false;
    at_ += n;
    return true;
  }
  bool u32(uint32_t& v) {
    if (4 > d_.size() - at_) return false;
    v = 0;
    for (int i = 3; i >= 0; --i) v = v << 8 | static_cast<unsigned char>(d_[at_ + static_cast<size_t>(i)]);
    at_ += 4;
    return true;
  }
  bool count(int32_t& n) {
    uint32_t v = 0;
    if (!u32(v) || v > d_.size()) return false;  // each item takes at least a byte
    n = static_cast<int32_t>(v);
    return true;
  }
  // A size_t length (0 for none), then that many bytes, the last a NUL; `text`, when
  // given, gets the bytes before it.
  bool string(std::string_view* text = nullptr) {
    if (8 > d_.size() - at_) return false;
    uint64_t len = 0;
    for (int i = 7; i >= 0; --i) len = len << 8 | static_cast<unsigned char>(d_[at_ + static_cast<size_t>(i)]);
    at_ += 8;
    const size_t start = at_;
    if (!skip(len > d_.size() ? d_.size() + 1 : static_cast<size_t>(len))) return false;
    if (text && len > 0) *text = d_.substr(start, static_cast<size_t>(len) - 1);
    return true;
  }

  std::string_view d_;
  size_t at_ = 0;
  bool read_ok_ = false;
  bool writes_ = false;
  bool sets_fields_ = false;
  bool reads_other_ = false;
  bool loops_ = false;
};
using CompiledScripts = std::unordered_map<std::string, CompiledScript>;
constexpr size_t kCompiledMax = 256;  // a workload of ever-new bodies stays bounded

CompiledScripts& compiled_scripts() {
  thread_local CompiledScripts scripts;
  return scripts;
}

void open_libs(lua_State* L) {
  const std::pair<const char*, lua_CFunction> libs[] = {
      {"", luaopen_base},          {LUA_TABLIBNAME, luaopen_table},
      {LUA_STRLIBNAME, luaopen_string}, {LUA_MATHLIBNAME, luaopen_math},
      {LUA_DBLIBNAME, luaopen_debug},
  };
  for (const auto& [name, fn] : libs) {
    lua_pushcfunction(L, fn);
    lua_pushstring(L, name);
    lua_call(L, 1, 0);
  }
  lua_pushcfunction(L, redis_lua_pcall);
  lua_setglobal(L, "pcall");
  // Scripts must not reach the file system or the server's stdout; and, as on Redis
  // 7.0.15, they have no getfenv, setfenv or newproxy, through which a script could
  // reach (and change) the real globals behind the readonly proxy.
  for (const char* name : {"print", "dofile", "loadfile", "getfenv", "setfenv", "newproxy"}) {
    lua_pushnil(L);
    lua_setglobal(L, name);
  }
}

}  // namespace

// The interpreter is opened when the node first needs it, not with the node: opening
// Lua's libraries was a tenth of a short fuzz run, and a node whose clients never send
// a script never needs it. Nothing a script can see depends on when that happens.
LuaEngine::LuaEngine(NodeCore& node) : node_(node) {}
LuaEngine::~LuaEngine() { close(); }

void LuaEngine::open() {
  L_ = lua_newstate(&LuaHeap::alloc, &heap_);
  // Everything built here stays reachable: collecting while building only walks it.
  lua_gc(L_, LUA_GCSTOP, 0);
  lua_atpanic(L_, panic);
  lua_pushlightuserdata(L_, this);
  lua_setfield(L_, LUA_REGISTRYINDEX, "lockstep_engine");
  lua_createtable(L_, 0, kGlobalsSize);
  lua_replace(L_, LUA_GLOBALSINDEX);
  open_libs(L_);
  lua_getglobal(L_, "math");
  set_fn(L_, this, "random", math_random);
  set_fn(L_, this, "randomseed", math_randomseed);
  lua_pop(L_, 1);
  lua_createtable(L_, static_cast<int>(kStringSlots), 0);
  held_.assign(kStringSlots, std::string());
  held_used_.assign(kStringSlots / 2, 0);
  lua_pushvalue(L_, -1);
  strings_ref_ = luaL_ref(L_, LUA_REGISTRYINDEX);
  open_redis_table(L_, this, lua_gettop(L_));
  lua_pop(L_, 1);
  const std::string& init = init_chunk_bytecode();
  luaL_loadbuffer(L_, init.data(), init.size(), "=lockstep");
  lua_call(L_, 0, 4);
  direct_ref_ = luaL_ref(L_, LUA_REGISTRYINDEX);
  globals_ref_ = luaL_ref(L_, LUA_REGISTRYINDEX);
  lua_replace(L_, LUA_GLOBALSINDEX);
  lua_pushvalue(L_, -1);
  lua_setfield(L_, LUA_REGISTRYINDEX, "__redis__err__handler");
  handler_ref_ = luaL_ref(L_, LUA_REGISTRYINDEX);
  // The tables runs refill, set as the globals KEYS and ARGV once: no script can assign a
  // global (the globals are readonly and rawset refuses them), so they keep naming these
  // tables until set_array replaces one. The names stay referenced for that.
  for (auto [array, name] : {std::pair{&keys_, "KEYS"}, std::pair{&argv_, "ARGV"}}) {
    lua_pushstring(L_, name);
    array->name_ref = luaL_ref(L_, LUA_REGISTRYINDEX);
    lua_createtable(L_, 0, 0);
    array->table_ref = luaL_ref(L_, LUA_REGISTRYINDEX);
    array->size = 0;
    array->as_left = true;
    name_array(*array);
  }
  lua_gc(L_, LUA_GCRESTART, 0);
}

void LuaEngine::close() {
  if (L_) lua_close(L_);
  L_ = nullptr;
  by_body_.clear();
  held_.clear();
  last_ = nullptr;
  scripts_.clear();
  cache_entries_bytes_ = 0;
}

void LuaEngine::flush_scripts() { close(); }

// Scripts are compiled as chunks named "@user_script" (errors read "user_script:1:"),
// as Redis 7.0 does, and kept in the registry.
const LuaEngine::Script* LuaEngine::load(const std::string& body, Reply& err) {
  // Clients send the same few bodies over and over: comparing with the last one is
  // cheaper than hashing the body to look it up. This and the thread's cache of compiled
  // scripts below are fast paths (lockstep/fast_paths.h): built out, every EVAL hashes
  // its body, and every new node parses its scripts afresh.
  if (kFastPaths && last_ && last_body_ == body) return last_;
  if (auto it = by_body_.find(body); kFastPaths && it != by_body_.end()) {
    last_body_ = body;
    return last_ = it->second;
  }
  if (!L_) open();
  CompiledScripts& compiled = compiled_scripts();
  auto known = kFastPaths ? compiled.find(body) : compiled.end();
  std::string sha = known != compiled.end() ? known->second.sha : sha1_hex(body);
  const Script* script = find(sha);
  if (!script) {
    Traits traits;
    unsigned flags = 0;
    if (known != compiled.end()) {
      const std::string& code = known->second.code;
      luaL_loadbuffer(L_, code.data(), code.size(), "@user_script");
      traits = known->second.traits;
      flags = known->second.flags;
    } else {
      size_t skip = 0;
      std::string why;
      if (!script_shebang(body, flags, skip, why)) {
        err = Reply::error("ERR " + why);
        return nullptr;
      }
      if (luaL_loadbuffer(L_, body.data() + skip, body.size() - skip, "@user_script") != 0) {
        err = Reply::error(std::string("ERR Error compiling script (new function): ") +
                           lua_tostring(L_, -1));
        lua_settop(L_, 0);
        return nullptr;
      }
      // What the bytecode shows a script cannot do lets it skip safeguards it does not
      // need; built without the fast paths, every script keeps them all.
      if constexpr (kFastPaths) {
        std::string code;
        lua_dump(L_, append_to_string, &code);
        traits = ChunkReader(code).traits();
        if (compiled.size() >= kCompiledMax) compiled.clear();
        compiled.emplace(body, CompiledScript{sha, std::move(code), traits, flags});
      }
    }
    // A script that assigns no global reads them from the real table itself: each
    // read was a miss in the proxy, a metatable lookup and a second table lookup (about
    // 80 instructions; a lock script reads KEYS, ARGV and redis several times a run).
    // Reading behaves the same either way (a missing name raises the same error from the
    // real table's own __index), and the real table refuses new names as the proxy does.
    // A script that can also change no table reads the libraries themselves (redis.call
    // without the redis proxy's metatable and second lookup): the proxies only stop
    // assignments, and such a script makes none. Nor can it tell a proxy from its library
    // by reading: pairs, next, rawget and getmetatable are not in its reach.
    if (traits.direct_globals) {
      lua_rawgeti(L_, LUA_REGISTRYINDEX, traits.keeps_tables ? direct_ref_ : globals_ref_);
      lua_setfenv(L_, -2);
    }
    const int ref = luaL_ref(L_, LUA_REGISTRYINDEX);
    script = &scripts_.emplace(sha, Script{sha, ref, traits, flags}).first->second;
    // dictEntry, the SHA-1 as an sds, the luaScript, and the body as the client sent it.
    cache_entries_bytes_ +=
        alloc_size(24) + sds_bytes(40) + 16 + string_object_bytes(static_cast<int64_t>(body.size()));
  }
  if (by_body_.size() >= kBodyCacheMax) by_body_.clear();
  by_body_.emplace(body, script);
  last_body_ = body;
  return last_ = script;
}

const LuaEngine::Script* LuaEngine::find(const std::string& sha) const {
  auto it = scripts_.find(sha);
  return it == scripts_.end() ? nullptr : &it->second;
}

// Makes `array`'s table, the global's value, hold exactly `items` at 1..n. Redis
// makes new KEYS and ARGV tables for every script; refilling the last run's tables
// instead spares making two tables and collecting them again, a tenth of a lock's EVAL.
// A script cannot tell the difference: the table is reset to what a new one would be
// (no metatable, nothing but 1..n, so # and next() answer as on a new one), and one it
// changed beyond that is replaced by a new table. Seeing the reuse would take keeping a
// reference to KEYS past the run, in a table that outlives it. On a real server every
// such table is readonly (the globals, the libraries, the strings' metatable, rawset
// included); stock Lua's proxies here leave two ways in (table.insert into a library
// table, assigning an existing field of the strings' metatable), and a script that
// takes one fails on a real server. After runs of scripts that change no table (most
// lock scripts), the table is known to be as this left it, and only its items are set.
void LuaEngine::set_array(ArrayGlobal& array, std::span<const std::string> items) {
  lua_State* L = L_;
  const int n = static_cast<int>(items.size());
  auto fill = [&] {  // the table on top of the stack; the strings' table at 1 (see run)
    for (int i = 0; i < n; ++i) {
      push_string(L, 1, items[static_cast<size_t>(i)].data(), items[static_cast<size_t>(i)].size());
      lua_rawseti(L, -2, i + 1);
    }
  };
  lua_rawgeti(L, LUA_REGISTRYINDEX, array.table_ref);
  if (array.as_left) {  // holds 1..size and nothing else, as set_array left it
    fill();
    for (int i = n + 1; i <= array.size; ++i) {
      lua_pushnil(L);
      lua_rawseti(L, -2, i);
    }
    array.size = n;
    lua_pop(L, 1);
    return;
  }
  array.as_left = true;
  if (lua_getmetatable(L, -1)) {  // pushes one only if there is one
    lua_pop(L, 1);
    lua_pushnil(L);
    lua_setmetatable(L, -2);
  }
  fill();
  for (int i = n + 1; i <= array.size; ++i) {
    lua_pushnil(L);
    lua_rawseti(L, -2, i);
  }
  array.size = n;
  // Anything after n in traversal order is a key the last script added. (Asked once
  // 1..n are filled: next() fails on a key the table does not hold.)
  if (n == 0) lua_pushnil(L);
  else lua_pushinteger(L, n);
  if (lua_next(L, -2) == 0) {
    // The global still names this table: no script can assign a global (see open()).
    lua_pop(L, 1);
    return;
  }
  lua_pop(L, 3);
  lua_createtable(L, n, 0);
  fill();
  lua_rawseti(L, LUA_REGISTRYINDEX, array.table_ref);
  name_array(array);
}

// Both tables of globals (the real one and the one that names the libraries directly)
// name `array`'s table.
void LuaEngine::name_array(const ArrayGlobal& array) {
  for (int globals : {globals_ref_, direct_ref_}) {
    lua_rawgeti(L_, LUA_REGISTRYINDEX, globals);
    lua_rawgeti(L_, LUA_REGISTRYINDEX, array.name_ref);
    lua_rawgeti(L_, LUA_REGISTRYINDEX, array.table_ref);
    lua_rawset(L_, -3);
    lua_pop(L_, 1);
  }
}

void LuaEngine::push_string(lua_State* L, int cache, const char* s, size_t n) {
  if (n == 0 || n > kStringMax) {  // an empty held_ slot holds nothing to match
    lua_pushlstring(L, s, n);
    return;
  }
  // The first and last eight bytes pick the slot: tokens and key names differ there.
  uint64_t a = n, b = 0;
  if (n >= 8) {
    std::memcpy(&a, s, 8);
    std::memcpy(&b, s + n - 8, 8);
  } else {
    for (size_t i = 0; i < n; ++i) a = a << 8 | static_cast<unsigned char>(s[i]);
  }
  // Two ways a set, the one used less lately replaced: with one, two strings a workload
  // alternates between could share a slot and push each other out on every run.
  static_assert(kStringSlots == 256, "128 sets: the set is the hash's top seven bits");
  // Fibonacci hashing of the two words: a product's top bits depend on every bit below
  // them, so keys that differ only in their last byte still land far apart.
  const uint64_t h = (a ^ (b << 32 | b >> 32) ^ n) * 0x9E3779B97F4A7C15ULL;
  const size_t set = static_cast<size_t>(h >> 57);
  for (size_t way = 0; way < 2; ++way) {
    const std::string& held = held_[2 * set + way];
    if (held.size() == n && std::memcmp(held.data(), s, n) == 0) {
      held_used_[set] = static_cast<uint8_t>(way);
      lua_rawgeti(L, cache, static_cast<int>(2 * set + way) + 1);
      return;
    }
  }
  const size_t way = held_used_[set] ^ 1u;
  held_used_[set] = static_cast<uint8_t>(way);
  lua_pushlstring(L, s, n);
  lua_pushvalue(L, -1);
  lua_rawseti(L, cache, static_cast<int>(2 * set + way) + 1);  // `cache` is absolute or a pseudo-index
  held_[2 * set + way].assign(s, n);
}

unsigned LuaEngine::declared_flags(const Args& argv, bool by_sha) const {
  if (by_sha) {
    if (argv[1].size() != 40) return kScriptCompat;
    std::string sha = argv[1];
    for (auto& ch : sha) ch = (ch >= 'A' && ch <= 'Z') ? static_cast<char>(ch - 'A' + 'a') : ch;
    const Script* s = find(sha);
    return s ? s->flags : kScriptCompat;
  }
  // The flags are the body's: a loaded script with this body has the ones it declares.
  unsigned flags = 0;
  size_t skip = 0;
  std::string why;
  return script_shebang(argv[1], flags, skip, why) ? flags : kScriptCompat;
}

Reply LuaEngine::run(const Script& script, ClientState& caller, std::span<const std::string> keys,
                     std::span<const std::string> argv, int slot) {
  lua_settop(L_, 0);
  lua_rawgeti(L_, LUA_REGISTRYINDEX, strings_ref_);
  set_array(keys_, keys);
  set_array(argv_, argv);
  lua_settop(L_, 0);
  lua_rawgeti(L_, LUA_REGISTRYINDEX, handler_ref_);
  lua_rawgeti(L_, LUA_REGISTRYINDEX, script.ref);
  ClientState* saved = caller_;
  caller_ = &caller;
  script_wrote_ = false;
  run_flags_ = script.flags;
  run_slot_ = slot;
  instructions_ = 0;
  // Each script that could run away gets the whole budget: setting the hook restarts its
  // count. The VM pays for the hook on every instruction, so one that cannot goes without.
  if (!script.traits.bounded) lua_sethook(L_, budget_hook, LUA_MASKCOUNT, kHookEvery);
  else if (lua_gethookmask(L_) != 0) lua_sethook(L_, nullptr, 0, 0);
  const bool saved_in_script = node_.in_script;
  node_.in_script = true;
  const int status = lua_pcall(L_, 0, 1, 1);
  // A failed run went through the error handler, which writes `source` and `line` into
  // a table raised as the error (error(KEYS) included).
  if (!script.traits.keeps_tables || status != 0) keys_.as_left = argv_.as_left = false;
  node_.in_script = saved_in_script;
  caller_ = saved;
  Reply r = status == 0 ? lua_to_reply(L_) : script_error_reply(L_, script.sha);
  lua_settop(L_, 0);
  return r;
}

// scriptCall: the checks Redis makes before a command runs inside a script, then the
// command itself through the node's normal call path (so it propagates on its own).
Reply LuaEngine::redis_call(const Args& argv, std::string& err) {
  // Every call's arguments pass through the cache of argument objects, refused or not.
  arg_cache_.take(argv, argv.size(), script_args_);
  struct Keep {
    LuaEngine& e;
    const Args& argv;
    ~Keep() {
      e.node_.script_args = nullptr;
      e.arg_cache_.keep(argv, argv.size(), e.script_args_);
    }
  } keep{*this, argv};
  const Command* cmd = node_.find(argv[0]);
  // A container alone (e.g. "script") is itself the command, and fails on arity.
  if (cmd && (cmd->flags & kContainer) && argv.size() > 1) cmd = node_.find_sub(*cmd, argv[1]);
  if (!cmd) {
    err = "Unknown Redis command called from script";
    return {};
  }
  if (!arity_ok(*cmd, argv.size())) {
    err = "Wrong number of args calling Redis command from script";
    return {};
  }
  if (cmd->flags & kNoScript) {
    err = "This Redis command is not allowed from script";
    return {};
  }
  const bool compat = run_flags_ & kScriptCompat;
  if (!compat && (run_flags_ & kScriptNoWrites) && (cmd->flags & (kWrite | kMayReplicate))) {
    err = "Write commands are not allowed from read-only scripts.";
    return {};
  }
  // Once a script has written it must run to the end: only its first write can be
  // refused for the server's state.
  if ((cmd->flags & kWrite) && !script_wrote_ && node_.replica && !caller_->is_master_link) {
    err = "-READONLY You can't write against a read only replica.";
    return {};
  }
  if ((cmd->flags & kDenyOom) && !script_wrote_ && node_.script_oom && node_.memory.maxmemory > 0 &&
      !caller_->is_master_link && (compat || !(run_flags_ & kScriptAllowOom))) {
    err = std::string("-") + kOomError;
    return {};
  }
  if (cmd->flags & kWrite) script_wrote_ = true;
  if (std::string why = node_.cluster_script_check(argv, compat || (run_flags_ & kScriptAllowCrossSlot), run_slot_);
      !why.empty()) {
    err = std::move(why);
    return {};
  }
  node_.script_args = &script_args_;
  const int64_t dirty = node_.dirty;
  Reply r = node_.call(*caller_, *cmd, argv);
  // A server that feeds no AOF and no replica (no propagator here) holds nothing for
  // them, and keeps even a write's arguments, as redis-server does with appendonly no
  // and no replication backlog.
  script_args_.propagated = node_.propagator && (((cmd->flags & kWrite) && node_.dirty > dirty) ||
                                                 ((cmd->flags & kMayReplicate) && !node_.cluster));
  return r;
}

}  // namespace lockstep::sim
