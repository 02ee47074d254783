// Memory accounting and eviction (evict.c, object.c of Redis 7.0), and the server
// commands that show and change them: CONFIG GET/SET and INFO.
//
// The memory model. A real used_memory is what jemalloc handed out through zmalloc; the
// simulation has no allocator, so it works the same figure out from what the server
// allocates for each thing it holds:
//
//   used_memory = kBaseBytes                       a fresh server, and the client asking
//               + 24,688 per command run so far    its latency histogram (7.0 makes one
//                                                  the first time a command runs)
//               + the script cache                 per script: dictEntry, SHA-1, body
//               + 8 * buckets(keys)                the main dict's table (a power of two)
//               + 8 * buckets(keys with a TTL)     the expires dict's table
//               + per key (key_used_memory)        its dictEntry (32), its name, its
//                                                  value, and 32 more for a TTL
//
// A key's figure is MEMORY USAGE's (redis_sizes.cc), exact for strings of every length,
// with the allocator's 32 bytes for the 24-byte dictEntry and nothing for a value that is
// one of the server's shared integers. A fresh redis-server 7.0.15 reports 914,704 to
// 914,896 bytes to the first command of its first client (its start-up figure moves with
// its command line and environment); kBaseBytes is the middle of that. What is not
// modelled: each further client connection (on a server, about 38 kB while busy — 16 kB
// each of query and reply buffer — and about 20 kB once the server trims an idle one),
// the replication backlog (1 MB once a replica connects), the moment a dict's table
// is rehashed (both tables are held meanwhile) and aggregates' hash tables beyond what
// MEMORY USAGE counts. So a real server with N more clients runs out of memory about
// N × 20–38 kB of data sooner than a simulated node (docs/memory-and-eviction.md), and
// scenarios write several times maxmemory, which fills both.
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

constexpr int64_t kBaseBytes = 914'800;
constexpr int64_t kHistogramBytes = 24'688;  // hdr_init(1, 1e9, 2)
constexpr size_t kPoolSize = 16;           // EVPOOL_SIZE
constexpr uint32_t kLruClockMax = (1u << 24) - 1;
constexpr uint32_t kLfuInitVal = 5;
constexpr int kEvictRoundsMax = 1000;      // pool refills for one victim before giving up

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
  int64_t total = kBaseBytes + kHistogramBytes * histograms + lua->cache_bytes();
  size_t volatile_keys = 0;
  const bool in_cluster = cluster.has_value();
  for (const auto& [key, e] : db) {
    total += key_used_memory(key, e, in_cluster);
    volatile_keys += e.expire >= 0 ? 1 : 0;
  }
  return total + 8 * dict_buckets(db.size()) + 8 * dict_buckets(volatile_keys);
}

