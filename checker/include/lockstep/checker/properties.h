// The properties a run is judged on, and how bad it is when one breaks.
//
// A property names one promise (mutual exclusion, no lost update, ...). A severity class
// says what a break of it did to the people relying on the lock, so that a reader can
// tell "two clients really held the lock at once" from "a holder's lease ran out under
// it, but nobody else took it", and a campaign can stop on one and not the other:
//
//   two-holders  two clients held the lock at the same moment of true time
//   damage       the protected resource took harm: a lost update, a stale read, a stale
//                write a fencing store let through, a cache left stale, or a lock removed
//                by somebody who did not own it
//   lease-lost   the lock's operations are not linearizable (a holder was still inside
//                its hold when the lock went to another), yet no two critical sections
//                overlapped: the price of a lease, not yet a collision
//   stuck        the lock stayed with a crashed or finished holder while others waited
//   unfair       a lock that promises arrival order served a later client first
//
// Each table below lists every value once, in the order help and reports show them, and
// is the only place that spells their names.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace lockstep::checker {

enum class Severity { TwoHolders, Damage, LeaseLost, Stuck, Unfair };

struct SeverityInfo {
  Severity severity;
  const char* name;     // "two-holders": report.json's "class", --stop-on
  const char* words;    // "two holders": how a sentence says it
  const char* meaning;  // one sentence for help and docs
};

const std::vector<SeverityInfo>& severity_classes();
const SeverityInfo& severity_info(Severity s);
const char* to_string(Severity s);
std::optional<Severity> severity_named(std::string_view name);
std::vector<std::string> severity_names();

enum class Property {
  MutualExclusion,
  LostUpdate,
  ForeignUnlock,
  Deadlock,
  Linearizability,
  Fencing,
  StaleRead,
  StaleCache,
  Fairness,
  FalseExtend,
};

struct PropertyInfo {
  Property property;
  const char* name;   // "mutual-exclusion", as scenario files and reports write it
  Severity severity;  // a break's class; linearizability's depends on the run (classify)
};

const std::vector<PropertyInfo>& properties();
const PropertyInfo& property_info(Property p);
const char* to_string(Property p);
std::optional<Property> property_named(std::string_view name);
std::vector<std::string> property_names();
inline std::ostream& operator<<(std::ostream& out, Property p) { return out << to_string(p); }

}  // namespace lockstep::checker
