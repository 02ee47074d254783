// The simulated ZooKeeper servers: the leader's proposals and commits, each server's copy
// of the data tree, sessions and their expiry, watches. The model and its limits are in
// lockstep/sim/zk_ensemble.h.
#include <algorithm>
#include <cstdio>

#include "zk_internal.h"

namespace lockstep::sim {
namespace {

constexpr int64_t kLeaderEpoch = int64_t{1} << 32;

struct Znode {
  std::string data;
  ZkStat stat;
  std::set<std::string> children;  // names
  int32_t cversion = 0;            // child creations and deletions: the sequence counter
};

std::string parent_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string name_of(const std::string& path) { return path.substr(path.rfind('/') + 1); }

// One write as the leader numbered it: its effect is fully decided (a sequential znode's
// name included), so every server applies it alike.
struct Txn {
  enum class Kind { CreateSession, CloseSession, Create, Delete };
  Kind kind = Kind::Create;
  int64_t zxid = 0;
  int64_t session = 0;
  int64_t timeout_ns = 0;
  std::string path;
  std::string data;
  bool ephemeral = false;
  // Who asked, so that their server answers once it applied it.
  int origin_server = -1;
  ZkClientLink origin;
  uint64_t xid = 0;
};

struct Tree {
  std::map<std::string, Znode> nodes{{"/", Znode{}}};
  std::map<int64_t, int64_t> sessions;  // id -> timeout

  // What applying a write changed, for watches and the ground truth.
  struct Effect {
    ZkEvent event;
    std::string path;
    int64_t owner = 0;
  };

  std::vector<Effect> apply(const Txn& t) {
    std::vector<Effect> out;
    switch (t.kind) {
      case Txn::Kind::CreateSession: sessions[t.session] = t.timeout_ns; break;
      case Txn::Kind::CloseSession: {
        sessions.erase(t.session);
        std::vector<std::string> owned;
        for (const auto& [path, n] : nodes) {
          if (n.stat.ephemeral_owner == t.session) owned.push_back(path);
        }
        for (const auto& path : owned) {
          remove(path);
          out.push_back({ZkEvent::Deleted, path, t.session});
        }
        break;
      }
      case Txn::Kind::Create: {
        Znode n;
        n.data = t.data;
        n.stat.czxid = n.stat.mzxid = t.zxid;
        n.stat.ephemeral_owner = t.ephemeral ? t.session : 0;
        auto& parent = nodes.at(parent_of(t.path));
        parent.children.insert(name_of(t.path));
        ++parent.cversion;
        nodes.emplace(t.path, std::move(n));
        out.push_back({ZkEvent::Created, t.path, t.ephemeral ? t.session : 0});
        break;
      }
      case Txn::Kind::Delete: {
        const int64_t owner = nodes.at(t.path).stat.ephemeral_owner;
        remove(t.path);
        out.push_back({ZkEvent::Deleted, t.path, owner});
        break;
      }
    }
    return out;
  }

  void remove(const std::string& path) {
    auto& parent = nodes.at(parent_of(path));
    parent.children.erase(name_of(path));
    ++parent.cversion;
    nodes.erase(path);
  }
};

struct Watch {
  int64_t session = 0;
  uint64_t id = 0;
};

struct Server {
  int pid = -1;
  int index = 0;
  Tree tree;
  int64_t applied = 0;               // last zxid applied
  std::map<int64_t, Txn> early;      // commits that came before a missing one
  std::map<std::string, std::vector<Watch>> watches;
  std::map<int64_t, ZkClientLink> clients;  // sessions connected here
  uint64_t epoch_seen = 0;           // a crash since: connections and watches are gone
  int64_t leader_heard_ns = 0;       // true time of the leader's last word
};

}  // namespace

struct ZkEnsemble::Impl {
  World& world;
  ZkOptions options;
  ZkEnsemble* owner = nullptr;
  std::vector<Server> servers;
  std::vector<int> pids;

