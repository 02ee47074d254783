// String commands: SET with all its options, SETNX, GET, the INCR/DECR family, STRLEN,
// MGET/MSET, following t_string.c of Redis 7.0.
#include <limits>
#include <optional>
#include <string_view>

#include "redis_impl.h"

namespace lockstep::sim {

namespace {

using Impl = NodeCore;

enum SetFlag : unsigned {
  kNX = 1, kXX = 2, kGet = 4, kKeepTtl = 8, kEX = 16, kPX = 32, kEXAT = 64, kPXAT = 128,
};
constexpr unsigned kAnyExpire = kEX | kPX | kEXAT | kPXAT;

// parseExtendedStringArgumentsOrReply: an option conflicting with an earlier one, or an
// expiry option without its value, is a plain syntax error. A repeated option is fine.
bool parse_set_options(const Args& a, unsigned& flags, const std::string*& expire) {
  for (size_t j = 3; j < a.size(); ++j) {
    const bool has_next = j + 1 < a.size();
    auto expiry = [&](unsigned f) {
      if ((flags & kKeepTtl) || (flags & kAnyExpire & ~f) || !has_next) return false;
      flags |= f;
      expire = &a[++j];
      return true;
    };
    // Every option is short: fold it to lower case once rather than comparing it with
    // each name in turn.
    char o[8] = {};
    if (a[j].size() >= sizeof o) return false;
    for (size_t i = 0; i < a[j].size(); ++i) {
      const char c = a[j][i];
      o[i] = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    }
    const std::string_view opt(o, a[j].size());
    if (opt == "nx" && !(flags & kXX)) flags |= kNX;
    else if (opt == "xx" && !(flags & kNX)) flags |= kXX;
    else if (opt == "get") flags |= kGet;
    else if (opt == "keepttl" && !(flags & kAnyExpire)) flags |= kKeepTtl;
    else if (opt == "ex") { if (!expiry(kEX)) return false; }
    else if (opt == "px") { if (!expiry(kPX)) return false; }
    else if (opt == "exat") { if (!expiry(kEXAT)) return false; }
    else if (opt == "pxat") { if (!expiry(kPXAT)) return false; }
    else return false;
  }
  return true;
}

// getExpireMillisecondsOrReply: positive only, converted to absolute ms on the node's
// clock; any overflow is an invalid expire time.
bool expire_to_ms(Impl& m, const std::string& arg, unsigned flags, int64_t& ms, Reply& err) {
  if (!string_to_ll(arg, ms)) {
    err = err_not_integer();
    return false;
  }
  const bool seconds = flags & (kEX | kEXAT);
  if (ms <= 0 || (seconds && ms > kMax / 1000)) {
    err = Reply::error("ERR invalid expire time in 'set' command");
    return false;
  }
  if (seconds) ms *= 1000;
  if (flags & (kEX | kPX)) {
    if (m.now > 0 && ms > kMax - m.now) ms = -1;  // the wrap-around Redis detects
    else ms += m.now;
  }
  if (ms <= 0) {
    err = Reply::error("ERR invalid expire time in 'set' command");
    return false;
  }
  return true;
}

Reply get_reply(Impl& m, const std::string& key) {
  bool wrong = false;
  Entry* e = m.lookup_typed(key, VType::String, wrong);
  if (wrong) return err_wrongtype();
  return e ? Reply::bulk(e->v.str) : Reply::nil();
}

Value string_value(std::string s) {
  Value v;
  v.str = std::move(s);
  return v;
}

Reply cmd_set(Impl& m, ClientState&, const Args& a) {
  unsigned flags = 0;
  const std::string* expire_arg = nullptr;
  if (!parse_set_options(a, flags, expire_arg)) return err_syntax();
  int64_t when = 0;
  if (expire_arg) {
    Reply err;
    if (!expire_to_ms(m, *expire_arg, flags, when, err)) return err;
  }
  // The GET reply is made only for SET ... GET, and moved out rather than copied.
  std::optional<Reply> old;
  if (flags & kGet) {
    old = get_reply(m, a[1]);
    if (old->is_error()) return std::move(*old);
  }
  // An expired key is gone once looked up, so `at` names the live key or nothing.
  const auto at = m.lookup_at(a[1]);
  const bool found = at != m.db.end();
  if (((flags & kNX) && found) || ((flags & kXX) && !found)) return old ? std::move(*old) : Reply::nil();
  Entry& e = m.set_string_at(at, a[1], a[2], flags & kKeepTtl);
  if (expire_arg) e.expire = when;
  if (!m.propagating()) return old ? std::move(*old) : Reply::ok();
  Args prop;
  prop.reserve(5);
  prop.emplace_back("SET");
  prop.push_back(a[1]);
  prop.push_back(a[2]);
  if (expire_arg) {
    // Replicas and the AOF get an absolute time, so a late replay expires on time.
    prop.emplace_back("PXAT");
    prop.push_back(std::to_string(when));
  } else if (flags & kKeepTtl) {
    prop.emplace_back("KEEPTTL");
  }
  m.rewritten = std::move(prop);
  return old ? std::move(*old) : Reply::ok();
}

Reply cmd_setnx(Impl& m, ClientState&, const Args& a) {
  if (m.lookup(a[1])) return Reply::integer_of(0);
  m.set_string(a[1], a[2], false);
  m.rewritten = Args{"SET", a[1], a[2]};
  return Reply::integer_of(1);
}

Reply cmd_get(Impl& m, ClientState&, const Args& a) { return get_reply(m, a[1]); }

Reply cmd_getdel(Impl& m, ClientState&, const Args& a) {
  Reply r = get_reply(m, a[1]);
  if (r.type == Reply::Type::Bulk) {
    m.remove(a[1]);
    m.rewritten = Args{"DEL", a[1]};
  }
  return r;
}

Reply incr_decr(Impl& m, const std::string& key, int64_t incr) {
  bool wrong = false;
  Entry* e = m.lookup_typed(key, VType::String, wrong);
  if (wrong) return err_wrongtype();
  int64_t value = 0;
  if (e && !string_to_ll(e->v.str, value)) return err_not_integer();
  if ((incr < 0 && value < 0 && incr < kMin - value) ||
      (incr > 0 && value > 0 && incr > kMax - value))
    return Reply::error("ERR increment or decrement would overflow");
  value += incr;
  if (e) {
    e->v.str = std::to_string(value);  // in place: the TTL survives an INCR
    m.encode_string(e->v);
    m.modified(key, *e);
  } else {
    Value v = string_value(std::to_string(value));
    m.encode_string(v);
    m.set_value(key, std::move(v), false);
  }
  return Reply::integer_of(value);
}

Reply cmd_incr(Impl& m, ClientState&, const Args& a) { return incr_decr(m, a[1], 1); }
Reply cmd_decr(Impl& m, ClientState&, const Args& a) { return incr_decr(m, a[1], -1); }

Reply cmd_incrby(Impl& m, ClientState&, const Args& a) {
  int64_t incr = 0;
  if (!string_to_ll(a[2], incr)) return err_not_integer();
  return incr_decr(m, a[1], incr);
}

Reply cmd_decrby(Impl& m, ClientState&, const Args& a) {
  int64_t incr = 0;
  if (!string_to_ll(a[2], incr)) return err_not_integer();
  if (incr == kMin) return Reply::error("ERR decrement would overflow");
  return incr_decr(m, a[1], -incr);
}

Reply cmd_strlen(Impl& m, ClientState&, const Args& a) {
  bool wrong = false;
  Entry* e = m.lookup_typed(a[1], VType::String, wrong);
  if (wrong) return err_wrongtype();
  return Reply::integer_of(e ? static_cast<int64_t>(e->v.str.size()) : 0);
}

Reply cmd_mget(Impl& m, ClientState&, const Args& a) {
  std::vector<Reply> out;
  for (size_t i = 1; i < a.size(); ++i) {
    Entry* e = m.lookup(a[i]);
    out.push_back(e && e->v.type == VType::String ? Reply::bulk(e->v.str) : Reply::nil());
  }
  return Reply::array(std::move(out));
}

Reply cmd_mset(Impl& m, ClientState&, const Args& a) {
  if (a.size() % 2 == 0) return err_arity("mset");
  for (size_t i = 1; i + 1 < a.size(); i += 2) {
    m.lookup(a[i]);  // an expired key must be reported as expired before it is replaced
    m.set_string(a[i], a[i + 1], false);
  }
  return Reply::ok();
}

}  // namespace

void register_string_commands(std::vector<Command>& out) {
  out.insert(out.end(), {
                            {"set", -3, kWrite | kDenyOom, cmd_set},
                            {"setnx", 3, kWrite | kDenyOom, cmd_setnx},
                            {"get", 2, 0, cmd_get},
                            {"getdel", 2, kWrite, cmd_getdel},
                            {"incr", 2, kWrite | kDenyOom, cmd_incr},
                            {"decr", 2, kWrite | kDenyOom, cmd_decr},
                            {"incrby", 3, kWrite | kDenyOom, cmd_incrby},
                            {"decrby", 3, kWrite | kDenyOom, cmd_decrby},
                            {"strlen", 2, 0, cmd_strlen},
                            {"mget", -2, 0, cmd_mget},
                            {"mset", -3, kWrite | kDenyOom, cmd_mset},
                        });
}

}  // namespace lockstep::sim
