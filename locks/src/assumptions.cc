// No lock claims a partition: cutting a link breaks the client's connection, and none of
// these libraries bounds how long a call then takes (the client's reconnection and retry
// policy decides), so even a partition of a few ms may stretch a holder's call past its
// lease.
//
// Each built-in lock's assumptions: the faults it claims to tolerate, read from its
// configuration and from what its library documents (see docs/libraries.md, "What each
// lock assumes"). The numbers follow the configuration, so a scaled-down lease in a
// generated scenario scales the bounds with it.
#include <algorithm>
#include <cmath>
#include <string>

#include "lockstep/algorithms.h"
#include "lockstep/locks.h"
#include "lockstep/profiles.h"

namespace lockstep {
namespace {

using A = Assumption;

std::string ms(int64_t v) { return std::to_string(v) + " ms"; }

A bound(std::string fault, std::string hits, int64_t max, std::string words) {
  A a;
  a.fault = std::move(fault);
  a.hits = std::move(hits);
  a.max = max;
  a.words = std::move(words);
  return a;
}

A bound_of(std::string fault, int64_t max, std::string words) { return bound(std::move(fault), "client", max, std::move(words)); }

void replace(std::vector<A>& list, A a) {
  for (auto& x : list) {
    if (x.fault == a.fault && x.hits == a.hits) {
      x = std::move(a);
      return;
    }
  }
  list.push_back(std::move(a));
}


// A lock that is renewed every `period` ms (a watchdog, an extension by hand, an automatic
// extension) survives a pause of its holder shorter than the lease minus one period,
// however long the work.
void renewed_pauses(std::vector<A>& list, int64_t lease, int64_t period, const std::string& how) {
  replace(list, bound("pause", "client", std::max<int64_t>(0, lease - period),
                      "a holder's pauses together shorter than the lease minus one renewal period (" + ms(lease) +
                          " - " + ms(period) + ", " + how + ")"));
}

// A majority algorithm over `nodes` masters: a minority down at once, each restarted no
// sooner than the lease (the redis.io page's delayed restart).
void majority(std::vector<A>& list, int nodes, int64_t lease) {
  const int minority = (nodes - 1) / 2;
  A crash = bound("crash", "node", minority,
                  std::to_string(minority) + " of " + std::to_string(nodes) +
                      " masters down at once, each restarted no sooner than the lease (" + ms(lease) +
                      ": a delayed restart)");
  crash.restart_min_ms = lease;
  replace(list, crash);
}

// RedLock's drift allowance: a clock that runs fast by at most this fraction of the lease.
void drift(std::vector<A>& list, double factor, int64_t allowance_ms, bool wall_clock) {
  const int64_t ppm = static_cast<int64_t>(std::llround(factor * 1e6));
  const std::string rate = "clock drift within driftFactor (" + std::to_string(ppm) + " ppm)";
  replace(list, bound("clock-drift", "client", ppm, rate + " on clients"));
  replace(list, bound("clock-drift", "node", ppm, rate + " on masters"));
  replace(list, bound("clock-jump", "node", allowance_ms,
                      "a master's clock stepping forward by at most the drift allowance (" + ms(allowance_ms) + ")"));
  if (wall_clock) {
    replace(list, bound("clock-jump", "client", allowance_ms,
                        "a client's wall clock stepping by at most the drift allowance (" + ms(allowance_ms) +
                            "): validity is measured on it"));
  } else {
    replace(list, bound("clock-jump", "client", A::kAny,
                        "a client's wall clock stepping any amount: validity is measured on a monotonic clock"));
  }
}

// A library with no per-request timeout of its own relies on requests being fast next
// to the lease (the redis.io page: 5-50 ms per node for a 10 s lease): 1 % of it.
void small_delays(std::vector<A>& list, int64_t lease, int64_t timeout, const std::string& what) {
  const int64_t d = timeout > 0 ? timeout : std::max<int64_t>(1, lease / 100);
  const std::string why = timeout > 0 ? "below " + what + " (" + ms(d) + ")"
                                      : "at most 1 % of the lease (" + ms(d) + "; the library sets no timeout)";
  replace(list, bound("delay", "client", d, "a client's requests delayed " + why));
  replace(list, bound("delay", "node", d, "a master's replies delayed " + why));
  replace(list, bound("jitter", "client", d, "a client's requests jittered " + why));
  replace(list, bound("jitter", "node", d, "a master's replies jittered " + why));
}

std::vector<A> library_assumptions(const LockInfo& info, const LockSetup& s) {
  const ProfileOptions o(info, s.options);
  const std::string lib = info.library;
  int64_t lease = lock_lease_ms(info, s);
  // Redisson's explicit leaseTime replaces the watchdog's lease.
  if (lib == "redisson" && o.integer("leaseTime") > 0) lease = o.integer("leaseTime");
  std::vector<A> list = default_assumptions(lease, 0);
  const int nodes = lock_nodes(info, s.options);
  // Lockstep's workloads extend by hand every third of the lease when the library has the call.
  if (lock_extends(info, s.options)) renewed_pauses(list, lease, lease / 3, "the client extending every third");
  if (lib == "redsync") {
    // Before 4.5.0 (4.0.3, 4.3.0) an acquire round has no deadline of its own.
    const bool deadline = info.version != "4.0.3" && info.version != "4.3.0";
    const int64_t timeout = deadline ? std::llround(lease * o.number("timeoutFactor")) : 0;
    small_delays(list, lease, timeout, "its per-attempt deadline expiry*timeoutFactor");
    majority(list, nodes, lease);
    drift(list, o.number("driftFactor"), std::llround(lease * o.number("driftFactor")), false);
  } else if (lib == "node-redlock") {
    small_delays(list, lease, 0, "");
    if (info.version != "4.2.0" && o.choice("kind") == "using") {
      const int64_t threshold = o.integer("automaticExtensionThreshold");
      renewed_pauses(list, lease, lease - threshold, "using() extending automaticExtensionThreshold before expiry");
    }
    majority(list, nodes, lease);
    drift(list, o.number("driftFactor"), std::llround(lease * o.number("driftFactor")) + 2, true);
  } else if (lib == "redlock-py") {
    small_delays(list, lease, 0, "");
    majority(list, nodes, lease);
    drift(list, o.number("clock_drift_factor"), static_cast<int64_t>(lease * o.number("clock_drift_factor")) + 2,
          true);
  } else if (lib == "redis-plus-plus") {
    small_delays(list, lease, 0, "");
    if (o.choice("kind") == "redmutex") renewed_pauses(list, lease, lease / 2, "RedMutex's watcher every ttl/2");
    majority(list, nodes, lease);
    // 1.3.12 truncates the drift to whole ms; later versions keep it in double.
    const double allowance = lease * o.number("clock_drift_factor");
    drift(list, o.number("clock_drift_factor"),
          (info.version == "1.3.12" ? static_cast<int64_t>(allowance) : std::llround(allowance)) + 2, false);
  } else if (lib == "redis-py") {
    if (lease <= 0) {
      // No TTL: nothing expires, so nothing a pause or a slow link does breaks exclusion,
      // and a crashed holder keeps the lock for ever (which it does not claim to survive).
      replace(list, bound("pause", "client", A::kAny, "a holder's pauses of any length: the lock has no TTL"));
      replace(list, bound("delay", "client", A::kAny, "a client's requests delayed any time: the lock has no TTL"));
      replace(list, bound("jitter", "client", A::kAny, "a client's requests jittered any time: the lock has no TTL"));
    } else {
      small_delays(list, lease, 0, "");
    }
  } else if (lib == "redisson") {
    const std::string kind = o.choice("kind");
    const int64_t timeout = o.integer("timeout");
    const bool watchdog = o.integer("leaseTime") <= 0;
    if (watchdog) {
      // The watchdog's promise (Redisson's documentation: the lease is extended while the
      // client that holds it lives): renewals that fail for less than the watchdog
      // timeout minus one renewal period do not lose the lock.
      const int64_t w = o.integer("lockWatchdogTimeout");
      renewed_pauses(list, w, w / 3, "the watchdog renewing every third of lockWatchdogTimeout");
      small_delays(list, lease, std::max<int64_t>(timeout, w - w / 3),
                   "the watchdog timeout minus one renewal period, renewals being retried");
    } else {
      small_delays(list, lease, timeout, "the command timeout");
    }
    if (kind == "redlock") majority(list, nodes, lease);
    if (kind != "fair") {
      // The lease lives in the server's TTL: a client's clock plays no part.
      replace(list, bound("clock-jump", "client", A::kAny, "a client's clock stepping any amount: the lease is the "
                                                           "server's TTL"));
      replace(list, bound("clock-drift", "client", A::kAny, "a client's clock drifting at any rate"));
    }
  }
  return list;
}

std::vector<A> recipe_assumptions(const LockInfo& info, const LockSetup& s) {
  const int64_t lease = s.lease_ms;
  std::vector<A> list = default_assumptions(info.name == "setnx" ? 0 : lease, s.command_timeout_ms);
  auto option = [&](const char* name, int64_t fallback) {
    return s.options.is_object() && s.options.contains(name) && s.options[name].is_number_integer()
               ? s.options[name].get<int64_t>()
               : fallback;
  };
  if (info.name == "renewal-thread") renewed_pauses(list, lease, option("scan_ms", 2000), "the renewal thread's scan");
  if (option("watchdog", 0) == 1) renewed_pauses(list, lease, lease / 3, "the watchdog renewing every third");
  if (info.name == "redlock") {
    majority(list, info.nodes, lease);
    const double factor = static_cast<double>(option("drift_factor_ppm", 10000)) / 1e6;
    drift(list, factor, std::llround(lease * factor) + 2, false);
  }
  return list;
}

}  // namespace

std::vector<Assumption> default_assumptions(int64_t lease_ms, int64_t timeout_ms) {
  std::vector<A> list;
  if (lease_ms > 0) {
    A pause = bound("pause", "client", lease_ms,
                    "a holder's pauses and its work together shorter than the lease (" + ms(lease_ms) + ")");
    pause.work_counts = true;
    list.push_back(pause);
    list.push_back(bound("crash", "client", A::kAny, "a client's crash: its lock expires with the lease"));
  }
  if (timeout_ms > 0) {
    // A slow link costs a lease twice, the grant's reply and the release's request, both
    // inside the lease: a round trip longer than a quarter of it is not a request the
    // lock can claim to ride out, however patient its command timeout.
    const int64_t d = lease_ms > 0 ? std::min(timeout_ms, std::max<int64_t>(1, lease_ms / 4)) : timeout_ms;
    const std::string why = d < timeout_ms ? "below a quarter of the lease (" + ms(d) + "), within the command timeout"
                                           : "below the command timeout (" + ms(timeout_ms) + ")";
    list.push_back(bound("delay", "client", d, "a client's requests delayed " + why));
    list.push_back(bound("delay", "node", d, "a master's replies delayed " + why));
    list.push_back(bound("jitter", "client", d, "a client's requests jittered " + why));
    list.push_back(bound("jitter", "node", d, "a master's replies jittered " + why));
  }
  return list;
}

std::vector<Assumption> session_assumptions(int64_t silence_ms, const std::string& bound, bool work_counts,
                                            const std::string& crash_words, int64_t timeout_ms,
                                            const std::string& clock_why) {
  std::vector<A> list;
  A pause = bound_of("pause", silence_ms, "a holder's pauses together " + bound);
  pause.work_counts = work_counts;
  list.push_back(pause);
  list.push_back(bound_of("crash", A::kAny, "a client's crash: " + crash_words));
  list.push_back(bound_of("partition", silence_ms, "a client's cuts from the server together " + bound));
  if (timeout_ms > 0) {
    const std::string below = "below the command timeout (" + ms(timeout_ms) + ")";
    list.push_back(bound_of("delay", timeout_ms, "a client's requests delayed " + below));
    list.push_back(bound_of("jitter", timeout_ms, "a client's requests jittered " + below));
  }
  list.push_back(bound_of("clock-jump", A::kAny, "a client's clock stepping any amount: " + clock_why));
  list.push_back(bound_of("clock-drift", A::kAny, "a client's clock drifting at any rate"));
  return list;
}

int64_t lock_lease_ms(const LockInfo& info, const LockSetup& setup) {
  if (!info.library_options()) return setup.lease_ms;
  const LockOption* o = find_option(info, info.lease_option);
  if (!o) return 0;
  const nlohmann::json& v =
      setup.options.is_object() && setup.options.contains(o->name) ? setup.options[o->name] : o->default_value;
  if (!v.is_number()) return 0;
  return std::llround(v.get<double>() * o->ms_per_unit);
}

std::vector<Assumption> lock_assumptions(const LockInfo& info, const LockSetup& setup) {
  if (info.assumptions_with) return info.assumptions_with(setup);
  if (info.library_options()) return library_assumptions(info, setup);
  return recipe_assumptions(info, setup);
}

}  // namespace lockstep
