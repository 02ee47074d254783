// What a scenario's run does the same way in both worlds, on a WorldControl: start the
// workload's clients on their stagger (and again after a restart), write the world's and
// the fault plan's ground truth into the history, and refuse what the world cannot do.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lockstep/runner/recorder.h"
#include "lockstep/runner/scenario.h"
#include "lockstep/fault_plan.h"
#include "lockstep/latency.h"
#include "lockstep/world_control.h"

namespace lockstep::runner {

// The scenario's network latency as both worlds draw it.
Latency latency_of(const LatencySpec& l);

// Points the world's truth records into `rec`, under checker::truth's names: its fault
// records, and the changes it reports to the key `lock_key` (which must outlive the run).
void record_truth(WorldControl& world, Recorder& rec, const std::string& lock_key);
// The one writer of lock-key ground truth (key-set, key-del, key-expire, key-evict), for
// both worlds.
void record_key_change(Recorder& rec, const KeyChange& c);

// client-i begins its workload at (i-1) * start_stagger_ms; a client that restarts
// after a crash begins it again. Cache writers (cache-N) begin at the cache's start_ms.
// The clients must already exist in the world.
void start_clients(const Scenario& s, WorldControl& world, Recorder& rec);

// When client-i (1-based) starts: (i-1) * start_stagger_ms, or in a cache-aside workload
// its role's start (writer_start_ms, reader_start_ms) plus the stagger within the role.
int64_t client_start_ms(const WorkloadSpec& w, int i);

// The process name of cache writer i (1-based): cache-i.
std::string cache_writer_name(int i);

// errorstat_OOM's count in an INFO errorstats reply (0 when absent).
int64_t oom_errors_in_info(const std::string& info);

// A write that sets the stage before any client starts: the resource's first value, the
// cache-aside database's items. `node` is the logical node it goes to, or none for the
// node that holds its key (a cluster's shard for it); either way its replicas start
// with it.
struct InitialWrite {
  std::optional<int> node;
  std::string key, value;
};
// What every world writes before the run, in order.
std::vector<InitialWrite> initial_writes(const Scenario& s);

// What the run left behind, read through the world's admin channel and written as truth
// records, the same in both worlds: the resource's last value, each cache-aside item's
// cache entry (and its TTL) and database value, each node's count of OOM replies. A read
// a server did not answer leaves its record out (its state is unknown).
struct EndState {
  bool resource_read = false;  // the resource's record is there
  bool cache_read = false;     // every cache-aside item's record is there
};
EndState record_end_state(const Scenario& s, WorldControl& world, Recorder& rec);

// The CONFIG SET that gives a node the scenario's memory limit, or nothing when the
// scenario keeps Redis's defaults.
std::vector<std::string> memory_config(const TopologySpec& t);

// Raises the world events a runner learns of itself: a client entering or leaving its
// critical section (from the workload's truth records), for event-triggered faults. The
// fault lands at the client's next step: what it sends next has already left.
void watch_critical_sections(WorldControl& world, Recorder& rec);

// A node set or deleted (or expired) `key`: for event-triggered faults.
void key_event(WorldControl& world, const std::string& node, const std::string& key, bool set);

// Writes a fault-unfired record for each event-triggered fault whose event never came.
void record_unfired(const FaultPlan& plan, Recorder& rec);

// What the scenario asks of a world beyond its faults, each with what in the scenario
// asks it: external clients, several servers, a failure detector, a cluster, Sentinel,
// reconfigured servers.
std::vector<std::pair<Capability, std::string>> needs(const Scenario& s);

// Why the scenario cannot run on a world with these capabilities ("" if it can): the
// capability's reason, and what in the scenario needs it. The one answer to "can this
// world run it", for both worlds.
std::string unplayable(const Scenario& s, const Capabilities& caps);

}  // namespace lockstep::runner
