// The registry of lock algorithms by the names scenario files use.
#pragma once

#include <string>
#include <vector>

namespace lockstep {

// Every algorithm name a scenario may ask for, in catalogue order.
const std::vector<std::string>& algorithm_names();
bool is_algorithm(const std::string& name);
// Whether make_rw_lock builds it: a lock with a read side and a write side.
bool is_read_write_algorithm(const std::string& name);

}  // namespace lockstep
