// Writing a Scenario back in the file format. Every field is written, defaults included,
// so a written file documents the whole experiment; only fields that the fault kind or
// latency distribution does not take are left out, because the reader rejects them.
#include "lockstep/runner/scenario.h"

#include <type_traits>

namespace lockstep::runner {
namespace {

using ojson = nlohmann::ordered_json;

// Every writer is written once for both JSON types: the file format's (keys in the
// order a reader expects) and the report's (nlohmann::json, keys sorted), so that a
// report need not build one and convert it to the other.
template <class J>
J latency_json(const LatencySpec& l) {
  switch (l.kind) {
    case LatencySpec::Kind::Constant:
      return {{"dist", "constant"}, {"ms", l.ms}};
    case LatencySpec::Kind::Uniform:
      return {{"dist", "uniform"}, {"min_ms", l.min_ms}, {"max_ms", l.max_ms}};
    case LatencySpec::Kind::Normal:
      return {{"dist", "normal"}, {"mean_ms", l.mean_ms}, {"stddev_ms", l.stddev_ms}};
    case LatencySpec::Kind::LongTail:
      break;
  }
  return {{"dist", "long-tail"}, {"ms", l.ms}, {"tail_ms", l.tail_ms}, {"tail_probability", l.tail_probability}};
}

// The options as written by nlohmann::json, keys sorted, in either type.
template <class J>
J options_json(const nlohmann::json& options) {
  if constexpr (std::is_same_v<J, nlohmann::json>) {
    return options;
  } else {
    return J::parse(options.dump());
  }
}

template <class J>
J lock_json(const LockSpec& l) {
  // A library's lock is written under "profile", the name the schema's option rules know.
  if (l.library()) return {{"profile", l.algorithm}, {"key", l.key}, {"options", options_json<J>(l.options)}};
  J out = {{"algorithm", l.algorithm},
           {"key", l.key},
           {"lease_ms", l.lease_ms},
           {"retry", {{"count_max", l.retry.count_max}, {"delay_ms", l.retry.delay_ms}, {"jitter_ms", l.retry.jitter_ms}}},
           {"command_timeout_ms", l.command_timeout_ms},
           {"options", options_json<J>(l.options)}};
  if (!l.keys.empty()) out["keys"] = l.keys;
  return out;
}

template <class J>
J cache_json(const CacheSpec& c) {
  return {{"writers", c.writers},     {"node", c.node},         {"keys", c.keys},
          {"value_bytes", c.value_bytes}, {"ttl_fraction", c.ttl_fraction}, {"ttl_ms", c.ttl_ms},
          {"rate_per_s", c.rate_per_s}, {"start_ms", c.start_ms}, {"writes", c.writes}};
}

template <class J>
J cache_aside_json(const CacheAsideSpec& c) {
  return {{"writers", c.writers},
          {"readers", c.readers},
          {"keys", c.keys},
          {"ops", c.ops},
          {"after_write", c.after_write},
          {"ttl_ms", c.ttl_ms},
          {"max_stale_ms", c.max_stale_ms},
          {"cache_node", c.cache_node},
          {"db_node", c.db_node},
          {"lock", c.lock},
          {"writer_start_ms", c.writer_start_ms},
          {"reader_start_ms", c.reader_start_ms},
          {"op_interval_ms", c.op_interval_ms}};
}

template <class J>
J workload_json(const WorkloadSpec& w) {
  J j = {{"kind", w.kind}};
  if (w.external()) j["command"] = w.command;
  j["clients"] = w.clients;
  j["initial_stock"] = w.initial_stock;
  j["attempts_per_client"] = w.attempts_per_client;
  j["hold_ms"] = w.hold_ms;
  j["wait_ms"] = w.wait_ms;
  j["start_stagger_ms"] = w.start_stagger_ms;
  if (w.start_after_hold) j["start_after_hold"] = true;
  j["stock_key"] = w.stock_key;
  // An external program runs its own lock: the built-in workload's knobs are not its.
  if (w.external()) return j;
  j["fencing"] = w.fencing;
  j["readers"] = w.readers;
  j["extend_every_ms"] = w.extend_every_ms;
  if (w.hold_for_validity) j["hold_for_validity"] = true;
  if (w.retry_until_wait) j["retry_until_wait"] = true;
  j["reentrant_hold_ms"] = w.reentrant_hold_ms;
  // Written only when there is one, like the memory limit: scenarios without either
  // read (and write) exactly as they did before these existed.
  if (w.cache != CacheSpec{}) j["cache"] = cache_json<J>(w.cache);
  if (w.cache_aside.enabled()) j["cache_aside"] = cache_aside_json<J>(w.cache_aside);
  return j;
}

template <class J>
J scenario_json(const Scenario& s) {
  J j;
  j["name"] = s.name;
  j["description"] = s.description;
  j["seed"] = s.seed;
  j["duration_ms"] = s.duration_ms;
  j["worlds"] = J::array();
  for (const World w : s.worlds) j["worlds"].push_back(to_string(w));
  j["topology"] = {{"nodes", s.topology.nodes}, {"replicas", s.topology.replicas}, {"persistence", to_string(s.topology.persistence)},
                    {"replication_lag_ms", s.topology.replication_lag_ms}, {"down_after_ms", s.topology.down_after_ms},
                    {"min_replicas_to_write", s.topology.min_replicas_to_write}, {"sentinels", s.topology.sentinels}};
  const TopologySpec defaults;
  if (s.topology.maxmemory_bytes != defaults.maxmemory_bytes || s.topology.maxmemory_policy != defaults.maxmemory_policy ||
      s.topology.maxmemory_samples != defaults.maxmemory_samples) {
    j["topology"]["maxmemory_bytes"] = s.topology.maxmemory_bytes;
    j["topology"]["maxmemory_policy"] = to_string(s.topology.maxmemory_policy);
    j["topology"]["maxmemory_samples"] = s.topology.maxmemory_samples;
  }
  if (s.topology.cluster_enabled()) {
    j["topology"]["cluster"] = {{"masters", s.topology.cluster.masters},
                                {"replicas_per_master", s.topology.cluster.replicas_per_master},
                                {"node_timeout_ms", s.topology.cluster.node_timeout_ms}};
  }
  if (s.topology.zookeeper.servers > 0) {
    j["topology"]["zookeeper"] = {{"servers", s.topology.zookeeper.servers},
                                  {"tick_ms", s.topology.zookeeper.tick_ms},
                                  {"session_timeout_ms", s.topology.zookeeper.session_timeout_ms}};
  }
  if (s.topology.mysql.enabled) {
    j["topology"]["mysql"] = {{"wait_timeout_s", s.topology.mysql.wait_timeout_s},
                              {"innodb_lock_wait_timeout_s", s.topology.mysql.innodb_lock_wait_timeout_s}};
  }
  j["network"] = {{"latency", latency_json<J>(s.network.latency)}, {"loss", s.network.loss}};
  j["clocks"] = J::array();
  for (const auto& c : s.clocks)
    j["clocks"].push_back({{"process", c.process}, {"offset_ms", c.offset_ms}, {"drift_ppm", c.drift_ppm}});
  j["lock"] = lock_json<J>(s.lock);
  j["workload"] = workload_json<J>(s.workload);
  j["faults"] = J::array();
  for (const auto& f : s.faults) j["faults"].push_back(J(fault_file_json(f)));
  switch (s.expect.mode) {
    case reports::Expectation::Mode::Safe:
      j["expect"] = {{"violations", J::array()}};
      break;
    case reports::Expectation::Mode::AtLeast:
      if (s.expect.names.empty()) {
        j["expect"] = {{"verdict", "violation"}};
      } else {
        j["expect"] = {{"violations", s.expect.names}};
      }
      break;
    case reports::Expectation::Mode::Exactly:
      j["expect"] = {{"exactly", s.expect.names}};
      break;
    case reports::Expectation::Mode::Unknown:
      j["expect"] = {{"verdict", "unknown"}};
      break;
  }
  j["checks"] = {{"deadlock_bound_ms", s.deadlock_bound_ms}};
  if (s.check_fairness) j["checks"]["fairness"] = *s.check_fairness;
  return j;
}

}  // namespace

nlohmann::ordered_json to_json(const Scenario& s) { return scenario_json<ojson>(s); }

nlohmann::json to_report_json(const Scenario& s) { return scenario_json<nlohmann::json>(s); }

}  // namespace lockstep::runner
