#include "lockstep/algorithms.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <stdexcept>

namespace lockstep {

std::unique_ptr<Lock> make_set_family_lock(const std::string& algorithm, Env& env, const LockParams& params);
std::unique_ptr<Lock> make_redisson_lock(const std::string& algorithm, Env& env, const LockParams& params);
std::unique_ptr<Lock> make_multinode_lock(const std::string& algorithm, Env& env, const LockParams& params);

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

AlgorithmInfo builtin(const std::string& name, Family family, std::vector<LockOption> options = {}, int nodes = 1,
                      bool read_write = false) {
  AlgorithmInfo a;
  a.name = name;
  a.nodes = nodes;
  a.read_write = read_write;
  a.options = std::move(options);
  a.make = [name, family](Env& env, const LockParams& p) { return family(name, env, p); };
  return a;
}

struct Registry {
  // A vector, not a map: lookups are few and names must come out in catalogue order.
  std::vector<AlgorithmInfo> entries;
  std::vector<std::string> names;
  size_t builtins = 0;
};

Registry& registry() {
  static Registry r = [] {
    Registry r;
    for (const char* n : {"setnx", "setnx-expire", "set-px-del", "set-px-get-del", "set-px-lua", "watch-multi"})
      r.entries.push_back(builtin(n, make_set_family_lock));
    r.entries.push_back(builtin(
        "renewal-thread", make_set_family_lock,
        {lock_integer("scan_ms", 2000, 1, kMaxMs, "how often the renewal thread checks whether the lease needs extending"),
         lock_integer("renew_count_max", 10, 0, 1'000'000, "renewals before the thread gives up")}));
    r.entries.push_back(builtin("redisson", make_redisson_lock, redisson_options()));
    r.entries.push_back(builtin("redisson-fenced", make_redisson_lock, redisson_options()));
    r.entries.back().fencing_tokens = true;
    r.entries.push_back(builtin("redisson-fair", make_redisson_lock, fair_options()));
    r.entries.back().fair = true;
    r.entries.push_back(builtin("redisson-rw", make_redisson_lock, redisson_options(), 1, true));
    r.entries.push_back(builtin("multilock", make_multinode_lock, {}, 3));
    r.entries.push_back(builtin(
        "redlock", make_multinode_lock,
        {lock_integer("node_timeout_ms", 50, 1, kMaxMs, "how long one node may take to answer, far below the lease"),
         lock_integer("drift_factor_ppm", 10000, 0, 1'000'000, "clock drift allowance subtracted from the validity"),
         flag("parallel", true, "1: ask the nodes at once; 0: one after another"),
         flag("check_validity", true, "1: refuse a majority that took longer than the lease; 0: skip that check")},
        3));
    for (const auto& e : r.entries) r.names.push_back(e.name);
    r.builtins = r.entries.size();
    return r;
  }();
  return r;
}

bool valid_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
         c == '.' || c == '@';
}

[[noreturn]] void refuse(const std::string& name, const std::string& why) {
  throw std::invalid_argument("lockstep::register_algorithm(\"" + name + "\"): " + why);
}

}  // namespace

void register_algorithm(AlgorithmInfo info) {
  Registry& r = registry();
  if (info.name.empty()) refuse(info.name, "the name is empty");
  if (!std::all_of(info.name.begin(), info.name.end(), valid_name_char))
    refuse(info.name, "a name may only hold letters, digits, '-', '_', '.' and '@'");
  if (find_algorithm(info.name))
    refuse(info.name,
           std::string("the name is already taken by ") +
               (std::find(r.names.begin(), r.names.begin() + static_cast<long>(r.builtins), info.name) !=
                        r.names.begin() + static_cast<long>(r.builtins)
                    ? "a built-in algorithm"
                    : "an algorithm registered before"));
  if (!info.make) refuse(info.name, "no factory (AlgorithmInfo::make is empty)");
  if (info.nodes < 1 || info.nodes > 16) refuse(info.name, "nodes must be from 1 to 16, is " + std::to_string(info.nodes));
  if (info.options) {
    std::set<std::string> seen;
    for (const auto& o : *info.options) {
      if (o.name.empty()) refuse(info.name, "an option has an empty name");
      if (!seen.insert(o.name).second) refuse(info.name, "option \"" + o.name + "\" is listed twice");
      if (o.min > o.max) refuse(info.name, "option \"" + o.name + "\" has min > max");
    }
  }
  r.names.push_back(info.name);
  r.entries.push_back(std::move(info));
}

bool unregister_algorithm(const std::string& name) {
  Registry& r = registry();
  for (size_t i = r.builtins; i < r.entries.size(); ++i) {
    if (r.entries[i].name != name) continue;
    r.entries.erase(r.entries.begin() + static_cast<long>(i));
    r.names.erase(r.names.begin() + static_cast<long>(i));
    return true;
  }
  return false;
}

const std::vector<AlgorithmInfo>& algorithms() { return registry().entries; }

const AlgorithmInfo* find_algorithm(std::string_view name) {
  for (const auto& e : registry().entries)
    if (e.name == name) return &e;
  return nullptr;
}

const std::vector<std::string>& algorithm_names() { return registry().names; }

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
