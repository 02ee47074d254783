// Private internals of RedisNode shared by the command files: the keyspace, the command
// table and the helpers every command uses to look keys up, expire them, and report
// changes (observer, WATCH versions, replication stream).
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "lockstep/random.h"
#include "lockstep/sim/redis_node.h"

namespace lockstep::sim {

// The bounds of Redis integers, which overflow checks compare against.
inline constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
inline constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

class LuaEngine;

enum class VType { String, Hash, List, ZSet, Set };

// Sorted set: the score of each member, and the (score, member) order Redis's skiplist
// keeps (ties broken by memcmp of the member, as std::string's compare does).
struct ZSet {
  std::map<std::string, double> dict;
  std::set<std::pair<double, std::string>> order;
};

// The elements of a list value, allocated with the first element: std::deque allocates
// even when empty and when moved from, and every value (almost all of them strings in a
// lock workload) carries a list member.
class ListItems {
 public:
  ListItems() = default;
  ListItems(const ListItems& o) : d_(o.d_ ? std::make_unique<std::deque<std::string>>(*o.d_) : nullptr) {}
  ListItems& operator=(const ListItems& o) {
    if (this != &o) d_ = o.d_ ? std::make_unique<std::deque<std::string>>(*o.d_) : nullptr;
    return *this;
  }
  ListItems(ListItems&&) noexcept = default;
  ListItems& operator=(ListItems&&) noexcept = default;

  size_t size() const { return d_ ? d_->size() : 0; }
  bool empty() const { return size() == 0; }
  const std::string& operator[](size_t i) const { return (*d_)[i]; }
  std::deque<std::string>& items() {
    if (!d_) d_ = std::make_unique<std::deque<std::string>>();
    return *d_;
  }

