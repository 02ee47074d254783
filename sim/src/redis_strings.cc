// String commands: SET with all its options, SETNX, SETEX, PSETEX, GET, GETSET, GETDEL,
// APPEND, the INCR/DECR family, INCRBYFLOAT, STRLEN, MGET/MSET, following t_string.c of
// Redis 7.0.
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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
// clock; any overflow is an invalid expire time, named after the command.
bool expire_to_ms(Impl& m, const std::string& arg, unsigned flags, int64_t& ms, Reply& err, const char* cmd = "set") {
  auto invalid = [&] { return Reply::error(std::string("ERR invalid expire time in '") + cmd + "' command"); };
  if (!string_to_ll(arg, ms)) {
    err = err_not_integer();
    return false;
  }
  const bool seconds = flags & (kEX | kEXAT);
  if (ms <= 0 || (seconds && ms > kMax / 1000)) {
    err = invalid();
    return false;
  }
  if (seconds) ms *= 1000;
  if (flags & (kEX | kPX)) {
    if (m.now > 0 && ms > kMax - m.now) ms = -1;  // the wrap-around Redis detects
    else ms += m.now;
  }
  if (ms <= 0) {
    err = invalid();
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

// Where SET ... GET's arguments go once its GET options are dropped.
std::vector<int> without_get(const Args& a) {
  std::vector<int> layout;
  for (size_t j = 0; j < a.size(); ++j) {
    if (j < 3 || !iequals(a[j], "get")) layout.push_back(static_cast<int>(j));
  }
  return layout;
}

Reply cmd_set(Impl& m, ClientState&, const Args& a) {
  unsigned flags = 0;
  const std::string* expire_arg = nullptr;
  if (!parse_set_options(a, flags, expire_arg)) return err_syntax();
  m.arg_encoded(2);
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
  Entry& e = m.set_string_at(at, a[1], a[2], flags & kKeepTtl, 2);
  if (expire_arg) e.expire = when;
  // 7.0 rewrites its argument vector for replication: SET key value PXAT ms, or without
  // the GET options.
  if (expire_arg) m.args_rewritten({-1, 1, 2, -1, -1});
  else if (flags & kGet) m.args_rewritten(without_get(a));
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
  m.arg_encoded(2);
  if (m.lookup(a[1])) return Reply::integer_of(0);
  m.set_string(a[1], a[2], false, 2);
  m.rewritten = Args{"SET", a[1], a[2]};
  return Reply::integer_of(1);
}

// SETEX and PSETEX: SET with EX or PX, the time first. A bad time is refused before the
// key is looked at; the write replicates as SET ... PXAT.
Reply setex_generic(Impl& m, const Args& a, unsigned unit, const char* name) {
  m.arg_encoded(3);
  int64_t when = 0;
  Reply err;
  if (!expire_to_ms(m, a[2], unit, when, err, name)) return err;
  m.lookup(a[1]);  // an expired key is reported as expired before it is replaced
  m.set_string(a[1], a[3], false, 3).expire = when;
  m.args_rewritten({-1, 1, 3, -1, -1});
  if (m.propagating()) m.rewritten = Args{"SET", a[1], a[3], "PXAT", std::to_string(when)};
  return Reply::ok();
}

Reply cmd_setex(Impl& m, ClientState&, const Args& a) { return setex_generic(m, a, kEX, "setex"); }
Reply cmd_psetex(Impl& m, ClientState&, const Args& a) { return setex_generic(m, a, kPX, "psetex"); }

Reply cmd_get(Impl& m, ClientState&, const Args& a) { return get_reply(m, a[1]); }

// The old value, and the new one without a TTL, replicated as SET.
Reply cmd_getset(Impl& m, ClientState&, const Args& a) {
  Reply old = get_reply(m, a[1]);
  if (old.is_error()) return old;
  m.set_string(a[1], a[2], false, 2);
  m.rewritten = Args{"SET", a[1], a[2]};
  m.args_rewritten({-1, 1, 2});
  return old;
}

// The new length. A new key stores the argument as SET would; an existing value becomes
// a raw string and grows (grow_string), keeping its TTL.
Reply cmd_append(Impl& m, ClientState&, const Args& a) {
  constexpr size_t kProtoMaxBulkLen = 512 * 1024 * 1024;
  bool wrong = false;
  Entry* e = m.lookup_typed(a[1], VType::String, wrong);
  if (wrong) return err_wrongtype();
  if (!e) return Reply::integer_of(static_cast<int64_t>(m.set_string(a[1], a[2], false, 2).v.str.size()));
  if (e->v.str.size() + a[2].size() > kProtoMaxBulkLen)
    return Reply::error("ERR string exceeds maximum allowed size (proto-max-bulk-len)");
  grow_string(e->v, a[2].size());
  e->v.str += a[2];
  m.modified(a[1], *e);
  return Reply::integer_of(static_cast<int64_t>(e->v.str.size()));
}

Reply cmd_getdel(Impl& m, ClientState&, const Args& a) {
  Reply r = get_reply(m, a[1]);
  if (r.type == Reply::Type::Bulk) {
    m.remove(a[1]);
    m.rewritten = Args{"DEL", a[1]};
    m.args_rewritten({-1, 1});
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

// string2ld: strtold over the whole argument (at most 5 kB), no leading space, no NaN,
// and an overflow to infinity refused.
bool string_to_long_double(const std::string& s, long double& out) {
  constexpr size_t kMaxLongDoubleChars = 5 * 1024;
  if (s.empty() || s.size() >= kMaxLongDoubleChars || std::isspace(static_cast<unsigned char>(s[0]))) return false;
  errno = 0;
  char* end = nullptr;
  const long double v = std::strtold(s.c_str(), &end);
  if (static_cast<size_t>(end - s.c_str()) != s.size()) return false;
  if (errno == ERANGE && (std::isinf(v) || std::fpclassify(v) == FP_ZERO)) return false;
  if (errno == EINVAL || std::isnan(v)) return false;
  out = v;
  return true;
}

// ld2string's human-friendly form: 17 decimals, then no trailing zeros, no lone point,
// and "-0" as "0".
std::string long_double_text(long double v) {
  char buf[5 * 1024];
  int n = std::snprintf(buf, sizeof buf, "%.17Lf", v);
  if (n <= 0 || static_cast<size_t>(n) >= sizeof buf) return "";
  if (std::memchr(buf, '.', static_cast<size_t>(n)) != nullptr) {
    while (buf[n - 1] == '0') --n;
    if (buf[n - 1] == '.') --n;
  }
  if (n == 2 && buf[0] == '-' && buf[1] == '0') return "0";
  return std::string(buf, static_cast<size_t>(n));
}

// In long double, as the server adds; the result is stored as text (never as an integer,
// so "3" costs an embstr) with the TTL kept, and replicated as SET ... KEEPTTL.
Reply cmd_incrbyfloat(Impl& m, ClientState&, const Args& a) {
  bool wrong = false;
  Entry* e = m.lookup_typed(a[1], VType::String, wrong);
  if (wrong) return err_wrongtype();
  long double value = 0, incr = 0;
  if ((e && !string_to_long_double(e->v.str, value)) || !string_to_long_double(a[2], incr)) return err_not_float();
  value += incr;
  if (std::isnan(value) || std::isinf(value)) return Reply::error("ERR increment would produce NaN or Infinity");
  Value v = string_value(long_double_text(value));
  v.enc = StrEnc::Created;
  const std::string text = v.str;
  m.set_value(a[1], std::move(v), true);
  m.rewritten = Args{"SET", a[1], text, "KEEPTTL"};
  m.args_rewritten({-1, 1, -1, -1});
  return Reply::bulk(text);
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
    m.set_string(a[i], a[i + 1], false, static_cast<int>(i + 1));
  }
  return Reply::ok();
}

}  // namespace

void register_string_commands(std::vector<Command>& out) {
  out.insert(out.end(), {
                            {"set", -3, kWrite | kDenyOom, cmd_set},
                            {"setnx", 3, kWrite | kDenyOom, cmd_setnx},
                            {"setex", 4, kWrite | kDenyOom, cmd_setex},
                            {"psetex", 4, kWrite | kDenyOom, cmd_psetex},
                            {"get", 2, 0, cmd_get},
                            {"getset", 3, kWrite | kDenyOom, cmd_getset},
                            {"append", 3, kWrite | kDenyOom, cmd_append},
                            {"incrbyfloat", 3, kWrite | kDenyOom, cmd_incrbyfloat},
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
