// A team's own Redis lease lock, written against lockstep's Env so that lockstep can run
// it in its simulator and against real servers. Two variants are registered:
//
//   lease-lock-v1  takes the lock with SET key token NX PX lease and releases it with a
//                  plain DEL. Read release() and spot the bug.
//   lease-lock     the same, but releases with an atomic compare-and-delete script.
#pragma once

#include <memory>

#include <lockstep/algorithms.h>
#include <lockstep/lock.h>

namespace acme {

class LeaseLock : public lockstep::Lock {
 public:
  LeaseLock(lockstep::Env& env, lockstep::LockParams params, bool compare_on_release);

  lockstep::Task<lockstep::AcquireOutcome> acquire(lockstep::Nanos wait) override;
  lockstep::Task<lockstep::ReleaseOutcome> release() override;
  const std::string& token() const override { return token_; }

 private:
  lockstep::Task<lockstep::Reply> call(std::vector<std::string> argv);

  lockstep::Env& env_;
  lockstep::LockParams params_;
  bool compare_on_release_;
  std::string token_;
};

// Adds both variants to lockstep's registry (once; later calls do nothing).
void register_lease_locks();

}  // namespace acme
