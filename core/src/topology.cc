#include "lockstep/topology.h"

#include <cstdlib>

namespace lockstep {
namespace {

template <typename E>
const char* name_in(const std::vector<Named<E>>& table, E value) {
  for (const auto& row : table) {
    if (row.value == value) return row.name;
  }
  std::abort();  // every enumerator has a row
}

template <typename E>
std::optional<E> find_in(const std::vector<Named<E>>& table, std::string_view name) {
  for (const auto& row : table) {
    if (name == row.name) return row.value;
  }
  return std::nullopt;
}

template <typename E>
std::vector<std::string> names_in(const std::vector<Named<E>>& table) {
  std::vector<std::string> out;
  for (const auto& row : table) out.push_back(row.name);
  return out;
}

}  // namespace

const std::vector<Named<World>>& worlds() {
  static const std::vector<Named<World>> kTable = {
      {World::Sim, "sim", "the simulator: every fault, replayed byte for byte from a seed"},
      {World::Live, "live", "real redis-server processes lockstep starts on loopback"},
  };
  return kTable;
}

const std::vector<Named<Persistence>>& persistence_modes() {
  static const std::vector<Named<Persistence>> kTable = {
      {Persistence::None, "none", "nothing survives a crash"},
      {Persistence::AofEverysec, "aof-everysec", "an append-only file fsynced every second"},
      {Persistence::AofAlways, "aof-always", "an append-only file fsynced after every write"},
  };
  return kTable;
}

const std::vector<Named<EvictionPolicy>>& eviction_policies() {
  static const std::vector<Named<EvictionPolicy>> kTable = {
      {EvictionPolicy::NoEviction, "noeviction", "refuse the write with OOM"},
      {EvictionPolicy::AllkeysLru, "allkeys-lru", "evict the least recently used key"},
      {EvictionPolicy::VolatileLru, "volatile-lru", "evict the least recently used key with a TTL"},
      {EvictionPolicy::AllkeysRandom, "allkeys-random", "evict a random key"},
      {EvictionPolicy::VolatileRandom, "volatile-random", "evict a random key with a TTL"},
      {EvictionPolicy::VolatileTtl, "volatile-ttl", "evict the key with a TTL nearest its expiry"},
      {EvictionPolicy::AllkeysLfu, "allkeys-lfu", "evict the least frequently used key"},
      {EvictionPolicy::VolatileLfu, "volatile-lfu", "evict the least frequently used key with a TTL"},
  };
  return kTable;
}

const char* to_string(World w) { return name_in(worlds(), w); }
const char* to_string(Persistence p) { return name_in(persistence_modes(), p); }
const char* to_string(EvictionPolicy p) { return name_in(eviction_policies(), p); }

std::optional<World> world_named(std::string_view name) { return find_in(worlds(), name); }
std::optional<Persistence> persistence_named(std::string_view name) { return find_in(persistence_modes(), name); }
std::optional<EvictionPolicy> eviction_policy_named(std::string_view name) {
  return find_in(eviction_policies(), name);
}

std::vector<std::string> world_names() { return names_in(worlds()); }
std::vector<std::string> persistence_names() { return names_in(persistence_modes()); }
std::vector<std::string> eviction_policy_names() { return names_in(eviction_policies()); }

bool evicts_any_key(EvictionPolicy p) {
  return p == EvictionPolicy::AllkeysLru || p == EvictionPolicy::AllkeysRandom || p == EvictionPolicy::AllkeysLfu;
}

bool evicts(EvictionPolicy p) { return p != EvictionPolicy::NoEviction; }

}  // namespace lockstep
