// RedisNode is the keyspace and command engine of one simulated Redis server: it takes a
// command as the server receives it and returns the reply redis-server 7.0 would send,
// byte for byte. It knows nothing of networks or schedulers: the caller passes the
// node's own wall-clock time with every command, which is how a node with a skewed or
// jumping clock expires keys early or late, exactly as a real server would.
//
// Time is frozen for the duration of one command, scripts included (a key cannot expire
// in the middle of a Lua script), and every command is atomic.
//
// Besides the Redis-visible state, the node keeps ground truth for the checker: which
// simulated process last wrote each key ("writer"), reported to an observer whenever a
// key is set, deleted or expires.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "lockstep/reply.h"
#include "lockstep/random.h"

namespace lockstep::sim {

// What the node remembers about one client connection.
struct ClientState {
  int64_t process = -1;  // the simulated process this connection belongs to (ground truth)
  bool in_multi = false;
  bool multi_dirty = false;  // a queued command was rejected: EXEC aborts with EXECABORT
  std::vector<std::vector<std::string>> queued;
  std::map<std::string, uint64_t> watched;  // key -> version seen at WATCH time
  std::set<std::string> channels;           // SUBSCRIBE'd channels
  bool is_master_link = false;  // the replication stream from this node's master
  // WATCHed keys that were already logically expired when watched: their deletion is no
  // logical change, so it must not abort the transaction (Redis 7.0 semantics).
  std::set<std::string> watched_expired;
};

struct KeyChange {
  // Evict: removed to stay within maxmemory (by_process -1, like Expire).
  enum class Kind { Set, Del, Expire, Evict };
  Kind kind = Kind::Set;
  std::string key;
  std::string value;          // Set: the new string value; Del/Expire/Evict: the old one
                              // (empty when the key holds a hash, list or zset)
  int64_t writer = -1;        // Set: the new writer; otherwise whose value was removed
  int64_t by_process = -1;    // the process whose command caused it (-1 for expiry)
};

// A copy of a node's keyspace (what an RDB file would hold): values, expiry times and
// writers. Opaque to callers; cheap to copy (shared, immutable).
struct Snapshot {
  struct Data;
  std::shared_ptr<const Data> data;
};

// Redis Cluster as one node believes it to be: who serves which slots, who replicates
// whom, who is flagged FAIL, and the epochs. Each node holds its own copy, so a node that
// was paused through a failover keeps the old picture until it hears of the new one
// (World hands it over when the pause ends), as a real node learns by gossip.
struct ClusterLayout {
  struct Member {
    std::string id;        // 40 hex characters, CLUSTER MYID
    std::string host;      // what MOVED and CLUSTER SLOTS give clients
    int port = 6379;
    int shard = 0;         // the slot range it serves or replicates
    bool master = true;    // current role
    bool failed = false;   // flagged FAIL by a majority of masters
    uint64_t config_epoch = 0;
  };
  std::vector<Member> members;
  // Slot ranges by shard: shard i serves [slot_first[i], slot_last[i]].
  std::vector<int> slot_first;
  std::vector<int> slot_last;
  uint64_t current_epoch = 0;

  int shard_of_slot(int slot) const;     // -1: unassigned
  int master_of_shard(int shard) const;  // -1: none (every member failed or a replica)
  // cluster_state: ok unless a slot's master is flagged FAIL (cluster-require-full-coverage).
  bool state_ok() const;
};

class RedisNode {
 public:
  RedisNode();
  ~RedisNode();
  RedisNode(const RedisNode&) = delete;
  RedisNode& operator=(const RedisNode&) = delete;

  // Executes one command received from `client` when the node's wall clock reads now_ms.
  Reply execute(ClientState& client, const std::vector<std::string>& argv, int64_t now_ms);

  // One pass of Redis's active expiry cycle (sample keys with a TTL, delete the expired
  // ones, repeat while more than a quarter of the sample was expired).
  void active_expire_cycle(int64_t now_ms, Rng& rng);

  // Forgets every key: a crash and restart without persistence. Each vanished key is
  // reported to the observer as Del with by_process -1. Loaded scripts are forgotten too.
  void flush_all();

  // A replica never deletes expired keys itself: reads from ordinary clients answer as if
  // the key were gone, commands from the master link still see it, and it stays until
  // the master's DEL arrives. Ordinary clients get READONLY for writes.
  void set_replica(bool replica);
  bool is_replica() const;

  // Called with each effective write, in order, as Redis propagates to replicas and the
  // AOF: expiry deletions as DEL, relative expiry times as absolute PEXPIREAT / SET PXAT,
  // scripts and transactions as the commands they ran, wrapped in MULTI/EXEC when more
  // than one. Applying them with execute() on a ClientState with is_master_link = true
  // makes a replica identical.
  void set_propagator(std::function<void(const std::vector<std::string>&)> propagator);
  // With false, the propagator is still called once for every effect, in order (so a
  // stream offset counts the same), but with an empty argv: for a master that has no
  // replica to apply the contents, building them was most of the cost of a write.
  void set_stream_contents(bool contents);
  // Without contents, takes a command's placeholders as one count instead of calling the
  // propagator once for each (MULTI and EXEC included when the command had several).
  void set_placeholder_propagator(std::function<void(size_t)> propagator);

  // Cluster mode (cluster-enabled yes): `self` indexes layout.members. Commands with keys
  // in another node's slots answer MOVED, keys of several slots CROSSSLOT, and CLUSTER
  // KEYSLOT/SLOTS/SHARDS/INFO/MYID answer from the layout. Without it, CLUSTER says
  // cluster support is disabled.
  void set_cluster(const ClusterLayout& layout, int self);
  bool cluster_enabled() const;

  // Persistence: snapshot() is what an RDB save would write; restore() replaces the
  // keyspace with it (a restart that loads the file). Neither fires the observer.
  Snapshot snapshot() const;
  void restore(const Snapshot& snapshot);

  // Called on every key set / delete / expiry, for ground truth. Any change to a value
  // (SET, INCR, HSET, LPUSH...) is a Set and makes the command's process the writer;
  // a command that empties a hash/list/zset deletes the key (Del). EXPIRE changes no value.
  // `wanted`, if given, is asked first: while it answers false the change is not even
  // described (its key and value copied) for the observer.
  void set_observer(std::function<void(const KeyChange&)> observer, std::function<bool()> wanted = nullptr);

  // Called for every PUBLISH receiver, in the order the connections subscribed: the
  // caller delivers the message over its network. (SUBSCRIBE/UNSUBSCRIBE of several
  // channels reply with one Array holding each per-channel confirmation array, since a
  // Reply is a single value; a real server sends them as consecutive replies.)
  void set_publisher(std::function<void(ClientState& target, const std::string& channel,
                                        const std::string& message)> publisher);
  // A connection went away: forget its subscriptions and watches. The node keeps a
  // pointer to each subscribed ClientState until it unsubscribes or disconnects, so a
  // subscribed ClientState must stay at its address until then.
  void disconnect(ClientState& client);

  // Introspection for ground truth and tests; does not expire or touch anything.
  std::optional<std::string> peek_string(const std::string& key) const;
  int64_t writer_of(const std::string& key) const;  // -1 if absent
  size_t key_count() const;
  std::optional<int64_t> expire_of(const std::string& key) const;  // absolute Unix ms

  // The stream eviction draws from (sampling, the random policies, the LFU counter's
  // increments). Only a node with maxmemory set draws at all.
  void set_random(Rng rng);
  // The memory model's estimate (redis_memory.cc) and INFO's evicted_keys.
  int64_t used_memory() const;
  int64_t evicted_keys() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace lockstep::sim
