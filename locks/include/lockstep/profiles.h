// Library profiles: the lock algorithms of the Redis lock libraries people ship, each
// ported from one library version's source into lockstep's lock code, so its behaviour —
// its defaults, commands, scripts, clock, retry and timeout rules, and its known bugs —
// meets lockstep's faults, checker and reports in both worlds.
//
// A profile is named LIBRARY@VERSION ("redsync@4.17.0") and configured with the options
// the library itself takes, spelled as the library spells them ("driftFactor",
// "retryCount", "lockWatchdogTimeout"); an option left out has the library's default.
// `kind` picks one of the library's lock types or APIs where it has several (Redisson's
// RLock, fair lock, MultiLock and RedLock; redis-plus-plus's RedLock and RedMutex;
// node-redlock 5's acquire/extend calls or its auto-extending using()).
//
// Like every lock, a profile touches the world only through its Env: the wall clock
// where the library reads Date.now() / time.time() / currentTimeMillis, the monotonic
// clock where it reads a monotonic one, so a clock jump hits exactly the libraries it
// would hit. Where a library sends EVALSHA and falls back to EVAL on NOSCRIPT, the
// profile sends EVAL with the same script text: the same atomic script, without the
// one extra NOSCRIPT round trip a fresh server costs.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "lockstep/lock.h"
#include "lockstep/locks.h"
#include "lockstep/option_table.h"

namespace lockstep {

// A profile is a lock of the one registry (lockstep/locks.h) configured with its library's
// own options: `library` and `version` name it, `description` says what it runs,
// `lease_option` names its lease.
using ProfileOption = LockOption;
using ProfileInfo = LockInfo;

// Every profile, in the order `lockstep profiles` lists them. Valid until the next
// register or unregister.
const std::vector<ProfileInfo>& library_profiles();
const ProfileInfo* profile_named(std::string_view name);
std::vector<std::string> profile_names();
const ProfileOption* find_option(const ProfileInfo& p, std::string_view name);
// Whether the profile with these options hands its user an extend call (redsync
// Extend, node-redlock extend, redis-py extend/reacquire with a timeout, redis-plus-plus
// RedLock extend_lock); the others renew on their own or not at all.
bool profile_has_extend(const ProfileInfo& p, const nlohmann::json& options);
// The library's own objection to this combination of options (as it would throw it), or "".
std::string profile_options_problem(const ProfileInfo& p, const nlohmann::json& options, std::string& option);

// A profile's options as given in a scenario, with the library's default for any left
// out. The scenario reader has checked names and types; here they are read.
class ProfileOptions {
 public:
  ProfileOptions(const ProfileInfo& info, nlohmann::json given) : info_(info), given_(std::move(given)) {}
  const nlohmann::json& value(const std::string& name) const;
  int64_t integer(const std::string& name) const;
  double number(const std::string& name) const;
  bool boolean(const std::string& name) const;
  std::string choice(const std::string& name) const;
  bool is_null(const std::string& name) const { return value(name).is_null(); }
  const ProfileInfo& info() const { return info_; }

 private:
  const ProfileInfo& info_;
  nlohmann::json given_;
};

// A library's lock is a Lock like any other (lockstep/lock.h): the name says where it
// came from.
using ProfileLock = Lock;

// Builds `profile`'s lock for the process behind `env` on `key`; nullptr for an unknown
// profile. `options` has been checked against the profile's option table.
std::unique_ptr<ProfileLock> make_profile_lock(const std::string& profile, Env& env, const std::string& key,
                                               const nlohmann::json& options);

}  // namespace lockstep
