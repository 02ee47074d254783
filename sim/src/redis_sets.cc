// Set commands (t_set.c of Redis 7.0): SADD, SREM, SMEMBERS, SISMEMBER, SMISMEMBER, SCARD.
// The encoding is kept as the server keeps it, since SMEMBERS's order and MEMORY USAGE
// show it: an intset (members in numeric order, each 2, 4 or 8 bytes wide as the widest
// one needs) until a member does not read as a 64-bit integer or there are more than 512,
// then a hash table for good, whose size follows dict.c (see SetMembers).
#include <algorithm>

#include "redis_impl.h"

namespace lockstep::sim {

namespace {

using Impl = NodeCore;

constexpr size_t kIntsetEntriesMax = 512;  // set-max-intset-entries
constexpr int64_t kTableMin = 4;           // DICT_HT_INITIAL_SIZE

// The smallest power of two, at least 4, that holds n (_dictNextExp).
int64_t table_for(size_t n) {
  int64_t size = kTableMin;
  while (size < static_cast<int64_t>(n)) size *= 2;
  return size;
}

// _intsetValueEncoding
int intset_width(int64_t v) {
  if (v < -2147483648LL || v > 2147483647LL) return 8;
  if (v < -32768 || v > 32767) return 4;
  return 2;
}

// setTypeConvert: a hash table sized for the members it takes over.
void to_table(SetMembers& s) {
  s.intset = false;
  s.table_size = table_for(s.members.size());
}

// setTypeAdd: true if `member` was new.
bool add(SetMembers& s, const std::string& member) {
  int64_t v = 0;
  if (s.intset && !string_to_ll(member, v)) to_table(s);
  if (!s.members.insert(member).second) return false;
  if (s.intset) {
    s.intset_width = std::max(s.intset_width, intset_width(v));
    if (s.members.size() > kIntsetEntriesMax) to_table(s);
  } else if (static_cast<int64_t>(s.members.size()) > s.table_size) {
    // dictAdd grows the table once it is full, to the power of two past its entries.
    s.table_size = table_for(s.members.size());
  }
  return true;
}

// setTypeRemove: a hash table under a tenth full shrinks to fit (htNeedsResize).
bool remove(SetMembers& s, const std::string& member) {
  if (s.members.erase(member) == 0) return false;
  const auto n = static_cast<int64_t>(s.members.size());
  if (!s.intset && s.table_size > kTableMin && n * 100 / s.table_size < 10) s.table_size = table_for(s.members.size());
  return true;
}

Entry* set_for_read(Impl& m, const std::string& key, Reply& err) { return m.lookup_typed(key, VType::Set, err); }

// setTypeCreate makes an intset when the first member given reads as an integer, else an
// empty hash table, which the first member sizes.
Reply cmd_sadd(Impl& m, ClientState&, const Args& a) {
  Reply err;
  Entry* e = set_for_read(m, a[1], err);
  if (err.is_error()) return err;
  Value fresh;
  fresh.type = VType::Set;
  int64_t ignored = 0;
  if (!e && !string_to_ll(a[2], ignored)) {
    fresh.set.intset = false;
    fresh.set.table_size = 0;
  }
  SetMembers& s = e ? e->v.set : fresh.set;
  int64_t added = 0;
  for (size_t i = 2; i < a.size(); ++i) {
    if (!s.intset && s.table_size == 0) s.table_size = kTableMin;
    added += add(s, a[i]) ? 1 : 0;
  }
  if (!e) m.set_value(a[1], std::move(fresh), false);
  else if (added) m.modified(a[1], *e);
  return Reply::integer_of(added);
}

// Stops at the member that empties the set: the key is gone, and the rest is not counted.
Reply cmd_srem(Impl& m, ClientState&, const Args& a) {
  Reply err;
  Entry* e = set_for_read(m, a[1], err);
  if (err.is_error()) return err;
  if (!e) return Reply::integer_of(0);
  int64_t removed = 0;
  for (size_t i = 2; i < a.size() && !e->v.set.members.empty(); ++i) removed += remove(e->v.set, a[i]) ? 1 : 0;
  if (removed) m.modified(a[1], *e);
  return Reply::integer_of(removed);
}

Reply cmd_smembers(Impl& m, ClientState&, const Args& a) {
  Reply err;
  Entry* e = set_for_read(m, a[1], err);
  if (err.is_error()) return err;
  std::vector<Reply> out;
  if (!e) return Reply::array(std::move(out));
  const SetMembers& s = e->v.set;
  if (!s.intset) {
    for (const std::string& member : s.members) out.push_back(Reply::bulk(member));
    return Reply::array(std::move(out));
  }
  std::vector<int64_t> values;
  for (const std::string& member : s.members) {
    int64_t v = 0;
    string_to_ll(member, v);
    values.push_back(v);
  }
  std::sort(values.begin(), values.end());
  for (int64_t v : values) out.push_back(Reply::bulk(std::to_string(v)));
  return Reply::array(std::move(out));
}

Reply cmd_sismember(Impl& m, ClientState&, const Args& a) {
  Reply err;
  Entry* e = set_for_read(m, a[1], err);
  if (err.is_error()) return err;
  return Reply::integer_of(e && e->v.set.members.count(a[2]) ? 1 : 0);
}

// A missing key is an empty set: a zero for every member asked.
Reply cmd_smismember(Impl& m, ClientState&, const Args& a) {
  Reply err;
  Entry* e = set_for_read(m, a[1], err);
  if (err.is_error()) return err;
  std::vector<Reply> out;
  for (size_t i = 2; i < a.size(); ++i) out.push_back(Reply::integer_of(e && e->v.set.members.count(a[i]) ? 1 : 0));
  return Reply::array(std::move(out));
}

Reply cmd_scard(Impl& m, ClientState&, const Args& a) {
  Reply err;
  Entry* e = set_for_read(m, a[1], err);
  if (err.is_error()) return err;
  return Reply::integer_of(e ? static_cast<int64_t>(e->v.set.members.size()) : 0);
}

}  // namespace

void register_set_commands(std::vector<Command>& out) {
  out.insert(out.end(), {
                            {"sadd", -3, kWrite | kDenyOom, cmd_sadd},
                            {"srem", -3, kWrite, cmd_srem},
                            {"smembers", 2, 0, cmd_smembers},
                            {"sismember", 3, 0, cmd_sismember},
                            {"smismember", -3, 0, cmd_smismember},
                            {"scard", 2, 0, cmd_scard},
                        });
}

}  // namespace lockstep::sim
