#include "lockstep/checker/properties.h"

#include <cstdlib>

namespace lockstep::checker {

const std::vector<SeverityInfo>& severity_classes() {
  static const std::vector<SeverityInfo> kClasses = {
      {Severity::TwoHolders, "two-holders", "two holders",
       "two clients held the lock at the same moment of true time"},
      {Severity::Damage, "damage", "damage to the resource",
       "the protected resource took harm: a lost update, a stale read or cache, a stale write let through, or a "
       "lock removed by a client that did not own it"},
      {Severity::LeaseLost, "lease-lost", "lease lost while held",
       "a holder's lease ran out while it still relied on the lock, and the lock went to another client, but no two "
       "critical sections overlapped"},
      {Severity::Stuck, "stuck", "stuck",
       "the lock stayed with a crashed or finished holder while other clients waited for it"},
      {Severity::Unfair, "unfair", "unfair",
       "a lock that promises arrival order served a client before one that had asked earlier and was still waiting"},
  };
  return kClasses;
}

const SeverityInfo& severity_info(Severity s) {
  for (const auto& c : severity_classes()) {
    if (c.severity == s) return c;
  }
  std::abort();  // every enumerator has a row
}

const char* to_string(Severity s) { return severity_info(s).name; }

std::optional<Severity> severity_named(std::string_view name) {
  for (const auto& c : severity_classes()) {
    if (name == c.name) return c.severity;
  }
  return std::nullopt;
}

std::vector<std::string> severity_names() {
  std::vector<std::string> out;
  for (const auto& c : severity_classes()) out.push_back(c.name);
  return out;
}

const std::vector<PropertyInfo>& properties() {
  static const std::vector<PropertyInfo> kProperties = {
      {Property::MutualExclusion, "mutual-exclusion", Severity::TwoHolders},
      {Property::LostUpdate, "lost-update", Severity::Damage},
      {Property::ForeignUnlock, "foreign-unlock", Severity::Damage},
      {Property::Deadlock, "deadlock", Severity::Stuck},
      // Two holders when critical sections overlapped too; lease-lost when they did not.
      {Property::Linearizability, "linearizability", Severity::TwoHolders},
      {Property::Fencing, "fencing", Severity::Damage},
      {Property::StaleRead, "stale-read", Severity::Damage},
      {Property::StaleCache, "stale-cache", Severity::Damage},
      {Property::Fairness, "fairness", Severity::Unfair},
      // A lease lost and hidden: the holder was told it still had the lock.
      {Property::FalseExtend, "false-extend", Severity::LeaseLost},
  };
  return kProperties;
}

const PropertyInfo& property_info(Property p) {
  for (const auto& i : properties()) {
    if (i.property == p) return i;
  }
  std::abort();  // every enumerator has a row
}

const char* to_string(Property p) { return property_info(p).name; }

std::optional<Property> property_named(std::string_view name) {
  for (const auto& i : properties()) {
    if (name == i.name) return i.property;
  }
  return std::nullopt;
}

std::vector<std::string> property_names() {
  std::vector<std::string> out;
  for (const auto& i : properties()) out.push_back(i.name);
  return out;
}

}  // namespace lockstep::checker