 private:
  std::unique_ptr<std::deque<std::string>> d_;
};

// A set's members, and how Redis encodes it (t_set.c): an intset while every member reads
// as a 64-bit integer and there are at most 512 (set-max-intset-entries), else a hash table
// for good. An intset answers SMEMBERS in numeric order; a hash table in the order of its
// hashes, which a server seeds at random when it starts, so any order is one it could give
// and the sim gives byte order.
struct SetMembers {
  std::set<std::string> members;
  bool intset = true;
  int intset_width = 2;   // bytes per member: grows to 4 or 8 with a wider member, never shrinks
  int64_t table_size = 0; // hash table: its buckets (dict.c's power of two, at least 4)
};

// How Redis holds a string value, where its bytes alone do not say: MEMORY USAGE and
// used_memory tell the encodings apart (object.c).
enum class StrEnc : uint8_t {
  Encoded,  // tryObjectEncoding's choice, which every command that stores its argument
            // makes: an integer, an embstr up to 44 bytes, else a raw sds of its length
  Created,  // createStringObject's: an embstr up to 44 bytes, else raw; never an integer
            // (INCRBYFLOAT's result)
  Raw,      // a raw sds that APPEND grew: sds_header and sds_bytes give its allocation
  Embstr,   // an embstr made for a longer string (a script's reused argument, see
            // ScriptArgs): sds_bytes is its whole allocation
};

struct Value {
  VType type = VType::String;
  StrEnc enc = StrEnc::Encoded;
  // One of the server's shared integers (0..9999, while maxmemory or its policy allows
  // sharing): the key points at it and its value costs used_memory nothing.
  bool shared_int = false;
  uint8_t sds_header = 0;  // StrEnc::Raw
  int64_t sds_bytes = 0;   // what the allocator handed out: StrEnc::Raw's sds, StrEnc::Embstr's object
  std::string str;
  // Small hashes are listpacks in Redis: HGETALL answers in insertion order, and we
  // must answer in the same order to be byte-identical.
  std::vector<std::pair<std::string, std::string>> hash;
  ListItems list;
  ZSet zset;
  SetMembers set;
};

struct Entry {
  Value v;
  int64_t expire = -1;  // absolute Unix ms, -1 = persistent
  int64_t writer = -1;
  // Redis's 24-bit robj->lru: the LRU clock (seconds) of the last access, or under an
  // LFU policy the minute of the last decrement (16 bits) and the log counter (8 bits).
  uint32_t lru = 0;
};

struct Snapshot::Data {
  std::map<std::string, Entry> db;
};

// Per-key modification sequence for WATCH: `any` moves on every change, `live` only on
// changes that leave the key present (what decides WATCH of an already expired key).
struct KeyVersion {
  uint64_t any = 0;
  uint64_t live = 0;
};

// The keyspace, looked up by hash on every command. Wherever its order could reach a
// reply, a history or a random draw (flush, active expiry, snapshots), the keys are
// sorted first, as the std::map it replaced kept them: nothing depends on hash order.
//
// Hashed with a hasher of our own: libstdc++ treats std::hash<std::string> as slow and
// then looks small tables (up to 20 keys, any lock workload's) up by comparing the key
// with every entry in turn, which cost more than the map it replaced. Not declared
// noexcept on purpose: that is what makes libstdc++ keep each node's hash, so erasing
// or moving a node does not hash its key again.
struct KeyHash {
  size_t operator()(const std::string& s) const { return stable_hash(s); }
};
using Keyspace = std::unordered_map<std::string, Entry, KeyHash>;

struct NodeCore;
using Args = std::vector<std::string>;

// One argument object of a redis.call, as script_lua.c's cache of them knows it.
struct ArgObject {
  bool embstr = false;
  int64_t alloc = 0;  // the bytes its sds can hold
};

// The argument objects of the redis.call running now and what the command does with them,
// recorded where 7.0 does it to c->argv: which it encoded (tryObjectEncoding), which it
// stored as a key's value, and, when it rewrote the vector for propagation, where each
// new position's object came from (-1: a new or shared object). LuaEngine keeps the rest
// for later calls (lua_args.cc).
struct ScriptArgs {
  static constexpr size_t kCached = 32;  // LUA_CMD_OBJCACHE_SIZE
  std::array<ArgObject, kCached> objects;
  uint32_t encoded = 0;  // bit i: position i
  uint32_t stored = 0;
  bool rewritten = false;
  std::vector<int> layout;
  // Replicated (it wrote, or is PUBLISH, on a server that feeds an AOF or replicas): the
  // replication stream holds its arguments until the script ends, so none is kept.
  bool propagated = false;
};
using Handler = Reply (*)(NodeCore&, ClientState&, const Args&);

enum CmdFlags : unsigned {
  kWrite = 1,
  kNoScript = 2,   // refused inside Lua (EVAL, MULTI, SUBSCRIBE, ...)
  kPubSubOk = 4,   // allowed while subscribed (RESP2)
  kNoQueue = 8,    // executed immediately even inside MULTI
  kContainer = 16, // has subcommands, registered as "name|sub" (SCRIPT LOAD ...)
  kDenyOom = 32,   // may grow memory: refused with OOM when over maxmemory (CMD_DENYOOM)
  kRunsScript = 64,     // EVAL, EVALSHA: a script's shebang may change the flags (flags_of)
  kMayReplicate = 128,  // no write, but replicated (PUBLISH): refused in a read-only script
};

struct Command {
  const char* name;
  int arity;  // Redis convention: n exact, -n at least n (argv[0] included)
  unsigned flags;
  Handler handler;
};

bool arity_ok(const Command& cmd, size_t argc);
// Leaves MULTI (dropping queued commands) and forgets every WATCH.
void discard_transaction(ClientState& c);

// Each command file exposes its part of the table.
void register_string_commands(std::vector<Command>& out);
void register_key_commands(std::vector<Command>& out);
void register_hash_commands(std::vector<Command>& out);
void register_list_commands(std::vector<Command>& out);
void register_zset_commands(std::vector<Command>& out);
void register_set_commands(std::vector<Command>& out);
void register_script_commands(std::vector<Command>& out);
void register_multi_commands(std::vector<Command>& out);
void register_pubsub_commands(std::vector<Command>& out);
void register_server_commands(std::vector<Command>& out);  // CONFIG, INFO (redis_memory.cc)
void register_cluster_commands(std::vector<Command>& out);  // CLUSTER (redis_cluster.cc)

// maxmemory-policy values, in the order CONFIG SET lists them in its error.
enum class EvictionPolicy {
  VolatileLru, VolatileLfu, VolatileRandom, VolatileTtl, AllkeysLru, AllkeysLfu, AllkeysRandom, NoEviction,
};

// The memory settings CONFIG SET changes, with redis-server 7.0's defaults.
struct MemoryConfig {
  uint64_t maxmemory = 0;  // bytes; 0 = no limit
  // Kept and answered, not acted on: a simulated node has no client buffers to limit,
  // and evicts within one command whatever the tenacity.
  int64_t maxmemory_clients = 0;  // bytes, or -N for N% of maxmemory, as the server keeps it
  int64_t eviction_tenacity = 10;
  EvictionPolicy policy = EvictionPolicy::NoEviction;
  int64_t samples = 5;
  int64_t lfu_log_factor = 10;
  int64_t lfu_decay_time = 1;  // minutes per step down of the counter (0: never)
};

// One candidate of the eviction pool (evict.c's evictionPoolEntry).
struct PoolEntry {
  uint64_t idle = 0;  // higher = better to evict
  std::string key;
};

extern const char* const kOomError;

// What redis-server allocates, and what MEMORY USAGE reports (redis_sizes.cc).
int64_t alloc_size(int64_t n);    // the allocator's size class for n bytes
int sds_header(int64_t len);      // the header of an sds made for len bytes
int64_t sds_bytes(int64_t len);   // an sds made for exactly len bytes
int64_t dict_buckets(size_t n);   // a dict's table for n entries
int64_t string_object_bytes(int64_t len);  // createStringObject's: embstr or robj and sds
int64_t value_usage(const Value& v, int64_t samples);
// MEMORY USAGE of a key: its dictEntry, its name and its value.
int64_t key_usage(const std::string& key, const Value& v, int64_t samples, bool cluster);
// What a key adds to used_memory: as MEMORY USAGE counts it, with the allocator's class
// for the dictEntry, nothing for a shared integer, and the expires entry of a TTL.
int64_t key_used_memory(const std::string& key, const Entry& e, bool cluster);
// APPEND's growth of a string value by `add` bytes (before they are appended).
void grow_string(Value& v, size_t add);

// Exact Redis number parsing and formatting (util.c).
bool string_to_ll(const std::string& s, int64_t& out);
bool string_to_double(const std::string& s, double& out);  // strtod rules, no NaN
std::string format_double(double d);                        // addReplyDouble, RESP2
std::string to_lower(std::string s);
bool iequals(const std::string& a, const char* b);

// Shared replies, texts copied from redis-server 7.0.15.
Reply err_syntax();
Reply err_not_integer();
Reply err_wrongtype();
Reply err_not_float();
Reply err_arity(const std::string& name);

// The node's state. (RedisNode::Impl is private, so the command files share this base.)
struct NodeCore {
  NodeCore();
  ~NodeCore();

