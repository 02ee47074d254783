// Memory accounting and eviction (evict.c, object.c of Redis 7.0), and the server
// commands that show and change them: CONFIG GET/SET and INFO.
//
// The memory model. A real used_memory is whatever jemalloc handed out; the simulation
// has no allocator, so it estimates the same figure from the keyspace:
//
//   used_memory = kBaseBytes                       a fresh server with a few clients
//               + 8 * buckets(keys)                the main dict's table (a power of two)
//               + 8 * buckets(keys with a TTL)     the expires dict's table
//               + per key: 24                      its dictEntry
//                        + alloc(sds of the key)   sdshdr + bytes + NUL, rounded up
//                        + the value               as below
//                        + 32 if it has a TTL      its entry in the expires dict
//
// where alloc() rounds up to jemalloc's size classes and a string value costs what
// MEMORY USAGE reports for it: 16 (the robj alone) when it reads as a 64-bit integer,
// alloc(16 + 3 + len + 1) when it is at most 44 bytes (one embstr allocation), else
// 16 + alloc(sds). Hashes, lists and sorted sets are costed as the listpacks small ones
// are (7 header bytes, each element its bytes + 2), plus the quicklist node of a list.
// For strings the per-key figure equals MEMORY USAGE on redis-server 7.0 byte for byte;
// the rest (client buffers, fragmentation, the replication backlog) is not modelled,
// which is why scenarios leave a margin between what they write and maxmemory.
//
// Eviction follows performEvictions: before a command runs, while used_memory exceeds
// maxmemory, take the best candidate of the policy and delete it (replicated as DEL);
// when there is none left, commands that may grow memory get the OOM error. The LRU and
// LFU policies are Redis's approximations: each round samples maxmemory-samples keys
// into a pool of the 16 best candidates kept between rounds, and evicts the best one
// still present. The LRU clock counts seconds, the LFU counter is logarithmic (it grows
// with probability 1 / ((counter - 5) * lfu-log-factor + 1)) and loses one every
// lfu-decay-time minutes; every random choice draws from the node's own stream.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>

#include "lua_bridge.h"
#include "redis_impl.h"

