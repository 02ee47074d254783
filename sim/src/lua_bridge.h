// LuaEngine: the node's one embedded Lua 5.1 interpreter, set up like Redis 7.0's
// scripting environment (readonly globals, the redis.* API, deterministic math.random),
// and the conversions between Redis replies and Lua values in both directions.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "redis_impl.h"

struct lua_State;

namespace lockstep::sim {

class LuaEngine {
 public:
  explicit LuaEngine(NodeCore& node);
  ~LuaEngine();
  LuaEngine(const LuaEngine&) = delete;
  LuaEngine& operator=(const LuaEngine&) = delete;

  // Compiles a script body once and caches it under its SHA-1 (lowercase hex). On a
  // compile error returns false and sets `err` to the reply Redis sends.
  bool load(const std::string& body, std::string& sha, Reply& err);
  bool has(const std::string& sha) const { return loaded_.count(sha) > 0; }
  // Runs a loaded script for `caller` with the given KEYS and ARGV.
  Reply run(const std::string& sha, ClientState& caller, const Args& keys, const Args& argv);
  // SCRIPT FLUSH: a fresh interpreter, every cached script forgotten.
  void flush_scripts();
  // A server restart: no scripts, and math.random back at its initial state.
  void restart() {
    flush_scripts();
    rand48_ = kRand48Initial;
  }

  // Used by the redis.* C functions.
  Reply redis_call(const Args& argv, std::string& err);
  uint64_t& rand48_state() { return rand48_; }
  int64_t charge(int64_t instructions) { return instructions_ += instructions; }

 private:
  void open();
  void close();

  NodeCore& node_;
  lua_State* L_ = nullptr;
  std::set<std::string> loaded_;
  ClientState* caller_ = nullptr;
  bool script_wrote_ = false;
  int64_t instructions_ = 0;  // executed by the running script
  // redisLrand48's state: never reseeded by the server (not per script, not by SCRIPT
  // FLUSH), so math.random continues one sequence from the built-in initial state.
  static constexpr uint64_t kRand48Initial = 0x1234ABCD330EULL;
  uint64_t rand48_ = kRand48Initial;
};

}  // namespace lockstep::sim
