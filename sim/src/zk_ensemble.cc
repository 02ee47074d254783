// The simulated ZooKeeper servers: the leader's proposals and commits, each server's copy
// of the data tree, sessions and their expiry, watches. The model and its limits are in
// lockstep/sim/zk_ensemble.h.
#include <algorithm>
#include <cstdio>
#include <tuple>

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

// What a server votes for in an election: ZooKeeper's FastLeaderElection order, the
// highest accepted epoch, then the highest logged zxid, then the highest server id.
struct Vote {
  int64_t epoch = 0;
  int64_t zxid = 0;
  int id = -1;
  auto key() const { return std::tuple(epoch, zxid, id); }
  bool operator==(const Vote& o) const { return key() == o.key(); }
};

// A leader's bookkeeping, from its election to its stepping down.
struct Lead {
  int64_t epoch = 0;
  bool established = false;             // a majority synced with it: it serves
  int64_t started_ns = 0;               // true time it was elected
  Tree proposed;                        // as the accepted proposals leave it
  int64_t next_zxid = 0;
  int64_t next_session = 0;
  std::map<int64_t, Txn> outstanding;   // proposed, not yet committed
  std::map<int64_t, std::set<int>> acks;
  std::map<int64_t, int64_t> touched;   // session -> leader mono ns of its last touch
  std::set<int64_t> closing;            // sessions whose expiry is proposed
  std::map<int, int64_t> heard;         // synced follower -> true time of its last word
};

enum class Role { Looking, Following, Leading };

struct Server {
  int pid = -1;
  int index = 0;
  Tree tree;                         // the committed state
  int64_t applied = 0;               // last zxid applied
  std::vector<Txn> history;          // logged proposals, zxid order without gaps
  std::map<std::string, std::vector<Watch>> watches;
  std::map<int64_t, ZkClientLink> clients;  // sessions connected here
  uint64_t epoch_seen = 0;           // a crash since: connections and watches are gone
  int64_t leader_heard_ns = 0;       // true time of the leader's last word
  Role role = Role::Following;
  int64_t epoch = 1;                 // the epoch it last accepted
  int leader = 0;                    // following: whom
  bool up_to_date = true;            // following: synced and told to serve
  std::unique_ptr<Lead> lead;        // leading
  Vote vote;                         // looking: its current vote
  std::map<int, std::pair<Vote, int64_t>> votes;  // looking: each peer's vote, when heard

  int64_t last_logged() const { return history.empty() ? 0 : history.back().zxid; }
};

// Whether zxid `z` comes right after `prev` in a history: the next counter of the same
// epoch, or the first of a later one (an epoch's uncommitted tail may have been dropped).
bool follows(int64_t prev, int64_t z) {
  return z == prev + 1 || ((z >> 32) > (prev >> 32) && (z & 0xffffffff) == 1);
}

}  // namespace

struct ZkEnsemble::Impl {
  World& world;
  ZkOptions options;
  ZkEnsemble* owner = nullptr;
  std::vector<Server> servers;
  std::vector<int> pids;
  std::map<int64_t, int> session_pid;  // session -> client pid, for the ground truth
  int64_t recorded = 0;                // the last committed zxid reported to on_change

  Impl(World& w, const ZkOptions& o) : world(w), options(o) {}

  int64_t mono(int index) { return world.process(pids[index]).clock.mono_ns(world.now()); }
  uint64_t epoch_of(int pid) const { return world.process(pid).epoch; }
  int quorum() const { return static_cast<int>(servers.size()) / 2 + 1; }
  int64_t sync_limit_ns() const { return options.sync_limit_ticks * options.tick_ns; }

  // A server's connections, watches and role live in its memory; a crash takes them (its
  // logged history and committed tree are on disk).
  Server& on(int index) {
    Server& s = servers[index];
    if (s.epoch_seen != epoch_of(s.pid)) {
      s.epoch_seen = epoch_of(s.pid);
      s.clients.clear();
      s.watches.clear();
      s.leader_heard_ns = world.now();
      look(index);
    }
    return s;
  }