  // The leader's own bookkeeping (servers[0]).
  Tree proposed;                      // as the accepted proposals leave it
  int64_t next_zxid = kLeaderEpoch;
  int64_t next_session = 0;
  std::map<int64_t, Txn> outstanding;  // proposed, not yet committed
  std::map<int64_t, std::set<int>> acks;
  std::vector<Txn> log;                // committed, in order
  std::map<int64_t, int64_t> touched;  // session -> leader mono ns of its last touch
  std::set<int64_t> closing;           // sessions whose expiry is proposed
  std::map<int64_t, int> session_pid;  // session -> client pid, for the ground truth

  Impl(World& w, const ZkOptions& o) : world(w), options(o) {}

  Server& leader() { return servers[0]; }
  int64_t leader_mono() { return world.process(pids[0]).clock.mono_ns(world.now()); }
  uint64_t epoch_of(int pid) const { return world.process(pid).epoch; }
  int quorum() const { return static_cast<int>(servers.size()) / 2 + 1; }

  // A server's connections and watches live in its memory; a crash takes them.
  Server& on(int index) {
    Server& s = servers[index];
    if (s.epoch_seen != epoch_of(s.pid)) {
      s.epoch_seen = epoch_of(s.pid);
      s.clients.clear();
      s.watches.clear();
      s.early.clear();
      s.leader_heard_ns = world.now();
    }
    return s;
  }

  bool serving(const Server& s) const {
    return s.index == 0 || world.now() - s.leader_heard_ns < options.sync_limit_ticks * options.tick_ns;
  }

  void to_leader(int from_index, std::function<void(Impl&)> fn) {
    if (from_index == 0) {
      fn(*this);
      return;
    }
    zk_send(world, pids[from_index], pids[0], epoch_of(pids[0]), [this, fn = std::move(fn)] {
      on(0);
      fn(*this);
    });
  }

  void to_client(const Server& s, const ZkClientLink& c, std::function<void(ZkClientCore&)> fn) {
    zk_send(world, s.pid, c.pid, c.epoch, [core = c.core, fn = std::move(fn)] {
      if (auto p = core.lock()) fn(*p);
    });
  }

  void reply(const Server& s, const ZkClientLink& c, ZkAnswer a) {
    to_client(s, c, [a = std::move(a)](ZkClientCore& core) { core.answer(a); });
  }

  // --- the leader ----------------------------------------------------------------------

  void touch(int64_t session) {
    if (touched.count(session)) touched[session] = leader_mono();
  }

  // Checks a write against the proposed state; on success numbers it and proposes it.
  void propose_write(int origin_server, const ZkClientLink& c, const ZkOp& op) {
    touch(op.session);
    Txn t;
    t.origin_server = origin_server;
    t.origin = c;
    t.xid = op.xid;
    t.session = op.session;
    ZkError error = ZkError::Ok;
    if (op.kind == ZkOp::Kind::Connect) {
      t.kind = Txn::Kind::CreateSession;
      t.session = (kLeaderEpoch >> 8) + ++next_session;
      t.timeout_ns = std::clamp(op.timeout_ns, 2 * options.tick_ns, 20 * options.tick_ns);
      session_pid[t.session] = c.pid;
    } else if (!proposed.sessions.count(op.session) || closing.count(op.session)) {
      error = ZkError::SessionExpired;
    } else if (op.kind == ZkOp::Kind::Create) {
      t.kind = Txn::Kind::Create;
      t.data = op.data;
      t.ephemeral = op.mode.ephemeral;
      t.path = op.path;
      auto parent = proposed.nodes.find(parent_of(op.path));
      if (parent == proposed.nodes.end() || op.path.size() < 2) {
        error = ZkError::NoNode;
      } else {
        if (op.mode.sequential) {
          char seq[16];
          std::snprintf(seq, sizeof seq, "%010d", parent->second.cversion);
          t.path += seq;
        }
        if (proposed.nodes.count(t.path)) error = ZkError::NodeExists;
      }
    } else {  // Remove
      t.kind = Txn::Kind::Delete;
      t.path = op.path;
      auto n = proposed.nodes.find(op.path);
      if (n == proposed.nodes.end() || op.path == "/") error = ZkError::NoNode;
      else if (op.version != -1 && op.version != n->second.stat.version) error = ZkError::BadVersion;
      else if (!n->second.children.empty()) error = ZkError::NotEmpty;
    }
    if (error != ZkError::Ok) {
      answer_from(origin_server, c, ZkAnswer{.xid = op.xid, .error = error});
      return;
    }
    propose(std::move(t));
  }

