// How a lock call's outcome is recorded in the history: a definite answer is ok or fail,
// an unknown one (a timeout, a lost reply) is info, which the checker may place anywhere
// after the call began.
#pragma once

#include "lockstep/checker/history.h"
#include "lockstep/lock.h"
#include "lockstep/profiles.h"

namespace lockstep::runner {

inline checker::EventType completion(AcquireOutcome o) {
  switch (o) {
    case AcquireOutcome::Acquired: return checker::EventType::Ok;
    case AcquireOutcome::NotAcquired: return checker::EventType::Fail;
    case AcquireOutcome::Unknown: return checker::EventType::Info;
  }
  return checker::EventType::Info;
}

inline checker::EventType completion(ReleaseOutcome o) {
  switch (o) {
    case ReleaseOutcome::Released: return checker::EventType::Ok;
    case ReleaseOutcome::NotOwner: return checker::EventType::Fail;
    case ReleaseOutcome::Unknown: return checker::EventType::Info;
  }
  return checker::EventType::Info;
}

inline checker::EventType completion(ExtendOutcome o) {
  switch (o) {
    case ExtendOutcome::Extended: return checker::EventType::Ok;
    case ExtendOutcome::NotExtended: return checker::EventType::Fail;
    case ExtendOutcome::Unknown: return checker::EventType::Info;
  }
  return checker::EventType::Info;
}

}  // namespace lockstep::runner