  bool leading(const Server& s, int64_t epoch) const {
    return s.role == Role::Leading && s.lead && s.lead->epoch == epoch;
  }

  bool serving(const Server& s) const {
    if (s.role == Role::Leading) return s.lead && s.lead->established;
    return s.role == Role::Following && s.up_to_date && world.now() - s.leader_heard_ns < sync_limit_ns();
  }

  // Sends `fn` from server `from` to server `to`, run there (as on(to) sees it).
  void peer(int from, int to, std::function<void(Server&)> fn) {
    zk_send(world, pids[from], pids[to], epoch_of(pids[to]), [this, to, fn = std::move(fn)] { fn(on(to)); });
  }

  void to_client(const Server& s, const ZkClientLink& c, std::function<void(ZkClientCore&)> fn) {
    zk_send(world, s.pid, c.pid, c.epoch, [core = c.core, fn = std::move(fn)] {
      if (auto p = core.lock()) fn(*p);
    });
  }

  void reply(const Server& s, const ZkClientLink& c, ZkAnswer a) {
    to_client(s, c, [a = std::move(a)](ZkClientCore& core) { core.answer(a); });
  }

  // Closes every connection of a server that stops serving, so that its clients look for
  // another server.
  void drop_clients(Server& s) {
    for (const auto& [session, c] : s.clients) to_client(s, c, [](ZkClientCore& core) { core.closed(false); });
    s.clients.clear();
    s.watches.clear();
  }

  // Runs `fn` on the leader server `from` follows, if it still leads that epoch.
  void to_leader(int from, std::function<void(Impl&, int)> fn) {
    const Server& s = servers[from];
    if (s.role == Role::Leading) {
      fn(*this, from);
      return;
    }
    if (s.role != Role::Following) return;
    const int l = s.leader;
    const int64_t epoch = s.epoch;
    peer(from, l, [this, l, epoch, fn = std::move(fn)](Server& ls) {
      if (leading(ls, epoch)) fn(*this, l);
    });
  }

  // --- the leader ----------------------------------------------------------------------

  void touch(int l, int64_t session) {
    Lead& d = *servers[l].lead;
    if (d.touched.count(session)) d.touched[session] = mono(l);
  }

  // Checks a write against the proposed state; on success numbers it and proposes it.
  void propose_write(int l, int origin_server, const ZkClientLink& c, const ZkOp& op) {
    Lead& d = *servers[l].lead;
    if (!d.established) return;  // the client's call times out, as it would on a lost answer
    touch(l, op.session);
    Txn t;
    t.origin_server = origin_server;
    t.origin = c;
    t.xid = op.xid;
    t.session = op.session;
    ZkError error = ZkError::Ok;
    if (op.kind == ZkOp::Kind::Connect) {
      t.kind = Txn::Kind::CreateSession;
      // Unique across leaders: the epoch and the leader's index, then a counter.
      t.session = (d.epoch << 24) + (int64_t{l} << 20) + ++d.next_session;
      t.timeout_ns = std::clamp(op.timeout_ns, 2 * options.tick_ns, 20 * options.tick_ns);
      session_pid[t.session] = c.pid;
    } else if (!d.proposed.sessions.count(op.session) || d.closing.count(op.session)) {
      error = ZkError::SessionExpired;
    } else if (op.kind == ZkOp::Kind::Create) {
      t.kind = Txn::Kind::Create;
      t.data = op.data;
      t.ephemeral = op.mode.ephemeral;
      t.path = op.path;
      auto parent = d.proposed.nodes.find(parent_of(op.path));
      if (parent == d.proposed.nodes.end() || op.path.size() < 2) {
        error = ZkError::NoNode;
      } else {
        if (op.mode.sequential) {
          char seq[16];
          std::snprintf(seq, sizeof seq, "%010d", parent->second.cversion);
          t.path += seq;
        }
        if (d.proposed.nodes.count(t.path)) error = ZkError::NodeExists;
      }
    } else {  // Remove
      t.kind = Txn::Kind::Delete;
      t.path = op.path;
      auto n = d.proposed.nodes.find(op.path);
      if (n == d.proposed.nodes.end() || op.path == "/") error = ZkError::NoNode;
      else if (op.version != -1 && op.version != n->second.stat.version) error = ZkError::BadVersion;
      else if (!n->second.children.empty()) error = ZkError::NotEmpty;
    }
    if (error != ZkError::Ok) {
      answer_from(l, origin_server, c, ZkAnswer{.xid = op.xid, .error = error});
      return;
    }
    propose(l, std::move(t));
  }

