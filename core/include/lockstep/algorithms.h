// The registry of lockstep's own lock algorithms by the names scenario files use, each
// with the table of options it takes in `lock.options`. The table is the only place an
// option is declared: the scenario reader checks files against it, and the algorithms
// read their options through algorithm_option, which refuses an undeclared name.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lockstep/lock.h"
#include "lockstep/option_table.h"

namespace lockstep {

struct AlgorithmInfo {
  std::string name;
  bool read_write = false;  // make_rw_lock builds it: a read side and a write side
  std::vector<LockOption> options;
};

// Every algorithm, in catalogue order.
const std::vector<AlgorithmInfo>& algorithms();
const AlgorithmInfo* algorithm_named(std::string_view name);
const std::vector<std::string>& algorithm_names();
bool is_algorithm(const std::string& name);
// Whether make_rw_lock builds it: a lock with a read side and a write side.
bool is_read_write_algorithm(const std::string& name);

// Option `name` of `algorithm` as `p` sets it, else its declared default; nullopt when the
// table gives no fixed default (the algorithm derives one, as the option's meaning says).
// Asking for an option the table does not declare is a bug in lockstep: it aborts, so the
// table and the code cannot drift apart unnoticed.
std::optional<int64_t> algorithm_option(const std::string& algorithm, const LockParams& p, const std::string& name);

}  // namespace lockstep
