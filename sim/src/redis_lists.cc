// List commands (t_list.c of Redis 7.0): pushes, pops with the optional count, LRANGE,
// LINDEX, LLEN and LREM, with Redis's index clamping.
#include "redis_impl.h"

namespace lockstep::sim {

namespace {

using Impl = NodeCore;

Reply cmd_push(Impl& m, ClientState&, const Args& a) {
  bool wrong = false;
  Entry* e = m.lookup_typed(a[1], VType::List, wrong);
  if (wrong) return err_wrongtype();
  Value fresh;
  fresh.type = VType::List;
  std::deque<std::string>& list = (e ? e->v : fresh).list.items();
  const bool left = iequals(a[0], "lpush");
  for (size_t i = 2; i < a.size(); ++i) {
    if (left) list.push_front(a[i]);
    else list.push_back(a[i]);
  }
  const auto len = static_cast<int64_t>(list.size());
  if (e) m.modified(a[1], *e);
  else m.set_value(a[1], std::move(fresh), false);
  return Reply::integer_of(len);
}

Reply cmd_pop(Impl& m, ClientState&, const Args& a) {
  if (a.size() > 3) return err_arity(to_lower(a[0]));
  const bool has_count = a.size() == 3;
  int64_t count = 0;
  if (has_count && (!string_to_ll(a[2], count) || count < 0))
    return Reply::error("ERR value is out of range, must be positive");
  bool wrong = false;
  Entry* e = m.lookup_typed(a[1], VType::List, wrong);
  if (wrong) return err_wrongtype();
  if (!e) return has_count ? Reply::nil_array() : Reply::nil();
  if (has_count && count == 0) return Reply::array({});
  const bool left = iequals(a[0], "lpop");
  auto& list = e->v.list.items();
  std::vector<Reply> out;
  const int64_t n = has_count ? count : 1;
  for (int64_t i = 0; i < n && !list.empty(); ++i) {
    out.push_back(Reply::bulk(left ? list.front() : list.back()));
    if (left) list.pop_front();
    else list.pop_back();
  }
  m.modified(a[1], *e);
  return has_count ? Reply::array(std::move(out)) : std::move(out.front());
}

Reply cmd_lrange(Impl& m, ClientState&, const Args& a) {
  int64_t start = 0, end = 0;
  if (!string_to_ll(a[2], start) || !string_to_ll(a[3], end)) return err_not_integer();
  bool wrong = false;
  Entry* e = m.lookup_typed(a[1], VType::List, wrong);
  if (wrong) return err_wrongtype();
  if (!e) return Reply::array({});
  const auto len = static_cast<int64_t>(e->v.list.size());
  if (start < 0) start += len;
  if (end < 0) end += len;
  if (start < 0) start = 0;
  if (start > end || start >= len) return Reply::array({});
  if (end >= len) end = len - 1;
  std::vector<Reply> out;
  for (int64_t i = start; i <= end; ++i) out.push_back(Reply::bulk(e->v.list[size_t(i)]));
  return Reply::array(std::move(out));
}

Reply cmd_lindex(Impl& m, ClientState&, const Args& a) {
  bool wrong = false;
  Entry* e = m.lookup_typed(a[1], VType::List, wrong);
  if (wrong) return err_wrongtype();
  if (!e) return Reply::nil();
  int64_t index = 0;
  if (!string_to_ll(a[2], index)) return err_not_integer();
  const auto len = static_cast<int64_t>(e->v.list.size());
  if (index < 0) index += len;
  if (index < 0 || index >= len) return Reply::nil();
  return Reply::bulk(e->v.list[size_t(index)]);
}

Reply cmd_llen(Impl& m, ClientState&, const Args& a) {
  bool wrong = false;
  Entry* e = m.lookup_typed(a[1], VType::List, wrong);
  if (wrong) return err_wrongtype();
  return Reply::integer_of(e ? static_cast<int64_t>(e->v.list.size()) : 0);
}

// count > 0 removes from the head, < 0 from the tail, 0 removes every match.
Reply cmd_lrem(Impl& m, ClientState&, const Args& a) {
  int64_t count = 0;
  if (!string_to_ll(a[2], count)) return err_not_integer();
  bool wrong = false;
  Entry* e = m.lookup_typed(a[1], VType::List, wrong);
  if (wrong) return err_wrongtype();
  if (!e) return Reply::integer_of(0);
  auto& list = e->v.list.items();
  const uint64_t limit = count == 0 ? UINT64_MAX
                                    : count > 0 ? uint64_t(count) : 0 - uint64_t(count);
  uint64_t removed = 0;
  if (count >= 0) {
    for (auto it = list.begin(); it != list.end() && removed < limit;) {
      if (*it == a[3]) it = list.erase(it), ++removed;
      else ++it;
    }
  } else {
    for (size_t i = list.size(); i-- > 0 && removed < limit;) {
      if (list[i] == a[3]) list.erase(list.begin() + long(i)), ++removed;
    }
  }
  if (removed) m.modified(a[1], *e);
  return Reply::integer_of(static_cast<int64_t>(removed));
}

}  // namespace

void register_list_commands(std::vector<Command>& out) {
  out.insert(out.end(), {
                            {"lpush", -3, kWrite | kDenyOom, cmd_push},
                            {"rpush", -3, kWrite | kDenyOom, cmd_push},
                            {"lpop", -2, kWrite, cmd_pop},
                            {"rpop", -2, kWrite, cmd_pop},
                            {"lrange", 4, 0, cmd_lrange},
                            {"lindex", 3, 0, cmd_lindex},
                            {"llen", 2, 0, cmd_llen},
                            {"lrem", 4, kWrite, cmd_lrem},
                        });
}

}  // namespace lockstep::sim
