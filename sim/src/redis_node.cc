// Placeholder until the simulated node lands.
#include "lockstep/sim/redis_node.h"