namespace lockstep::sim {

const char* const kOomError = "OOM command not allowed when used memory > 'maxmemory'.";

namespace {

using Impl = NodeCore;

constexpr int64_t kBaseBytes = 1 << 20;
constexpr size_t kPoolSize = 16;           // EVPOOL_SIZE
constexpr uint32_t kLruClockMax = (1u << 24) - 1;
constexpr uint32_t kLfuInitVal = 5;
constexpr int kEvictRoundsMax = 1000;      // pool refills for one victim before giving up

// jemalloc's size classes on x86-64: multiples of 16 up to 128, then four per doubling.
int64_t alloc(int64_t n) {
  if (n <= 8) return 8;
  if (n <= 128) return (n + 15) / 16 * 16;
  int shift = 63 - __builtin_clzll(static_cast<unsigned long long>(n - 1));
  const int64_t step = int64_t{1} << (shift - 2);
  return (n + step - 1) / step * step;
}

int64_t sds_alloc(int64_t len) {
  const int64_t header = len < 256 ? 3 : len < 65536 ? 5 : 9;
  return alloc(header + len + 1);
}

int64_t buckets(size_t n) {
  if (n == 0) return 0;
  int64_t b = 4;
  while (b < static_cast<int64_t>(n)) b *= 2;
  return b;
}

int64_t listpack(int64_t elements, int64_t bytes) { return alloc(7 + bytes + 2 * elements); }

int64_t value_bytes(const Value& v) {
  switch (v.type) {
    case VType::String: {
      int64_t as_int = 0;
      if (v.str.size() <= 20 && string_to_ll(v.str, as_int)) return 16;
      const auto len = static_cast<int64_t>(v.str.size());
      if (len <= 44) return alloc(16 + 3 + len + 1);
      return 16 + sds_alloc(len);
    }
    case VType::Hash: {
      int64_t bytes = 0;
      for (const auto& [f, val] : v.hash) bytes += static_cast<int64_t>(f.size() + val.size());
      return 16 + listpack(2 * static_cast<int64_t>(v.hash.size()), bytes);
    }
    case VType::List: {
      int64_t bytes = 0;
      for (size_t i = 0; i < v.list.size(); ++i) bytes += static_cast<int64_t>(v.list[i].size());
      return 16 + 48 + 32 + listpack(static_cast<int64_t>(v.list.size()), bytes);
    }
    case VType::ZSet: {
      int64_t bytes = 0;
      for (const auto& [member, score] : v.zset.dict) bytes += static_cast<int64_t>(member.size()) + 8;
      return 16 + listpack(2 * static_cast<int64_t>(v.zset.dict.size()), bytes);
    }
  }
  return 16;
}

int64_t key_bytes(const std::string& key, const Entry& e) {
  return 24 + sds_alloc(static_cast<int64_t>(key.size())) + value_bytes(e.v) + (e.expire >= 0 ? 32 : 0);
}

bool is_lfu(EvictionPolicy p) { return p == EvictionPolicy::AllkeysLfu || p == EvictionPolicy::VolatileLfu; }
bool is_volatile(EvictionPolicy p) {
  return p == EvictionPolicy::VolatileLru || p == EvictionPolicy::VolatileLfu ||
         p == EvictionPolicy::VolatileRandom || p == EvictionPolicy::VolatileTtl;
}

uint32_t lru_clock(int64_t now_ms) { return static_cast<uint32_t>(now_ms / 1000) & kLruClockMax; }
uint32_t lfu_minutes(int64_t now_ms) { return static_cast<uint32_t>(now_ms / 60000) & 65535; }

// estimateObjectIdleTime: the LRU clock wraps every 194 days.
uint64_t idle_ms(uint32_t lru, int64_t now_ms) {
  const uint32_t clock = lru_clock(now_ms);
  const uint64_t s = clock >= lru ? clock - lru : clock + (kLruClockMax - lru);
  return s * 1000;
}

// LFUDecrAndReturn: the counter after the decay periods since its last decrement.
uint32_t lfu_decayed(const MemoryConfig& cfg, uint32_t lru, int64_t now_ms) {
  const uint32_t last = lru >> 8;
  uint32_t counter = lru & 255;
  const uint32_t now = lfu_minutes(now_ms);
  const uint32_t elapsed = now >= last ? now - last : 65535 - last + now;
  const uint32_t periods = cfg.lfu_decay_time > 0 ? elapsed / static_cast<uint32_t>(cfg.lfu_decay_time) : 0;
  return periods > counter ? 0 : counter - periods;
}

const char* policy_name(EvictionPolicy p) {
  switch (p) {
    case EvictionPolicy::VolatileLru: return "volatile-lru";
    case EvictionPolicy::VolatileLfu: return "volatile-lfu";
    case EvictionPolicy::VolatileRandom: return "volatile-random";
    case EvictionPolicy::VolatileTtl: return "volatile-ttl";
    case EvictionPolicy::AllkeysLru: return "allkeys-lru";
    case EvictionPolicy::AllkeysLfu: return "allkeys-lfu";
    case EvictionPolicy::AllkeysRandom: return "allkeys-random";
    case EvictionPolicy::NoEviction: return "noeviction";
  }
  return "noeviction";
}

constexpr EvictionPolicy kPolicies[] = {
    EvictionPolicy::VolatileLru, EvictionPolicy::VolatileLfu, EvictionPolicy::VolatileRandom,
    EvictionPolicy::VolatileTtl, EvictionPolicy::AllkeysLru,  EvictionPolicy::AllkeysLfu,
    EvictionPolicy::AllkeysRandom, EvictionPolicy::NoEviction,
};

// The keys a policy may evict, in sorted order (never hash order): every key, or only
// those with a TTL.
std::vector<const std::string*> candidates(const Impl& m) {
  std::vector<const std::string*> out = m.sorted_keys();
  if (is_volatile(m.memory.policy))
    std::erase_if(out, [&](const std::string* k) { return m.db.at(*k).expire < 0; });
  return out;
}

// evictionPoolPopulate: a window of `samples` consecutive keys from a random start (as
// dictGetSomeKeys walks consecutive buckets), each scored and inserted in the pool
// when it beats the worst candidate there or the pool has room.
size_t populate_pool(Impl& m, const std::vector<const std::string*>& keys) {
  const size_t n = keys.size();
  const size_t count = std::min<size_t>(static_cast<size_t>(m.memory.samples), n);
  const size_t start = n <= count ? 0 : static_cast<size_t>(m.rng.between(0, int64_t(n) - 1));
  auto& pool = m.evict_pool;
  for (size_t i = 0; i < count; ++i) {
    const std::string& key = *keys[(start + i) % n];
    const Entry& e = m.db.at(key);
    uint64_t idle = 0;
    if (m.memory.policy == EvictionPolicy::VolatileTtl) idle = std::numeric_limits<uint64_t>::max() - uint64_t(e.expire);
    else if (is_lfu(m.memory.policy)) idle = 255 - lfu_decayed(m.memory, e.lru, m.now);
    else idle = idle_ms(e.lru, m.now);
    // The pool is sorted by ascending idle; a key already there is re-scored in place.
    std::erase_if(pool, [&](const PoolEntry& p) { return p.key == key; });
    auto pos = std::find_if(pool.begin(), pool.end(), [&](const PoolEntry& p) { return p.idle >= idle; });
    if (pos == pool.begin() && pool.size() >= kPoolSize) continue;  // worse than all, no room
    pool.insert(pos, PoolEntry{idle, key});
    if (pool.size() > kPoolSize) pool.erase(pool.begin());
  }
  return count;
}

// The key performEvictions deletes next, or nullptr when the policy has none.
const std::string* pick_victim(Impl& m, std::string& holder) {
  const auto keys = candidates(m);
  if (keys.empty()) return nullptr;
  if (m.memory.policy == EvictionPolicy::AllkeysRandom || m.memory.policy == EvictionPolicy::VolatileRandom) {
    return keys[static_cast<size_t>(m.rng.between(0, int64_t(keys.size()) - 1))];
  }
  for (int round = 0; round < kEvictRoundsMax; ++round) {
    populate_pool(m, keys);
    // Best candidates first; entries whose key went away meanwhile are dropped.
    while (!m.evict_pool.empty()) {
      holder = std::move(m.evict_pool.back().key);
      m.evict_pool.pop_back();
      auto it = m.db.find(holder);
      if (it != m.db.end() && (!is_volatile(m.memory.policy) || it->second.expire >= 0)) return &it->first;
    }
  }
  return nullptr;
}

}  // namespace

int64_t NodeCore::used_memory() const {
  int64_t total = kBaseBytes;
  size_t volatile_keys = 0;
  for (const auto& [key, e] : db) {
    total += key_bytes(key, e);
    volatile_keys += e.expire >= 0 ? 1 : 0;
  }
  return total + 8 * buckets(db.size()) + 8 * buckets(volatile_keys);
}

void NodeCore::touch_access(Entry& e, bool created) {
  if (!is_lfu(memory.policy)) {
    e.lru = lru_clock(now);
    return;
  }
  uint32_t counter = created ? kLfuInitVal : lfu_decayed(memory, e.lru, now);
  if (!created && counter < 255) {  // LFULogIncr
    const double base = counter > kLfuInitVal ? double(counter - kLfuInitVal) : 0.0;
    if (rng.uniform01() < 1.0 / (base * double(memory.lfu_log_factor) + 1)) ++counter;
  }
  e.lru = (lfu_minutes(now) << 8) | counter;
}

// A replica leaves eviction to its master (replica-ignore-maxmemory yes): the master's
// DELs keep the two identical.
bool NodeCore::perform_evictions() {
  if (memory.maxmemory <= 0 || replica) return true;
  if (used_memory() <= memory.maxmemory) return true;
  if (memory.policy == EvictionPolicy::NoEviction) return false;
  ClientState* saved = client;
  client = nullptr;
  bool ok = true;
  std::string holder;
  while (used_memory() > memory.maxmemory) {
    const std::string* victim = pick_victim(*this, holder);
    if (!victim) {
      ok = false;
      break;
    }
    const std::string key = *victim;
    auto it = db.find(key);
    notify(KeyChange::Kind::Evict, key, it->second, -1);
    if (propagating()) propagate(Args{"DEL", key});
    else propagate(Args());
    erase_entry(it);
    touch(key);
    ++evicted_keys;
  }
  client = saved;
  flush_propagation();
  return ok;
}

// ---- CONFIG and INFO -------------------------------------------------------------------

namespace {

Reply config_error(const std::string& name, const std::string& why) {
  return Reply::error("ERR CONFIG SET failed (possibly related to argument '" + name + "') - " + why);
}

// memtoull: digits, then an optional unit (b, k, kb, m, mb, g, gb); no sign, no fraction.
bool parse_memory(const std::string& s, int64_t& out) {
  size_t digits = 0;
  while (digits < s.size() && s[digits] >= '0' && s[digits] <= '9') ++digits;
  const std::string unit = to_lower(s.substr(digits));
  int64_t mul = 0;
  if (unit.empty() || unit == "b") mul = 1;
  else if (unit == "k") mul = 1000;
  else if (unit == "kb") mul = 1024;
  else if (unit == "m") mul = 1000 * 1000;
  else if (unit == "mb") mul = 1024 * 1024;
  else if (unit == "g") mul = 1000LL * 1000 * 1000;
  else if (unit == "gb") mul = 1024LL * 1024 * 1024;
  else return false;
  if (digits >= 128) return false;
  int64_t v = 0;
  for (size_t i = 0; i < digits; ++i) {
    if (v > (std::numeric_limits<int64_t>::max() - 9) / 10) return false;
    v = v * 10 + (s[i] - '0');
  }
  if (mul > 1 && v > std::numeric_limits<int64_t>::max() / mul) return false;
  out = v * mul;
  return true;
}

struct Param {
  const char* name;
  // Checks and converts a value; returns "" or why it is refused.
  std::string (*check)(const std::string& value, MemoryConfig& into);
  std::string (*get)(const MemoryConfig& cfg);
};

std::string check_int(const std::string& v, int64_t lo, int64_t& out) {
  int64_t n = 0;
  if (!string_to_ll(v, n)) return "argument couldn't be parsed into an integer";
  if (n < lo || n > std::numeric_limits<int32_t>::max())
    return "argument must be between " + std::to_string(lo) + " and 2147483647 inclusive";
  out = n;
  return "";
}

const Param kParams[] = {
    {"maxmemory",
     [](const std::string& v, MemoryConfig& c) -> std::string {
       return parse_memory(v, c.maxmemory) ? "" : "argument must be a memory value";
     },
     [](const MemoryConfig& c) { return std::to_string(c.maxmemory); }},
    {"maxmemory-policy",
     [](const std::string& v, MemoryConfig& c) -> std::string {
       for (EvictionPolicy p : kPolicies) {
         if (iequals(v, policy_name(p))) {
           c.policy = p;
           return "";
         }
       }
       std::string all;
       for (EvictionPolicy p : kPolicies) all += std::string(all.empty() ? "" : ", ") + policy_name(p);
       return "argument(s) must be one of the following: " + all;
     },
     [](const MemoryConfig& c) { return std::string(policy_name(c.policy)); }},
    {"maxmemory-samples",
     [](const std::string& v, MemoryConfig& c) { return check_int(v, 1, c.samples); },
     [](const MemoryConfig& c) { return std::to_string(c.samples); }},
    {"lfu-log-factor",
     [](const std::string& v, MemoryConfig& c) { return check_int(v, 0, c.lfu_log_factor); },
     [](const MemoryConfig& c) { return std::to_string(c.lfu_log_factor); }},
    {"lfu-decay-time",
     [](const std::string& v, MemoryConfig& c) { return check_int(v, 0, c.lfu_decay_time); },
     [](const MemoryConfig& c) { return std::to_string(c.lfu_decay_time); }},
};

const Param* find_param(const std::string& name) {
  for (const Param& p : kParams)
    if (iequals(name, p.name)) return &p;
  return nullptr;
}

// stringmatchlen's '*' and '?', case-insensitive, enough for CONFIG GET patterns.
bool glob_match(const char* pat, const char* s) {
  if (*pat == '\0') return *s == '\0';
  if (*pat == '*') return glob_match(pat + 1, s) || (*s && glob_match(pat, s + 1));
  if (*s == '\0') return false;
  const auto lower = [](char c) { return (c >= 'A' && c <= 'Z') ? char(c - 'A' + 'a') : c; };
  return (*pat == '?' || lower(*pat) == lower(*s)) && glob_match(pat + 1, s + 1);
}

// A name without wildcards is answered under the name as given (as 7.0 does); a pattern
// under each matching parameter's own name. The sim knows only its memory parameters,
// and answers several in the order of its table (redis-server's order is its dict's).
Reply cmd_config_get(Impl& m, ClientState&, const Args& a) {
  std::vector<Reply> out;
  std::vector<const Param*> seen;
  for (size_t i = 2; i < a.size(); ++i) {
    const bool pattern = a[i].find_first_of("*?[") != std::string::npos;
    for (const Param& p : kParams) {
      const bool match = pattern ? glob_match(a[i].c_str(), p.name) : iequals(a[i], p.name);
      if (!match || std::find(seen.begin(), seen.end(), &p) != seen.end()) continue;
      seen.push_back(&p);
      out.push_back(Reply::bulk(pattern ? p.name : a[i]));
      out.push_back(Reply::bulk(p.get(m.memory)));
    }
  }
  return Reply::array(std::move(out));
}

// Every pair is checked before any applies: one bad value changes nothing.
Reply cmd_config_set(Impl& m, ClientState&, const Args& a) {
  if (a.size() % 2 != 0) return err_syntax();  // a name without its value
  MemoryConfig next = m.memory;
  std::vector<const Param*> seen;
  for (size_t i = 2; i + 1 < a.size(); i += 2) {
    const Param* p = find_param(a[i]);
    if (!p) return Reply::error("ERR Unknown option or number of arguments for CONFIG SET - '" + a[i] + "'");
    if (std::find(seen.begin(), seen.end(), p) != seen.end()) return config_error(p->name, "duplicate parameter");
    seen.push_back(p);
  }
  for (size_t i = 2; i + 1 < a.size(); i += 2) {
    const Param* p = find_param(a[i]);
    if (const std::string why = p->check(a[i + 1], next); !why.empty()) return config_error(p->name, why);
  }
  const bool policy_changed = next.policy != m.memory.policy;
  m.memory = next;
  if (policy_changed) m.evict_pool.clear();  // scores of one policy mean nothing to another
  // A lower limit takes effect before the next command, which evicts first.
  return Reply::ok();
}

Reply cmd_config(Impl&, ClientState&, const Args&) { return err_arity("config"); }

// bytesToHuman
std::string human(int64_t n) {
  char buf[64];
  const double d = static_cast<double>(n);
  if (n < 1024) std::snprintf(buf, sizeof buf, "%lldB", static_cast<long long>(n));
  else if (n < 1024 * 1024) std::snprintf(buf, sizeof buf, "%.2fK", d / 1024);
  else if (n < 1024LL * 1024 * 1024) std::snprintf(buf, sizeof buf, "%.2fM", d / (1024 * 1024));
  else std::snprintf(buf, sizeof buf, "%.2fG", d / (1024.0 * 1024 * 1024));
  return buf;
}

// The fields of INFO memory, stats and errorstats the model has; other sections are empty.
Reply cmd_info(Impl& m, ClientState&, const Args& a) {
  if (a.size() > 2) return err_syntax();
  const std::string section = a.size() == 2 ? to_lower(a[1]) : "default";
  const bool all = section == "default" || section == "all" || section == "everything";
  std::string out;
  if (all || section == "memory") {
    const int64_t used = m.used_memory();
    out += "# Memory\r\nused_memory:" + std::to_string(used) + "\r\nused_memory_human:" + human(used) +
           "\r\nmaxmemory:" + std::to_string(m.memory.maxmemory) + "\r\nmaxmemory_human:" + human(m.memory.maxmemory) +
           "\r\nmaxmemory_policy:" + policy_name(m.memory.policy) + "\r\n";
  }
  if (all || section == "stats") {
    if (!out.empty()) out += "\r\n";
    out += "# Stats\r\nexpired_keys:" + std::to_string(m.expired_keys) +
           "\r\nevicted_keys:" + std::to_string(m.evicted_keys) + "\r\n";
  }
  // Only the OOM error is counted (the one the memory model causes).
  if (all || section == "errorstats") {
    if (!out.empty()) out += "\r\n";
    out += "# Errorstats\r\n";
    if (m.oom_errors > 0) out += "errorstat_OOM:count=" + std::to_string(m.oom_errors) + "\r\n";
  }
  return Reply::bulk(out);
}

}  // namespace

void register_server_commands(std::vector<Command>& out) {
  out.insert(out.end(), {
                            {"config", -2, kNoScript | kContainer, cmd_config},
                            {"config|get", -3, kNoScript, cmd_config_get},
                            {"config|set", -4, kNoScript, cmd_config_set},
                            {"info", -1, 0, cmd_info},
                        });
}

}  // namespace lockstep::sim
