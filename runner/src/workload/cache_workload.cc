// The cache writer: the other tenant of a Redis node that holds a lock. Writing is what
// fills memory, so every write is an event both worlds see in the same order; the rate
// only spreads them out, and scenarios leave room for a slower machine.
#include "lockstep/runner/workload.h"

namespace lockstep::runner {

Task<void> cache_writer(Env& env, const CacheSpec& c, int writer) {
  Connection& node = env.node(c.node - 1);
  const std::string value(static_cast<size_t>(c.value_bytes), 'c');
  const std::string prefix = "cache:" + std::to_string(writer) + ":";
  // The first keys are the volatile ones: a stable set, so a volatile-* policy always
  // has the same candidates besides the lock.
  const auto volatile_keys = static_cast<int64_t>(c.ttl_fraction * c.keys + 0.5);
  const Nanos period = Nanos(1'000'000'000 / c.rate_per_s);
  for (int64_t i = 0; i < c.writes; ++i) {
    const int64_t k = i % c.keys;
    std::vector<std::string> set{"SET", prefix + std::to_string(k), value};
    if (k < volatile_keys) {
      set.emplace_back("PX");
      set.push_back(std::to_string(c.ttl_ms));
    }
    // A refusal (OOM under noeviction) is the cache's problem, not the lock's: go on.
    co_await node.call(std::move(set), Millis(1000));
    co_await env.sleep(period);
  }
}

}  // namespace lockstep::runner
