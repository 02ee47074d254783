// Ground truth for a live run. The simulator knows who holds the lock key on every node at
// every instant; live, lockstep learns it the way an outside observer can:
//  - a poller (an extra client no fault targets) reads the lock key's state on every node
//    every few milliseconds, in one atomic script;
//  - every command a client sends and every reply it gets pass through the fault proxy,
//    so a value written by exactly one client names its writer (a SET's value, or any
//    argument of a script on the lock key: libraries pass their owner token there), and
//    a delete reply of 1 names who deleted (a DEL, or a script that can delete, whose
//    body is known from its EVAL or SCRIPT LOAD even when it is later sent by digest).
// LockTruth turns the two into the key-set / key-del / key-expire records the checker
// reads. It is weaker than the simulator's truth, and says by how much: what it could not
// attribute is counted, and report.stats.checkable lists only what the run could decide.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "lockstep/live/live_world.h"
#include "lockstep/reply.h"
#include "lockstep/runner/recorder.h"
#include "lockstep/world_control.h"

namespace lockstep::runner {

// The lock key's state on a node in one atomic step: {type, value, pttl}. For a hash
// (Redisson-style locks) the value is its first field, which names the owner.
extern const char* const kLockPollScript;
// The same state, read without touching the key when its type and expiry time are those
// of the last poll (ARGV[1], ARGV[2]): a GET counts as an access, and a poller reading
// the lock every few milliseconds would keep it the most recently used key, so an LRU or
// LFU policy would never evict it as it evicts an untouched lock. It answers
// {type, 0, pttl, pexpiretime} then (0: the value seen last), else {type, value, pttl,
// pexpiretime}; a key without a TTL is always read.
extern const char* const kLockQuietPollScript;

// Turns polled states of the lock key, and the replies clients got, into the truth
// records the checker reads (key-set / key-del / key-expire). A change is attributed
// when the evidence allows: a value written by exactly one client names the writer; a
// delete reply of 1 that arrived after the key was last seen names the deleter. A change
// waits up to kAttributionWaitNs for such a reply and is then written at the time it was
// observed, so the history stays in time order.
class LockTruth {
 public:
  LockTruth(Recorder& rec, std::string key, int nodes);

  // The key whose state is polled and whose commands are attributed: the lock key until
  // watch() names the key a client's library really writes (a prefix of its own). The
  // records keep the scenario's lock key, the name the clients' operations use.
  const std::string& watched() const { return watched_; }
  void watch(std::string key) { watched_ = std::move(key); }

  void sent(int64_t process, const std::vector<std::string>& argv);
  // Whether the command works on the lock key: names it as its key, or among a script's
  // KEYS.
  bool names_lock(const std::vector<std::string>& argv) const;

  // The reply to a command that left for the server at `sent` came back at `now`.
  void replied(int64_t process, int node, const std::vector<std::string>& argv, const Reply& r, int64_t sent,
               int64_t now);

  // `sent` is when the poll left: the state it reports held at some moment after that,
  // so a change it reveals happened after the previous poll was sent, not answered (a
  // client's reply can be handled before the poll reply that preceded it on the server).
  void observe(int node, const Reply& r, int64_t sent, int64_t now);
  // kLockQuietPollScript's ARGV for the next poll of `node`.
  std::vector<std::string> quiet_poll_args(int node) const;

  // Node `node` now answers from another server (a failover): a key that vanishes there
  // from now on went with the old master, not by anyone's delete.
  void moved(int node, int64_t now) { nodes_[node].moved_at_ns = now; }

  // The nodes evict keys with a TTL to stay within maxmemory (a volatile-* or allkeys-*
  // policy): a key gone with no delete reply while its TTL had time left was evicted.
  void set_evicting(bool evicting) { evicting_ = evicting; }

  void settle_all(int64_t now);

  // Called the moment a poll shows the key set (a new value) or gone on node `node`:
  // the earliest the live world knows of it.
  std::function<void(int node, bool set)> on_change;
  // Where the key-set / key-del / key-expire / key-evict records go, each once attributed
  // (or given up on) and stamped with when it was observed: into the recorder given at
  // construction, unless the run sends them through its world's on_key_change.
  std::function<void(const KeyChange&)> on_key_change;

  int64_t polls() const { return polls_; }
  int64_t unattributed_sets() const { return unattributed_sets_; }
  int64_t unattributed_dels() const { return unattributed_dels_; }
  int64_t evictions() const { return evictions_; }

