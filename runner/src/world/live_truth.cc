#include "world/live_truth.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "lockstep/digest.h"
#include "lockstep/env.h"
#include "world/world_run.h"

namespace lockstep::runner {
namespace {

// How long a key change may wait for the reply that says who caused it.
constexpr int64_t kAttributionWaitNs = 200 * kNsPerMs;

std::string upper(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

const char* const kLockPollScript =
    "local t = redis.call('TYPE', KEYS[1]).ok\n"
    "if t == 'none' then return {t, false, -2} end\n"
    "local v = ''\n"
    "if t == 'string' then v = redis.call('GET', KEYS[1])\n"
    "elseif t == 'hash' then local f = redis.call('HKEYS', KEYS[1]); v = f[1] or '' end\n"
    "return {t, v, redis.call('PTTL', KEYS[1])}\n";

const char* const kLockQuietPollScript =
    "local t = redis.call('TYPE', KEYS[1]).ok\n"
    "if t == 'none' then return {t, false, -2} end\n"
    "local at = redis.call('PEXPIRETIME', KEYS[1])\n"
    "if t == ARGV[1] and at >= 0 and tostring(at) == ARGV[2] then return {t, 0, redis.call('PTTL', KEYS[1]), at} end\n"
    "local v = ''\n"
    "if t == 'string' then v = redis.call('GET', KEYS[1])\n"
    "elseif t == 'hash' then local f = redis.call('HKEYS', KEYS[1]); v = f[1] or '' end\n"
    "return {t, v, redis.call('PTTL', KEYS[1]), at}\n";

std::vector<std::string> LockTruth::quiet_poll_args(int node) const {
  const NodeState& st = nodes_[node];
  return {st.type, std::to_string(st.expire_time_ms)};
}

LockTruth::LockTruth(Recorder& rec, std::string key, int nodes)
    : key_(std::move(key)), watched_(key_), nodes_(nodes) {
  on_key_change = [&rec](const KeyChange& c) { record_key_change(rec, c); };
  setters_.resize(nodes);
  deleters_.resize(nodes);
}

void LockTruth::sent(int64_t process, const std::vector<std::string>& argv) {
  const std::string cmd = upper(argv[0]);
  if ((cmd == "SET" || cmd == "SETNX") && argv.size() >= 3 && argv[1] == watched_) tokens_[argv[2]].insert(process);
  // Libraries send a script once by its body (EVAL, or SCRIPT LOAD) and then by its
  // digest: remember which body each digest names.
  if (cmd == "EVAL" && argv.size() >= 2) scripts_.emplace(digest_hex("SHA1", argv[1]), argv[1]);
  if (cmd == "SCRIPT" && argv.size() >= 3 && upper(argv[1]) == "LOAD") scripts_.emplace(digest_hex("SHA1", argv[2]), argv[2]);
  // A script on the lock key sets it to one of its arguments (a library's random owner
  // token), so an argument only this process sent names it as the writer.
  if ((cmd == "EVAL" || cmd == "EVALSHA") && script_keys(argv, watched_)) {
    const size_t numkeys = static_cast<size_t>(std::max(0, std::atoi(argv[2].c_str())));
    for (size_t i = 3 + numkeys; i < argv.size(); ++i) tokens_[argv[i]].insert(process);
  }
}

bool LockTruth::names_lock(const std::vector<std::string>& argv) const {
  if (argv.size() < 2) return false;
  const std::string cmd = upper(argv[0]);
  if (cmd == "EVAL" || cmd == "EVALSHA") return script_keys(argv, watched_);
  return argv[1] == watched_;
}

bool LockTruth::script_keys(const std::vector<std::string>& argv, const std::string& key) {
  if (argv.size() < 4) return false;
  const size_t numkeys = static_cast<size_t>(std::max(0, std::atoi(argv[2].c_str())));
  for (size_t i = 0; i < numkeys && 3 + i < argv.size(); ++i) {
    if (argv[3 + i] == key) return true;
  }
  return false;
}

void LockTruth::replied(int64_t process, int node, const std::vector<std::string>& argv, const Reply& r, int64_t sent,
                        int64_t now) {
  const std::string cmd = upper(argv[0]);
  if (argv.size() >= 3 && argv[1] == watched_ && ((cmd == "SET" && r.is_ok()) || (cmd == "SETNX" && r.is_integer(1)))) {
    bool nx = cmd == "SETNX";
    for (size_t i = 3; i < argv.size(); ++i) nx = nx || upper(argv[i]) == "NX";
    setters_[node].push_back({process, sent, now, false, std::nullopt, nx});
  } else if (deletes_lock(cmd, argv) && r.type == Reply::Type::Integer && r.integer >= 1) {
    deleters_[node].push_back({process, sent, now, false, script_token(cmd, argv)});
  }
}

void LockTruth::observe(int node, const Reply& r, int64_t sent, int64_t now) {
  if (r.type != Reply::Type::Array || (r.elements.size() != 3 && r.elements.size() != 4)) return;  // no news
  ++polls_;
  NodeState& st = nodes_[node];
  const bool present = r.elements[0].str != "none";
  // The quiet poll's 0: the same value as last time, not read again.
  const bool unchanged = present && st.present && r.elements[1].type == Reply::Type::Integer;
  const std::string value = unchanged ? st.value : r.elements[1].str;
  const bool quiet = present && r.elements.size() == 4 && r.elements[3].type == Reply::Type::Integer;
  st.type = quiet ? r.elements[0].str : "";
  st.expire_time_ms = quiet ? r.elements[3].integer : -1;
  const bool removed = st.present && (!present || value != st.value);
  const bool set = present && (!st.present || value != st.value);
  Done* reset = st.present && present && value == st.value ? unseen_reset(node, sent) : nullptr;
  if (removed) {
    st.pending.push_back({true, now, st.value, st.last_present_ns, st.expires_at_ns, now + kAttributionWaitNs});
  }
  if (set) {
    st.pending.push_back({false, now, value, st.present ? st.last_present_ns : st.last_absent_ns, -1,
                          now + kAttributionWaitNs});
  }
  if (reset) {
    // Gone when its TTL said, if that falls between the last sighting and the new set.
    const int64_t gone = std::clamp(st.expires_at_ns >= 0 ? st.expires_at_ns : reset->sent_ns,
                                    st.run_first_reply_ns, reset->sent_ns);
    st.pending.push_back({true, gone, st.value, st.run_first_reply_ns, st.expires_at_ns, now + kAttributionWaitNs});
    st.pending.push_back({false, reset->at_ns, value, gone, -1, now + kAttributionWaitNs});
  }
  if (set || reset) st.run_first_reply_ns = now;
  st.present = present;
  st.value = value;
  if (present) {
    st.last_present_ns = sent;
    // The server read the TTL somewhere between `sent` and `now`: from `sent` on is the
    // earliest it can run out, and a key gone after that may have expired, however late
    // a busy loop handles the reply.
    const int64_t pttl = r.elements[2].integer;
    st.expires_at_ns = pttl >= 0 ? sent + pttl * kNsPerMs : -1;
  } else {
    st.last_absent_ns = sent;
  }
  settle(node, now, false);
  if (on_change && removed && !set) on_change(node, false);
  if (on_change && (set || reset)) on_change(node, true);
}

LockTruth::Done* LockTruth::unseen_reset(int node, int64_t poll_sent) {
  const NodeState& st = nodes_[node];
  for (auto& d : setters_[node]) {
    if (d.only_if_absent && d.sent_ns > st.run_first_reply_ns && d.at_ns < poll_sent) return &d;
  }
  return nullptr;
}

void LockTruth::settle_all(int64_t now) {
  for (int n = 0; n < static_cast<int>(nodes_.size()); ++n) settle(n, now, true);
}

std::optional<std::string> LockTruth::script_token(const std::string& cmd, const std::vector<std::string>& argv) {
  if (cmd != "EVAL" && cmd != "EVALSHA") return std::nullopt;
  const size_t numkeys = static_cast<size_t>(std::max(0, std::atoi(argv[2].c_str())));
  if (3 + numkeys >= argv.size()) return std::nullopt;
  return argv[3 + numkeys];
}

bool LockTruth::deletes_lock(const std::string& cmd, const std::vector<std::string>& argv) const {
  if (cmd == "DEL" || cmd == "UNLINK") return std::find(argv.begin() + 1, argv.end(), watched_) != argv.end();
  if ((cmd != "EVAL" && cmd != "EVALSHA") || argv.size() < 4) return false;
  const std::string* body = &argv[1];
  if (cmd == "EVALSHA") {
    auto it = scripts_.find(lower(argv[1]));
    if (it == scripts_.end()) return false;  // a script never seen: it explains nothing
    body = &it->second;
  }
  // Only scripts that can delete: a renewal also answers 1 but removes nothing.
  if (upper(*body).find("DEL") == std::string::npos) return false;
  return script_keys(argv, watched_);
}

LockTruth::Done* LockTruth::first_after(std::vector<Done>& v, int64_t t, int64_t seen) {
  for (auto& d : v) {
    if (!d.used && d.at_ns >= t && d.sent_ns <= seen) return &d;
  }
  return nullptr;
}

LockTruth::Done* LockTruth::deleter_of(std::vector<Done>& v, const std::string& value, int64_t t, int64_t seen) {
  for (auto& d : v) {
    if (!d.used && d.at_ns >= t && d.sent_ns <= seen && d.token == value) return &d;
  }
  for (auto& d : v) {
    if (!d.used && d.at_ns >= t && d.sent_ns <= seen && !d.token) return &d;
  }
  return nullptr;
}

void LockTruth::settle(int node, int64_t now, bool final) {
  NodeState& st = nodes_[node];
  // Changes leave in order, so a removal is never written after the set that followed.
  while (!st.pending.empty()) {
    Change& c = st.pending.front();
    const bool may_wait = !final && now < c.deadline_ns;
    if (c.removal ? !emit_removal(node, c, may_wait) : !emit_set(node, c, may_wait)) return;
    st.pending.pop_front();
  }
}

bool LockTruth::emit_set(int node, const Change& c, bool may_wait) {
  int64_t writer = -1;
  if (auto it = tokens_.find(c.value); it != tokens_.end() && it->second.size() == 1) {
    writer = *it->second.begin();
  } else if (Done* d = first_after(setters_[node], c.window_start_ns, c.at_ns)) {
    d->used = true;
    writer = d->process;
  } else if (may_wait) {
    return false;
  }
  if (writer < 0) ++unattributed_sets_;
  nodes_[node].holder = writer;
  insert(KeyChange::Kind::Set, writer, c.value, node, -1, {}, c.at_ns);
  return true;
}

bool LockTruth::emit_removal(int node, const Change& c, bool may_wait) {
  const int64_t owner = nodes_[node].holder;
  if (Done* d = deleter_of(deleters_[node], c.value, c.window_start_ns, c.at_ns)) {
    d->used = true;
    insert(KeyChange::Kind::Del, d->process, c.value, node, owner, {}, c.at_ns);
    return true;
  }
  if (may_wait) return false;
  // No delete reply: an expiry if the TTL had run out by then (1 ms for measurement),
  // lost with the old master if the node moved since the key was last seen, evicted if
  // the nodes evict, otherwise gone by a cause we cannot name (a lost reply, a restart).
  if (c.expires_at_ns >= 0 && c.expires_at_ns <= c.at_ns + kNsPerMs) {
    insert(KeyChange::Kind::Expire, -1, c.value, node, owner, {}, c.at_ns);
  } else if (nodes_[node].moved_at_ns >= c.window_start_ns) {
    insert(KeyChange::Kind::Del, -1, c.value, node, owner, "failover", c.at_ns);
  } else if (evicting_) {
    ++evictions_;
    insert(KeyChange::Kind::Evict, -1, c.value, node, owner, {}, c.at_ns);
  } else {
    ++unattributed_dels_;
    insert(KeyChange::Kind::Del, -1, c.value, node, owner, "unknown", c.at_ns);
  }
  return true;
}

void LockTruth::insert(KeyChange::Kind kind, int64_t process, const std::string& value, int node, int64_t owner,
                       std::string_view cause, int64_t at) {
  KeyChange c;
  c.kind = kind;
  c.node = node;
  c.key = key_;
  c.value = value;
  c.process = process;
  c.owner = owner;
  c.cause = cause;
  c.at = Nanos(at);
  if (on_key_change) on_key_change(c);
}

namespace {
// How long a poll waits for its node; a paused node costs one such wait per round.
constexpr Nanos kPollTimeout = Millis(200);
}  // namespace

int LockPoller::add() {
  client_ = world_.add_client("observer", -1);
  world_.set_direct(client_);
  return client_;
}

void LockPoller::start(int64_t duration_ms, int64_t interval_ms, bool quiet) {
  interval_ms = std::max<int64_t>(interval_ms, 1);
  const int64_t rounds = duration_ms / interval_ms + 100;
  for (int n = 0; n < world_.node_count(); ++n) world_.spawn(client_, poll(n, rounds, interval_ms, quiet));
}

Task<void> LockPoller::poll(int node, int64_t rounds, int64_t interval_ms, bool quiet) {
  live::LiveEnv& env = world_.env(client_);
  for (int64_t i = 0; i < rounds; ++i) {
    std::vector<std::string> argv{"EVAL", kLockPollScript, "1", truth_.watched()};
    if (quiet) {
      argv = {"EVAL", kLockQuietPollScript, "1", truth_.watched()};
      for (auto& a : truth_.quiet_poll_args(node)) argv.push_back(std::move(a));
    }
    const int64_t sent = rec_.now();
    Reply r = co_await env.node(node).call(std::move(argv), kPollTimeout);
    truth_.observe(node, r, sent, rec_.now());
    co_await env.sleep(Millis(interval_ms));
  }
}

}  // namespace lockstep::runner
