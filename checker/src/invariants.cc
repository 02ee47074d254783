#include "lockstep/checker/invariants.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <map>
#include <optional>
#include <set>

namespace lockstep::checker {

std::string format_seconds(int64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3fs", static_cast<double>(ns) / 1e9);
  return buf;
}

std::string process_label(int64_t process) { return "client-" + std::to_string(process); }

namespace {

Violation violation(Property p, std::string explanation, std::vector<int64_t> processes, int64_t at_ns) {
  Violation v{p, std::move(explanation), std::move(processes), at_ns};
  v.severity = property_info(p).severity;
  return v;
}

bool is_truth(const Event& e, std::string_view f) { return e.type == EventType::Truth && f_is(e, f); }

// A read-write lock's read side says "read" as its cs-enter value. Asked of the string in
// place: comparing the JSON value with a literal built a string and a JSON value from it
// for every critical section.
bool is_read_section(const Event& e) { return e.value.is_string() && e.value.get_ref<const std::string&>() == "read"; }

int64_t end_time(const History& h) { return h.events.empty() ? 0 : h.events.back().time_ns; }

struct Section {
  int64_t process;
  int64_t begin_ns;
  int64_t end_ns;
  bool ended;  // false: still open at a crash or at the end of the run
  bool read;   // under the read side of a read-write lock (cs-enter value "read")
};

// Critical sections from cs-enter / cs-exit records; a crash ends an open section (the
// process can no longer act), the end of the run ends the rest.
std::vector<Section> critical_sections(const History& h) {
  std::vector<Section> done;
  // A process's entry stays once made and is marked closed rather than erased: a run
  // enters and leaves thousands of sections on a handful of processes.
  struct Entered {
    int64_t since_ns;
    bool read;
    bool inside;
  };
  std::map<int64_t, Entered> open;  // by process
  for (const auto& e : h.events) {
    if (is_truth(e, truth::kCsEnter)) {
      open[e.process] = {e.time_ns, is_read_section(e), true};
    } else if (is_truth(e, truth::kCsExit) || is_truth(e, truth::kCrash)) {
      auto it = open.find(e.process);
      if (it == open.end() || !it->second.inside) continue;
      done.push_back({e.process, it->second.since_ns, e.time_ns, f_is(e, truth::kCsExit), it->second.read});
      it->second.inside = false;
    }
  }
  for (const auto& [p, o] : open) {
    if (o.inside) done.push_back({p, o.since_ns, end_time(h), false, o.read});
  }
  std::sort(done.begin(), done.end(), [](const Section& a, const Section& b) {
    return a.begin_ns != b.begin_ns ? a.begin_ns < b.begin_ns : a.process < b.process;
  });
  return done;
}

std::string describe(const Section& s) {
  return process_label(s.process) + (s.read ? "'s read section [" : "'s critical section [") + format_seconds(s.begin_ns) + ", " +
         format_seconds(s.end_ns) + (s.ended ? "]" : " (never exited)]");
}

}  // namespace

std::vector<Violation> check_mutual_exclusion(const History& h) {
  const auto sections = critical_sections(h);
  std::optional<Violation> first;
  int64_t count = 0;
  for (size_t i = 0; i < sections.size(); ++i) {
    for (size_t j = i + 1; j < sections.size() && sections[j].begin_ns < sections[i].end_ns; ++j) {
      if (sections[j].process == sections[i].process || (sections[i].read && sections[j].read)) continue;
      ++count;
      if (first) continue;
      const auto& a = sections[i];
      const auto& b = sections[j];
      const Section& left_first = a.end_ns <= b.end_ns ? a : b;
      const int64_t overlap = left_first.end_ns - b.begin_ns;
      std::string held = format_seconds(overlap) + ".";
      if (overlap < 1'000'000) {
        // Under a millisecond the rounded times above look equal: give them to the microsecond.
        char buf[160];
        std::snprintf(buf, sizeof buf, "%.3fms (%s entered at t=%.6fs, %s left at t=%.6fs).",
                      static_cast<double>(overlap) / 1e6, process_label(b.process).c_str(),
                      static_cast<double>(b.begin_ns) / 1e9, process_label(left_first.process).c_str(),
                      static_cast<double>(left_first.end_ns) / 1e9);
        held = buf;
      }
      first = violation(Property::MutualExclusion,
                        describe(b) + " began while " + describe(a) + " was still running: both held the lock for " +
                            held,
                        {a.process, b.process},
                        b.begin_ns);
    }
  }
  if (!first) return {};
  first->count = count;
  return {*first};
}

std::vector<Violation> check_lost_update(const History& h, const InvariantOptions& o) {
  const Event* resource = nullptr;
  int64_t sold = 0, maybe_sold = 0;
  std::map<int64_t, int64_t> pending;  // process -> writes invoked, not yet completed
  for (const auto& e : h.events) {
    if (is_truth(e, truth::kResource) && e.key == o.resource_key) resource = &e;
    if (!f_is(e, "write") || e.key != o.resource_key) continue;
    if (e.type == EventType::Invoke) ++pending[e.process];
    if (e.type != EventType::Invoke && pending[e.process] > 0) --pending[e.process];
    if (e.type == EventType::Ok) ++sold;
    if (e.type == EventType::Info) ++maybe_sold;
  }
  // A write whose process crashed before the reply is as unknown as a timed-out one.
  for (const auto& [p, n] : pending) maybe_sold += n;
  if (!resource || !resource->value.is_object()) return {};
  const auto& v = resource->value;
  if (!v.contains("initial") || !v.contains("final") || !v["initial"].is_number_integer()) return {};
  const int64_t initial = v["initial"].get<int64_t>();
  if (!v["final"].is_number_integer()) {
    return {violation(Property::LostUpdate,
                      "the resource \"" + o.resource_key + "\" no longer holds a number at the end of the run.", {},
                      resource->time_ns)};
  }
  const int64_t final_value = v["final"].get<int64_t>();
  if (final_value < 0) {
    return {violation(Property::LostUpdate,
                      "the resource \"" + o.resource_key + "\" ended at " + std::to_string(final_value) +
                          ": more was sold than there was.",
                      {}, resource->time_ns)};
  }
  // Writes whose reply never came may or may not have landed: allow for them.
  const int64_t expected_high = initial - sold;
  const int64_t expected_low = initial - sold - maybe_sold;
  if (final_value >= expected_low && final_value <= expected_high) return {};
  const int64_t lost = final_value - expected_high;
  Violation found = violation(Property::LostUpdate,
                          "the resource \"" + o.resource_key + "\" started at " + std::to_string(initial) + " and " +
                              std::to_string(sold) + " decrements succeeded, so it should be " +
                              std::to_string(expected_high) + ", but it ended at " + std::to_string(final_value) +
                              ": " + std::to_string(lost) + (lost == 1 ? " update was lost." : " updates were lost."),
                          {}, resource->time_ns);
  found.count = lost;
  return {found};
}

std::vector<Violation> check_foreign_unlock(const History& h, const InvariantOptions& o) {
  std::optional<Violation> first;
  int64_t count = 0;
  std::map<std::pair<int64_t, int64_t>, int64_t> set_at;  // (node, writer) -> when set
  for (const auto& e : h.events) {
    if (e.type != EventType::Truth || e.key != o.lock_key) continue;
    if (f_is(e, truth::kKeySet)) set_at[{e.node, e.process}] = e.time_ns;
    if (!f_is(e, truth::kKeyDel) || e.process < 0) continue;
    int64_t owner = -1;
    if (e.extra.is_object()) {
      if (auto it = e.extra.find("owner"); it != e.extra.end()) owner = it->get<int64_t>();
    }
    if (owner == e.process || owner < 0) continue;
    ++count;
    if (first) continue;
    std::string since;
    if (auto it = set_at.find({e.node, owner}); it != set_at.end()) since = " at t=" + format_seconds(it->second);
    first = violation(Property::ForeignUnlock,
                      process_label(e.process) + "'s unlock at t=" + format_seconds(e.time_ns) + " deleted the lock " +
                          process_label(owner) + " had taken" + since + " on node-" + std::to_string(e.node + 1) +
                          ": only the owner may unlock.",
                      {e.process, owner},
                      e.time_ns);
  }
  if (!first) return {};
  first->count = count;
  return {*first};
}

std::vector<Violation> check_deadlock(const History& h, const InvariantOptions& o) {
  struct Holder {
    int64_t process = -1;
    int64_t since_ns = 0;
  };
  std::map<int64_t, Holder> holder;            // node -> who holds the key there
  std::map<int64_t, int64_t> gone;             // process -> crashed/finished since
  std::map<int64_t, std::string> gone_how;
  // Acquire attempts as [invoke, completion) intervals: a client that started waiting
  // before the holder died is still a waiter after it.
  struct Attempt {
    int64_t process, begin_ns, end_ns;
  };
  std::vector<Attempt> attempts;
  std::map<int64_t, size_t> open_attempt;
  for (const auto& e : h.events) {
    if (!is_acquire(e.f) || e.type == EventType::Truth) continue;
    if (e.type == EventType::Invoke) {
      open_attempt[e.process] = attempts.size();
      attempts.push_back({e.process, e.time_ns, end_time(h)});
    } else if (auto it = open_attempt.find(e.process); it != open_attempt.end()) {
      attempts[it->second].end_ns = e.time_ns;
      open_attempt.erase(it);
    }
  }

  auto judge = [&](int64_t node, const Holder& hd, int64_t until_ns, bool to_end) -> std::optional<Violation> {
    auto g = gone.find(hd.process);
    if (hd.process < 0 || g == gone.end()) return std::nullopt;
    const int64_t stuck_since = std::max(hd.since_ns, g->second);
    if (until_ns - stuck_since <= o.deadlock_bound_ns) return std::nullopt;
    for (const auto& a : attempts) {
      if (a.process == hd.process || a.end_ns <= stuck_since || a.begin_ns >= until_ns) continue;
      const int64_t p = a.process;
      const int64_t t = std::max(a.begin_ns, stuck_since);
      return violation(Property::Deadlock,
                       "the lock on node-" + std::to_string(node + 1) + " stayed with " + gone_how[hd.process] + " " +
                           process_label(hd.process) + " from t=" + format_seconds(stuck_since) +
                           (to_end ? " to the end of the run" : " until t=" + format_seconds(until_ns)) + " (" +
                           format_seconds(until_ns - stuck_since) + ", bound " + format_seconds(o.deadlock_bound_ns) +
                           ") while " + process_label(p) + " was trying to acquire it (at t=" + format_seconds(t) +
                           ").",
                       {hd.process, p},
                       stuck_since + o.deadlock_bound_ns);
    }
    return std::nullopt;
  };

  for (const auto& e : h.events) {
    if (e.type != EventType::Truth) continue;
    if (f_is(e, truth::kCrash) && e.process >= 0) {
      gone.emplace(e.process, e.time_ns);
      gone_how[e.process] = "crashed";
    } else if (f_is(e, truth::kFinish)) {
      gone.emplace(e.process, e.time_ns);
      gone_how[e.process] = "finished";
    } else if (f_is(e, truth::kRestart) && e.process >= 0) {
      gone.erase(e.process);
    } else if (e.key == o.lock_key && f_is(e, truth::kKeySet)) {
      holder[e.node] = Holder{e.process, e.time_ns};
    } else if (e.key == o.lock_key && (f_is(e, truth::kKeyDel) || f_is(e, truth::kKeyExpire) || f_is(e, truth::kKeyEvict))) {
      Holder& hd = holder[e.node];
      if (auto v = judge(e.node, hd, e.time_ns, false)) return {*v};
      hd = Holder{};  // nobody, as judge reads it: kept rather than erased and made again
    }
  }
  for (const auto& [node, hd] : holder) {
    if (auto v = judge(node, hd, end_time(h), true)) return {*v};
  }
  return {};
}

std::vector<Violation> check_fencing(const History& h, const InvariantOptions& o) {
  int64_t highest = -1, highest_by = -1, highest_at = 0;
  std::optional<Violation> first;
  int64_t count = 0;
  for (const auto& e : h.events) {
    if (e.type != EventType::Ok || !f_is(e, "write") || e.key != o.resource_key) continue;
    if (!e.value.is_object() || !e.value.contains("token") || !e.value["token"].is_number_integer()) continue;
    const int64_t token = e.value["token"].get<int64_t>();
    if (token >= highest) {
      highest = token;
      highest_by = e.process;
      highest_at = e.time_ns;
      continue;
    }
    ++count;
    if (first) continue;
    first = violation(Property::Fencing,
                      "the resource \"" + o.resource_key + "\" accepted " + process_label(e.process) +
                          "'s write with token " + std::to_string(token) + " at t=" + format_seconds(e.time_ns) +
                          " after " + process_label(highest_by) + " had written with token " + std::to_string(highest) +
                          " at t=" + format_seconds(highest_at) + ": a stale holder's write got through.",
                      {e.process, highest_by},
                      e.time_ns);
  }
  if (!first) return {};
  first->count = count;
  return {*first};
}

std::vector<Violation> check_stale_read(const History& h, const InvariantOptions& o) {
  struct Reading {
    int64_t first_value = 0, first_ns = 0;
    bool has_first = false;
  };
  std::map<int64_t, Reading> open;  // process -> its read section so far
  std::optional<Violation> first;
  int64_t count = 0;
  for (const auto& e : h.events) {
    if (is_truth(e, truth::kCsEnter) && is_read_section(e)) {
      open[e.process] = Reading{};
    } else if (is_truth(e, truth::kCsExit) || is_truth(e, truth::kCrash)) {
      open.erase(e.process);
    } else if (e.type == EventType::Ok && f_is(e, "read") && e.key == o.resource_key && e.value.is_number_integer()) {
      auto it = open.find(e.process);
      if (it == open.end()) continue;
      Reading& r = it->second;
      const int64_t v = e.value.get<int64_t>();
      if (!r.has_first) {
        r = Reading{v, e.time_ns, true};
        continue;
      }
      if (v == r.first_value) continue;
      ++count;
      if (first) continue;
      first = violation(Property::StaleRead,
                        process_label(e.process) + " read \"" + o.resource_key + "\" = " +
                            std::to_string(r.first_value) + " at t=" + format_seconds(r.first_ns) + " and " +
                            std::to_string(v) + " at t=" + format_seconds(e.time_ns) +
                            " under one read lock: a write landed while it held the lock for reading.",
                        {e.process},
                        e.time_ns);
    }
  }
  if (!first) return {};
  first->count = count;
  return {*first};
}

// The cache-aside workload records its operations on the database ("db-write",
// "db-read") and on the cache ("cache-read", "cache-fill", "cache-write", "cache-delete")
// with the item key, and one cache-final truth per key at the end of the run.
std::vector<Violation> check_stale_cache(const History& h) {
  // (item, value) -> the db-write that put the value in the database: its completion, or
  // its invocation while no completion came
  std::map<std::pair<std::string, std::string>, const Event*> db_write;
  std::map<std::pair<std::string, std::string>, const Event*> cache_writer;  // (item, value) -> last Ok fill/write
  std::optional<Violation> first;
  int64_t count = 0;
  for (const auto& e : h.events) {
    if (e.type != EventType::Truth && f_is(e, "db-write") && e.value.is_string())
      db_write[{e.key, e.value.get<std::string>()}] = &e;
    if (e.type == EventType::Ok && (f_is(e, "cache-fill") || f_is(e, "cache-write")) && e.value.is_string())
      cache_writer[{e.key, e.value.get<std::string>()}] = &e;
    if (!is_truth(e, truth::kCacheFinal) || !e.value.is_object()) continue;
    const auto& v = e.value;
    const nlohmann::json cache = v.value("cache", nlohmann::json());
    const nlohmann::json db = v.value("db", nlohmann::json());
    if (cache.is_null() || cache == db) continue;
    const int64_t ttl_ms = v.value("cache_ttl_ms", int64_t{-1});
    const int64_t allowed_ns = v.value("max_stale_ms", int64_t{0}) * 1'000'000;
    // The database has held its value since the write of it (from the start if none did).
    auto w = db.is_string() ? db_write.find({e.key, db.get<std::string>()}) : db_write.end();
    const int64_t since_ns = w == db_write.end() ? 0 : w->second->time_ns;
    const bool forever = ttl_ms < 0;
    const int64_t until_ns = forever ? 0 : e.time_ns + ttl_ms * 1'000'000;
    if (!forever && until_ns - since_ns <= allowed_ns) continue;
    ++count;
    if (first) continue;
    std::vector<int64_t> processes;
    std::string who;
    if (auto c = cache_writer.find({e.key, cache.is_string() ? cache.get<std::string>() : cache.dump()});
        c != cache_writer.end()) {
      processes.push_back(c->second->process);
      who = " (" + process_label(c->second->process) + " put it there at t=" + format_seconds(c->second->time_ns) + ")";
    }
    if (w != db_write.end()) processes.push_back(w->second->process);
    const std::string changed =
        w == db_write.end() ? "since the start"
                                 : "since " + process_label(w->second->process) + "'s write at t=" + format_seconds(since_ns);
    const std::string lives = forever ? "it has no TTL and stays stale for good"
                                      : "its TTL keeps it stale until t=" + format_seconds(until_ns) + ", " +
                                            format_seconds(until_ns - since_ns) + " after the database changed";
    first = violation(Property::StaleCache,
                      "at the end of the run the cache holds \"" + e.key + "\" = " + cache.dump() + who +
                          " but the database holds " + db.dump() + " " + changed + "; " + lives +
                          ", more than the " + format_seconds(allowed_ns) + " the scenario allows.",
                      processes,
                      e.time_ns);
  }
  if (!first) return {};
  first->count = count;
  return {*first};
}

std::vector<Violation> check_invariants(const History& h, const InvariantOptions& o) {
  std::vector<Violation> all;
  for (auto&& v : check_mutual_exclusion(h)) all.push_back(std::move(v));
  for (auto&& v : check_lost_update(h, o)) all.push_back(std::move(v));
  for (auto&& v : check_foreign_unlock(h, o)) all.push_back(std::move(v));
  for (auto&& v : check_deadlock(h, o)) all.push_back(std::move(v));
  for (auto&& v : check_fencing(h, o)) all.push_back(std::move(v));
  for (auto&& v : check_stale_read(h, o)) all.push_back(std::move(v));
  for (auto&& v : check_stale_cache(h)) all.push_back(std::move(v));
  for (auto&& v : check_fairness(h, o)) all.push_back(std::move(v));
  for (auto&& v : check_false_extend(h, o)) all.push_back(std::move(v));
  return all;
}

}  // namespace lockstep::checker