 private:
  struct Change {
    bool removal;
    int64_t at_ns;
    std::string value;
    int64_t window_start_ns;  // the change happened after this observation
    int64_t expires_at_ns;    // removal: when the key's TTL said it would expire; -1 none
    int64_t deadline_ns;
  };
  struct NodeState {
    bool present = false;
    std::string value;
    int64_t last_present_ns = 0;  // when the last poll that saw the key was sent
    int64_t last_absent_ns = 0;   // when the last poll that saw no key was sent
    int64_t expires_at_ns = -1;
    int64_t run_first_reply_ns = 0;  // when the first poll to see the current value answered
    int64_t holder = -1;  // writer of the last emitted key-set
    int64_t moved_at_ns = -1;  // when the node last moved to another server
    std::string type;            // the quiet poll's last type ("" when absent)
    int64_t expire_time_ms = -1;  // and the key's absolute expiry then
    std::deque<Change> pending;
  };
  struct Done {
    int64_t process;
    int64_t sent_ns;  // the command left for the server
    int64_t at_ns;    // its reply came back
    bool used = false;
    std::optional<std::string> token;  // the value a compare-and-delete script removes
    bool only_if_absent = false;        // SET NX or SETNX: it succeeded on a missing key
  };

  // A script's first ARGV is the owner token by the convention of lockstep's unlock
  // scripts; a plain DEL names no value.
  static std::optional<std::string> script_token(const std::string& cmd, const std::vector<std::string>& argv);

  bool deletes_lock(const std::string& cmd, const std::vector<std::string>& argv) const;
  // Whether a script call (EVAL/EVALSHA argv) names `key` among its KEYS.
  static bool script_keys(const std::vector<std::string>& argv, const std::string& key);

  // The first unused command answered after `t` that had left by `seen` (a command sent
  // after a poll saw the change cannot have caused it).
  static Done* first_after(std::vector<Done>& v, int64_t t, int64_t seen);

  // The delete that removed `value`: one that names it, else a plain DEL after the key
  // was last seen. Deletes naming another value removed a holder the poller never saw
  // (several holders can come and go between two polls) and explain nothing here.
  static Done* deleter_of(std::vector<Done>& v, const std::string& value, int64_t t, int64_t seen);

  // A set-if-absent that ran after a poll saw the current value and before this poll was
  // sent, which sees the same value: the key went and came back unseen (the lease ran out
  // and the next holder wrote the same value within one poll interval). Only replies
  // decide "ran before": a poll and a client's command race on the server.
  Done* unseen_reset(int node, int64_t poll_sent);

  void settle(int node, int64_t now, bool final);

  bool emit_set(int node, const Change& c, bool may_wait);

  bool emit_removal(int node, const Change& c, bool may_wait);

  void insert(KeyChange::Kind kind, int64_t process, const std::string& value, int node, int64_t owner,
              std::string_view cause, int64_t at);

  std::string key_;      // in the records
  std::string watched_;  // on the servers
  std::vector<NodeState> nodes_;
  std::vector<std::vector<Done>> setters_, deleters_;
  std::map<std::string, std::set<int64_t>> tokens_;
  std::map<std::string, std::string> scripts_;  // SHA-1 digest -> body, as clients sent them
  int64_t polls_ = 0;
  int64_t unattributed_sets_ = 0;
  int64_t unattributed_dels_ = 0;
  int64_t evictions_ = 0;
  bool evicting_ = false;
};

// The poller: a client of the live world that no fault targets, reading the lock key's
// state on every node every few milliseconds for LockTruth.
class LockPoller {
 public:
  LockPoller(live::LiveWorld& world, LockTruth& truth, Recorder& rec) : world_(world), truth_(truth), rec_(rec) {}

  // Adds the poller's client, which reaches every node's current master itself (in a
  // cluster too: the others answer MOVED, which tells nothing). Returns its client id.
  int add();
  // Polls every node every `interval_ms` for a run of `duration_ms`, without touching the
  // key when `quiet` (nodes that evict: see kLockQuietPollScript).
  void start(int64_t duration_ms, int64_t interval_ms, bool quiet);

 private:
  Task<void> poll(int node, int64_t rounds, int64_t interval_ms, bool quiet);

  live::LiveWorld& world_;
  LockTruth& truth_;
  Recorder& rec_;
  int client_ = -1;
};

}  // namespace lockstep::runner
