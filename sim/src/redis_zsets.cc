// Placeholder: zset commands land in the next step.
#include "redis_impl.h"

namespace lockstep::sim {

void register_zset_commands(std::vector<Command>&) {}

}  // namespace lockstep::sim
