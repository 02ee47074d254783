// A history is what happened in one run, in the order it was observed: the operations
// clients invoked and how each completed (as in Jepsen: invoke, then ok / fail / info),
// interleaved with ground-truth records ("truth") that only an omniscient observer such
// as the simulator can make: which process's value the lock key held on a node, when a
// critical section really began and ended, which DEL removed whose value, when a fault
// started and stopped.
//
// An `info` completion means the outcome is unknown (timeout, crash): the operation may
// have taken effect at any point after its invocation, or never. A `fail` completion
// means it certainly did not take effect.
//
// This header depends on nothing else of lockstep, so the checker can be used alone on
// any history file.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace lockstep::checker {

enum class EventType { Invoke, Ok, Fail, Info, Truth };

const char* to_string(EventType t);
bool parse_event_type(const std::string& s, EventType& out);

struct Event {
  EventType type = EventType::Invoke;
  int64_t process = -1;  // client process number; -1 when none (e.g. a node's truth)
  int64_t thread = 0;    // activity within the process
  std::string f;         // operation or truth kind: acquire, release, read, cs-enter, ...
  std::string key;       // the object operated on; "" when the history has one object
  nlohmann::json value;  // argument on invoke, result on completion; null when none
  int64_t time_ns = 0;   // true time in the simulator, monotonic time live
  int64_t node = -1;     // for truth records about a Redis node
  nlohmann::json extra;  // further fields, kept as read so nothing is lost
};

struct History {
  std::vector<Event> events;
};

// Ground-truth record kinds written by the runner and read by the invariant checks.
namespace truth {
inline constexpr const char* kKeySet = "key-set";        // process wrote the key on node
inline constexpr const char* kKeyDel = "key-del";        // removed by a command; extra.owner
inline constexpr const char* kKeyExpire = "key-expire";  // removed by expiry; extra.owner
inline constexpr const char* kKeyEvict = "key-evict";    // removed to fit maxmemory; extra.owner
inline constexpr const char* kCsEnter = "cs-enter";
inline constexpr const char* kCsExit = "cs-exit";
inline constexpr const char* kFaultStart = "fault-start";
inline constexpr const char* kFaultEnd = "fault-end";
inline constexpr const char* kCrash = "crash";      // a process crashed; value: its name
inline constexpr const char* kRestart = "restart";  // a crashed process came back
inline constexpr const char* kFailover = "failover";  // a replica took over its master
inline constexpr const char* kFailoverRequested = "failover-requested";  // asked of Sentinel
inline constexpr const char* kRunaway = "runaway";  // the run hit its event bound
inline constexpr const char* kFaultUnfired = "fault-unfired";  // its event never came; value: the fault
inline constexpr const char* kFinish = "finish";    // a client process finished its work
inline constexpr const char* kResource = "resource";  // value: {initial, final}
// The end of a cache-aside run, one per item key: value {cache, db, cache_ttl_ms,
// max_stale_ms}: what the cache and the database held (null: nothing), the cache entry's
// PTTL (-1: no TTL) and how long the scenario lets the cache lag the database.
inline constexpr const char* kCacheFinal = "cache-final";
inline constexpr const char* kOomRefused = "oom-refused";  // value: how many OOM errors node sent
// A client's command on the lock key left for its server, as the live world's fault proxy
// saw it (value: the command's name): when a request really went out, which the client's
// own invoke, stamped before its event loop sent anything, may precede by milliseconds.
inline constexpr const char* kRequest = "request";

}  // namespace truth

// Lock operations: "acquire" / "release" of a mutex, and "acquire-read", "release-write"
// and so on of a read-write lock's two sides.
bool is_acquire(std::string_view f);
bool is_release(std::string_view f);

// Whether an event is the operation or truth kind `name`. A name given as a string view
// compares lengths first: the checks ask this of every event several times over, and
// most events are not the kind asked for. Always inlined, so a name given as a literal
// or a truth:: constant has its length known where it is asked, and the bytes are
// compared in place rather than in a call to memcmp.
[[gnu::always_inline]] inline bool f_is(const Event& e, std::string_view name) {
  return e.f.size() == name.size() && std::char_traits<char>::compare(e.f.data(), name.data(), name.size()) == 0;
}

nlohmann::ordered_json to_json(const Event& e);
// Parses one lockstep JSON object; on failure returns false and says why in `error`.
bool from_json(const nlohmann::json& j, Event& out, std::string& error);

// One JSON object per line, keys in a fixed order so equal histories are equal bytes.
std::string to_jsonl(const History& h);
// Appends one event's line (with its newline) as to_jsonl writes it.
void append_jsonl(std::string& out, const Event& e);

}  // namespace lockstep::checker
