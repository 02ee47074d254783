// The registry of lock algorithms by the names scenario files use, each with the table of
// options it takes in `lock.options`.
//
// lockstep's own algorithms are entries of this registry like any other; a program that
// links lockstep adds its own lock with register_algorithm, and from then on scenario
// files, the fuzzer, the safety matrix, the reports and both worlds treat it exactly like
// a built-in one (they all build locks through make_lock, which looks here).
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
#include "lockstep/option_table.h"

namespace lockstep {

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
  // The options the lock understands (integer_option makes the common kind). Set: a
  // scenario naming any other option, or a value out of range, is an error at
  // $.lock.options. Unset (a registered lock that declares none): options are not checked.
  // Every built-in algorithm sets it, if only to an empty table.
  std::optional<std::vector<LockOption>> options;
  bool read_write = false;  // make_rw_lock builds it: a read side and a write side
  // Promises: what scenarios may ask of the lock. A fair lock serves waiters in the order
  // they asked (the checker then judges that order); a lock with fencing tokens returns
  // one from Lock::fencing_token() for each hold (a fencing store needs them).
  bool fair = false;
  bool fencing_tokens = false;
};

// Adds an algorithm. Throws std::invalid_argument, saying why, for an empty or malformed
// name, a name already taken (built-in or registered), a missing factory, nodes < 1, or
// an option table with a repeated or empty name or min > max.
void register_algorithm(AlgorithmInfo info);

// Removes a registered algorithm (a test that registers one cleans up with this).
// Returns false for a built-in or unknown name, which stay as they are.
bool unregister_algorithm(const std::string& name);

// Every algorithm: the built-ins in catalogue order, then registered ones in registration
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
