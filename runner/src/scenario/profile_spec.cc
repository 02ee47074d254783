#include "scenario/profile_spec.h"

#include <cmath>

#include "lockstep/profiles.h"

namespace lockstep::runner {
namespace {

using namespace json_reader;

std::string number_text(double x) {
  if (x == std::floor(x) && std::fabs(x) < 1e15) return std::to_string(static_cast<int64_t>(x));
  std::string s = std::to_string(x);
  while (!s.empty() && s.back() == '0') s.pop_back();
  return s;
}

std::string number_range(const ProfileOption& o) {
  return "a number from " + number_text(o.min) + " to " + number_text(o.max);
}

void check_option(const ProfileOption& o, const json& v, const std::string& path) {
  switch (o.type) {
    case ProfileOption::Type::Integer:
      // lockstep's own switches are 0/1 integers, and true/false has always been read as 1/0.
      if (o.min == 0 && o.max == 1) {
        if (!v.is_boolean() && !(v.is_number_integer() && (v == 0 || v == 1)))
          fail(path, "0 or 1 (or false or true)", describe(v));
        return;
      }
      read_int(v, path, static_cast<int64_t>(o.min), static_cast<int64_t>(o.max));
      return;
    case ProfileOption::Type::Number:
      read_number(v, path, o.min, o.max, number_range(o));
      return;
    case ProfileOption::Type::NumberOrNull:
      if (!v.is_null()) read_number(v, path, o.min, o.max, number_range(o) + " or null");
      return;
    case ProfileOption::Type::Boolean:
      if (!v.is_boolean()) fail(path, "true or false", describe(v));
      return;
    case ProfileOption::Type::Choice:
      read_choice(v, path, o.choices);
      return;
  }
}

std::vector<std::string> option_names(const std::vector<LockOption>& table) {
  std::vector<std::string> out;
  for (const auto& o : table) out.push_back(o.name);
  return out;
}

const LockOption* find_in(const std::vector<LockOption>& table, const std::string& name) {
  for (const auto& o : table)
    if (o.name == name) return &o;
  return nullptr;
}

std::string quoted_list(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + quote(s);
  return out;
}

// An option of some kinds only, beside another kind: the lock would ignore it, and the
// file would say something the run does not do. (`kind` itself was checked already.)
void check_option_kinds(const std::vector<LockOption>& table, const json& opts, const std::string& path) {
  const LockOption* kind = find_in(table, "kind");
  if (!kind) return;
  const auto given = opts.find("kind");
  const bool chosen_by_file = given != opts.end();
  const std::string chosen = chosen_by_file ? given->get<std::string>() : kind->default_value.get<std::string>();
  for (const auto& [k, v] : opts.items()) {
    const LockOption& o = *find_in(table, k);
    if (applies_to_kind(o, chosen)) continue;
    fail(child(path, k),
         "no " + k + " with " + (chosen_by_file ? "" : "the default ") + "kind " + quote(chosen) + " (it applies to kind" +
             (o.kinds.size() > 1 ? "s " : " ") + quoted_list(o.kinds) + " only; did you mean \"kind\": " +
             quote(o.kinds.front()) + "?)",
         describe(v));
  }
}

}  // namespace

void check_lock_options(const std::vector<LockOption>& table, const std::string& owner, const json& opts,
                        const std::string& path) {
  if (!opts.is_object()) fail(path, "an object of " + owner + " options", describe(opts));
  const auto names = option_names(table);
  for (const auto& [k, v] : opts.items()) {
    const LockOption* opt = find_in(table, k);
    if (!opt) {
      const std::string hint = did_you_mean(k, names);
      const std::string takes = names.empty() ? "it takes none" : join(names);
      fail(child(path, k), hint.empty() ? "an option of " + owner + " (" + takes + ")" : "an option of " + owner + hint,
           "unknown key " + quote(k));
    }
    check_option(*opt, v, child(path, k));
  }
  check_option_kinds(table, opts, path);
}

LockSpec read_profile_lock(const Obj& o, const std::string& field) {
  // The generic knobs belong to lockstep's own recipes; a profile has the library's.
  for (const char* key : {"lease_ms", "retry", "command_timeout_ms"}) {
    if (const json* v = o.find(key))
      fail(o.at(key), std::string("no ") + key + " beside a profile (the library's own settings go in lock.options)",
           describe(*v));
  }
  const std::string expected = "one of the profiles " + join(profile_names());
  const json& name = o.need(field, expected);
  if (!name.is_string()) fail(o.at(field), expected, describe(name));
  const ProfileInfo* info = profile_named(name.get<std::string>());
  if (!info) fail(o.at(field), expected + did_you_mean(name.get<std::string>(), profile_names()), describe(name));
  LockSpec l;
  l.algorithm = info->name;
  l.key = o.string("key", l.key);
  const json* opts = o.find("options");
  if (!opts) return l;
  const std::string path = o.at("options");
  check_lock_options(option_table(*info), info->name, *opts, path);
  std::string option;
  if (std::string why = profile_options_problem(*info, *opts, option); !why.empty()) {
    fail(child(path, option), why, describe(ProfileOptions(*info, *opts).value(option)));
  }
  l.options = *opts;
  return l;
}

void check_profile_workload(const Obj& o, const LockSpec& lock, const WorkloadSpec& w) {
  const ProfileInfo* info = lock.library() ? lock.info() : nullptr;
  if (w.extend_every_ms > 0 && (!info || !profile_has_extend(*info, lock.options))) {
    const std::string why =
        !info ? "lockstep's own algorithms have no extend call; use a library profile"
              : info->name + " has no extend call with these options (its own renewal, if any, runs by itself)";
    fail(o.at("extend_every_ms"), "0 (" + why + ")", std::to_string(w.extend_every_ms));
  }
  // A program runs its own lock and its own loop: these are the built-in workload's.
  for (const auto& [key, set] : {std::pair{"hold_for_validity", w.hold_for_validity}, {"retry_until_wait", w.retry_until_wait}}) {
    if (w.external() && set) fail(o.at(key), "false (an external program decides how long it works and how often it tries)", "true");
  }
  if (w.hold_for_validity && (!lock.info() || !lock.info()->reports_validity)) {
    fail(o.at("hold_for_validity"),
         "false (" + lock.algorithm + " reports no validity for its holds; redlock-py's profiles do)", "true");
  }
  if (w.reentrant_hold_ms > 0 && (!info || !info->reentrant)) {
    fail(o.at("reentrant_hold_ms"), "0 (only a reentrant profile, such as redisson@3.43.0, can take its lock again)",
         std::to_string(w.reentrant_hold_ms));
  }
}

}  // namespace lockstep::runner
