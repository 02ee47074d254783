// The one registry of locks: lockstep's recipes, the library profiles, and what a program
// registers, with the views the two older headers give of it (algorithms.h: the recipes;
// profiles.h: the libraries' locks).
#include <algorithm>
#include <set>
#include <stdexcept>

#include "lockstep/algorithms.h"
#include "lockstep/locks.h"
#include "lockstep/profiles.h"

namespace lockstep {

std::vector<LockInfo> recipe_locks();   // algorithms.cc
std::vector<LockInfo> library_locks();  // profiles/registry.cc

namespace {

struct Registry {
  // A vector, not a map: lookups are few and names must come out in catalogue order.
  std::vector<LockInfo> entries;
  size_t builtins = 0;
  // The views algorithms() and library_profiles() hand out, made again after every change.
  std::vector<LockInfo> recipes, libraries;
  std::vector<std::string> recipe_names;

  void refresh_views() {
    recipes.clear();
    libraries.clear();
    recipe_names.clear();
    for (const auto& e : entries) {
      (e.library_options() ? libraries : recipes).push_back(e);
      if (!e.library_options()) recipe_names.push_back(e.name);
    }
  }
};

Registry& registry() {
  static Registry r = [] {
    Registry r;
    r.entries = recipe_locks();
    for (auto& l : library_locks()) r.entries.push_back(std::move(l));
    r.builtins = r.entries.size();
    r.refresh_views();
    return r;
  }();
  return r;
}

bool valid_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
         c == '.' || c == '@';
}

// Said in the words of the call the program made: a recipe comes in by register_algorithm.
[[noreturn]] void refuse(const LockInfo& info, const std::string& why) {
  const char* call = info.library_options() || !info.make ? "register_lock" : "register_algorithm";
  throw std::invalid_argument(std::string("lockstep::") + call + "(\"" + info.name + "\"): " + why);
}

const char* kind_of(const LockInfo& l) { return l.library_options() ? "library profile" : "algorithm"; }

}  // namespace

void register_lock(LockInfo info) {
  Registry& r = registry();
  if (info.name.empty()) refuse(info, "the name is empty");
  if (!std::all_of(info.name.begin(), info.name.end(), valid_name_char))
    refuse(info, "a name may only hold letters, digits, '-', '_', '.' and '@'");
  if (const LockInfo* taken = find_lock(info.name)) {
    const bool builtin = taken - r.entries.data() < static_cast<std::ptrdiff_t>(r.builtins);
    const std::string kind = kind_of(*taken);
    refuse(info, "the name is already taken by " + (builtin ? "a built-in " + kind
                                                             : (kind[0] == 'a' ? "an " : "a ") + kind + " registered before"));
  }
  if (!info.make && !info.make_with_options) refuse(info, "no factory (LockInfo::make or make_with_options)");
  if (info.make && info.make_with_options) refuse(info, "two factories: a lock takes its options one way");
  if (info.make_with_options && !info.options) refuse(info, "a library's lock needs its option table");
  if (info.nodes < 1 || info.nodes > 16) refuse(info, "nodes must be from 1 to 16, is " + std::to_string(info.nodes));
  if (info.options) {
    std::set<std::string> seen;
    for (const auto& o : *info.options) {
      if (o.name.empty()) refuse(info, "an option has an empty name");
      if (!seen.insert(o.name).second) refuse(info, "option \"" + o.name + "\" is listed twice");
      if (o.min > o.max) refuse(info, "option \"" + o.name + "\" has min > max");
    }
  }
  r.entries.push_back(std::move(info));
  r.refresh_views();
}

bool unregister_lock(const std::string& name) {
  Registry& r = registry();
  for (size_t i = r.builtins; i < r.entries.size(); ++i) {
    if (r.entries[i].name != name) continue;
    r.entries.erase(r.entries.begin() + static_cast<long>(i));
    r.refresh_views();
    return true;
  }
  return false;
}

const std::vector<LockInfo>& locks() { return registry().entries; }

const LockInfo* find_lock(std::string_view name) {
  for (const auto& e : registry().entries)
    if (e.name == name) return &e;
  return nullptr;
}

std::vector<std::string> lock_names() {
  std::vector<std::string> out;
  for (const auto& e : registry().entries) out.push_back(e.name);
  return out;
}

const std::vector<LockOption>& option_table(const LockInfo& info) {
  static const std::vector<LockOption> kNone;
  return info.options ? *info.options : kNone;
}

const char* to_string(LockService s) {
  switch (s) {
    case LockService::Redis: return "Redis";
    case LockService::ZooKeeper: return "ZooKeeper";
    case LockService::MySql: return "MySQL";
  }
  return "?";
}

const char* topology_field(LockService s) {
  switch (s) {
    case LockService::Redis: return "";
    case LockService::ZooKeeper: return "zookeeper";
    case LockService::MySql: return "mysql";
  }
  return "";
}

bool lock_is_fair(const LockInfo& info, const nlohmann::json& options) {
  return info.fair_with ? info.fair_with(options) : info.fair;
}

int lock_nodes(const LockInfo& info, const nlohmann::json& options) {
  return info.nodes_with ? info.nodes_with(options) : info.nodes;
}

bool lock_extends(const LockInfo& info, const nlohmann::json& options) {
  return info.extends_with && info.extends_with(options);
}

const char* checker_model(const LockInfo& info) {
  if (info.read_write) return "rw-lock";
  return info.reentrant ? "reentrant-mutex" : "mutex";
}

std::unique_ptr<Lock> build_lock(const std::string& name, Env& env, const LockParams& params,
                                 const nlohmann::json& options) {
  const LockInfo* l = find_lock(name);
  if (!l) return nullptr;
  return l->library_options() ? l->make_with_options(*l, env, params.key, options) : l->make(env, params);
}

// The views of the older headers.

const std::vector<AlgorithmInfo>& algorithms() { return registry().recipes; }
const std::vector<std::string>& algorithm_names() { return registry().recipe_names; }
const std::vector<ProfileInfo>& library_profiles() { return registry().libraries; }

const ProfileInfo* profile_named(std::string_view name) {
  const LockInfo* l = find_lock(name);
  return l && l->library_options() ? l : nullptr;
}

std::vector<std::string> profile_names() {
  std::vector<std::string> out;
  for (const auto& p : library_profiles()) out.push_back(p.name);
  return out;
}

bool profile_has_extend(const ProfileInfo& p, const nlohmann::json& options) { return lock_extends(p, options); }

std::string profile_options_problem(const ProfileInfo& p, const nlohmann::json& options, std::string& option) {
  return p.options_problem ? p.options_problem(options, option) : "";
}

std::unique_ptr<ProfileLock> make_profile_lock(const std::string& profile, Env& env, const std::string& key,
                                               const nlohmann::json& options) {
  const ProfileInfo* info = profile_named(profile);
  return info ? info->make_with_options(*info, env, key, options) : nullptr;
}

}  // namespace lockstep