  // The answer of a write refused at the leader, sent back through the client's server.
  void answer_from(int l, int server, const ZkClientLink& c, ZkAnswer a) {
    if (server == l) {
      reply(servers[l], c, std::move(a));
      return;
    }
    peer(l, server, [this, c, a = std::move(a)](Server& s) mutable { reply(s, c, std::move(a)); });
  }

  void propose(int l, Txn t) {
    Server& ls = servers[l];
    Lead& d = *ls.lead;
    t.zxid = ++d.next_zxid;
    d.proposed.apply(t);
    if (t.kind == Txn::Kind::CreateSession) d.touched[t.session] = mono(l);
    const int64_t zxid = t.zxid;
    ls.history.push_back(t);
    d.outstanding.emplace(zxid, std::move(t));
    d.acks[zxid].insert(l);
    for (const auto& [f, heard] : d.heard) send_proposal(l, f, zxid);
    try_commit(l);
  }

  void send_proposal(int l, int f, int64_t zxid) {
    const Txn t = servers[l].lead->outstanding.at(zxid);
    const int64_t epoch = servers[l].lead->epoch;
    peer(l, f, [this, l, f, epoch, t](Server& fs) {
      if (!heard_leader(fs, l, epoch)) return;
      log(fs, t);
      if (fs.last_logged() < t.zxid) return;  // a gap: the leader sends it again
      // Logged (and fsynced): acknowledged to the leader.
      peer(f, l, [this, l, f, epoch, zxid = t.zxid](Server& ls) {
        if (!leading(ls, epoch) || !ls.lead->outstanding.count(zxid)) return;
        ls.lead->acks[zxid].insert(f);
        try_commit(l);
      });
    });
  }

  // A leader's word to a follower of its epoch: the follower hears it; anyone else ignores it.
  bool heard_leader(Server& fs, int l, int64_t epoch) {
    if (fs.role != Role::Following || fs.leader != l || fs.epoch != epoch) return false;
    fs.leader_heard_ns = world.now();
    return true;
  }

  static void log(Server& s, const Txn& t) {
    if (t.zxid > s.last_logged() && follows(s.last_logged(), t.zxid)) s.history.push_back(t);
  }

  // Commits, in zxid order, every outstanding write a majority has logged.
  void try_commit(int l) {
    Lead& d = *servers[l].lead;
    while (!d.outstanding.empty()) {
      auto it = d.outstanding.begin();
      if (static_cast<int>(d.acks[it->first].size()) < quorum()) return;
      Txn t = std::move(it->second);
      d.outstanding.erase(it);
      d.acks.erase(t.zxid);
      apply_on(l, t);
      for (const auto& [f, heard] : d.heard) send_commit(l, f, t);
    }
  }

  void send_commit(int l, int f, const Txn& t) {
    const int64_t epoch = servers[l].lead->epoch;
    peer(l, f, [this, l, epoch, t](Server& fs) {
      if (!heard_leader(fs, l, epoch)) return;
      log(fs, t);
      commit_through(fs, t.zxid);
    });
  }

  // Applies, in order, what a server logged up to `zxid`.
  void commit_through(Server& s, int64_t zxid) {
    for (const auto& t : s.history) {
      if (t.zxid > zxid) break;
      if (t.zxid > s.applied) apply_on(s.index, t);
    }
  }