namespace lockstep::checker {

std::vector<Violation> check_fairness(const History& h, const InvariantOptions& o) {
  if (!o.fair) return {};
  // When a client asked: its acquire's invoke, or, where the world saw the request leave
  // (a request record, live), the first such moment after the invoke, which is the order
  // a fair lock's server can go by.
  struct Ask {
    int64_t since_ns;
    bool seen_leaving;
  };
  std::map<int64_t, Ask> waiting;    // process -> its open ask; a holder asking again is not in line
  std::map<int64_t, int64_t> holds;  // process -> acquisitions not yet released
  std::optional<Violation> first;
  int64_t count = 0;
  for (const auto& e : h.events) {
    if (is_truth(e, truth::kCrash)) {
      waiting.erase(e.process);
      holds.erase(e.process);
      continue;
    }
    if (is_truth(e, truth::kRequest) && e.key == o.lock_key) {
      auto it = waiting.find(e.process);
      if (it != waiting.end() && !it->second.seen_leaving) it->second = Ask{e.time_ns, true};
      continue;
    }
    if (e.type == EventType::Truth || e.key != o.lock_key || e.thread != 0) continue;
    if (is_release(e.f) && e.type != EventType::Invoke) {
      if (holds[e.process] > 0) --holds[e.process];
      continue;
    }
    if (!is_acquire(e.f)) continue;
    if (e.type == EventType::Invoke) {
      if (holds[e.process] == 0) waiting[e.process] = Ask{e.time_ns, false};
      continue;
    }
    auto mine = waiting.find(e.process);
    const int64_t since = mine == waiting.end() ? e.time_ns : mine->second.since_ns;
    if (mine != waiting.end()) waiting.erase(mine);
    if (e.type != EventType::Ok) continue;
    ++holds[e.process];
    // The one that has waited longest, if it asked clearly before this one.
    const std::pair<const int64_t, Ask>* oldest = nullptr;
    for (const auto& w : waiting) {
      if (!oldest || w.second.since_ns < oldest->second.since_ns) oldest = &w;
    }
    if (!oldest || oldest->second.since_ns + o.fairness_margin_ns >= since) continue;
    ++count;
    if (first) continue;
    first = violation(Property::Fairness,
                      process_label(e.process) + " was served at t=" + format_seconds(e.time_ns) + " (it asked at t=" +
                          format_seconds(since) + ") while " + process_label(oldest->first) + ", which had asked at t=" +
                          format_seconds(oldest->second.since_ns) + ", was still waiting: a fair lock serves in arrival order.",
                      {e.process, oldest->first}, e.time_ns);
  }
  if (!first) return {};
  first->count = count;
  return {*first};
}

void classify(std::vector<Violation>& violations, const History& h) {
  bool overlap = false;
  for (const auto& v : violations) overlap = overlap || v.property == Property::MutualExclusion;
  bool sections = false;
  for (const auto& e : h.events) {
    if (is_truth(e, truth::kCsEnter)) {
      sections = true;
      break;
    }
  }
  for (auto& v : violations) {
    v.severity = property_info(v.property).severity;
    if (v.property != Property::Linearizability || overlap || !sections) continue;
    if (v.severity == Severity::LeaseLost) continue;
    v.severity = Severity::LeaseLost;
    // "the lock's operations are not linearizable as a mutex: <what happened>." becomes
    // "<what happened>. The holder's lease had run out, so ... as a mutex, but ...".
    std::string what = v.explanation, model = "lock";
    if (const size_t at = what.find("not linearizable as a"); at != std::string::npos) {
      const size_t colon = what.find(": ", at);
      if (colon != std::string::npos) {
        model = what.substr(at + 22, colon - at - 22);
        what = what.substr(colon + 2);
      }
    }
    if (!what.empty() && what.back() == '.') what.pop_back();
    v.explanation = "lease lost while held: " + what + ". The holder's lease had run out, so the lock's operations are "
                    "not linearizable as a " + model + ", but no two critical sections overlapped: nobody worked "
                    "beside it.";
  }
}

std::vector<std::string> unfinished_work(const History& h) {
  // client -> its operation without a completion (nullptr: none); entries stay once made,
  // as a run has few clients and many operations
  std::map<int64_t, const Event*> open_op;
  std::map<int64_t, bool> done;  // client -> finished or crashed
  int64_t completed = 0;
  for (const auto& e : h.events) {
    if (e.type == EventType::Truth) {
      if ((f_is(e, truth::kFinish) || f_is(e, truth::kCrash)) && e.process >= 0) done[e.process] = true;
      continue;
    }
    if (e.process < 0 || e.thread != 0) continue;
    if (e.type == EventType::Invoke) {
      const Event*& open = open_op[e.process];
      if (!open) done.emplace(e.process, false);
      open = &e;
    } else {
      if (auto it = open_op.find(e.process); it != open_op.end()) it->second = nullptr;
      ++completed;
    }
  }
  std::vector<std::string> reasons;
  std::string waiting, working;
  int64_t n_waiting = 0, n_working = 0;
  for (const auto& [process, finished] : done) {
    if (finished) continue;
    auto it = open_op.find(process);
    if (it != open_op.end() && !it->second) it = open_op.end();
    if (it != open_op.end() && is_acquire(it->second->f)) {
      waiting += (waiting.empty() ? "" : ", ") + process_label(process);
      ++n_waiting;
    } else {
      working += (working.empty() ? "" : ", ") + process_label(process) +
                 (it != open_op.end() ? " in " + it->second->f : "");
      ++n_working;
    }
  }
  auto clients = [](int64_t n) { return std::to_string(n) + (n == 1 ? " client" : " clients"); };
  if (n_waiting > 0) {
    reasons.push_back(clients(n_waiting) + (n_waiting == 1 ? " was" : " were") +
                      " still waiting for the lock when the run ended (" + waiting +
                      "): the run did not see the workload through.");
  }
  if (n_working > 0) {
    reasons.push_back(clients(n_working) + (n_working == 1 ? " was" : " were") +
                      " still working when the run ended (" + working + "): the run did not see the workload through.");
  }
  if (completed == 0) reasons.push_back("no operation completed in the whole run.");
  return reasons;
}

std::vector<Violation> check_false_extend(const History& h, const InvariantOptions& o) {
  if (o.lock_nodes <= 0) return {};
  // Who held the lock key on each node, and from when to when (end: the end of the run).
  struct Hold {
    int64_t node, process, from, to;
  };
  std::vector<Hold> holds;
  std::map<int64_t, size_t> open;  // node -> its hold in `holds`, while one is open
  // A replica applying its master's write, or a node reloading its file, sets the key
  // for nobody in particular: its value says whose lock it is.
  std::map<std::string, int64_t> owner_of;  // lock value -> the process that wrote it
  auto close = [&](int64_t node, int64_t at) {
    auto it = open.find(node);
    if (it == open.end()) return;
    holds[it->second].to = at;
    open.erase(it);
  };
  for (const auto& e : h.events) {
    if (e.type != EventType::Truth || e.key != o.lock_key || e.node < 0) continue;
    if (f_is(e, truth::kKeySet)) {
      const std::string value = e.value.is_string() ? e.value.get<std::string>() : e.value.dump();
      int64_t process = e.process;
      if (process >= 0) {
        owner_of.emplace(value, process);
      } else if (auto known = owner_of.find(value); known != owner_of.end()) {
        process = known->second;
      }
      auto it = open.find(e.node);
      if (it != open.end() && holds[it->second].process == process) continue;  // the same holder again
      close(e.node, e.time_ns);
      open[e.node] = holds.size();
      holds.push_back({e.node, process, e.time_ns, std::numeric_limits<int64_t>::max()});
    } else if (f_is(e, truth::kKeyDel) || f_is(e, truth::kKeyExpire) || f_is(e, truth::kKeyEvict)) {
      close(e.node, e.time_ns);
    }
  }
  const int majority = o.lock_nodes / 2 + 1;
  std::map<std::pair<int64_t, int64_t>, int64_t> asked;  // (process, thread) -> extend invoked at
  std::optional<Violation> first;
  int64_t count = 0;
  for (const auto& e : h.events) {
    // The client's own calls only: a library's background renewals run per node (a
    // MultiLock's watchdog on each master) and answer nobody.
    if (!f_is(e, "extend") || e.type == EventType::Truth || e.thread != 0) continue;
    if (e.type == EventType::Invoke) {
      asked[{e.process, e.thread}] = e.time_ns;
      continue;
    }
    auto it = asked.find({e.process, e.thread});
    if (it == asked.end()) continue;
    const int64_t from = it->second - o.fairness_margin_ns, to = e.time_ns + o.fairness_margin_ns;
    asked.erase(it);
    if (e.type != EventType::Ok) continue;
    std::set<int64_t> held_on;
    for (const auto& hd : holds)
      if (hd.process == e.process && hd.from <= to && hd.to >= from) held_on.insert(hd.node);
    if (static_cast<int>(held_on.size()) >= majority) continue;
    ++count;
    if (first) continue;
    first = violation(Property::FalseExtend,
                      process_label(e.process) + "'s extend answered at t=" + format_seconds(e.time_ns) +
                          " that the lock was extended, but its key was on " + std::to_string(held_on.size()) +
                          " of the lock's " + std::to_string(o.lock_nodes) + (o.lock_nodes == 1 ? " node" : " nodes") +
                          " from its request on: the library told its holder it still had a lock it had lost.",
                      {e.process}, e.time_ns);
  }
  if (!first) return {};
  first->count = count;
  return {*first};
}

}  // namespace lockstep::checker
