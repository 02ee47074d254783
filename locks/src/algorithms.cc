#include "lockstep/algorithms.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace lockstep {

std::unique_ptr<Lock> make_set_family_lock(const std::string& algorithm, Env& env, const LockParams& params);
std::unique_ptr<Lock> make_redisson_lock(const std::string& algorithm, Env& env, const LockParams& params);
std::unique_ptr<Lock> make_multinode_lock(const std::string& algorithm, Env& env, const LockParams& params);
std::vector<LockInfo> zookeeper_locks();  // zookeeper/zookeeper_lock.cc
std::vector<LockInfo> mysql_locks();      // mysql/mysql_locks.cc

LockOption integer_option(std::string name, int64_t default_value, int64_t min, int64_t max, std::string meaning) {
  LockOption o;
  o.name = std::move(name);
  o.default_value = default_value;
  o.min = static_cast<double>(min);
  o.max = static_cast<double>(max);
  o.meaning = std::move(meaning);
  return o;
}

namespace {

constexpr double kMaxMs = 1'000'000'000;

LockOption lock_integer(std::string name, int64_t def, double min, double max, std::string meaning) {
  return integer_option(std::move(name), def, static_cast<int64_t>(min), static_cast<int64_t>(max), std::move(meaning));
}

// A switch: 0 or 1 (the reader also takes false and true).
LockOption flag(std::string name, bool def, std::string meaning) {
  return lock_integer(std::move(name), def ? 1 : 0, 0, 1, std::move(meaning));
}

std::vector<LockOption> redisson_options() {
  LockOption wait_timeout = lock_integer("wait_timeout_ms", 0, 1, kMaxMs,
                                    "how long WAIT blocks for the replicas (default: half of command_timeout_ms)");
  wait_timeout.default_value = nullptr;  // derived from the command timeout
  return {
      flag("watchdog", false, "1: renew the lease every lease/3 while held (Redisson's lock watchdog)"),
      lock_integer("wait_replicas", 0, 0, 4, "replicas that must confirm each acquisition (WAIT) before it counts"),
      wait_timeout,
  };
}

// The fair lock's queue: how long a waiter's place is kept (Redisson's threadWaitTime).
std::vector<LockOption> fair_options() {
  auto out = redisson_options();
  out.push_back(lock_integer("fair_wait_ms", 5000, 0, kMaxMs, "how long a waiter keeps its place in the queue"));
  return out;
}

using Family = std::unique_ptr<Lock> (*)(const std::string&, Env&, const LockParams&);

LockInfo builtin(const std::string& name, Family family, std::vector<LockOption> options = {}, int nodes = 1,
                 bool read_write = false) {
  LockInfo a;
  a.name = name;
  a.nodes = nodes;
  a.read_write = read_write;
  a.options = std::move(options);
  a.make = [name, family](Env& env, const LockParams& p) { return family(name, env, p); };
  return a;
}

}  // namespace

std::vector<LockInfo> recipe_locks() {
  std::vector<LockInfo> r;
  for (const char* n : {"setnx", "setnx-expire", "set-px-del", "set-px-get-del", "set-px-lua", "watch-multi"})
    r.push_back(builtin(n, make_set_family_lock));
  r.push_back(builtin(
      "renewal-thread", make_set_family_lock,
      {lock_integer("scan_ms", 2000, 1, kMaxMs, "how often the renewal thread checks whether the lease needs extending"),
       lock_integer("renew_count_max", 10, 0, 1'000'000, "renewals before the thread gives up")}));
  // Redisson's locks count holds per owner: a reentrant mutex to the checker.
  r.push_back(builtin("redisson", make_redisson_lock, redisson_options()));
  r.back().reentrant = true;
  r.push_back(builtin("redisson-fenced", make_redisson_lock, redisson_options()));
  r.back().reentrant = true;
  r.back().fencing_tokens = true;
  r.push_back(builtin("redisson-fair", make_redisson_lock, fair_options()));
  r.back().reentrant = true;
  r.back().fair = true;
  r.push_back(builtin("redisson-rw", make_redisson_lock, redisson_options(), 1, true));
  r.push_back(builtin("multilock", make_multinode_lock, {}, 3));
  r.push_back(builtin(
      "redlock", make_multinode_lock,
      {lock_integer("node_timeout_ms", 50, 1, kMaxMs, "how long one node may take to answer, far below the lease"),
       lock_integer("drift_factor_ppm", 10000, 0, 1'000'000, "clock drift allowance subtracted from the validity"),
       flag("parallel", true, "1: ask the nodes at once; 0: one after another"),
       flag("check_validity", true, "1: refuse a majority that took longer than the lease; 0: skip that check")},
      3));
  for (auto& l : zookeeper_locks()) r.push_back(std::move(l));
  for (auto& l : mysql_locks()) r.push_back(std::move(l));
  return r;
}

void register_algorithm(AlgorithmInfo info) {
  if (!info.make) {
    throw std::invalid_argument("lockstep::register_algorithm(\"" + info.name +
                                "\"): no factory (AlgorithmInfo::make is empty)");
  }
  register_lock(std::move(info));
}

bool unregister_algorithm(const std::string& name) {
  const LockInfo* l = find_lock(name);
  return l && !l->library_options() && unregister_lock(name);
}

const AlgorithmInfo* find_algorithm(std::string_view name) {
  const LockInfo* l = find_lock(name);
  return l && !l->library_options() ? l : nullptr;
}

bool is_read_write_algorithm(const std::string& name) {
  const AlgorithmInfo* a = find_algorithm(name);
  return a && a->read_write;
}

bool is_algorithm(const std::string& name) { return find_algorithm(name) != nullptr; }

std::optional<int64_t> algorithm_option(const std::string& algorithm, const LockParams& p, const std::string& name) {
  const AlgorithmInfo* a = find_algorithm(algorithm);
  const LockOption* o = nullptr;
  if (a && a->options) {
    for (const auto& candidate : *a->options)
      if (candidate.name == name) o = &candidate;
  }
  if (!o) {
    std::fprintf(stderr, "lockstep: algorithm %s reads option %s, which its option table does not declare\n",
                 algorithm.c_str(), name.c_str());
    std::abort();
  }
  if (auto it = p.options.find(name); it != p.options.end()) return it->second;
  if (o->default_value.is_number_integer()) return o->default_value.get<int64_t>();
  return std::nullopt;
}

std::unique_ptr<Lock> make_lock(const std::string& algorithm, Env& env, const LockParams& params) {
  const AlgorithmInfo* a = find_algorithm(algorithm);
  return a ? a->make(env, params) : nullptr;
}

}  // namespace lockstep