  Keyspace db;
  // WATCH versions, looked up only. Kept from the first WATCH on: before any, no client
  // holds a version to compare, and EXEC only asks whether a key's version moved since
  // its WATCH, which tracking from then on answers the same.
  std::unordered_map<std::string, KeyVersion, KeyHash> versions;
  uint64_t version_seq = 0;
  bool versions_tracked = false;
  // By lowercase name. Looked up, never iterated.
  struct NameHash {
    size_t operator()(std::string_view s) const { return stable_hash(s); }
  };
  using CommandTable = std::unordered_map<std::string_view, const Command*, NameHash>;
  // The table is the same for every node and never changes: built once per process
  // rather than with each node (a fuzz run creates its nodes afresh).
  const CommandTable& commands;

  std::function<void(const KeyChange&)> observer;
  std::function<bool()> observer_wanted;  // empty: always
  std::function<void(ClientState&, const std::string&, const std::string&)> publisher;
  std::function<void(const std::vector<std::string>&)> propagator;
  std::function<void(size_t)> placeholder_propagator;
  KeyChange change;  // reused for every observer call: its strings keep their capacity
  std::map<std::string, std::vector<ClientState*>> subscribers;  // in subscription order

  bool replica = false;
  std::unique_ptr<LuaEngine> lua;

