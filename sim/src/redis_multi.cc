// Transactions: MULTI/EXEC/DISCARD and optimistic locking with WATCH (multi.c of Redis
// 7.0). A watched key is spoiled by any change from any client, its own included: a
// write, a deletion, an expiry, FLUSHALL. Watching a key that had already expired is
// the 7.0 subtlety: its later deletion is no logical change and does not abort EXEC.
#include "redis_impl.h"

namespace lockstep::sim {

namespace {

using Impl = NodeCore;

void unwatch_all(ClientState& c) {
  c.watched.clear();
  c.watched_expired.clear();
}

void discard(ClientState& c) { discard_transaction(c); }

bool logically_expired(Impl& m, const std::string& key) {
  auto it = m.db.find(key);
  return it != m.db.end() && m.key_is_expired(key, it->second);
}

bool watch_spoiled(Impl& m, const ClientState& c) {
  for (const auto& [key, seen] : c.watched) {
    auto it = m.versions.find(key);
    const KeyVersion v = it == m.versions.end() ? KeyVersion{} : it->second;
    if (c.watched_expired.count(key)) {
      if (v.live > seen) return true;
    } else if (v.any != seen || logically_expired(m, key)) {
      return true;
    }
  }
  return false;
}

Reply cmd_multi(Impl&, ClientState& c, const Args&) {
  if (c.in_multi) return Reply::error("ERR MULTI calls can not be nested");
  c.in_multi = true;
  return Reply::ok();
}

Reply cmd_discard(Impl&, ClientState& c, const Args&) {
  if (!c.in_multi) return Reply::error("ERR DISCARD without MULTI");
  discard(c);
  return Reply::ok();
}

Reply cmd_exec(Impl& m, ClientState& c, const Args&) {
  if (!c.in_multi) return Reply::error("ERR EXEC without MULTI");
  if (c.multi_dirty) {
    discard(c);
    return Reply::error("EXECABORT Transaction discarded because of previous errors.");
  }
  if (watch_spoiled(m, c)) {
    discard(c);
    return Reply::nil_array();
  }
  auto queued = std::move(c.queued);
  discard(c);
  std::vector<Reply> replies;
  for (const auto& argv : queued) {
    const Command* cmd = m.find(argv[0]);
    if (cmd && (cmd->flags & kContainer)) cmd = m.find_sub(*cmd, argv[1]);
    replies.push_back(m.call(c, *cmd, argv));
  }
  return Reply::array(std::move(replies));
}

Reply cmd_watch(Impl& m, ClientState& c, const Args& a) {
  if (c.in_multi) return Reply::error("ERR WATCH inside MULTI is not allowed");
  m.versions_tracked = true;
  for (size_t i = 1; i < a.size(); ++i) {
    const std::string& key = a[i];
    if (c.watched.count(key)) continue;
    auto it = m.versions.find(key);
    c.watched[key] = it == m.versions.end() ? 0 : it->second.any;
    if (logically_expired(m, key)) c.watched_expired.insert(key);
  }
  return Reply::ok();
}

Reply cmd_unwatch(Impl&, ClientState& c, const Args&) {
  unwatch_all(c);
  return Reply::ok();
}

}  // namespace

void discard_transaction(ClientState& c) {
  c.in_multi = false;
  c.multi_dirty = false;
  c.queued.clear();
  unwatch_all(c);
}

void register_multi_commands(std::vector<Command>& out) {
  out.insert(out.end(), {
                            {"multi", 1, kNoScript | kNoQueue, cmd_multi},
                            {"exec", 1, kNoScript | kNoQueue, cmd_exec},
                            {"discard", 1, kNoScript | kNoQueue, cmd_discard},
                            {"watch", -2, kNoScript | kNoQueue, cmd_watch},
                            {"unwatch", 1, kNoScript, cmd_unwatch},
                        });
}

}  // namespace lockstep::sim
