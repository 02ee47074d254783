// The table of profiles and their options: names, types, defaults and meanings, each
// default as the library's own source at that version sets it (see each library's file
// for where it was read).
#include <algorithm>

#include "common.h"

namespace lockstep {
namespace {

using T = ProfileOption::Type;
constexpr double kBig = 1e9;

ProfileOption integer(std::string name, int64_t def, double lo, double hi, std::string meaning) {
  return {std::move(name), T::Integer, def, lo, hi, {}, false, 1, std::move(meaning)};
}
ProfileOption millis(std::string name, int64_t def, double lo, std::string meaning) {
  return {std::move(name), T::Integer, def, lo, kBig, {}, true, 1, std::move(meaning)};
}
ProfileOption number(std::string name, double def, double lo, double hi, std::string meaning) {
  return {std::move(name), T::Number, def, lo, hi, {}, false, 1, std::move(meaning)};
}
ProfileOption seconds(std::string name, nlohmann::json def, std::string meaning) {
  const T type = def.is_null() ? T::NumberOrNull : T::Number;
  return {std::move(name), type, std::move(def), 0, kBig / 1000, {}, true, 1000, std::move(meaning)};
}
ProfileOption boolean(std::string name, bool def, std::string meaning) {
  return {std::move(name), T::Boolean, def, 0, 0, {}, false, 1, std::move(meaning)};
}
ProfileOption choice(std::string name, std::vector<std::string> choices, std::string meaning) {
  const std::string def = choices.front();
  return {std::move(name), T::Choice, def, 0, 0, std::move(choices), false, 1, std::move(meaning)};
}
// An option of some of the library's lock kinds only (`kind`).
ProfileOption only_for(std::vector<std::string> kinds, ProfileOption o) {
  o.kinds = std::move(kinds);
  return o;
}

// 4.0.3 waits a fixed 500 ms between tries (4.3.0 has the random delay); the deadline
// and the options after it came in 4.5.0, 4.10.0 and 4.12.0.
std::vector<ProfileOption> redsync_options(const std::string& version) {
  const bool v4_12 = version == "4.12.0" || version == "4.17.0";
  std::vector<ProfileOption> o = {
      millis("expiry", 8000, 1, "WithExpiry: how long the lock key lives (ms)"),
      integer("tries", 32, 1, 1e6, "WithTries: acquire attempts"),
      version != "4.0.3" ? ProfileOption{"retryDelay", T::NumberOrNull, nullptr, 0, kBig, {}, true, 1,
                            "WithRetryDelay (ms); null: the default delayFunc, rand.Intn(200)+50 ms per retry"}
            : millis("retryDelay", 500, 0, "WithRetryDelay (ms); the default delayFunc waits 500 ms"),
      number("driftFactor", 0.01, 0, 1, "WithDriftFactor: subtracted from the validity as expiry*factor"),
  };
  if (v4_12) {
    o.push_back(number("timeoutFactor", 0.05, 0, 1, "WithTimeoutFactor: per-attempt deadline expiry*factor"));
    o.push_back(boolean("failFast", false, "WithFailFast: decide a round at quorum instead of waiting for all"));
    o.push_back(boolean("setNXOnExtend", false, "WithSetNXOnExtend: Extend re-SETs a key that has gone"));
  }
  return o;
}

std::vector<ProfileOption> node_redlock_options(bool v5) {
  std::vector<ProfileOption> o;
  if (v5) {
    o.push_back(choice("kind", {"acquire", "using"},
                       "acquire: acquire/extend/release calls; using: the auto-extending using() routine"));
    o.push_back(millis("duration", 5000, 1, "the acquire(resources, duration) argument (ms; README example 5000)"));
  } else {
    o.push_back(millis("ttl", 1000, 1, "the lock(resource, ttl) argument (ms; README example 1000)"));
  }
  o.push_back(number("driftFactor", 0.01, 0, 1, "validity drift: round(driftFactor*ttl)+2 ms"));
  o.push_back(integer("retryCount", 10, -1, 1e6, "retries after the first attempt; -1: forever"));
  o.push_back(millis("retryDelay", 200, 0, "ms between attempts"));
  o.push_back(millis("retryJitter", 100, 0, "plus or minus this many ms, uniformly"));
  if (v5) {
    o.push_back(only_for({"using"}, millis("automaticExtensionThreshold", 500, 0,
                                           "using(): extend this long before expiration")));
  }
  return o;
}

// Config's timeout and retryInterval defaults were 1000 ms each up to 2.x.
std::vector<ProfileOption> redisson_options(bool fair, int64_t timeout_ms = 3000, int64_t retry_interval_ms = 1500) {
  std::vector<std::string> kinds = {"lock", "multilock", "redlock"};
  if (fair) kinds.insert(kinds.begin() + 1, "fair");
  return {
      choice("kind", kinds,
             "lock: RLock; fair: RFairLock; multilock/redlock: RedissonMultiLock/RedissonRedLock over every node"),
      millis("lockWatchdogTimeout", 30000, 1, "Config: the watchdog's lease (ms), renewed every third of it"),
      integer("leaseTime", -1, -1, kBig, "the tryLock(waitTime, leaseTime) argument (ms); -1: watchdog"),
      millis("timeout", timeout_ms, 1, "Config: how long a command waits for its reply (ms)"),
      integer("retryAttempts", 3, 0, 1000, "Config: resends of a command after a timeout"),
      millis("retryInterval", retry_interval_ms, 0, "Config: ms before a resend"),
  };
}

// tryLock's waitTime given in the options instead of the workload's wait: -1, "do not
// wait", is a value the workload's wait cannot take.
std::vector<ProfileOption> with_wait_time(std::vector<ProfileOption> o) {
  o.push_back({"waitTime", T::NumberOrNull, nullptr, -1, kBig, {}, false, 1,
               "the tryLock(waitTime, leaseTime) argument (ms); -1: no wait; null: the workload's wait_ms"});
  return o;
}

// What each library's lock lets its user do, and how it is built, by library: the same
// for every version the table has of it.
void describe_library(LockInfo& l) {
  const std::string lib = l.library;
  if (lib == "redsync") l.make_with_options = profiles::make_redsync;
  if (lib == "node-redlock") l.make_with_options = profiles::make_node_redlock;
  if (lib == "redis-py") l.make_with_options = profiles::make_redis_py;
  if (lib == "redlock-py") {
    l.make_with_options = profiles::make_redlock_py;
    l.reports_validity = true;  // lock() returns Lock(validity, resource, key)
  }
  if (lib == "redis-plus-plus") l.make_with_options = profiles::make_redis_plus_plus;
  if (lib == "redisson") l.make_with_options = profiles::make_redisson;
  const std::string version = l.version;
  l.extends_with = [lib, version, info = l](const nlohmann::json& options) {
    const ProfileOptions o(info, options);
    if (lib == "redsync") return true;
    if (lib == "node-redlock") return version == "4.2.0" || o.choice("kind") == "acquire";
    if (lib == "redis-py") return !o.is_null("timeout") && o.number("timeout") > 0;
    if (lib == "redis-plus-plus") return o.choice("kind") == "redlock";
    return false;
  };
  if (lib == "redisson") {
    l.fair_with = [info = l](const nlohmann::json& options) {
      return find_option(info, "kind") && ProfileOptions(info, options).choice("kind") == "fair";
    };
    // MultiLock and RedLock take every node: the fuzzer gives them three.
    l.nodes_with = [info = l](const nlohmann::json& options) {
      const std::string kind = ProfileOptions(info, options).choice("kind");
      return kind == "multilock" || kind == "redlock" ? 3 : info.nodes;
    };
  }
  if (lib == "node-redlock" && version != "4.2.0") {
    l.options_problem = [info = l](const nlohmann::json& options, std::string& option) -> std::string {
      const ProfileOptions o(info, options);
      if (o.choice("kind") != "using" || o.integer("automaticExtensionThreshold") <= o.integer("duration") - 100)
        return "";
      option = "automaticExtensionThreshold";
      return "at most duration - 100 (" + std::to_string(o.integer("duration") - 100) +
             "): using() throws \"A lock `duration` must be at least 100ms greater than the "
             "`automaticExtensionThreshold` setting.\"";
    };
  }
}

std::vector<LockInfo> build_table() {
  std::vector<LockInfo> t;
  auto add = [&t](std::string library, std::string version, std::string models, std::vector<ProfileOption> options,
                  std::string lease, bool reentrant, bool multi) {
    LockInfo l;
    l.name = library + "@" + version;
    l.library = std::move(library);
    l.version = std::move(version);
    l.description = std::move(models);
    l.options = std::move(options);
    l.lease_option = std::move(lease);
    l.reentrant = reentrant;
    l.nodes = multi ? 3 : 1;
    describe_library(l);
    t.push_back(std::move(l));
  };
  add("redsync", "4.0.3",
      "Go RedLock (go-redis adapter): parallel SET NX, monotonic validity; Extend and Unlock report success "
      "whatever the reply (int vs int64, PR #61)",
      redsync_options("4.0.3"), "expiry", false, true);
  add("redsync", "4.3.0",
      "Go RedLock (go-redis adapter): 4.0.3 with int64 replies (PR #61); Extend counts a quorum of touches as "
      "success however long they took and leaves until unchanged (PR #71)",
      redsync_options("4.3.0"), "expiry", false, true);
  add("redsync", "4.12.0",
      "Go RedLock (go-redis adapter): 4.17.0's code, but a touch error on one pool releases the lock on every "
      "pool while Extend still counts the other touches (fixed in 4.12.1, PR #151)",
      redsync_options("4.12.0"), "expiry", false, true);
  add("redsync", "4.17.0",
      "Go RedLock (go-redis adapter): parallel SET NX with a per-attempt deadline, monotonic validity; Extend "
      "checks its quorum and validity",
      redsync_options("4.17.0"), "expiry", false, true);
  add("node-redlock", "4.2.0",
      "Node RedLock: parallel Lua lock script, Date.now() validity checked per attempt; unlock between attempts",
      node_redlock_options(false), "ttl", false, true);
  add("node-redlock", "5.0.0-beta.2",
      "Node RedLock: quorum-resolved rounds, expiration from before the first attempt and never checked "
      "(#169, #296); using() auto-extension",
      node_redlock_options(true), "duration", false, true);
  add("node-redlock", "afe5cf9",
      "node-redlock main at afe5cf9 (unreleased): 5.0.0-beta.2 with the start of the successful attempt (#169 "
      "fix, PR #274/#276)",
      node_redlock_options(true), "duration", false, true);
  add("redis-py", "2.10.6",
      "redis-py 2.x Lock: `with lock:` runs its body when acquire gives up (#621); the Lock class sends SETNX "
      "then PEXPIRE (#554, #818); wall-clock blocking_timeout; no TTL unless timeout is set",
      {seconds("timeout", nullptr, "max life of the lock in seconds; null: no TTL (the default)"),
       seconds("sleep", 0.1, "seconds between tries while blocking"),
       boolean("blocking", true, "retry until blocking_timeout (the workload's wait) instead of trying once"),
       choice("usage", {"with", "acquire"},
              "with: `with lock:` (__enter__ forces blocking so the caller need not check); acquire: the "
              "client calls acquire() and checks its result"),
       choice("class", {"LuaLock", "Lock"},
              "LuaLock: what redis.lock() returns on a server with EVAL (one acquire script); Lock: the class "
              "built by hand, SETNX then PEXPIRE")},
      "timeout", false, false);
  add("redis-py", "5.0.0",
      "redis-py Lock: one server, SET NX [PX], monotonic blocking_timeout; no TTL unless timeout is set",
      {seconds("timeout", nullptr, "max life of the lock in seconds; null: no TTL (the default)"),
       seconds("sleep", 0.1, "seconds between tries while blocking"),
       boolean("blocking", true, "retry until blocking_timeout (the workload's wait) instead of trying once"),
       choice("kind", {"extend", "reacquire"},
              "the client's extension call: extend(timeout) adds to the TTL, reacquire() resets it")},
      "timeout", false, false);
  add("redlock-py", "1.0.2",
      "Python RedLock before PR #3: validity = ttl - (elapsed - drift), the drift added, so an attempt slower "
      "than the ttl counts; errors count as no; wall clock",
      {millis("ttl", 1000, 1, "the lock(resource, ttl) argument (ms; README example 1000)"),
       integer("retry_count", 3, 0, 1e6, "attempts (0 means the default 3: `retry_count or 3`)"),
       seconds("retry_delay", 0.2, "seconds between attempts (0 means the default 0.2)"),
       number("clock_drift_factor", 0.01, 0, 1, "drift: ttl*factor+2 ms, added to the validity")},
      "ttl", false, true);
  add("redlock-py", "1.0.8",
      "Python RedLock: sequential SET NX PX, validity from time.time() (wall clock), 3 tries 0.2 s apart",
      {millis("ttl", 1000, 1, "the lock(resource, ttl) argument (ms; README example 1000)"),
       integer("retry_count", 3, 0, 1e6, "attempts (0 means the default 3: `retry_count or 3`)"),
       seconds("retry_delay", 0.2, "seconds between attempts (0 means the default 0.2)"),
       number("clock_drift_factor", 0.01, 0, 1, "drift: int(ttl*factor)+2 ms")},
      "ttl", false, true);
  // redis-plus-plus's options, the same at every version below.
  const auto redis_plus_plus_options = [] {
    return std::vector<ProfileOption>{
        choice("kind", {"redmutex", "redlock"},
               "redmutex: RedMutex (lock(), watcher); redlock: RedLockMutexVessel::lock with retries, "
               "extend_lock by hand"),
        millis("ttl", 3000, 1, "lock TTL (ms; RedMutexOptions default 3 s)"),
        only_for({"redlock"}, integer("retry_count", 3, 1, 1e6, "redlock: attempts per lock() call")),
        only_for({"redlock"}, millis("retry_delay", 200, 0, "redlock: a retry waits U(0, retry_delay) ms")),
        number("clock_drift_factor", 0.01, 0, 1, "drift: ttl*factor + 2 ms"),
        only_for({"redmutex"}, boolean("auto_extend_err_callback", false,
                                       "redmutex: the application passed the callback the README shows, and "
                                       "stops its work when told"))};
  };
  add("redis-plus-plus", "1.3.12",
      "C++ RedLock (Lua version), 1.3.15 before #563's fix: RedMutex::unlock rethrows an instance's error "
      "(std::terminate under std::lock_guard); drift in whole ms",
      redis_plus_plus_options(), "ttl", false, true);
  add("redis-plus-plus", "1.3.15",
      "C++ RedLock (Lua version): sequential SET NX PX, steady_clock validity from the first attempt; RedMutex's "
      "watcher extends every ttl/2",
      redis_plus_plus_options(), "ttl", false, true);
  add("redis-plus-plus", "fc67c2e",
      "redis-plus-plus master at fc67c2e (untagged): 1.3.15 whose RedMutex::unlock returns quietly on a mutex the "
      "watcher reset (#659 fix, PR #660)",
      redis_plus_plus_options(), "ttl", false, true);
  add("redisson", "2.3.0",
      "Redisson RLock/MultiLock/RedLock before #624 (fixed in 2.4.0): MultiLock/RedLock try every lock at once, each "
      "with the whole wait and the caller's lease, so two callers that split the locks each take the other's once "
      "its lease ends; every command resent after a response timeout",
      redisson_options(false, 1000, 1000), "lockWatchdogTimeout", true, false);
  add("redisson", "3.11.0",
      "Redisson RLock/MultiLock/RedLock before #2172 (fixed in 3.11.1): with leaseTime set and waitTime -1 the "
      "MultiLock takes each lock with a lease of 2 x -1 ms, which deletes the key at once: every caller gets it",
      with_wait_time(redisson_options(false)), "lockWatchdogTimeout", true, false);
  add("redisson", "3.11.1",
      "Redisson 3.11.0 with #2172 fixed: with waitTime -1 the MultiLock takes each lock with the lease asked for and "
      "gives up after a refusal",
      with_wait_time(redisson_options(false)), "lockWatchdogTimeout", true, false);
  add("redisson", "3.23.0",
      "Redisson RLock/MultiLock/RedLock: unlock without the latch, resent after a response timeout (#4871); "
      "watchdog stops after a renewal error",
      redisson_options(false), "lockWatchdogTimeout", true, false);
  add("redisson", "3.43.0",
      "Redisson RLock/RFairLock/MultiLock/RedLock: unlock latch, acquire and unlock never resent; watchdog stops "
      "after a renewal error (#2515, #3194)",
      redisson_options(true), "lockWatchdogTimeout", true, false);
  add("redisson", "3.44.0",
      "Redisson 3.43.0 with the rewritten watchdog (#6303): a renewal error is logged and the renewal rescheduled",
      redisson_options(true), "lockWatchdogTimeout", true, false);
  return t;
}

}  // namespace

std::vector<LockInfo> library_locks() { return build_table(); }

const ProfileOption* find_option(const ProfileInfo& p, std::string_view name) {
  for (const auto& o : option_table(p))
    if (o.name == name) return &o;
  return nullptr;
}

const nlohmann::json& ProfileOptions::value(const std::string& name) const {
  if (auto it = given_.find(name); it != given_.end()) return *it;
  static const nlohmann::json kNull;
  const ProfileOption* o = find_option(info_, name);
  return o ? o->default_value : kNull;
}

int64_t ProfileOptions::integer(const std::string& name) const {
  const auto& v = value(name);
  return v.is_number() ? v.get<int64_t>() : 0;
}

double ProfileOptions::number(const std::string& name) const {
  const auto& v = value(name);
  return v.is_number() ? v.get<double>() : 0.0;
}

bool ProfileOptions::boolean(const std::string& name) const {
  const auto& v = value(name);
  return v.is_boolean() && v.get<bool>();
}

std::string ProfileOptions::choice(const std::string& name) const {
  const auto& v = value(name);
  return v.is_string() ? v.get<std::string>() : "";
}

}  // namespace lockstep