  // The answer of a write refused at the leader, sent back through the client's server.
  void answer_from(int server, const ZkClientLink& c, ZkAnswer a) {
    if (server == 0) {
      reply(leader(), c, std::move(a));
      return;
    }
    zk_send(world, pids[0], pids[server], epoch_of(pids[server]), [this, server, c, a = std::move(a)]() mutable {
      reply(on(server), c, std::move(a));
    });
  }

  void propose(Txn t) {
    t.zxid = ++next_zxid;
    proposed.apply(t);
    if (t.kind == Txn::Kind::CreateSession) touched[t.session] = leader_mono();
    const int64_t zxid = t.zxid;
    outstanding.emplace(zxid, t);
    acks[zxid].insert(0);
    for (size_t i = 1; i < servers.size(); ++i) send_proposal(static_cast<int>(i), zxid);
    try_commit();
  }

  void send_proposal(int follower, int64_t zxid) {
    zk_send(world, pids[0], pids[follower], epoch_of(pids[follower]), [this, follower, zxid] {
      Server& f = on(follower);
      f.leader_heard_ns = world.now();
      // Logged (and fsynced): acknowledged to the leader.
      zk_send(world, f.pid, pids[0], epoch_of(pids[0]), [this, follower, zxid] {
        on(0);
        if (!outstanding.count(zxid)) return;
        acks[zxid].insert(follower);
        try_commit();
      });
    });
  }

  // Commits, in zxid order, every outstanding write a majority has logged.
  void try_commit() {
    while (!outstanding.empty()) {
      auto it = outstanding.begin();
      if (static_cast<int>(acks[it->first].size()) < quorum()) return;
      Txn t = std::move(it->second);
      outstanding.erase(it);
      acks.erase(t.zxid);
      log.push_back(t);
      apply_on(0, t);
      for (size_t i = 1; i < servers.size(); ++i) send_commit(static_cast<int>(i), t);
    }
  }

  void send_commit(int follower, const Txn& t) {
    zk_send(world, pids[0], pids[follower], epoch_of(pids[follower]), [this, follower, t] {
      Server& f = on(follower);
      f.leader_heard_ns = world.now();
      if (t.zxid <= f.applied) return;
      f.early.emplace(t.zxid, t);
      while (!f.early.empty() && f.early.begin()->first == next_after(f.applied)) {
        Txn next = std::move(f.early.begin()->second);
        f.early.erase(f.early.begin());
        apply_on(follower, next);
      }
    });
  }

  static int64_t next_after(int64_t zxid) { return zxid == 0 ? kLeaderEpoch + 1 : zxid + 1; }

  // Applies a committed write on one server: its tree, its watches, its client's answer.
  void apply_on(int index, const Txn& t) {
    Server& s = servers[index];
    s.applied = t.zxid;
    const auto effects = s.tree.apply(t);
    if (index == 0) record(t, effects);
    for (const auto& e : effects) fire(s, e.path, e.event);
    if (t.kind == Txn::Kind::CloseSession) {
      auto c = s.clients.find(t.session);
      if (c != s.clients.end()) {
        to_client(s, c->second, [](ZkClientCore& core) { core.closed(true); });
        s.clients.erase(c);
      }
    }
    if (t.origin_server != index) return;
    ZkAnswer a{.xid = t.xid};
    if (t.kind == Txn::Kind::CreateSession) {
      a.session = t.session;
      a.timeout_ns = t.timeout_ns;
      s.clients[t.session] = t.origin;
    } else if (t.kind == Txn::Kind::Create) {
      a.path = t.path;
      a.czxid = t.zxid;
    }
    reply(s, t.origin, std::move(a));
  }

