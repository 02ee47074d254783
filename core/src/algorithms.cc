#include "lockstep/algorithms.h"

#include <cstdio>
#include <cstdlib>

namespace lockstep {
namespace {

constexpr double kMaxMs = 1'000'000'000;

LockOption integer(std::string name, int64_t def, double min, double max, std::string meaning) {
  LockOption o;
  o.name = std::move(name);
  o.default_value = def;
  o.min = min;
  o.max = max;
  o.meaning = std::move(meaning);
  return o;
}

// A switch: 0 or 1 (the reader also takes false and true).
LockOption flag(std::string name, bool def, std::string meaning) {
  return integer(std::move(name), def ? 1 : 0, 0, 1, std::move(meaning));
}

std::vector<LockOption> redisson_options() {
  LockOption wait_timeout = integer("wait_timeout_ms", 0, 1, kMaxMs,
                                    "how long WAIT blocks for the replicas (default: half of command_timeout_ms)");
  wait_timeout.default_value = nullptr;  // derived from the command timeout
  return {
      flag("watchdog", false, "1: renew the lease every lease/3 while held (Redisson's lock watchdog)"),
      integer("wait_replicas", 0, 0, 4, "replicas that must confirm each acquisition (WAIT) before it counts"),
      wait_timeout,
  };
}

// The fair lock's queue: how long a waiter's place is kept (Redisson's threadWaitTime).
std::vector<LockOption> fair_options() {
  auto out = redisson_options();
  out.push_back(integer("fair_wait_ms", 5000, 0, kMaxMs, "how long a waiter keeps its place in the queue"));
  return out;
}

std::vector<AlgorithmInfo> build_table() {
  return {
      {"setnx", false, {}},
      {"setnx-expire", false, {}},
      {"set-px-del", false, {}},
      {"set-px-get-del", false, {}},
      {"set-px-lua", false, {}},
      {"watch-multi", false, {}},
      {"renewal-thread",
       false,
       {integer("scan_ms", 2000, 1, kMaxMs, "how often the renewal thread checks whether the lease needs extending"),
        integer("renew_count_max", 10, 0, 1'000'000, "renewals before the thread gives up")}},
      {"redisson", false, redisson_options()},
      {"redisson-fenced", false, redisson_options()},
      {"redisson-fair", false, fair_options()},
      {"redisson-rw", true, redisson_options()},
      {"multilock", false, {}},
      {"redlock",
       false,
       {integer("node_timeout_ms", 50, 1, kMaxMs, "how long one node may take to answer, far below the lease"),
        integer("drift_factor_ppm", 10000, 0, 1'000'000, "clock drift allowance subtracted from the validity"),
        flag("parallel", true, "1: ask the nodes at once; 0: one after another"),
        flag("check_validity", true, "1: refuse a majority that took longer than the lease; 0: skip that check")}},
  };
}

}  // namespace

const std::vector<AlgorithmInfo>& algorithms() {
  static const std::vector<AlgorithmInfo> kTable = build_table();
  return kTable;
}

const AlgorithmInfo* algorithm_named(std::string_view name) {
  for (const auto& a : algorithms())
    if (a.name == name) return &a;
  return nullptr;
}

const std::vector<std::string>& algorithm_names() {
  static const std::vector<std::string> kNames = [] {
    std::vector<std::string> out;
    for (const auto& a : algorithms()) out.push_back(a.name);
    return out;
  }();
  return kNames;
}

bool is_read_write_algorithm(const std::string& name) {
  const AlgorithmInfo* a = algorithm_named(name);
  return a && a->read_write;
}

bool is_algorithm(const std::string& name) { return algorithm_named(name) != nullptr; }

std::optional<int64_t> algorithm_option(const std::string& algorithm, const LockParams& p, const std::string& name) {
  const AlgorithmInfo* a = algorithm_named(algorithm);
  const LockOption* o = nullptr;
  if (a) {
    for (const auto& candidate : a->options)
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

std::unique_ptr<Lock> make_set_family_lock(const std::string& algorithm, Env& env, const LockParams& params);
std::unique_ptr<Lock> make_redisson_lock(const std::string& algorithm, Env& env, const LockParams& params);
std::unique_ptr<Lock> make_multinode_lock(const std::string& algorithm, Env& env, const LockParams& params);

std::unique_ptr<Lock> make_lock(const std::string& algorithm, Env& env, const LockParams& params) {
  if (auto l = make_set_family_lock(algorithm, env, params)) return l;
  if (auto l = make_redisson_lock(algorithm, env, params)) return l;
  return make_multinode_lock(algorithm, env, params);
}

}  // namespace lockstep