  // Cluster mode (redis_cluster.cc).
  std::optional<ClusterLayout> cluster;
  int cluster_self = -1;
  // getNodeByQuery: the error a command (EXEC: with everything it queued) gets instead of
  // running here — MOVED, CROSSSLOT or CLUSTERDOWN — or nothing when it runs here. Inline
  // for the answer without a cluster, which every command of a plain node asks for.
  std::optional<Reply> cluster_redirect(const ClientState& c, const Command& cmd, const Args& argv) {
    if (!cluster || c.is_master_link) return std::nullopt;
    return cluster_route(c, cmd, argv);
  }
  // scriptVerifyClusterState: "" when a script may run argv here, else why not. `slot`
  // is the slot the script's keys so far hash to (-1: none yet), which a script that did
  // not declare allow-cross-slot-keys may not leave.
  std::string cluster_script_check(const Args& argv, bool cross_slot, int& slot) {
    if (!cluster || !client || client->is_master_link) return {};
    return cluster_script_route(argv, cross_slot, slot);
  }
  std::optional<Reply> cluster_route(const ClientState& c, const Command& cmd, const Args& argv);
  std::string cluster_script_route(const Args& argv, bool cross_slot, int& slot);

  // Memory and eviction (redis_memory.cc).
  MemoryConfig memory;
  Rng rng{0, "evict"};                // sampling, random policies, the LFU counter's coin
  std::vector<PoolEntry> evict_pool;  // best candidates so far, ascending idle; kept between evictions
  int64_t evicted_keys = 0;
  int64_t expired_keys = 0;
  int64_t oom_errors = 0;  // INFO errorstats' errorstat_OOM: replies that were the OOM error
  // The latency histogram redis-server 7.0 makes for a command the first time it runs
  // (latency-tracking is on by default), part of used_memory: which commands of the table
  // have run, by their place in it.
  const Command* command_base;
  std::vector<uint8_t> histogram_made;
  int64_t histograms = 0;
  bool script_oom = false;  // over maxmemory when the running script started
  // The estimated used_memory of the keyspace and the server around it.
  int64_t used_memory() const;
  // Evicts keys by the policy until used_memory is within maxmemory; false when it
  // cannot get there (noeviction, or no candidate left): the command may be refused.
  bool perform_evictions();
  // Marks a string value as one a command stored through tryObjectEncoding: an integer
  // of 0..9999 becomes a shared object unless maxmemory's policy needs every value's
  // own LRU/LFU field. `arg` is the position of the argument it came from, if any: in a
  // script, a short string keeps the allocation of the argument object it was.
  void encode_string(Value& v, int arg = -1);
  // What a command does to its argument objects, for a script's cache of them; nothing
  // outside a script.
  ScriptArgs* script_args = nullptr;
  void arg_encoded(size_t pos) {
    if (script_args && pos < ScriptArgs::kCached) script_args->encoded |= 1u << pos;
  }
  void args_rewritten(std::initializer_list<int> layout) {
    if (!script_args) return;
    script_args->rewritten = true;
    script_args->layout.assign(layout);
  }
  void args_rewritten(const std::vector<int>& layout) {
    if (!script_args) return;
    script_args->rewritten = true;
    script_args->layout = layout;
  }
  // The access bookkeeping of a key looked up, or created (robj->lru).
  void touch_access(Entry& e, bool created);

  // State of the command being executed; time is frozen for all of it.
  int64_t now = 0;
  ClientState* client = nullptr;  // the connection whose command runs (script: caller)
  bool in_script = false;
  int64_t dirty = 0;  // count of effective changes, as server.dirty
  std::optional<Args> rewritten;  // what to propagate instead of argv
  std::vector<Args> pending_propagation;
  std::vector<Args> flushing;  // pending_propagation's spare, so both keep their capacity
  bool stream_contents = true;  // see RedisNode::set_stream_contents
  int call_depth = 0;