  void record(const Txn& t, const std::vector<Tree::Effect>& effects) {
    if (!owner->on_change) return;
    auto pid_of = [this](int64_t session) -> int64_t {
      auto it = session_pid.find(session);
      return it == session_pid.end() ? -1 : it->second;
    };
    if (t.kind == Txn::Kind::CloseSession) {
      owner->on_change({ZkChange::Kind::SessionExpired, "", t.session, t.zxid, pid_of(t.session)});
    }
    for (const auto& e : effects) {
      const auto kind = e.event == ZkEvent::Created ? ZkChange::Kind::Created : ZkChange::Kind::Deleted;
      owner->on_change({kind, e.path, e.owner, t.zxid, pid_of(e.owner)});
    }
  }

  void fire(Server& s, const std::string& path, ZkEvent event) {
    auto it = s.watches.find(path);
    if (it == s.watches.end()) return;
    auto fired = std::move(it->second);
    s.watches.erase(it);
    for (const auto& w : fired) {
      auto c = s.clients.find(w.session);
      if (c == s.clients.end()) continue;
      to_client(s, c->second, [id = w.id, event](ZkClientCore& core) { core.watch_fired(id, event); });
    }
  }

  // --- every tick ----------------------------------------------------------------------

  void tick(int index) {
    Server& s = on(index);
    if (index == 0) {
      leader_tick();
      return;
    }
    if (!serving(s) && !s.clients.empty()) {
      // Cut off from the leader: like a follower that gives up on it, close every
      // connection so that clients look for another server.
      for (const auto& [session, c] : s.clients) to_client(s, c, [](ZkClientCore& core) { core.closed(false); });
      s.clients.clear();
      s.watches.clear();
    }
  }

  void leader_tick() {
    const int64_t now = leader_mono();
    std::vector<int64_t> expired;
    for (const auto& [session, last] : touched) {
      auto timeout = proposed.sessions.find(session);
      if (timeout != proposed.sessions.end() && !closing.count(session) && now - last >= timeout->second) {
        expired.push_back(session);
      }
    }
    for (int64_t session : expired) {
      closing.insert(session);
      touched.erase(session);
      Txn t;
      t.kind = Txn::Kind::CloseSession;
      t.session = session;
      propose(std::move(t));
    }
    const int64_t committed = log.empty() ? 0 : log.back().zxid;
    for (size_t i = 1; i < servers.size(); ++i) {
      const int f = static_cast<int>(i);
      for (const auto& [zxid, t] : outstanding) {
        if (!acks[zxid].count(f)) send_proposal(f, zxid);
      }
      zk_send(world, pids[0], pids[f], epoch_of(pids[f]), [this, f, committed] {
        Server& s = on(f);
        s.leader_heard_ns = world.now();
        if (s.applied >= committed) return;
        const int64_t from = s.applied;
        // Behind: ask for the commits it missed.
        zk_send(world, s.pid, pids[0], epoch_of(pids[0]), [this, f, from] {
          on(0);
          for (const auto& t : log) {
            if (t.zxid > from) send_commit(f, t);
          }
        });
      });
    }
  }

  void schedule_ticks() {
    world.scheduler().after(options.tick_ns, [this] {
      for (size_t i = 0; i < servers.size(); ++i) {
        const int index = static_cast<int>(i);
        world.post(pids[i], world.now(), [this, index] { tick(index); });
      }
      schedule_ticks();
    });
  }

  // --- requests ------------------------------------------------------------------------

