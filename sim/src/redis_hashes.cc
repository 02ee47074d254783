// Hash commands (t_hash.c of Redis 7.0): HSET, HMSET, HSETNX, HGET, HMGET, HGETALL, HKEYS,
// HVALS, HINCRBY, HEXISTS, HDEL, HLEN. Small hashes are listpacks in Redis, so
// fields keep insertion order and an update keeps its place: HGETALL must answer in
// that order to be byte-identical.
#include <algorithm>
#include <limits>

#include "redis_impl.h"

namespace lockstep::sim {

namespace {

using Impl = NodeCore;
using Fields = std::vector<std::pair<std::string, std::string>>;

Fields::iterator find_field(Fields& h, const std::string& f) {
  return std::find_if(h.begin(), h.end(), [&](const auto& p) { return p.first == f; });
}

// hashTypeLookupWriteOrCreate: WRONGTYPE, or the hash (created empty if missing; a
// command that then adds nothing leaves no key behind, see NodeCore::modified).
Entry* hash_for_write(Impl& m, const std::string& key, Reply& err) {
  bool wrong = false;
  Entry* e = m.lookup_typed(key, VType::Hash, wrong);
  if (wrong) {
    err = err_wrongtype();
    return nullptr;
  }
  if (e) return e;
  Value v;
  v.type = VType::Hash;
  auto [it, inserted] = m.db.try_emplace(key);
  it->second.v = std::move(v);
  it->second.expire = -1;
  it->second.writer = m.process_id();
  return &it->second;
}

// Readers: WRONGTYPE, or the hash, or nullptr with no error when the key is missing.
Entry* hash_for_read(Impl& m, const std::string& key, Reply& err) { return m.lookup_typed(key, VType::Hash, err); }

bool set_field(Fields& h, const std::string& f, const std::string& v) {
  auto it = find_field(h, f);
  if (it != h.end()) {
    it->second = v;
    return false;
  }
  h.emplace_back(f, v);
  return true;
}

Reply cmd_hset(Impl& m, ClientState&, const Args& a) {
  if (a.size() % 2 == 1) return err_arity(to_lower(a[0]));
  Reply err;
  Entry* e = hash_for_write(m, a[1], err);
  if (!e) return err;
  int64_t created = 0;
  for (size_t i = 2; i + 1 < a.size(); i += 2) created += set_field(e->v.hash, a[i], a[i + 1]);
  m.modified(a[1], *e);
  return iequals(a[0], "hmset") ? Reply::ok() : Reply::integer_of(created);
}

Reply cmd_hsetnx(Impl& m, ClientState&, const Args& a) {
  Reply err;
  Entry* e = hash_for_write(m, a[1], err);
  if (!e) return err;
  if (find_field(e->v.hash, a[2]) != e->v.hash.end()) return Reply::integer_of(0);
  e->v.hash.emplace_back(a[2], a[3]);
  m.modified(a[1], *e);
  return Reply::integer_of(1);
}

Reply cmd_hget(Impl& m, ClientState&, const Args& a) {
  Reply err;
  Entry* e = hash_for_read(m, a[1], err);
  if (err.is_error()) return err;
  if (!e) return Reply::nil();
  auto it = find_field(e->v.hash, a[2]);
  return it == e->v.hash.end() ? Reply::nil() : Reply::bulk(it->second);
}

Reply cmd_hmget(Impl& m, ClientState&, const Args& a) {
  Reply err;
  Entry* e = hash_for_read(m, a[1], err);
  if (err.is_error()) return err;
  std::vector<Reply> out;
  for (size_t i = 2; i < a.size(); ++i) {
    if (!e) {
      out.push_back(Reply::nil());
      continue;
    }
    auto it = find_field(e->v.hash, a[i]);
    out.push_back(it == e->v.hash.end() ? Reply::nil() : Reply::bulk(it->second));
  }
  return Reply::array(std::move(out));
}

Reply cmd_hgetall(Impl& m, ClientState&, const Args& a) {
  Reply err;
  Entry* e = hash_for_read(m, a[1], err);
  if (err.is_error()) return err;
  std::vector<Reply> out;
  if (e)
    for (const auto& [f, v] : e->v.hash) {
      out.push_back(Reply::bulk(f));
      out.push_back(Reply::bulk(v));
    }
  return Reply::array(std::move(out));
}

// HKEYS and HVALS: one side of HGETALL, in the same order.
Reply hash_side(Impl& m, const Args& a, bool keys) {
  Reply err;
  Entry* e = hash_for_read(m, a[1], err);
  if (err.is_error()) return err;
  std::vector<Reply> out;
  if (e)
    for (const auto& [f, v] : e->v.hash) out.push_back(Reply::bulk(keys ? f : v));
  return Reply::array(std::move(out));
}

Reply cmd_hkeys(Impl& m, ClientState&, const Args& a) { return hash_side(m, a, true); }
Reply cmd_hvals(Impl& m, ClientState&, const Args& a) { return hash_side(m, a, false); }

Reply cmd_hincrby(Impl& m, ClientState&, const Args& a) {
  int64_t incr = 0;
  if (!string_to_ll(a[3], incr)) return err_not_integer();
  Reply err;
  Entry* e = hash_for_write(m, a[1], err);
  if (!e) return err;
  int64_t value = 0;
  auto it = find_field(e->v.hash, a[2]);
  // Both errors need an existing field, so no empty hash is left behind.
  if (it != e->v.hash.end() && !string_to_ll(it->second, value))
    return Reply::error("ERR hash value is not an integer");
  if ((incr < 0 && value < 0 && incr < kMin - value) ||
      (incr > 0 && value > 0 && incr > kMax - value))
    return Reply::error("ERR increment or decrement would overflow");
  value += incr;
  set_field(e->v.hash, a[2], std::to_string(value));
  m.modified(a[1], *e);
  return Reply::integer_of(value);
}

Reply cmd_hexists(Impl& m, ClientState&, const Args& a) {
  Reply err;
  Entry* e = hash_for_read(m, a[1], err);
  if (err.is_error()) return err;
  return Reply::integer_of(e && find_field(e->v.hash, a[2]) != e->v.hash.end() ? 1 : 0);
}

Reply cmd_hdel(Impl& m, ClientState&, const Args& a) {
  Reply err;
  Entry* e = hash_for_read(m, a[1], err);
  if (err.is_error()) return err;
  if (!e) return Reply::integer_of(0);
  int64_t deleted = 0;
  for (size_t i = 2; i < a.size(); ++i) {
    auto it = find_field(e->v.hash, a[i]);
    if (it == e->v.hash.end()) continue;
    e->v.hash.erase(it);
    ++deleted;
  }
  if (deleted) m.modified(a[1], *e);
  return Reply::integer_of(deleted);
}

Reply cmd_hlen(Impl& m, ClientState&, const Args& a) {
  Reply err;
  Entry* e = hash_for_read(m, a[1], err);
  if (err.is_error()) return err;
  return Reply::integer_of(e ? static_cast<int64_t>(e->v.hash.size()) : 0);
}

}  // namespace

void register_hash_commands(std::vector<Command>& out) {
  out.insert(out.end(), {
                            {"hset", -4, kWrite | kDenyOom, cmd_hset},
                            {"hmset", -4, kWrite | kDenyOom, cmd_hset},
                            {"hsetnx", 4, kWrite | kDenyOom, cmd_hsetnx},
                            {"hget", 3, 0, cmd_hget},
                            {"hmget", -3, 0, cmd_hmget},
                            {"hgetall", 2, 0, cmd_hgetall},
                            {"hkeys", 2, 0, cmd_hkeys},
                            {"hvals", 2, 0, cmd_hvals},
                            {"hincrby", 4, kWrite | kDenyOom, cmd_hincrby},
                            {"hexists", 3, 0, cmd_hexists},
                            {"hdel", -3, kWrite, cmd_hdel},
                            {"hlen", 2, 0, cmd_hlen},
                        });
}

}  // namespace lockstep::sim
