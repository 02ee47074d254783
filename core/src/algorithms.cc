#include "lockstep/algorithms.h"

#include <algorithm>

namespace lockstep {

const std::vector<std::string>& algorithm_names() {
  static const std::vector<std::string> kNames = {
      "setnx", "setnx-expire", "set-px-del", "set-px-get-del", "set-px-lua", "watch-multi", "renewal-thread",
      "redisson", "redisson-fenced", "redisson-fair", "redisson-rw", "multilock", "redlock",
  };
  return kNames;
}

bool is_read_write_algorithm(const std::string& name) { return name == "redisson-rw"; }

bool is_algorithm(const std::string& name) {
  const auto& n = algorithm_names();
  return std::find(n.begin(), n.end(), name) != n.end();
}

}  // namespace lockstep

#include "lockstep/lock.h"

namespace lockstep {

std::unique_ptr<Lock> make_set_family_lock(const std::string& algorithm, Env& env, const LockParams& params);
std::unique_ptr<Lock> make_redisson_lock(const std::string& algorithm, Env& env, const LockParams& params);
std::unique_ptr<Lock> make_multinode_lock(const std::string& algorithm, Env& env, const LockParams& params);

std::unique_ptr<Lock> make_lock(const std::string& algorithm, Env& env, const LockParams& params) {
  if (auto l = make_set_family_lock(algorithm, env, params)) return l;
  if (auto l = make_redisson_lock(algorithm, env, params)) return l;
  return make_multinode_lock(algorithm, env, params);
}

}  // namespace lockstep
