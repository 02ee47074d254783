// lockstep's own lock algorithms (the recipes) in the one registry of locks
// (lockstep/locks.h), by the names scenario files use, each with the table of options it
// takes in `lock.options`.
//
// A program that links lockstep adds its own lock with register_algorithm, and from then
// on scenario files, the fuzzer, the safety matrix, the reports and both worlds treat it
// exactly like a built-in one (they all build locks through the registry).
//
// An option table is the only place an option is declared: the scenario reader checks
// files against it, and the built-in algorithms read their options through
// algorithm_option, which refuses an undeclared name.
//
// The registry is process-wide and not synchronised: register before running anything
// (in main, or in a test's SetUp), never while a run is under way.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lockstep/lock.h"
#include "lockstep/locks.h"
#include "lockstep/option_table.h"

namespace lockstep {

// A recipe is a lock of the one registry (lockstep/locks.h) configured with lockstep's own
// parameters: what this header calls an algorithm.
using AlgorithmInfo = LockInfo;

// Adds a recipe (register_lock, with `make` set). Throws std::invalid_argument, saying
// why, for an empty or malformed name, a name already taken (built-in or registered), a
// missing factory, nodes outside 1..16, or an option table with a repeated or empty name
// or min > max.
void register_algorithm(AlgorithmInfo info);

// Removes a registered algorithm (a test that registers one cleans up with this).
// Returns false for a built-in or unknown name, which stay as they are.
bool unregister_algorithm(const std::string& name);

// Every recipe: the built-ins in catalogue order, then registered ones in registration
// order. Valid until the next register or unregister.
const std::vector<AlgorithmInfo>& algorithms();
// The entry for `name`, or nullptr; valid until the next register or unregister.
const AlgorithmInfo* find_algorithm(std::string_view name);
// Every algorithm name a scenario may ask for, in the order of algorithms().
const std::vector<std::string>& algorithm_names();
bool is_algorithm(const std::string& name);
// Whether make_rw_lock builds it: a lock with a read side and a write side.
bool is_read_write_algorithm(const std::string& name);

// Option `name` of `algorithm` as `p` sets it, else its declared default; nullopt when the
// table gives no fixed default (the algorithm derives one, as the option's meaning says).
// Asking for an option the table does not declare is a bug in the lock: it aborts, so the
// table and the code cannot drift apart unnoticed.
std::optional<int64_t> algorithm_option(const std::string& algorithm, const LockParams& p, const std::string& name);

}  // namespace lockstep
