// zookeeper / zookeeper-fenced: the lock recipe of ZooKeeper's documentation as Apache
// Curator's InterProcessMutex and kazoo's Lock implement it. Each contender creates an
// ephemeral sequential znode under the lock's directory (/lockstep/<key>/<uuid>-lock-N);
// the lowest sequence number holds the lock; every other contender watches the znode just
// before its own (not the holder: no herd when it goes) and looks again when that one is
// deleted. Release deletes the znode; so does the end of the owner's session.
//
// Where it breaks: the lock is only as long-lived as the session. A holder paused longer
// than the session timeout is expired by the leader, its znode deleted and the next
// contender let in, while the paused holder still believes it holds the lock: neither
// library tells a holder anything until its client reaches a server again (Curator reports
// SUSPENDED or LOST to a ConnectionStateListener; kazoo reports them to add_listener; the
// lock itself keeps no watch on its own hold). zookeeper-fenced hands out the znode's
// creation zxid as the fencing token: zxids rise in the order the ensemble applied the
// creates, which is the queue's order, so a store that refuses an older token refuses the
// expired holder's writes.
//
// A create whose answer is lost may still have happened. As Curator's protected mode does,
// the contender then looks for a child carrying its own uuid before creating another.
// A contender that gives up (its wait ran out) deletes its znode; when it cannot, the
// outcome is Unknown: the znode may yet reach the head of the queue. Requests are built as
// named locals before co_await (GCC 12 may destroy a co_await expression's temporary twice).
#include <algorithm>
#include <memory>
#include <optional>

#include "lockstep/algorithms.h"
#include "lockstep/lock.h"
#include "lockstep/locks.h"
#include "lockstep/zookeeper.h"

namespace lockstep {
namespace {

constexpr const char* kRoot = "/lockstep";
constexpr const char* kLockMarker = "-lock-";
constexpr int kTurnsMax = 100'000;

// A child's sequence number: the 10 digits the server appended.
std::string sequence_of(const std::string& name) { return name.size() >= 10 ? name.substr(name.size() - 10) : name; }

class ZooKeeperLock : public Lock {
 public:
  ZooKeeperLock(Env& env, const LockParams& p, bool fenced)
      : env_(env), p_(p), fenced_(fenced), id_(random_uuid(env)), dir_(std::string(kRoot) + "/" + p.key) {}

  Task<AcquireOutcome> acquire(Nanos wait) override {
    ZooKeeper* zk = env_.zookeeper();
    if (!zk) co_return AcquireOutcome::NotAcquired;  // the scenario reader refuses this world
    const Nanos deadline = env_.now_mono() + wait;
    node_.clear();
    int retries = 0;
    // Bounded twice: by the wait, and by turns (each turn either waits for a watch, counts
    // a retry, or finds the queue moved on).
    for (int turn = 0; turn < kTurnsMax && env_.now_mono() < deadline; ++turn) {
      ZkError error = ZkError::Ok;
      if (node_.empty()) error = co_await enqueue(*zk);
      ZkChildren c;
      if (error == ZkError::Ok) {
        std::string dir = dir_;
        c = co_await zk->get_children(std::move(dir));
        error = c.error;
      }
      if (error == ZkError::SessionExpired && !node_.empty()) co_return AcquireOutcome::NotAcquired;  // gone with it
      if (error != ZkError::Ok) {
        // Curator's retry policy, between lost answers.
        if (++retries > p_.retry.count_max || env_.now_mono() + p_.retry.delay >= deadline) break;
        co_await env_.sleep(p_.retry.delay);
        continue;
      }
      std::sort(c.names.begin(), c.names.end(),
                [](const std::string& a, const std::string& b) { return sequence_of(a) < sequence_of(b); });
      const std::string mine = node_.substr(dir_.size() + 1);
      auto at = std::find(c.names.begin(), c.names.end(), mine);
      if (at == c.names.end()) co_return AcquireOutcome::NotAcquired;  // expired and deleted meanwhile
      if (at == c.names.begin()) co_return AcquireOutcome::Acquired;
      std::string predecessor = dir_ + "/" + *(at - 1);
      ZkExists before = co_await zk->exists(std::move(predecessor), true);
      if (before.error != ZkError::Ok || !before.exists) continue;  // the queue moved: look again
      const ZkEvent e = co_await before.watch->wait(deadline - env_.now_mono());
      if (e == ZkEvent::SessionExpired) co_return AcquireOutcome::NotAcquired;
    }
    co_return co_await give_up(*zk);
  }