  // Applies a committed write on one server: its tree, its watches, its client's answer.
  void apply_on(int index, const Txn& t) {
    Server& s = servers[index];
    s.applied = t.zxid;
    const auto effects = s.tree.apply(t);
    if (s.role == Role::Leading && t.zxid > recorded) {
      recorded = t.zxid;
      record(t, effects);
    }
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

  // --- election ------------------------------------------------------------------------
  //
  // As ZooKeeper's FastLeaderElection: a looking server votes for itself and tells every
  // peer; it adopts any better vote it hears and tells them again; once a majority's
  // votes (its own included) name the same server, that server leads and the others
  // follow it. Votes go out again every tick (a lost notification, a peer that starts
  // looking later), and the decision waits for the next tick, as finalizeWait waits for
  // a better vote. A server that already follows or leads answers a looking one with its
  // leader, whom the looking one then joins.

  void look(int index) {
    Server& s = servers[index];
    if (s.role == Role::Leading || s.role == Role::Following) drop_clients(s);
    s.role = Role::Looking;
    s.lead.reset();
    s.up_to_date = false;
    s.vote = Vote{s.epoch, s.last_logged(), index};
    s.votes.clear();
    s.votes[index] = {s.vote, world.now()};
    notify_all(index);
  }

  void notify_all(int index) {
    for (size_t p = 0; p < servers.size(); ++p) {
      if (static_cast<int>(p) != index) notify(index, static_cast<int>(p));
    }
  }

  // One notification: a looking server's vote, or the leader a settled server has.
  void notify(int from, int to) {
    const Server& s = servers[from];
    const Role role = s.role;
    const Vote v = role == Role::Looking   ? s.vote
                   : role == Role::Leading ? Vote{s.lead->epoch, 0, from}
                                           : Vote{s.epoch, 0, s.leader};
    peer(from, to, [this, from, role, v](Server& r) { on_notification(r, from, role, v); });
  }

  void on_notification(Server& r, int from, Role role, const Vote& v) {
    if (r.role != Role::Looking) {
      // Settled: tell the looking peer whom it follows. A follower no longer serving says
      // nothing (it is about to look itself).
      if (role == Role::Looking && (r.role == Role::Leading || serving(r))) notify(r.index, from);
      return;
    }
    if (role != Role::Looking) {
      // An ensemble already has a leader: join it.
      if (v.epoch >= r.epoch) join(r.index, v.id);
      return;
    }
    r.votes[from] = {v, world.now()};
    if (v.key() > r.vote.key()) {
      r.vote = v;
      r.votes[r.index] = {v, world.now()};
      notify_all(r.index);
    }
  }

  // Asks leader `l` to take this server on (ZooKeeper's FOLLOWERINFO).
  void join(int index, int l) {
    if (l == index) return;
    peer(index, l, [this, index](Server& ls) {
      if (ls.role == Role::Leading) sync(ls.index, index);
    });
  }

  // Election over, with this server as leader: a new epoch, its whole log kept.
  void become_leader(int l) {
    Server& s = servers[l];
    int64_t epoch = s.epoch;
    for (const auto& [p, v] : s.votes) epoch = std::max(epoch, v.first.epoch);
    s.role = Role::Leading;
    s.votes.clear();
    s.lead = std::make_unique<Lead>();
    // Its own epoch (what it votes with) moves on only once it is established, as
    // ZooKeeper's currentEpoch does: a leader that never got a majority has changed nothing.
    s.lead->epoch = epoch + 1;
    s.lead->started_ns = world.now();
    s.lead->next_zxid = s.lead->epoch << 32;
    notify_all(l);  // the peers that voted for it join at once
  }

  // The leader brings a follower to its log (ZooKeeper's DIFF or TRUNC): the follower's
  // proposals the leader lacks are dropped, and it commits what the leader committed.
  void sync(int l, int f) {
    const Server& ls = servers[l];
    const int64_t epoch = ls.lead->epoch;
    const bool established = ls.lead->established;
    peer(l, f, [this, l, f, epoch, established, history = ls.history, committed = ls.applied](Server& fs) {
      if (fs.role == Role::Leading || fs.epoch > epoch) return;  // a stale leader
      if (fs.role == Role::Following && fs.leader == l && fs.epoch == epoch) return;  // already synced
      if (fs.role == Role::Following) drop_clients(fs);
      fs.role = Role::Following;
      fs.leader = l;
      fs.epoch = epoch;
      fs.votes.clear();
      fs.leader_heard_ns = world.now();
      fs.history = history;
      commit_through(fs, committed);
      fs.up_to_date = established;
      peer(f, l, [this, l, f, epoch](Server& ls2) {
        if (!leading(ls2, epoch)) return;
        ls2.lead->heard[f] = world.now();
        if (!ls2.lead->established) establish(l);
        else for (const auto& [zxid, t] : ls2.lead->outstanding) send_proposal(l, f, zxid);
      });
    });
  }

  // Once a majority has synced, the leader commits all it logged (the old epoch's tail
  // included), restarts every session's expiry clock and serves (ZooKeeper's UPTODATE).
  void establish(int l) {
    Server& ls = servers[l];
    Lead& d = *ls.lead;
    if (static_cast<int>(d.heard.size()) + 1 < quorum()) return;
    d.established = true;
    ls.epoch = d.epoch;
    if (owner->on_change) owner->on_change({ZkChange::Kind::LeaderElected, "", 0, d.epoch << 32, -1, l});
    commit_through(ls, ls.last_logged());
    d.proposed = ls.tree;
    for (const auto& [session, timeout] : ls.tree.sessions) d.touched[session] = mono(l);
    const int64_t through = ls.applied;
    for (const auto& [f, heard] : d.heard) {
      peer(l, f, [this, l, epoch = d.epoch, through](Server& fs) {
        if (!heard_leader(fs, l, epoch)) return;
        commit_through(fs, through);
        fs.up_to_date = true;
      });
    }
  }

  void looking_tick(int index) {
    Server& s = servers[index];
    // Votes older than two ticks are from peers that stopped telling (crashed, cut off).
    int agree = 0;
    for (const auto& [p, v] : s.votes) {
      if (v.first == s.vote && world.now() - v.second <= 2 * options.tick_ns) ++agree;
    }
    if (agree >= quorum()) {
      if (s.vote.id == index) {
        become_leader(index);
        return;
      }
      join(index, s.vote.id);
    }
    s.votes[index] = {s.vote, world.now()};
    notify_all(index);
  }

  // --- every tick ----------------------------------------------------------------------

  void tick(int index) {
    Server& s = on(index);
    switch (s.role) {
      case Role::Looking: looking_tick(index); return;
      case Role::Leading: leader_tick(index); return;
      case Role::Following:
        // Nothing from the leader for syncLimit: it gives up on it and looks for another.
        if (world.now() - s.leader_heard_ns >= sync_limit_ns()) look(index);
        return;
    }
  }

  void leader_tick(int l) {
    Server& ls = servers[l];
    Lead& d = *ls.lead;
    // A leader that has not heard a majority within syncLimit steps down (ZooKeeper's
    // "not sufficient followers synced"); one not established by then gives up too.
    int heard = 1;
    for (const auto& [f, at] : d.heard) {
      if (world.now() - at < sync_limit_ns()) ++heard;
    }
    if (heard < quorum() && world.now() - d.started_ns >= sync_limit_ns()) {
      look(l);
      return;
    }
    if (d.established) expire_sessions(l);
    for (const auto& [f, at] : d.heard) {
      for (const auto& [zxid, t] : d.outstanding) {
        if (!d.acks[zxid].count(f)) send_proposal(l, f, zxid);
      }
      peer(l, f, [this, l, f, epoch = d.epoch](Server& fs) {
        if (!heard_leader(fs, l, epoch)) return;
        const int64_t from = fs.applied;
        // Its answer: alive, and how far it has applied.
        peer(f, l, [this, l, f, epoch, from](Server& ls2) {
          if (!leading(ls2, epoch)) return;
          ls2.lead->heard[f] = world.now();
          if (from >= ls2.applied) return;
          // Behind: the commits it missed.
          for (const auto& t : ls2.history) {
            if (t.zxid > from && t.zxid <= ls2.applied) send_commit(l, f, t);
          }
        });
      });
    }
  }

  void expire_sessions(int l) {
    Lead& d = *servers[l].lead;
    const int64_t now = mono(l);
    std::vector<int64_t> expired;
    for (const auto& [session, last] : d.touched) {
      auto timeout = d.proposed.sessions.find(session);
      if (timeout != d.proposed.sessions.end() && !d.closing.count(session) && now - last >= timeout->second) {
        expired.push_back(session);
      }
    }
    for (int64_t session : expired) {
      d.closing.insert(session);
      d.touched.erase(session);
      Txn t;
      t.kind = Txn::Kind::CloseSession;
      t.session = session;
      propose(l, std::move(t));
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

  // The leader the ensemble has now: the established one of the highest epoch, -1 if none.
  int current_leader() const {
    int best = -1;
    for (const auto& s : servers) {
      if (s.role != Role::Leading || !s.lead || !s.lead->established || world.process(s.pid).crashed) continue;
      if (best < 0 || s.epoch > servers[best].epoch) best = s.index;
    }
    return best;
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
      to_leader(index, [session](Impl& e, int l) { e.touch(l, session); });
    }
    switch (op.kind) {
      case ZkOp::Kind::Connect:
        if (op.session == 0) {
          to_leader(index, [index, c, op](Impl& e, int l) { e.propose_write(l, index, c, op); });
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
        to_leader(index, [index, c, op](Impl& e, int l) { e.propose_write(l, index, c, op); });
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
  // The ensemble starts settled, zk-1 leading epoch 1 with every follower synced.
  Server& first = impl_->servers[0];
  first.role = Role::Leading;
  first.lead = std::make_unique<Lead>();
  first.lead->epoch = 1;
  first.lead->established = true;
  first.lead->next_zxid = kLeaderEpoch;
  for (int i = 1; i < options.servers; ++i) first.lead->heard[i] = world.now();
  impl_->schedule_ticks();
}

ZkEnsemble::~ZkEnsemble() = default;

const ZkOptions& ZkEnsemble::options() const { return impl_->options; }
const std::vector<int>& ZkEnsemble::server_pids() const { return impl_->pids; }
std::shared_ptr<ZooKeeper> ZkEnsemble::make_client(int client_pid) {
  return make_sim_zookeeper(impl_->world, *impl_, client_pid);
}

std::vector<std::string> ZkEnsemble::children(const std::string& path) const {
  // The leader's copy; while there is none, the most advanced server's.
  int from = impl_->current_leader();
  if (from < 0) {
    from = 0;
    for (const auto& s : impl_->servers) {
      if (s.applied > impl_->servers[from].applied) from = s.index;
    }
  }
  const auto& nodes = impl_->servers[from].tree.nodes;
  auto n = nodes.find(path);
  if (n == nodes.end()) return {};
  return {n->second.children.begin(), n->second.children.end()};
}

std::vector<std::string> ZkEnsemble::children_on(int index, const std::string& path) const {
  const auto& nodes = impl_->servers.at(static_cast<size_t>(index)).tree.nodes;
  auto n = nodes.find(path);
  if (n == nodes.end()) return {};
  return {n->second.children.begin(), n->second.children.end()};
}

int ZkEnsemble::leader() const { return impl_->current_leader(); }

int64_t ZkEnsemble::epoch() const {
  const int l = impl_->current_leader();
  return l < 0 ? 0 : impl_->servers[l].epoch;
}

}  // namespace lockstep::sim
