// What every lock shares: the words outcomes are recorded with, and the extend call of a
// lock that has none.
#include "lockstep/lock.h"

namespace lockstep {

const char* to_string(AcquireOutcome o) {
  switch (o) {
    case AcquireOutcome::Acquired: return "acquired";
    case AcquireOutcome::NotAcquired: return "not-acquired";
    case AcquireOutcome::Unknown: return "unknown";
  }
  return "?";
}

const char* to_string(ReleaseOutcome o) {
  switch (o) {
    case ReleaseOutcome::Released: return "released";
    case ReleaseOutcome::NotOwner: return "not-owner";
    case ReleaseOutcome::Unknown: return "unknown";
  }
  return "?";
}

const char* to_string(ExtendOutcome o) {
  switch (o) {
    case ExtendOutcome::Extended: return "extended";
    case ExtendOutcome::NotExtended: return "not-extended";
    case ExtendOutcome::Unknown: return "unknown";
  }
  return "?";
}

Task<ExtendOutcome> Lock::extend() { co_return ExtendOutcome::NotExtended; }

}  // namespace lockstep