  void handle(int index, const ZkClientLink& c, const ZkOp& op) {
    Server& s = on(index);
    if (!serving(s)) {
      to_client(s, c, [](ZkClientCore& core) { core.closed(false); });
      return;
    }
    if (op.kind != ZkOp::Kind::Connect || op.session != 0) {
      const int64_t session = op.session;
      to_leader(index, [session](Impl& e) { e.touch(session); });
    }
    switch (op.kind) {
      case ZkOp::Kind::Connect:
        if (op.session == 0) {
          to_leader(index, [index, c, op](Impl& e) { e.propose_write(index, c, op); });
        } else if (s.tree.sessions.count(op.session)) {
          s.clients[op.session] = c;
          reply(s, c, ZkAnswer{.xid = op.xid, .session = op.session, .timeout_ns = s.tree.sessions[op.session]});
        } else {
          reply(s, c, ZkAnswer{.xid = op.xid, .error = ZkError::SessionExpired});
        }
        return;
      case ZkOp::Kind::Ping:
        reply(s, c, ZkAnswer{.xid = op.xid, .error = s.tree.sessions.count(op.session) ? ZkError::Ok : ZkError::SessionExpired});
        return;
      case ZkOp::Kind::Create:
      case ZkOp::Kind::Remove:
        to_leader(index, [index, c, op](Impl& e) { e.propose_write(index, c, op); });
        return;
      case ZkOp::Kind::Children: {
        ZkAnswer a{.xid = op.xid};
        auto n = s.tree.nodes.find(op.path);
        if (n == s.tree.nodes.end()) a.error = ZkError::NoNode;
        else a.children.assign(n->second.children.begin(), n->second.children.end());
        reply(s, c, std::move(a));
        return;
      }
      case ZkOp::Kind::Exists:
      case ZkOp::Kind::SetWatch: {
        ZkAnswer a{.xid = op.xid};
        auto n = s.tree.nodes.find(op.path);
        a.exists = n != s.tree.nodes.end();
        if (a.exists) a.stat = n->second.stat;
        if (op.kind == ZkOp::Kind::SetWatch && a.exists != op.existed) {
          // Changed while the client was away: the watch fires at once, as with SetWatches.
          const ZkEvent e = a.exists ? ZkEvent::Created : ZkEvent::Deleted;
          to_client(s, c, [id = op.watch_id, e](ZkClientCore& core) { core.watch_fired(id, e); });
          return;
        }
        if (op.watch_id != 0) s.watches[op.path].push_back({op.session, op.watch_id});
        if (op.kind == ZkOp::Kind::Exists) reply(s, c, std::move(a));
        return;
      }
    }
  }
};

int zk_server_count(const ZkEnsemble::Impl& e) { return static_cast<int>(e.pids.size()); }
int zk_server_pid(const ZkEnsemble::Impl& e, int index) { return e.pids[index]; }
int64_t zk_session_timeout_ns(const ZkEnsemble::Impl& e) { return e.options.session_timeout_ns; }
void zk_handle(ZkEnsemble::Impl& e, int index, const ZkClientLink& from, const ZkOp& op) { e.handle(index, from, op); }

ZkEnsemble::ZkEnsemble(World& world, const ZkOptions& options) : impl_(std::make_unique<Impl>(world, options)) {
  impl_->owner = this;
  for (int i = 0; i < options.servers; ++i) {
    const std::string name = "zk-" + std::to_string(i + 1);
    const int pid = world.add_zookeeper_server(name);
    impl_->pids.push_back(pid);
    Server s;
    s.pid = pid;
    s.index = i;
    s.epoch_seen = world.process(pid).epoch;
    impl_->servers.push_back(std::move(s));
  }
  impl_->schedule_ticks();
}

ZkEnsemble::~ZkEnsemble() = default;

const ZkOptions& ZkEnsemble::options() const { return impl_->options; }
const std::vector<int>& ZkEnsemble::server_pids() const { return impl_->pids; }
std::shared_ptr<ZooKeeper> ZkEnsemble::make_client(int client_pid) {
  return make_sim_zookeeper(impl_->world, *impl_, client_pid);
}

std::vector<std::string> ZkEnsemble::children(const std::string& path) const {
  const auto& nodes = impl_->servers[0].tree.nodes;
  auto n = nodes.find(path);
  if (n == nodes.end()) return {};
  return {n->second.children.begin(), n->second.children.end()};
}

}  // namespace lockstep::sim
