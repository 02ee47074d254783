// Sorted set commands (t_zset.c of Redis 7.0): ZADD with NX/XX/GT/LT/CH/INCR, ZINCRBY,
// ZRANGE by rank or score (REV, LIMIT, WITHSCORES), ZRANGEBYSCORE, ZREVRANGE, ZREM,
// ZREMRANGEBYSCORE, ZREMRANGEBYRANK, ZSCORE, ZCARD, ZRANK, ZREVRANK, ZRANGEBYLEX. Scores
// are printed as 7.0 prints doubles (%.17g, "inf").
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iterator>

#include "redis_impl.h"

namespace lockstep::sim {

namespace {

using Impl = NodeCore;

enum ZaddFlag : unsigned { kZaddNX = 1, kZaddXX = 2, kZaddGT = 4, kZaddLT = 8, kIncr = 16 };
enum class ZaddOut { Added, Updated, Unchanged, Nop, NaN };

void zset_put(ZSet& z, const std::string& member, double score) {
  auto it = z.dict.find(member);
  if (it != z.dict.end()) z.order.erase({it->second, member});
  z.dict[member] = score;
  z.order.insert({score, member});
}

void zset_del(ZSet& z, const std::string& member) {
  auto it = z.dict.find(member);
  z.order.erase({it->second, member});
  z.dict.erase(it);
}

// zsetAdd for one member; `score` becomes the resulting score unless the result is Nop.
ZaddOut zset_add(ZSet& z, double& score, const std::string& member, unsigned flags) {
  if (std::isnan(score)) return ZaddOut::NaN;
  auto it = z.dict.find(member);
  if (it == z.dict.end()) {
    if (flags & kZaddXX) return ZaddOut::Nop;
    zset_put(z, member, score);
    return ZaddOut::Added;
  }
  if (flags & kZaddNX) return ZaddOut::Nop;
  const double current = it->second;
  double next = score;
  if (flags & kIncr) {
    next += current;
    if (std::isnan(next)) return ZaddOut::NaN;
  }
  if (((flags & kZaddLT) && next >= current) || ((flags & kZaddGT) && next <= current))
    return ZaddOut::Nop;
  score = next;
  if (next == current) return ZaddOut::Unchanged;
  zset_put(z, member, next);
  return ZaddOut::Updated;
}

// Options first; every score is parsed before anything changes, so a bad float leaves
// the set untouched.
bool parse_zadd(const Args& a, size_t& idx, unsigned& flags, bool& ch, Reply& err) {
  for (; idx < a.size(); ++idx) {
    if (iequals(a[idx], "nx")) flags |= kZaddNX;
    else if (iequals(a[idx], "xx")) flags |= kZaddXX;
    else if (iequals(a[idx], "ch")) ch = true;
    else if (iequals(a[idx], "incr")) flags |= kIncr;
    else if (iequals(a[idx], "gt")) flags |= kZaddGT;
    else if (iequals(a[idx], "lt")) flags |= kZaddLT;
    else break;
  }
  const size_t rest = a.size() - idx;
  if (rest == 0 || rest % 2) err = err_syntax();
  else if ((flags & kZaddNX) && (flags & kZaddXX))
    err = Reply::error("ERR XX and NX options at the same time are not compatible");
  else if ((flags & kZaddNX && flags & (kZaddGT | kZaddLT)) || ((flags & kZaddGT) && (flags & kZaddLT)))
    err = Reply::error("ERR GT, LT, and/or NX options at the same time are not compatible");
  else if ((flags & kIncr) && rest > 2)
    err = Reply::error("ERR INCR option supports a single increment-element pair");
  return !err.is_error();
}

Reply zadd_generic(Impl& m, const Args& a, unsigned flags) {
  bool ch = false;
  size_t idx = 2;
  Reply err;
  if (!parse_zadd(a, idx, flags, ch, err)) return err;
  std::vector<double> scores;
  for (size_t j = idx; j < a.size(); j += 2) {
    double s = 0;
    if (!string_to_double(a[j], s)) return err_not_float();
    scores.push_back(s);
  }
  bool wrong = false;
  Entry* e = m.lookup_typed(a[1], VType::ZSet, wrong);
  if (wrong) return err_wrongtype();
  const bool incr = flags & kIncr;
  Value fresh;
  fresh.type = VType::ZSet;
  ZSet& z = e ? e->v.zset : fresh.zset;
  int64_t added = 0, updated = 0, processed = 0;
  double score = 0;
  for (size_t j = 0; j < scores.size() && (e || !(flags & kZaddXX)); ++j) {
    score = scores[j];
    const ZaddOut out = zset_add(z, score, a[idx + 1 + 2 * j], flags);
    if (out == ZaddOut::NaN) {
      err = Reply::error("ERR resulting score is not a number (NaN)");
      break;
    }
    added += out == ZaddOut::Added;
    updated += out == ZaddOut::Updated;
    processed += out != ZaddOut::Nop;
  }
  if (added || updated) {
    if (e) m.modified(a[1], *e);
    else m.set_value(a[1], std::move(fresh), false);
  }
  if (err.is_error()) return err;
  if (incr) return processed ? Reply::bulk(format_double(score)) : Reply::nil();
  return Reply::integer_of(ch ? added + updated : added);
}

Reply cmd_zadd(Impl& m, ClientState&, const Args& a) { return zadd_generic(m, a, 0); }
Reply cmd_zincrby(Impl& m, ClientState&, const Args& a) { return zadd_generic(m, a, kIncr); }

Entry* zset_for_read(Impl& m, const std::string& key, Reply& err) { return m.lookup_typed(key, VType::ZSet, err); }

// zslParseRange: "(" makes a bound exclusive; strtod must consume everything.
bool parse_score_bound(const std::string& s, double& v, bool& exclusive) {
  exclusive = !s.empty() && s[0] == '(';
  const char* p = s.c_str() + (exclusive ? 1 : 0);
  char* end = nullptr;
  v = std::strtod(p, &end);
  return *end == '\0' && !std::isnan(v);
}

struct RangeQuery {
  bool by_score = false, by_lex = false, rev = false, withscores = false;
  int64_t offset = 0, limit = -1;
  bool has_limit = false;
};

void emit(std::vector<Reply>& out, const std::pair<double, std::string>& item, bool scores) {
  out.push_back(Reply::bulk(item.second));
  if (scores) out.push_back(Reply::bulk(format_double(item.first)));
}

Reply range_by_rank(const ZSet& z, int64_t start, int64_t end, const RangeQuery& q) {
  const auto len = static_cast<int64_t>(z.order.size());
  if (start < 0) start += len;
  if (end < 0) end += len;
  if (start < 0) start = 0;
  if (start > end || start >= len) return Reply::array({});
  if (end >= len) end = len - 1;
  std::vector<Reply> out;
  std::vector<std::pair<double, std::string>> items(z.order.begin(), z.order.end());
  for (int64_t i = start; i <= end; ++i)
    emit(out, items[size_t(q.rev ? len - 1 - i : i)], q.withscores);
  return Reply::array(std::move(out));
}

Reply range_by_score(const ZSet& z, double min, bool minex, double max, bool maxex,
                     const RangeQuery& q) {
  auto in_range = [&](double s) {
    return (minex ? s > min : s >= min) && (maxex ? s < max : s <= max);
  };
  std::vector<std::pair<double, std::string>> items;
  for (const auto& it : z.order)
    if (in_range(it.first)) items.push_back(it);
  if (q.rev) std::reverse(items.begin(), items.end());
  std::vector<Reply> out;
  if (q.offset < 0) return Reply::array({});  // Redis skips forever on a negative offset
  int64_t limit = q.limit;
  for (size_t i = size_t(q.offset); i < items.size() && limit != 0; ++i, --limit)
    emit(out, items[i], q.withscores);
  return Reply::array(std::move(out));
}

// A BYLEX bound: "[x" inclusive, "(x" exclusive, "-" and "+" the open ends.
struct LexBound {
  enum { Min, Max, Str } kind = Str;
  std::string s;
  bool exclusive = false;
};

bool parse_lex_bound(const std::string& a, LexBound& b) {
  if (a == "+" || a == "-") {
    b.kind = a == "+" ? LexBound::Max : LexBound::Min;
    b.exclusive = true;
    return true;
  }
  if (a.empty() || (a[0] != '(' && a[0] != '[')) return false;
  b.exclusive = a[0] == '(';
  b.s = a.substr(1);
  return true;
}

// sdscmplex: "-" sorts before and "+" after every string.
int lex_compare(const LexBound& a, const LexBound& b) {
  if (a.kind == b.kind && a.kind != LexBound::Str) return 0;
  if (a.kind == LexBound::Min || b.kind == LexBound::Max) return -1;
  if (a.kind == LexBound::Max || b.kind == LexBound::Min) return 1;
  return a.s.compare(b.s);
}

// Lex ranges assume equal scores; with mixed scores Redis walks its listpack from one
// end, and so do we, so that the (unspecified) answer is the same.
Reply range_by_lex(const ZSet& z, const LexBound& min, const LexBound& max,
                   const RangeQuery& q) {
  auto member = [](const std::pair<double, std::string>& it) {
    return LexBound{LexBound::Str, it.second, false};
  };
  auto gte_min = [&](const auto& it) {
    const int c = lex_compare(member(it), min);
    return min.exclusive ? c > 0 : c >= 0;
  };
  auto lte_max = [&](const auto& it) {
    const int c = lex_compare(member(it), max);
    return max.exclusive ? c < 0 : c <= 0;
  };
  const int cmp = lex_compare(min, max);
  std::vector<std::pair<double, std::string>> items(z.order.begin(), z.order.end());
  if (cmp > 0 || (cmp == 0 && (min.exclusive || max.exclusive)) || q.offset < 0 ||
      !gte_min(items.back()) || !lte_max(items.front()))
    return Reply::array({});
  if (q.rev) std::reverse(items.begin(), items.end());
  auto inner = [&](const auto& it) { return q.rev ? lte_max(it) : gte_min(it); };
  auto outer = [&](const auto& it) { return q.rev ? gte_min(it) : lte_max(it); };
  size_t i = 0;
  while (i < items.size() && !inner(items[i])) ++i;
  if (i == items.size() || !outer(items[i])) return Reply::array({});
  std::vector<Reply> out;
  int64_t limit = q.limit;
  for (i += size_t(q.offset); i < items.size() && limit != 0 && outer(items[i]); ++i, --limit)
    emit(out, items[i], false);
  return Reply::array(std::move(out));
}

// zrangeGenericCommand: options, then conflicts, then the range, then the key.
Reply zrange_generic(Impl& m, const Args& a, RangeQuery q, bool fixed) {
  for (size_t j = 4; j < a.size(); ++j) {
    const size_t left = a.size() - j - 1;
    if (iequals(a[j], "withscores")) q.withscores = true;
    else if (iequals(a[j], "limit") && left >= 2) {
      if (!string_to_ll(a[j + 1], q.offset) || !string_to_ll(a[j + 2], q.limit))
        return err_not_integer();
      q.has_limit = true;
      j += 2;
    } else if (!fixed && !q.rev && iequals(a[j], "rev")) q.rev = true;
    else if (!fixed && !q.by_score && !q.by_lex && iequals(a[j], "byscore")) q.by_score = true;
    else if (!fixed && !q.by_score && !q.by_lex && iequals(a[j], "bylex")) q.by_lex = true;
    else return err_syntax();
  }
  if (q.has_limit && q.limit != -1 && !q.by_score && !q.by_lex)
    return Reply::error(
        "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX");
  if (q.withscores && q.by_lex)
    return Reply::error("ERR syntax error, WITHSCORES not supported in combination with BYLEX");
  size_t lo = 2, hi = 3;
  if (q.rev && (q.by_score || q.by_lex)) std::swap(lo, hi);
  LexBound lex_min, lex_max;
  int64_t start = 0, end = 0;
  double min = 0, max = 0;
  bool minex = false, maxex = false;
  if (q.by_lex) {
    if (!parse_lex_bound(a[lo], lex_min) || !parse_lex_bound(a[hi], lex_max))
      return Reply::error("ERR min or max not valid string range item");
  } else if (!q.by_score) {
    if (!string_to_ll(a[lo], start) || !string_to_ll(a[hi], end)) return err_not_integer();
  } else if (!parse_score_bound(a[lo], min, minex) || !parse_score_bound(a[hi], max, maxex)) {
    return Reply::error("ERR min or max is not a float");
  }
  Reply err;
  Entry* e = zset_for_read(m, a[1], err);
  if (err.is_error()) return err;
  if (!e) return Reply::array({});
  if (q.by_lex) return range_by_lex(e->v.zset, lex_min, lex_max, q);
  return q.by_score ? range_by_score(e->v.zset, min, minex, max, maxex, q)
                    : range_by_rank(e->v.zset, start, end, q);
}

Reply cmd_zrange(Impl& m, ClientState&, const Args& a) {
  return zrange_generic(m, a, RangeQuery{}, false);
}
Reply cmd_zrevrange(Impl& m, ClientState&, const Args& a) {
  RangeQuery q;
  q.rev = true;
  return zrange_generic(m, a, q, true);
}
Reply cmd_zrangebyscore(Impl& m, ClientState&, const Args& a) {
  RangeQuery q;
  q.by_score = true;
  return zrange_generic(m, a, q, true);
}

Reply cmd_zrangebylex(Impl& m, ClientState&, const Args& a) {
  RangeQuery q;
  q.by_lex = true;
  return zrange_generic(m, a, q, true);
}

Reply cmd_zrem(Impl& m, ClientState&, const Args& a) {
  Reply err;
  Entry* e = zset_for_read(m, a[1], err);
  if (err.is_error()) return err;
  if (!e) return Reply::integer_of(0);
  int64_t removed = 0;
  for (size_t i = 2; i < a.size(); ++i) {
    if (!e->v.zset.dict.count(a[i])) continue;
    zset_del(e->v.zset, a[i]);
    ++removed;
  }
  if (removed) m.modified(a[1], *e);
  return Reply::integer_of(removed);
}

// zremrangeGenericCommand: the range is parsed before the key is looked at; a rank range
// is clamped as ZRANGE clamps it.
Reply zremrange_generic(Impl& m, const Args& a, bool by_score) {
  int64_t start = 0, end = 0;
  double min = 0, max = 0;
  bool minex = false, maxex = false;
  if (!by_score) {
    if (!string_to_ll(a[2], start) || !string_to_ll(a[3], end)) return err_not_integer();
  } else if (!parse_score_bound(a[2], min, minex) || !parse_score_bound(a[3], max, maxex)) {
    return Reply::error("ERR min or max is not a float");
  }
  Reply err;
  Entry* e = zset_for_read(m, a[1], err);
  if (err.is_error()) return err;
  if (!e) return Reply::integer_of(0);
  ZSet& z = e->v.zset;
  std::vector<std::pair<double, std::string>> doomed;
  if (by_score) {
    for (const auto& item : z.order) {
      if ((minex ? item.first > min : item.first >= min) && (maxex ? item.first < max : item.first <= max))
        doomed.push_back(item);
    }
  } else {
    const auto len = static_cast<int64_t>(z.order.size());
    if (start < 0) start += len;
    if (end < 0) end += len;
    if (start < 0) start = 0;
    if (start > end || start >= len) return Reply::integer_of(0);
    if (end >= len) end = len - 1;
    auto it = std::next(z.order.begin(), start);
    for (int64_t i = start; i <= end; ++i, ++it) doomed.push_back(*it);
  }
  for (const auto& item : doomed) zset_del(z, item.second);
  if (!doomed.empty()) m.modified(a[1], *e);
  return Reply::integer_of(static_cast<int64_t>(doomed.size()));
}

Reply cmd_zremrangebyscore(Impl& m, ClientState&, const Args& a) { return zremrange_generic(m, a, true); }
Reply cmd_zremrangebyrank(Impl& m, ClientState&, const Args& a) { return zremrange_generic(m, a, false); }

Reply cmd_zscore(Impl& m, ClientState&, const Args& a) {
  Reply err;
  Entry* e = zset_for_read(m, a[1], err);
  if (err.is_error()) return err;
  if (!e) return Reply::nil();
  auto it = e->v.zset.dict.find(a[2]);
  return it == e->v.zset.dict.end() ? Reply::nil() : Reply::bulk(format_double(it->second));
}

Reply cmd_zcard(Impl& m, ClientState&, const Args& a) {
  Reply err;
  Entry* e = zset_for_read(m, a[1], err);
  if (err.is_error()) return err;
  return Reply::integer_of(e ? static_cast<int64_t>(e->v.zset.dict.size()) : 0);
}

Reply cmd_zrank(Impl& m, ClientState&, const Args& a) {
  Reply err;
  Entry* e = zset_for_read(m, a[1], err);
  if (err.is_error()) return err;
  if (!e) return Reply::nil();
  auto it = e->v.zset.dict.find(a[2]);
  if (it == e->v.zset.dict.end()) return Reply::nil();
  const auto rank = std::distance(e->v.zset.order.begin(), e->v.zset.order.find({it->second, a[2]}));
  const auto len = static_cast<int64_t>(e->v.zset.order.size());
  return Reply::integer_of(iequals(a[0], "zrevrank") ? len - 1 - rank : rank);
}

}  // namespace

void register_zset_commands(std::vector<Command>& out) {
  out.insert(out.end(), {
                            {"zadd", -4, kWrite | kDenyOom, cmd_zadd},
                            {"zincrby", 4, kWrite | kDenyOom, cmd_zincrby},
                            {"zrange", -4, 0, cmd_zrange},
                            {"zrevrange", -4, 0, cmd_zrevrange},
                            {"zrangebyscore", -4, 0, cmd_zrangebyscore},
                            {"zrangebylex", -4, 0, cmd_zrangebylex},
                            {"zrem", -3, kWrite, cmd_zrem},
                            {"zremrangebyscore", 4, kWrite, cmd_zremrangebyscore},
                            {"zremrangebyrank", 4, kWrite, cmd_zremrangebyrank},
                            {"zscore", 3, 0, cmd_zscore},
                            {"zcard", 2, 0, cmd_zcard},
                            {"zrank", 3, 0, cmd_zrank},
                            {"zrevrank", 3, 0, cmd_zrank},
                        });
}

}  // namespace lockstep::sim
