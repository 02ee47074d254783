// The names a scenario's topology and worlds are spelled with, each an enum with one
// table that reader, writers, help and both worlds read: which world runs a scenario, how
// a Redis node persists its data, and what it evicts when it is full. Nothing else spells
// these names.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lockstep {

// Where a scenario runs: the simulator, or real servers.
enum class World { Sim, Live };

// How a Redis node keeps its data across a crash (its config's appendonly/appendfsync):
// not at all, an AOF fsynced every second, or after every write.
enum class Persistence { None, AofEverysec, AofAlways };

// maxmemory-policy: what a node full to maxmemory does with the next write.
enum class EvictionPolicy {
  NoEviction,
  AllkeysLru,
  VolatileLru,
  AllkeysRandom,
  VolatileRandom,
  VolatileTtl,
  AllkeysLfu,
  VolatileLfu,
};

template <typename E>
struct Named {
  E value;
  const char* name;     // as files, configs and reports spell it
  const char* meaning;  // one phrase, for help and docs
};

const std::vector<Named<World>>& worlds();
const std::vector<Named<Persistence>>& persistence_modes();
const std::vector<Named<EvictionPolicy>>& eviction_policies();

const char* to_string(World w);
const char* to_string(Persistence p);
const char* to_string(EvictionPolicy p);

std::optional<World> world_named(std::string_view name);
std::optional<Persistence> persistence_named(std::string_view name);
std::optional<EvictionPolicy> eviction_policy_named(std::string_view name);

std::vector<std::string> world_names();
std::vector<std::string> persistence_names();
std::vector<std::string> eviction_policy_names();

// The policy may evict a key that has no TTL (allkeys-*), and whether it evicts at all.
bool evicts_any_key(EvictionPolicy p);
bool evicts(EvictionPolicy p);

}  // namespace lockstep
