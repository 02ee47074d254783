// Reading `"lock": {"profile": "LIBRARY@VERSION", "options": {...}}` and the workload
// fields that only profiles take, with the scenario reader's errors: every option is
// checked against the profile's own table (name, type, range), and an unknown one is
// named with its JSON path and the nearest known name.
#pragma once

#include "scenario/json_reader.h"
#include "lockstep/option_table.h"
#include "lockstep/runner/scenario.h"

namespace lockstep::runner {

// `lock.options` (`opts`, at `path`) against `table`, the option table of `owner` (an
// algorithm or a profile): every key declared, every value of its type and in range.
void check_lock_options(const std::vector<LockOption>& table, const std::string& owner, const json_reader::json& opts,
                        const std::string& path);

// The lock object `o` names a profile: read it (algorithm holds the profile's name too,
// so everything that prints an algorithm prints the profile).
// `field` is where the file names the lock: "algorithm", or "profile", its older spelling.
LockSpec read_profile_lock(const json_reader::Obj& o, const std::string& field);

// extend_every_ms needs a profile with an extend call; reentrant_hold_ms a reentrant one.
void check_profile_workload(const json_reader::Obj& workload, const LockSpec& lock, const WorkloadSpec& w);

}  // namespace lockstep::runner
