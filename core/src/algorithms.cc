#include "lockstep/algorithms.h"

#include <algorithm>
#include <set>
#include <stdexcept>

namespace lockstep {

std::unique_ptr<Lock> make_set_family_lock(const std::string& algorithm, Env& env, const LockParams& params);
std::unique_ptr<Lock> make_redisson_lock(const std::string& algorithm, Env& env, const LockParams& params);
std::unique_ptr<Lock> make_multinode_lock(const std::string& algorithm, Env& env, const LockParams& params);

namespace {

struct Registry {
  // A vector, not a map: lookups are few and names must come out in catalogue order.
  std::vector<AlgorithmInfo> entries;
  std::vector<std::string> names;
  size_t builtins = 0;
};

AlgorithmInfo builtin(const std::string& name, std::unique_ptr<Lock> (*family)(const std::string&, Env&, const LockParams&),
                      int nodes = 1) {
  AlgorithmInfo a;
  a.name = name;
  a.nodes = nodes;
  a.make = [name, family](Env& env, const LockParams& p) { return family(name, env, p); };
  return a;
}

Registry& registry() {
  static Registry r = [] {
    Registry r;
    for (const char* n : {"setnx", "setnx-expire", "set-px-del", "set-px-get-del", "set-px-lua", "watch-multi",
                          "renewal-thread"})
      r.entries.push_back(builtin(n, make_set_family_lock));
    for (const char* n : {"redisson", "redisson-fenced", "redisson-fair", "redisson-rw"})
      r.entries.push_back(builtin(n, make_redisson_lock));
    for (const char* n : {"multilock", "redlock"}) r.entries.push_back(builtin(n, make_multinode_lock, 3));
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

const AlgorithmInfo* find_algorithm(const std::string& name) {
  for (const auto& e : registry().entries) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

const std::vector<std::string>& algorithm_names() { return registry().names; }

bool is_read_write_algorithm(const std::string& name) { return name == "redisson-rw"; }

bool is_algorithm(const std::string& name) { return find_algorithm(name) != nullptr; }

std::unique_ptr<Lock> make_lock(const std::string& algorithm, Env& env, const LockParams& params) {
  const AlgorithmInfo* a = find_algorithm(algorithm);
  return a ? a->make(env, params) : nullptr;
}

}  // namespace lockstep