  // Top-level entry: arity, MULTI queueing, pubsub context, then call().
  Reply process(ClientState& c, const Args& argv);
  // Runs one command (from a client, EXEC or a script) and propagates its effect.
  Reply call(ClientState& c, const Command& cmd, const Args& argv);
  const Command* find(const std::string& name) const;
  // getCommandFlags: a command's flags, but for a script with a shebang its own (which
  // only matter under maxmemory, on a replica and at EXEC).
  unsigned flags_of(const Command& cmd, const Args& argv) const;
  // The last names find() resolved, spelled as the client sent them: a lock workload
  // sends the same few names over and over, and comparing a short name is cheaper than
  // lowercasing and hashing it. Direct-mapped on length and first letter.
  struct FoundName {
    char name[16];
    size_t size = 0;
    const Command* cmd = nullptr;
  };
  mutable FoundName found_names[16];
  const Command* find_sub(const Command& container, const std::string& sub) const;
  void flush_propagation();

  // Keyspace. Lookups expire lazily; they return nullptr when the key is absent.
  bool key_is_expired(const std::string& key, const Entry& e) const;
  // Deletes the key if logically expired (never on a replica); true if it is expired.
  bool expire_if_needed(const std::string& key);
  bool expire_found(Keyspace::iterator it);
  Entry* lookup(const std::string& key) {
    auto it = lookup_at(key);
    return it == db.end() ? nullptr : &it->second;
  }
  // lookup's answer as a place in the keyspace (db.end() for none), for a command that
  // then writes the key without looking it up again.
  Keyspace::iterator lookup_at(const std::string& key);
  // The value of a key of the given type; sets `wrong` when it holds another type.
  Entry* lookup_typed(const std::string& key, VType type, bool& wrong);
  // The same for a reader: WRONGTYPE in `err`, or the value, or nullptr for no key.
  Entry* lookup_typed(const std::string& key, VType type, Reply& err) {
    bool wrong = false;
    Entry* e = lookup_typed(key, type, wrong);
    if (wrong) err = err_wrongtype();
    return e;
  }
  // Stores a new value (creation or overwrite): clears expiry unless keep_ttl.
  Entry& set_value(const std::string& key, Value v, bool keep_ttl);
  // `arg`: the position of the command's argument the value is (see encode_string).
  Entry& set_string(const std::string& key, const std::string& value, bool keep_ttl, int arg = -1) {
    return set_string_at(db.find(key), key, value, keep_ttl, arg);
  }
  // set_string, given where `key` is (db.end() when it is not there).
  Entry& set_string_at(Keyspace::iterator at, const std::string& key, const std::string& value, bool keep_ttl,
                       int arg = -1);
  // Marks an in-place modification of an existing value (writer, observer, WATCH).
  void modified(const std::string& key, Entry& e);
  bool remove(const std::string& key);  // DEL semantics; true if it existed
  // Erased keys keep their node, and a small string value its buffer, for the next new
  // key: a lock workload deletes and re-creates the same few keys all the time.
  void erase_entry(Keyspace::iterator it);
  Keyspace::iterator emplace_key(const std::string& key, bool& inserted) {
    auto it = db.find(key);
    inserted = it == db.end();
    return inserted ? insert_key(key) : it;
  }
  Keyspace::iterator insert_key(const std::string& key);  // one known to be absent
  Entry& stored(Keyspace::iterator it, bool inserted, bool keep_ttl);
  static constexpr size_t kSpareMax = 64;
  static constexpr size_t kSpareValueMax = 256;
  std::vector<Keyspace::node_type> spare;
  void remove_expired(const std::string& key);
  void remove_expired(Keyspace::iterator it);
  void flush_db(int64_t by_process);
  void touch(const std::string& key);  // WATCH invalidation
  void notify(KeyChange::Kind kind, const std::string& key, const Entry& e, int64_t by);
  // Queues one effect for the replication stream: nothing when no one listens, an empty
  // placeholder when only the count matters (set_stream_contents(false)).
  void propagate(Args&& argv);
  void propagate(const Args& argv);
  size_t pending_placeholders = 0;  // the current command's, without contents
  // Whether a handler's rewritten command would be read: when not, it need not build one.
  bool propagating() const { return propagator && stream_contents; }
  // The keys in the order the sorted keyspace had: for every walk whose order shows.
  std::vector<const std::string*> sorted_keys() const;
  int64_t process_id() const { return client ? client->process : -1; }
};

}  // namespace lockstep::sim
