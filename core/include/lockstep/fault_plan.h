// The fault plan: every kind of fault lockstep can inject, described once, and the one
// interpreter that plays a scenario's faults on a world.
//
// A scenario's faults are read once into FaultSpecs (the scenario reader uses this
// file's table for which keys each kind takes); from then on nothing compares fault
// kinds but this file: the plan schedules each fault on a WorldControl and records its
// start and end in the history, the reports draw and name it from its record, fuzzing
// sizes it, and a world that cannot play it is named before anything runs.
//
// Records: a fault's fault-start / fault-end truth carries fault_record(f), the fields
// the fault sets; reports read the fault back from that record alone.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "lockstep/world_control.h"

namespace lockstep {

enum class FaultKind { Pause, Crash, ClockJump, ClockDrift, Delay, Jitter, Partition, Failover };

// What an event-triggered fault waits for: the nth time `process` does `event`, then
// delay_ms more. Events, and what `what` names for each:
//   sends     a command leaving a client (its name; `key` narrows it to one key)
//   receives  a reply reaching a client (the command it answers; `key` as for sends)
//   enters    a client entering its critical section ("critical-section")
//   leaves    a client leaving its critical section ("critical-section")
//   sets      a node setting a key (the key)
//   deletes   a node deleting a key, or the key expiring (the key)
struct FaultTrigger {
  enum class Event { Sends, Receives, Enters, Leaves, Sets, Deletes };
  std::string process;
  Event event = Event::Sends;
  std::string what;
  std::string key;
  int nth = 1;
  int64_t delay_ms = 0;
  bool operator==(const FaultTrigger&) const = default;
};

// The key a command acts on first, as triggers match it: argv[1], or for EVAL/EVALSHA
// the first of its KEYS; "" when it names none.
std::string_view command_key(const std::vector<std::string>& argv);

// The file names of trigger events, in FaultTrigger::Event order.
const std::vector<std::string>& trigger_event_names();

// One fault, at a time on the timeline or on an event. Which fields matter depends on
// the kind (kind_info().keys). Every timed fault starts before the scenario's
// duration_ms; durations may run past it.
struct FaultSpec {
  FaultKind kind = FaultKind::Pause;
  std::optional<FaultTrigger> on;  // set: at_ms is ignored, the fault waits for the event
  std::string target;
  int64_t at_ms = 0;
  int64_t duration_ms = 0;
  std::optional<int64_t> restart_after_ms;
  int64_t jump_ms = 0;
  double drift_ppm = 0.0;
  int64_t delay_ms = 0;
  int64_t jitter_ms = 0;
  std::vector<std::vector<std::string>> groups;
  bool one_way = false;
  bool operator==(const FaultSpec&) const = default;
};

// Which processes a kind is aimed at.
enum class FaultTarget {
  Process,  // `target`: any client, node or replica
  Master,   // `target`: a master node-N with a replica to promote
  Groups,   // `groups`: two lists of processes
};

// Which processes a fuzzer may aim a generated fault of this kind at.
enum class FuzzTargets {
  Clients,             // a paused node only delays everyone alike
  ClientsSpareNodes,   // clients, and masters after node-1, which keeps the protected stock
  Anyone,
};

struct FaultKindInfo {
  FaultKind kind;
  const char* name;               // as scenario files spell it
  std::vector<std::string> keys;  // the keys this kind takes besides "kind"
  FaultTarget target;
  FuzzTargets fuzz_targets;
  const char* meaning;            // one sentence, for help text and errors
};

// Every kind, in the order files and help list them.
const std::vector<FaultKindInfo>& fault_kinds();
const FaultKindInfo& kind_info(FaultKind kind);
const char* to_string(FaultKind kind);
std::optional<FaultKind> fault_kind_named(std::string_view name);
std::vector<std::string> fault_kind_names();

// The fault in the scenario file format: every key its kind takes.
nlohmann::ordered_json fault_file_json(const FaultSpec& f);
// The fault as history records and reports carry it: the fields it sets.
nlohmann::json fault_record(const FaultSpec& f);
// Reads a record back (what reports have of a fault); nullopt if it is not one.
std::optional<FaultSpec> fault_from_record(const nlohmann::json& record);

// "pause 1.5s", "clock jump +10s", "partition": what happens, for a timeline band whose
// lane and position already say who and when.
std::string fault_label(const FaultSpec& f);
// "pause 1.5s on client-1 at 50ms": the whole fault in words, for run headers and fuzz.
std::string describe_fault(const FaultSpec& f);
// When it strikes, as describe_fault says it: "at 50ms", "50ms after client-1 enters
// critical-section".
std::string describe_when(const FaultSpec& f);
// How long the fault's effect lasts from at_ms: 0 for an instant, nullopt to the end of
// the run (a drift, a crash without restart).
std::optional<int64_t> fault_span_ms(const FaultSpec& f);

// A fault of `kind` whose size is `amount` ms (a pause's length, a crash's restart delay
// if `restart`, a jump, a drift of amount*10 ppm, a delay's length with a quarter of it
// as the extra latency): the one knob a fuzzer turns.
FaultSpec sized_fault(FaultKind kind, std::string target, int64_t at_ms, int64_t amount, bool restart);

// What a world must be able to do to play this fault.
Capability needed_capability(const FaultSpec& f);
// What a world must be able to do to move `process`'s clock (kind ClockJump or
// ClockDrift), by a fault or by a scenario's clock offset.
Capability clock_capability(const std::string& process, FaultKind kind);

// Why `world` cannot play these faults ("" if it can): the first fault needing a
// capability the world lacks, with the world's reason.
std::string unplayable(const std::vector<FaultSpec>& faults, const WorldControl& world);
std::string unplayable(const std::vector<FaultSpec>& faults, const Capabilities& caps);

// A scenario's faults being played on a world. Timed faults are scheduled on the world's
// timeline at once; event-triggered ones wait on world.on_event. Each writes its
// fault-start / fault-end (and a crash's crash / restart) records to world.on_truth as
// it happens; a triggered fault's record says when it really struck and on what.
// The plan must outlive the run (the world calls back into it).
class FaultPlayer;
class FaultPlan {
 public:
  FaultPlan(const std::vector<FaultSpec>& faults, WorldControl& world);
  ~FaultPlan();
  FaultPlan(const FaultPlan&) = delete;
  FaultPlan& operator=(const FaultPlan&) = delete;

  // Event-triggered faults whose event did not happen (often enough) during the run.
  std::vector<FaultSpec> unfired() const;

 private:
  WorldControl& world_;
  std::unique_ptr<FaultPlayer> player_;
};

}  // namespace lockstep
