// LuaEngine: the node's one embedded Lua 5.1 interpreter, set up like Redis 7.0's
// scripting environment (readonly globals, the redis.* API, deterministic math.random),
// and the conversions between Redis replies and Lua values in both directions.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "lua_args.h"
#include "lua_heap.h"
#include "redis_impl.h"

struct lua_State;

namespace lockstep::sim {

class LuaEngine {
 public:
  explicit LuaEngine(NodeCore& node);
  ~LuaEngine();
  LuaEngine(const LuaEngine&) = delete;
  LuaEngine& operator=(const LuaEngine&) = delete;

  // What a script's bytecode shows it cannot do (ChunkReader in the .cc says how each
  // is read); each false when in doubt.
  struct Traits {
    bool direct_globals = false;  // assigns no global: may read the real globals table
    bool keeps_tables = false;    // changes no table it did not make (KEYS, ARGV among them)
    bool bounded = false;         // cannot loop: needs no instruction budget
  };
  // A compiled script: its SHA-1 (lowercase hex), its function's registry slot, and
  // what its bytecode shows.
  struct Script {
    std::string sha;
    int ref = 0;
    Traits traits;
    unsigned flags = 0;  // ScriptFlag, from its shebang
  };

  // Compiles a script body once and caches it under its SHA-1. On a compile error
  // returns nullptr and sets `err` to the reply Redis sends.
  const Script* load(const std::string& body, Reply& err);
  // The loaded script with this (lowercase) SHA-1, or nullptr.
  const Script* find(const std::string& sha) const;
  bool has(const std::string& sha) const { return find(sha) != nullptr; }
  // Runs a loaded script for `caller` with the given KEYS and ARGV; `slot` is the cluster
  // slot of its KEYS (-1: none, or no cluster).
  Reply run(const Script& script, ClientState& caller, std::span<const std::string> keys,
            std::span<const std::string> argv, int slot);
  // The flags an EVAL or EVALSHA's script declares (ScriptFlag), as far as the command
  // tells before it runs: kScriptCompat for no shebang, a bad one, or an unknown SHA-1.
  unsigned declared_flags(const Args& argv, bool by_sha) const;
  // SCRIPT FLUSH: a fresh interpreter, every cached script forgotten.
  void flush_scripts();
  // A server restart: no scripts, and math.random back at its initial state.
  void restart() {
    flush_scripts();
    rand48_ = kRand48Initial;
    arg_cache_.clear();
  }

  // Used by the redis.* C functions.
  Reply redis_call(const Args& argv, std::string& err);
  // Arguments a redis.call could not send (the first n were strings) still pass through
  // the cache of argument objects.
  void unsent_args(const Args& argv, size_t n) {
    arg_cache_.take(argv, n, script_args_);
    arg_cache_.keep(argv, n, script_args_);
  }
  // A reused argument vector for one redis.call, released when the lease ends (also when
  // a Lua error unwinds through it). Calls cannot nest today (a script cannot EVAL), but
  // a stack of buffers keeps that an assumption of nothing.
  class ArgsLease {
   public:
    explicit ArgsLease(LuaEngine& e) : e_(e) {
      if (e_.args_depth_ == e_.args_stack_.size()) e_.args_stack_.push_back(std::make_unique<Args>());
      args_ = e_.args_stack_[e_.args_depth_++].get();
    }
    ~ArgsLease() { --e_.args_depth_; }
    ArgsLease(const ArgsLease&) = delete;
    ArgsLease& operator=(const ArgsLease&) = delete;
    Args& args() { return *args_; }

   private:
    LuaEngine& e_;
    Args* args_;
  };
  // Pushes `s` as a Lua string: the copy this engine pushed before, if it still holds
  // one (see held_). `cache` is an absolute stack index or a pseudo-index of the cached
  // strings' table (run() keeps it at 1; redis.call has it as its second upvalue).
  void push_string(lua_State* L, int cache, const char* s, size_t n);
  uint64_t& rand48_state() { return rand48_; }
  // What the server's script cache holds in used_memory: per script a dictEntry, its
  // SHA-1 as an sds, the luaScript and the body as it came, and the dict's table. (The
  // interpreter's own heap is malloc's, outside used_memory.)
  int64_t cache_bytes() const { return cache_entries_bytes_ + 8 * dict_buckets(scripts_.size()); }
  int64_t charge(int64_t instructions) { return instructions_ += instructions; }

 private:
  void open();
  void close();

  NodeCore& node_;
  LuaHeap heap_;  // before L_: the interpreter frees into it when it closes
  lua_State* L_ = nullptr;
  int globals_ref_ = 0;  // the real globals table, behind the readonly proxy
  int direct_ref_ = 0;   // the same names, the libraries' own tables for their proxies
  int handler_ref_ = 0;  // __redis__err__handler
  // KEYS and ARGV of the last run, refilled by the next (see set_array), and how many
  // items each was given.
  struct ArrayGlobal {
    int name_ref = 0;
    int table_ref = 0;
    int size = 0;
    // The table holds 1..size and nothing else, no metatable either: true from when
    // set_array fills it until a script that may change tables runs.
    bool as_left = false;
  };
  ArrayGlobal keys_;
  ArrayGlobal argv_;
  void set_array(ArrayGlobal& array, std::span<const std::string> items);
  void name_array(const ArrayGlobal& array);
  // The strings run() and redis.call pushed lately, by a cheap hash of their bytes: a
  // lock's key and token reach the interpreter on every EVAL, as KEYS, ARGV and the
  // token GET returns, and each push hashed the whole string to find it in Lua's string
  // table (about 200 instructions, three times in a lock's EVAL). A hit is one table
  // read. Slot i of the Lua table (registry slot strings_ref_) holds the string held_[i]
  // names, once held_[i] is not empty; slots 2k and 2k+1 form set k. Strings are values
  // in Lua 5.1, so which copy a script gets is invisible to it, and the interpreter's
  // memory is no part of the node's.
  static constexpr size_t kStringSlots = 256;
  static constexpr size_t kStringMax = 128;  // longer ones, and "", are pushed as they are
  int strings_ref_ = 0;
  std::vector<std::string> held_;
  std::vector<uint8_t> held_used_;  // per set of two slots: the way used last
  std::vector<std::unique_ptr<Args>> args_stack_;  // a lease's buffer stays put when another is added
  size_t args_depth_ = 0;
  ArgCache arg_cache_;
  ScriptArgs script_args_;  // the running redis.call's
  std::map<std::string, Script> scripts_;  // by SHA-1
  int64_t cache_entries_bytes_ = 0;
  // EVAL sends the whole body every time; hashing it each time was most of the cost of
  // a lock's EVAL. Looked up only, never iterated, so its order reaches nothing; cleared
  // when it reaches kBodyCacheMax (a workload of ever-new bodies stays bounded).
  std::unordered_map<std::string, const Script*> by_body_;
  static constexpr size_t kBodyCacheMax = 256;
  std::string last_body_;
  const Script* last_ = nullptr;
  ClientState* caller_ = nullptr;
  bool script_wrote_ = false;
  unsigned run_flags_ = 0;  // the running script's ScriptFlag
  int run_slot_ = -1;       // the cluster slot its keys have hashed to so far
  int64_t instructions_ = 0;  // executed by the running script
  // redisLrand48's state: never reseeded by the server (not per script, not by SCRIPT
  // FLUSH), so math.random continues one sequence from the built-in initial state.
  static constexpr uint64_t kRand48Initial = 0x1234ABCD330EULL;
  uint64_t rand48_ = kRand48Initial;
};

}  // namespace lockstep::sim