void NodeCore::encode_string(Value& v, int arg) {
  v.enc = StrEnc::Encoded;
  int64_t n = 0;
  const bool number = v.str.size() <= 20 && string_to_ll(v.str, n);
  const bool lru = memory.policy == EvictionPolicy::AllkeysLru || memory.policy == EvictionPolicy::VolatileLru;
  const bool sharing = memory.maxmemory == 0 || !(lru || is_lfu(memory.policy));
  v.shared_int = sharing && number && n >= 0 && n < 10000;
  if (arg < 0 || !script_args || static_cast<size_t>(arg) >= ScriptArgs::kCached) return;
  const auto pos = static_cast<size_t>(arg);
  script_args->encoded |= 1u << pos;
  script_args->stored |= 1u << pos;
  // tryObjectEncoding keeps an embstr as it is: one a script's earlier call made for a
  // longer argument keeps that allocation.
  const ArgObject& o = script_args->objects[pos];
  const auto len = static_cast<int64_t>(v.str.size());
  if (!number && o.embstr && len < o.alloc) {
    v.enc = StrEnc::Embstr;
    v.sds_bytes = alloc_size(16 + 3 + o.alloc + 1);
  }
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
  if (memory.maxmemory == 0 || replica) return true;
  if (static_cast<uint64_t>(used_memory()) <= memory.maxmemory) return true;
  if (memory.policy == EvictionPolicy::NoEviction) return false;
  ClientState* saved = client;
  client = nullptr;
  bool ok = true;
  std::string holder;
  while (static_cast<uint64_t>(used_memory()) > memory.maxmemory) {
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

// memtoull: digits, then an optional unit (b, k, kb, m, mb, g, gb), read as C reads the
// argument (up to a NUL). No sign; no digits read as 0; digits past 2^64 - 1 read as
// 2^64 - 1 (strtoull's ERANGE goes unchecked) and a unit's product wraps around, as the
// server's unsigned arithmetic does.
bool parse_memory(const std::string& arg, uint64_t& out) {
  const char* s = arg.c_str();
  if (*s == '-') return false;
  size_t digits = 0;
  while (s[digits] >= '0' && s[digits] <= '9') ++digits;
  const std::string unit = to_lower(std::string(s + digits));
  uint64_t mul = 0;
  if (unit.empty() || unit == "b") mul = 1;
  else if (unit == "k") mul = 1000;
  else if (unit == "kb") mul = 1024;
  else if (unit == "m") mul = 1000 * 1000;
  else if (unit == "mb") mul = 1024 * 1024;
  else if (unit == "g") mul = 1000ULL * 1000 * 1000;
  else if (unit == "gb") mul = 1024ULL * 1024 * 1024;
  else return false;
  if (digits >= 128) return false;
  uint64_t v = 0;
  for (size_t i = 0; i < digits; ++i) {
    const auto d = static_cast<uint64_t>(s[i] - '0');
    if (v > (std::numeric_limits<uint64_t>::max() - d) / 10) {
      v = std::numeric_limits<uint64_t>::max();
      break;
    }
    v = v * 10 + d;
  }
  out = v * mul;
  return true;
}

struct Param {
  const char* name;
  // Checks and converts a value; returns "" or why it is refused.
  std::string (*check)(const std::string& value, MemoryConfig& into);
  std::string (*get)(const MemoryConfig& cfg);
};

std::string check_int(const std::string& v, int64_t lo, int64_t hi, int64_t& out) {
  int64_t n = 0;
  if (!string_to_ll(v, n)) return "argument couldn't be parsed into an integer";
  if (n < lo || n > hi)
    return "argument must be between " + std::to_string(lo) + " and " + std::to_string(hi) + " inclusive";
  out = n;
  return "";
}

constexpr int64_t kIntMax = std::numeric_limits<int32_t>::max();

// maxmemory-clients is a size_t-like signed config that takes memory values and
// percentages (PERCENT_CONFIG keeps N% as -N): a memory value whose bits read as negative
// is taken for a percentage too, so 2^64 - 1 reads as 1%.
std::string check_clients(const std::string& v, int64_t& out) {
  uint64_t bytes = 0;
  int64_t n = 0;
  if (parse_memory(v, bytes)) n = static_cast<int64_t>(bytes);
  else if (v.size() > 1 && v.back() == '%' && string_to_ll(v.substr(0, v.size() - 1), n) && n >= 0) n = -n;
  else return "argument must be a memory or percent value";
  if (n < -100) return "percentage argument must be less or equal to 100";
  out = n;
  return "";
}

const Param kParams[] = {
    {"maxmemory",
     [](const std::string& v, MemoryConfig& c) -> std::string {
       return parse_memory(v, c.maxmemory) ? "" : "argument must be a memory value";
     },
     [](const MemoryConfig& c) { return std::to_string(c.maxmemory); }},
    {"maxmemory-clients",
     [](const std::string& v, MemoryConfig& c) { return check_clients(v, c.maxmemory_clients); },
     [](const MemoryConfig& c) {
       const int64_t v = c.maxmemory_clients;
       return v < 0 ? std::to_string(-v) + "%" : std::to_string(v);
     }},
    {"maxmemory-eviction-tenacity",
     [](const std::string& v, MemoryConfig& c) { return check_int(v, 0, 100, c.eviction_tenacity); },
     [](const MemoryConfig& c) { return std::to_string(c.eviction_tenacity); }},
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
     [](const std::string& v, MemoryConfig& c) { return check_int(v, 1, kIntMax, c.samples); },
     [](const MemoryConfig& c) { return std::to_string(c.samples); }},
    {"lfu-log-factor",
     [](const std::string& v, MemoryConfig& c) { return check_int(v, 0, kIntMax, c.lfu_log_factor); },
     [](const MemoryConfig& c) { return std::to_string(c.lfu_log_factor); }},
    {"lfu-decay-time",
     [](const std::string& v, MemoryConfig& c) { return check_int(v, 0, kIntMax, c.lfu_decay_time); },
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

// MEMORY USAGE key [SAMPLES count]: the options first, then the key as the keyspace holds
// it (dictFind: no expiry, no access counted).
Reply cmd_memory_usage(Impl& m, ClientState&, const Args& a) {
  int64_t samples = 5;  // OBJ_COMPUTE_SIZE_DEF_SAMPLES
  for (size_t j = 3; j < a.size(); ++j) {
    if (!iequals(a[j], "samples") || j + 1 == a.size()) return err_syntax();
    if (!string_to_ll(a[++j], samples)) return err_not_integer();
    if (samples < 0) return err_syntax();
    if (samples == 0) samples = std::numeric_limits<int64_t>::max();
  }
  const auto it = m.db.find(a[2]);
  if (it == m.db.end()) return Reply::nil();
  return Reply::integer_of(key_usage(it->first, it->second.v, samples, m.cluster.has_value()));
}

Reply cmd_memory(Impl&, ClientState&, const Args&) { return err_arity("memory"); }

// bytesToHuman
std::string human(uint64_t n) {
  char buf[64];
  static constexpr const char* kUnits[] = {"K", "M", "G", "T", "P"};
  if (n < 1024) {
    std::snprintf(buf, sizeof buf, "%lluB", static_cast<unsigned long long>(n));
    return buf;
  }
  uint64_t scale = 1024;
  for (const char* unit : kUnits) {
    if (n < scale * 1024) {
      std::snprintf(buf, sizeof buf, "%.2f%s", static_cast<double>(n) / static_cast<double>(scale), unit);
      return buf;
    }
    scale *= 1024;
  }
  std::snprintf(buf, sizeof buf, "%lluB", static_cast<unsigned long long>(n));
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
    out += "# Memory\r\nused_memory:" + std::to_string(used) +
           "\r\nused_memory_human:" + human(static_cast<uint64_t>(used)) +
           // %lld, as the server prints it: 2^63 and above read as negative.
           "\r\nmaxmemory:" + std::to_string(static_cast<int64_t>(m.memory.maxmemory)) +
           "\r\nmaxmemory_human:" + human(m.memory.maxmemory) +
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
                            {"memory", -2, kContainer, cmd_memory},
                            {"memory|usage", -3, 0, cmd_memory_usage},
                        });
}

}  // namespace lockstep::sim
