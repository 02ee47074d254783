// The registry of lock algorithms by the names scenario files use.
//
// lockstep's own algorithms are entries of this registry like any other; a program that
// links lockstep adds its own lock with register_algorithm, and from then on scenario
// files, the fuzzer, the safety matrix, the reports and both worlds treat it exactly like
// a built-in one (they all build locks through make_lock, which looks here).
//
// The registry is process-wide and not synchronised: register before running anything
// (in main, or in a test's SetUp), never while a run is under way.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lockstep/lock.h"

namespace lockstep {

// One integer option of an algorithm (scenario files may also write true/false, read as
// 1/0). What the lock reads with option_or(params, name, default).
struct AlgorithmOption {
  std::string name;
  int64_t min = 0;
  int64_t max = INT64_MAX;
  std::string meaning;  // one line, shown in error messages
};

// Builds one process's lock. Called once per client, on that client's Env; the lock
// must reach Redis only through `env` (that is what lets it run in both worlds), and
// must return a lock, never nullptr.
using LockFactory = std::function<std::unique_ptr<Lock>(Env& env, const LockParams& params)>;

struct AlgorithmInfo {
  std::string name;  // letters, digits, '-', '_', '.', '@'; what scenario files write
  LockFactory make;
  std::string description;
  // Independent masters the lock needs (env.node(0) .. node(nodes-1)); the fuzzer
  // builds topologies of this many.
  int nodes = 1;
  // The options the lock understands. Set: a scenario naming any other option, or a
  // value out of range, is an error at $.lock.options. Unset: options are not checked.
  std::optional<std::vector<AlgorithmOption>> options;
};

// Adds an algorithm. Throws std::invalid_argument, saying why, for an empty or malformed
// name, a name already taken (built-in or registered), a missing factory, nodes < 1, or
// an option schema with a repeated name or min > max.
void register_algorithm(AlgorithmInfo info);

// Removes a registered algorithm (a test that registers one cleans up with this).
// Returns false for a built-in or unknown name, which stay as they are.
bool unregister_algorithm(const std::string& name);

// The entry for `name`, or nullptr; valid until the next register or unregister.
const AlgorithmInfo* find_algorithm(const std::string& name);

// Every algorithm name a scenario may ask for: the built-ins in catalogue order, then
// registered ones in registration order.
const std::vector<std::string>& algorithm_names();
bool is_algorithm(const std::string& name);
// Whether make_rw_lock builds it: a lock with a read side and a write side.
bool is_read_write_algorithm(const std::string& name);

}  // namespace lockstep
