// Generic keyspace commands (DEL, EXISTS, EXPIRE family, TTL family, TYPE, RENAME,
// RENAMENX, DBSIZE, FLUSHALL), the connection commands PING and ECHO, and TIME, following
// db.c, expire.c and server.c.
#include <limits>

#include "redis_impl.h"

namespace lockstep::sim {

namespace {

using Impl = NodeCore;

Reply err_expire_time(const char* cmd) {
  return Reply::error(std::string("ERR invalid expire time in '") + cmd + "' command");
}

Reply cmd_del(Impl& m, ClientState&, const Args& a) {
  int64_t n = 0;
  for (size_t i = 1; i < a.size(); ++i) n += m.remove(a[i]) ? 1 : 0;
  return Reply::integer_of(n);
}

Reply cmd_exists(Impl& m, ClientState&, const Args& a) {
  int64_t n = 0;
  for (size_t i = 1; i < a.size(); ++i) n += m.lookup(a[i]) ? 1 : 0;
  return Reply::integer_of(n);
}

enum ExpireFlag : unsigned { kExpireNX = 1, kExpireXX = 2, kExpireGT = 4, kExpireLT = 8 };

// Options are checked before the time argument, as parseExtendedExpireArgumentsOrReply.
bool parse_expire_flags(const Args& a, unsigned& flags, Reply& err) {
  for (size_t j = 3; j < a.size(); ++j) {
    if (iequals(a[j], "nx")) flags |= kExpireNX;
    else if (iequals(a[j], "xx")) flags |= kExpireXX;
    else if (iequals(a[j], "gt")) flags |= kExpireGT;
    else if (iequals(a[j], "lt")) flags |= kExpireLT;
    else {
      err = Reply::error("ERR Unsupported option " + a[j]);
      return false;
    }
  }
  if ((flags & kExpireNX) && (flags & (kExpireXX | kExpireGT | kExpireLT))) {
    err = Reply::error("ERR NX and XX, GT or LT options at the same time are not compatible");
    return false;
  }
  if ((flags & kExpireGT) && (flags & kExpireLT)) {
    err = Reply::error("ERR GT and LT options at the same time are not compatible");
    return false;
  }
  return true;
}

bool expire_condition_holds(unsigned flags, int64_t current, int64_t when) {
  if ((flags & kExpireNX) && current != -1) return false;
  if ((flags & kExpireXX) && current == -1) return false;
  // No TTL counts as an infinite one: GT never beats it, LT always does.
  if ((flags & kExpireGT) && (current == -1 || when <= current)) return false;
  if ((flags & kExpireLT) && current != -1 && when >= current) return false;
  return true;
}

Reply expire_generic(Impl& m, const Args& a, bool relative, bool seconds) {
  unsigned flags = 0;
  Reply err;
  if (!parse_expire_flags(a, flags, err)) return err;
  int64_t when = 0;
  if (!string_to_ll(a[2], when)) return err_not_integer();
  const std::string name = to_lower(a[0]);
  if (seconds) {
    if (when > kMax / 1000 || when < kMin / 1000) return err_expire_time(name.c_str());
    when *= 1000;
  }
  const int64_t base = relative ? m.now : 0;
  if (when > kMax - base) return err_expire_time(name.c_str());
  when += base;
  Entry* e = m.lookup(a[1]);
  if (!e) return Reply::integer_of(0);
  if (!expire_condition_holds(flags, e->expire, when)) return Reply::integer_of(0);
  // A time already past deletes at once (and replicates as DEL), except on a replica,
  // which must keep the key until its master says otherwise.
  if (when <= m.now && !m.replica) {
    m.remove(a[1]);
    m.rewritten = Args{"DEL", a[1]};
    m.args_rewritten({-1, 1});
    return Reply::integer_of(1);
  }
  e->expire = when;
  ++m.dirty;
  m.touch(a[1]);
  m.rewritten = Args{"PEXPIREAT", a[1], std::to_string(when)};
  // 7.0 makes its own argument vector PEXPIREAT key ms, options kept.
  if (relative || seconds) {
    std::vector<int> layout;
    for (size_t j = 0; j < a.size(); ++j) layout.push_back(j == 0 || j == 2 ? -1 : static_cast<int>(j));
    m.args_rewritten(layout);
  }
  return Reply::integer_of(1);
}

Reply cmd_expire(Impl& m, ClientState&, const Args& a) { return expire_generic(m, a, true, true); }
Reply cmd_pexpire(Impl& m, ClientState&, const Args& a) {
  return expire_generic(m, a, true, false);
}
Reply cmd_expireat(Impl& m, ClientState&, const Args& a) {
  return expire_generic(m, a, false, true);
}
Reply cmd_pexpireat(Impl& m, ClientState&, const Args& a) {
  return expire_generic(m, a, false, false);
}

Reply ttl_generic(Impl& m, const Args& a, bool ms, bool absolute) {
  Entry* e = m.lookup(a[1]);
  if (!e) return Reply::integer_of(-2);
  if (e->expire == -1) return Reply::integer_of(-1);
  int64_t ttl = absolute ? e->expire : e->expire - m.now;
  if (ttl < 0) ttl = 0;
  return Reply::integer_of(ms ? ttl : (ttl + 500) / 1000);
}

Reply cmd_ttl(Impl& m, ClientState&, const Args& a) { return ttl_generic(m, a, false, false); }
Reply cmd_pttl(Impl& m, ClientState&, const Args& a) { return ttl_generic(m, a, true, false); }
Reply cmd_expiretime(Impl& m, ClientState&, const Args& a) {
  return ttl_generic(m, a, false, true);
}
Reply cmd_pexpiretime(Impl& m, ClientState&, const Args& a) {
  return ttl_generic(m, a, true, true);
}

Reply cmd_persist(Impl& m, ClientState&, const Args& a) {
  Entry* e = m.lookup(a[1]);
  if (!e || e->expire == -1) return Reply::integer_of(0);
  e->expire = -1;
  ++m.dirty;
  m.touch(a[1]);
  return Reply::integer_of(1);
}

Reply cmd_type(Impl& m, ClientState&, const Args& a) {
  Entry* e = m.lookup(a[1]);
  if (!e) return Reply::status("none");
  switch (e->v.type) {
    case VType::String: return Reply::status("string");
    case VType::Hash: return Reply::status("hash");
    case VType::List: return Reply::status("list");
    case VType::ZSet: return Reply::status("zset");
    case VType::Set: return Reply::status("set");
  }
  return Reply::status("none");
}

// The value moves with its TTL and its LRU/LFU field (the same object, in Redis); the
// destination, if any, is deleted first. RENAME of a key onto itself changes nothing.
Reply rename_generic(Impl& m, const Args& a, bool nx) {
  auto src = m.lookup_at(a[1]);
  if (src == m.db.end()) return Reply::error("ERR no such key");
  if (a[1] == a[2]) return nx ? Reply::integer_of(0) : Reply::ok();
  if (m.lookup(a[2])) {
    if (nx) return Reply::integer_of(0);
    m.remove(a[2]);
  }
  Entry from = src->second;  // the source's deletion reports its value
  m.remove(a[1]);
  Entry& moved = m.set_value(a[2], std::move(from.v), false);
  moved.expire = from.expire;
  moved.lru = from.lru;
  return nx ? Reply::integer_of(1) : Reply::ok();
}

Reply cmd_rename(Impl& m, ClientState&, const Args& a) { return rename_generic(m, a, false); }
Reply cmd_renamenx(Impl& m, ClientState&, const Args& a) { return rename_generic(m, a, true); }

// The node's wall clock, which the simulation keeps in milliseconds: the microseconds
// are always a multiple of 1000.
Reply cmd_time(Impl& m, ClientState&, const Args&) {
  return Reply::array({Reply::bulk(std::to_string(m.now / 1000)), Reply::bulk(std::to_string(m.now % 1000 * 1000))});
}

Reply cmd_dbsize(Impl& m, ClientState&, const Args&) {
  return Reply::integer_of(static_cast<int64_t>(m.db.size()));
}

Reply cmd_flushall(Impl& m, ClientState&, const Args& a) {
  if (a.size() > 2 || (a.size() == 2 && !iequals(a[1], "async") && !iequals(a[1], "sync")))
    return err_syntax();
  m.flush_db(m.process_id());
  ++m.dirty;  // replicated even when already empty, as forceCommandPropagation does
  m.rewritten = Args{"FLUSHALL"};
  return Reply::ok();
}

// In RESP2 a subscribed connection gets PING as a pubsub-style array.
Reply cmd_ping(Impl&, ClientState& c, const Args& a) {
  if (a.size() > 2) return err_arity("ping");
  if (!c.channels.empty())
    return Reply::array({Reply::bulk("pong"), Reply::bulk(a.size() == 2 ? a[1] : "")});
  return a.size() == 2 ? Reply::bulk(a[1]) : Reply::status("PONG");
}

Reply cmd_echo(Impl&, ClientState&, const Args& a) { return Reply::bulk(a[1]); }

}  // namespace

void register_key_commands(std::vector<Command>& out) {
  out.insert(out.end(), {
                            {"del", -2, kWrite, cmd_del},
                            {"unlink", -2, kWrite, cmd_del},
                            {"exists", -2, 0, cmd_exists},
                            {"expire", -3, kWrite, cmd_expire},
                            {"pexpire", -3, kWrite, cmd_pexpire},
                            {"expireat", -3, kWrite, cmd_expireat},
                            {"pexpireat", -3, kWrite, cmd_pexpireat},
                            {"ttl", 2, 0, cmd_ttl},
                            {"pttl", 2, 0, cmd_pttl},
                            {"expiretime", 2, 0, cmd_expiretime},
                            {"pexpiretime", 2, 0, cmd_pexpiretime},
                            {"persist", 2, kWrite, cmd_persist},
                            {"type", 2, 0, cmd_type},
                            {"rename", 3, kWrite, cmd_rename},
                            {"renamenx", 3, kWrite, cmd_renamenx},
                            {"time", 1, 0, cmd_time},
                            {"dbsize", 1, 0, cmd_dbsize},
                            {"flushall", -1, kWrite, cmd_flushall},
                            {"flushdb", -1, kWrite, cmd_flushall},
                            {"ping", -1, kPubSubOk, cmd_ping},
                            {"echo", 2, 0, cmd_echo},
                        });
}

}  // namespace lockstep::sim
