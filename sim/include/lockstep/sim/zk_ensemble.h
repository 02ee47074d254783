// A simulated ZooKeeper ensemble: servers zk-1..zk-N as processes of the World, so the
// world's faults (pause, crash and restart, partitions, link delay, clock drift) reach
// them as they reach Redis nodes, and every message between a client and a server or
// between servers crosses the simulated network.
//
// The model, and what it leaves out:
//  - zk-1 leads epoch 1 from the start (zxids are epoch << 32 | counter). A write goes
//    from the client's server to the leader, which checks it against the state its
//    accepted proposals leave, numbers it, sends the proposal to every follower and
//    commits it once a majority (itself included) has logged it; each server applies
//    commits in zxid order and the client's server answers once it has applied the write.
//    A follower that missed commits (a partition, a crash) gets them at its next
//    heartbeat answer; the leader sends proposals again to followers that have not
//    logged them. Reads are answered from the client's server's own copy.
//  - Leader loss, as ZooKeeper's ZAB: a follower that has not heard the leader for
//    sync_limit ticks, and a leader that has not heard a majority for as long, stop
//    serving (their clients get ConnectionLoss and move on) and look for a leader. Looking
//    servers exchange votes (FastLeaderElection's order: highest accepted epoch, then
//    highest logged zxid, then highest server id) once on entering the election, on every
//    better vote and every tick; at its next tick after a majority's votes agree, the
//    chosen server leads a new epoch (its zxids start at (epoch << 32) + 1). The leader
//    brings each follower to its own log (a follower's proposals it lacks are dropped:
//    uncommitted writes of the old leader may be lost, committed ones never are, since the
//    winner has the most recent log of a majority); once a majority has synced it commits
//    everything it logged, restarts every session's expiry clock and serves. A leader not
//    established within sync_limit ticks looks again. So an election takes one to two
//    ticks once a majority is looking, after the sync_limit ticks it takes to notice a
//    lost leader; a minority never elects. A server that already follows or leads answers
//    a looking one with its leader, which takes it on (a restarted server, a healed one).
//  - Servers keep their data across a crash (ZooKeeper fsyncs its log before acking);
//    the connections to a crashed server are gone.
//  - Sessions: the leader expires a session it has not heard from for its timeout on the
//    leader's own clock, checked once a tick; the expiry is a write (closeSession) that
//    removes the session's ephemeral znodes. Followers answer pings themselves and pass
//    each touch on to the leader.
//  - Timeouts a client asks for are held to [2, 20] ticks, as a server's min/max session
//    timeout defaults are.
//
// Determinism: containers are ordered, session ids and zxids are counters, and every
// random draw (a client's first server) comes from a stream named after the client.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "lockstep/zookeeper.h"

namespace lockstep::sim {

class World;

struct ZkOptions {
  int servers = 3;
  int64_t tick_ns = 2'000'000'000;              // tickTime: heartbeats, expiry checks, timeout bounds
  int sync_limit_ticks = 5;                     // syncLimit
  int64_t session_timeout_ns = 10'000'000'000;  // what clients ask for (kazoo's default)
};

// What the ensemble's leader committed, for the ground truth: a znode created or deleted
// (`session` its owner, 0 for a persistent one), or a session expired; or a new leader
// established (`server` its index, `zxid` its epoch's first, epoch << 32).
struct ZkChange {
  enum class Kind { Created, Deleted, SessionExpired, LeaderElected };
  Kind kind = Kind::Created;
  std::string path;
  int64_t session = 0;
  int64_t zxid = 0;
  int64_t owner_pid = -1;  // the client process of `session`, -1 if unknown
  int server = -1;         // LeaderElected: the leader's index (0 for zk-1)
};

class ZkEnsemble {
 public:
  // Adds the servers to `world` as processes zk-1..zk-N and starts their ticks.
  ZkEnsemble(World& world, const ZkOptions& options);
  ~ZkEnsemble();
  ZkEnsemble(const ZkEnsemble&) = delete;
  ZkEnsemble& operator=(const ZkEnsemble&) = delete;

  const ZkOptions& options() const;
  const std::vector<int>& server_pids() const;
  // The session of client process `client_pid`; its Env owns it.
  std::shared_ptr<ZooKeeper> make_client(int client_pid);
  // The committed state, as the leader holds it: the children of `path`, sorted.
  std::vector<std::string> children(const std::string& path) const;
  // The same on server `index`'s own copy (0 for zk-1), which may lag the leader's.
  std::vector<std::string> children_on(int index, const std::string& path) const;
  // The index (0 for zk-1) of the server leading now, -1 while none is established.
  int leader() const;
  // Its epoch, the high 32 bits of the zxids it hands out; 0 while there is no leader.
  int64_t epoch() const;

  std::function<void(const ZkChange&)> on_change;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace lockstep::sim