  Task<ReleaseOutcome> release() override {
    ZooKeeper* zk = env_.zookeeper();
    if (!zk || node_.empty()) co_return ReleaseOutcome::NotOwner;
    // Retried while the answer is lost, as Curator's retry policy does: a session that
    // expired meanwhile answers NoNode (or SessionExpired) once the client is back.
    ZkError e = ZkError::ConnectionLoss;
    const int64_t session = zk->session_id();
    bool answer_lost = false;  // an earlier delete of this release may have run
    for (int attempt = 0; e == ZkError::ConnectionLoss && attempt <= p_.retry.count_max; ++attempt) {
      if (attempt > 0) {
        answer_lost = true;
        co_await env_.sleep(p_.retry.delay);
      }
      std::string node = node_;
      e = co_await zk->remove(std::move(node), -1);
    }
    // A znode found gone after a lost answer, in the session that created it: only this
    // release's own earlier delete removes an ephemeral znode of a live session, so it is
    // released (Curator's guaranteed delete and kazoo take NoNode so too). In a new
    // session, the old one's end may have taken it first: not the owner any more.
    if (e == ZkError::NoNode && answer_lost && zk->session_id() == session) {
      node_.clear();
      co_return ReleaseOutcome::Released;
    }
    switch (e) {
      case ZkError::Ok: node_.clear(); co_return ReleaseOutcome::Released;
      case ZkError::ConnectionLoss: co_return ReleaseOutcome::Unknown;
      case ZkError::NoNode:
      case ZkError::SessionExpired:
      case ZkError::BadVersion:
      case ZkError::NotEmpty:
      case ZkError::NodeExists: break;
    }
    node_.clear();
    co_return ReleaseOutcome::NotOwner;
  }

  const std::string& token() const override { return id_; }
  int64_t fencing_token() const override { return fenced_ && !node_.empty() ? czxid_ : -1; }

 private:
  // Puts this contender's znode in the queue (creating the directory as Curator's
  // creatingParentsIfNeeded does); the error that stopped it, if any.
  Task<ZkError> enqueue(ZooKeeper& zk) {
    for (std::string path : {std::string(kRoot), dir_}) {
      std::string empty;
      ZkCreated d = co_await zk.create(std::move(path), std::move(empty), ZkCreateMode{});
      if (d.error != ZkError::Ok && d.error != ZkError::NodeExists) co_return d.error;
    }
    if (created_maybe_) {
      // The last create's answer was lost: it may be in the queue already.
      std::string dir = dir_;
      ZkChildren c = co_await zk.get_children(std::move(dir));
      if (c.error != ZkError::Ok) co_return c.error;
      for (const auto& name : c.names) {
        if (name.rfind(id_, 0) != 0) continue;
        std::string found = dir_ + "/" + name;
        ZkExists s = co_await zk.exists(std::move(found), false);
        if (s.error != ZkError::Ok) co_return s.error;
        if (!s.exists) break;
        node_ = dir_ + "/" + name;
        czxid_ = s.stat.czxid;
        created_maybe_ = false;
        co_return ZkError::Ok;
      }
    }
    std::string prefix = dir_ + "/" + id_ + kLockMarker;
    std::string empty;
    ZkCreated z = co_await zk.create(std::move(prefix), std::move(empty), ZkCreateMode{.ephemeral = true, .sequential = true});
    created_maybe_ = z.error == ZkError::ConnectionLoss;
    if (z.error != ZkError::Ok) co_return z.error;
    node_ = z.path;
    czxid_ = z.czxid;
    co_return ZkError::Ok;
  }

  Task<AcquireOutcome> give_up(ZooKeeper& zk) {
    if (node_.empty()) co_return created_maybe_ ? AcquireOutcome::Unknown : AcquireOutcome::NotAcquired;
    std::string node = node_;
    const ZkError e = co_await zk.remove(std::move(node), -1);
    node_.clear();
    co_return e == ZkError::ConnectionLoss ? AcquireOutcome::Unknown : AcquireOutcome::NotAcquired;
  }

  Env& env_;
  LockParams p_;
  bool fenced_;
  std::string id_;
  std::string dir_;
  std::string node_;  // this contender's znode, while queued or holding
  int64_t czxid_ = 0;
  bool created_maybe_ = false;
};

std::unique_ptr<Lock> make_zookeeper_lock(const std::string& algorithm, Env& env, const LockParams& params) {
  return std::make_unique<ZooKeeperLock>(env, params, algorithm == "zookeeper-fenced");
}

// What the recipe claims, with the session as its lease (scenarios give lease_ms the
// session timeout). The client pings every third of the timeout and the leader expires a
// session it has not heard from for the whole of it: silence shorter than the timeout
// minus one ping period cannot expire a session, whatever it is the client is doing.
// Nothing here touches a Redis node, so nothing is claimed about one.
std::vector<Assumption> zookeeper_assumptions(const LockSetup& s) {
  const int64_t session = s.lease_ms;
  const int64_t silence = session - session / 3;
  const std::string bound = "shorter than the session timeout minus one ping period (" + std::to_string(session) +
                            " ms - " + std::to_string(session / 3) + " ms), however long its work: heartbeats keep "
                            "the session and its znode while the client runs";
  return session_assumptions(silence, bound, false, "its session expires and its znode goes", s.command_timeout_ms,
                             "the leader expires sessions on its own clock");
}

}  // namespace

std::vector<LockInfo> zookeeper_locks() {
  std::vector<LockInfo> out;
  for (const char* name : {"zookeeper", "zookeeper-fenced"}) {
    LockInfo a;
    a.name = name;
    a.options = std::vector<LockOption>{};
    a.service = LockService::ZooKeeper;
    a.fencing_tokens = std::string(name) == "zookeeper-fenced";
    a.description = a.fencing_tokens
                        ? "the ZooKeeper lock recipe, fenced by the lock znode's creation zxid"
                        : "the ZooKeeper lock recipe: lowest ephemeral sequential znode, each waiter watching the one before";
    a.make = [n = std::string(name)](Env& env, const LockParams& p) { return make_zookeeper_lock(n, env, p); };
    a.assumptions_with = zookeeper_assumptions;
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace lockstep
