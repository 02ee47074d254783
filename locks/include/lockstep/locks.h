// Every lock lockstep runs, in one registry: lockstep's own recipes (the SET family,
// Redisson-style locks, RedLock, MultiLock; `lockstep/algorithms.h`) and the library
// profiles (one library version's lock ported from its source; `lockstep/profiles.h`) are
// entries of the same kind, named as scenario files name them in `lock.algorithm`, and a
// program that links lockstep adds its own the same way (register_lock). From then on
// scenario files, the fuzzer, the safety matrix, the checker's choice of model, the
// reports and both worlds treat every entry alike.
//
// The two kinds differ in one thing only, how a scenario configures them:
//  - a recipe takes lockstep's own parameters (`lease_ms`, `retry`, `command_timeout_ms`)
//    and integer options declared in its table (LockParams); it is built by `make`;
//  - a library's lock takes the library's own options, spelled as the library spells
//    them, with the library's defaults (`lock.options` as JSON); it is built by
//    `make_with_options`, and `lease_option` names the option that is its lease.
//
// The registry is process-wide and not synchronised: register before running anything
// (in main, or in a test's SetUp), never while a run is under way.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "lockstep/lock.h"
#include "lockstep/option_table.h"

namespace lockstep {

struct LockInfo;

// One fault a lock claims to tolerate, and how far: a statement of its assumptions, read
// from its parameters and its library's documentation. A fault the lock's list does not
// cover (by kind and by what it hits) is one the lock claims nothing about: it lies
// beyond its assumptions. The fuzzer draws faults within these bounds or beyond them, and
// the safety matrix calls a failure within them the library's bug and one beyond them a
// limit of the approach.
// The service a lock takes its lock from (LockInfo::service).
enum class LockService : uint8_t { Redis, ZooKeeper, MySql };
// "Redis", "ZooKeeper", "MySQL": as reports and errors name them.
const char* to_string(LockService s);
// The scenario topology's field that sets the service up: "" for Redis (the nodes),
// "zookeeper", "mysql".
const char* topology_field(LockService s);

struct Assumption {
  static constexpr int64_t kAny = -1;  // `max`: any size
  std::string fault;         // a fault kind as scenario files name it ("pause", "crash", ...)
  std::string hits = "client";  // "client" (a client process or its links), or "node" (a Redis node)
  // The largest fault of this kind that is tolerated, in the fault's own measure: a pause's
  // length (ms, all of one client's pauses together), a delay's or jitter's added latency
  // (ms), a partition's length (ms), a clock jump (ms), a clock drift (ppm), or for a crash
  // how many nodes may be down at once. kAny: any size.
  int64_t max = kAny;
  // pause: the holder's own work counts against `max` (a lock that is not renewed).
  bool work_counts = false;
  // crash of a node: restarts no sooner than this many ms (an empty node must not come
  // back before the keys it lost would have expired).
  int64_t restart_min_ms = 0;
  std::string words;  // the claim in one sentence, with the numbers
};

// What a lock's assumptions are computed from: its configuration in one scenario.
struct LockSetup {
  nlohmann::json options = nlohmann::json::object();  // a library's options, or a recipe's integer options
  int64_t lease_ms = 10000;                           // a recipe's lease (a library's comes from its options)
  int64_t command_timeout_ms = 1000;                  // a recipe's per-command timeout
};

// Builds one process's lock. Called once per client, on that client's Env; the lock
// must reach Redis only through `env` (that is what lets it run in both worlds), and
// must return a lock, never nullptr.
using LockFactory = std::function<std::unique_ptr<Lock>(Env& env, const LockParams& params)>;
// The same for a lock configured with a library's own options (checked against `options`).
using LibraryLockFactory = std::function<std::unique_ptr<Lock>(const LockInfo& info, Env& env, const std::string& key,
                                                               const nlohmann::json& options)>;

struct LockInfo {
  // The first members keep the order lockstep's recipes have always had, so a program
  // that lists them in braces ({name, make, description, nodes, options}) still builds.
  std::string name;  // letters, digits, '-', '_', '.', '@'; what scenario files write
  LockFactory make;  // a recipe
  std::string description;  // one line: what of the algorithm or library it runs
  // Independent masters the lock needs (env.node(0) .. node(nodes-1)); the fuzzer
  // builds topologies of this many. A library's lock may need more for some kinds
  // (nodes_with).
  int nodes = 1;
  // The options the lock understands. Set: a scenario naming any other option, or a value
  // out of range, is an error at $.lock.options. Unset (a registered recipe that declares
  // none): options are not checked. Every built-in lock sets it.
  std::optional<std::vector<LockOption>> options;
  bool read_write = false;  // make_rw_lock builds it: a read side and a write side
  // Promises: what scenarios may ask of the lock. A fair lock serves waiters in the order
  // they asked (the checker then judges that order); a lock with fencing tokens returns
  // one from Lock::fencing_token() for each hold (a fencing store needs them).
  bool fair = false;
  bool fencing_tokens = false;
  bool reentrant = false;  // hold counts per owner: judged as a reentrant mutex
  // Lock::validity() says how long each hold is valid (a workload may work for just that).
  bool reports_validity = false;
  // Where the lock lives: Redis nodes (Env::node), a ZooKeeper ensemble (Env::zookeeper) or
  // a MySQL server (Env::sql_session). A scenario must give its topology that service,
  // and the fuzzer (which builds Redis topologies) skips the others.
  LockService service = LockService::Redis;
  // Whose lock it is: "lockstep" for lockstep's own recipes and locks a program registers
  // as such, else the library ("redsync"), at `version` ("4.17.0"; the name is then
  // LIBRARY@VERSION).
  std::string library = "lockstep";
  std::string version = {};
  LibraryLockFactory make_with_options = {};  // a library's lock; exactly one factory is set
  // A library's lock: the option that sets how long its key lives (the lease the fuzzer
  // draws and the reports draw deadlines from).
  std::string lease_option = {};
  // What depends on a library lock's options (its `kind`); unset: the fields above.
  std::function<bool(const nlohmann::json& options)> fair_with = {};
  std::function<int(const nlohmann::json& options)> nodes_with = {};
  // The lock hands its user an extend call with these options (redsync Extend, ...).
  std::function<bool(const nlohmann::json& options)> extends_with = {};
  // The library's own objection to this combination of options (as it would throw it),
  // naming the option in `option`; "" when it has none.
  std::function<std::string(const nlohmann::json& options, std::string& option)> options_problem = {};
  // The faults the lock claims to tolerate with this configuration (see Assumption).
  // Unset: the assumptions every lease-based lock makes (default_assumptions).
  std::function<std::vector<Assumption>(const LockSetup& setup)> assumptions_with = {};

  bool library_options() const { return static_cast<bool>(make_with_options); }
};

// Adds a lock. Throws std::invalid_argument, saying why, for an empty or malformed name, a
// name already taken (built in or registered), no factory or two, nodes outside 1..16, an
// option table with a repeated or empty name or min > max, or a library's lock without an
// option table.
void register_lock(LockInfo info);
// Removes a registered lock (a test that registers one cleans up with this). Returns
// false for a built-in or unknown name, which stay as they are.
bool unregister_lock(const std::string& name);

// Every lock: lockstep's recipes in catalogue order, the library profiles by library and
// version, then registered ones in registration order. Valid until the next register or
// unregister.
const std::vector<LockInfo>& locks();
const LockInfo* find_lock(std::string_view name);
std::vector<std::string> lock_names();

// The lock's option table; empty when it declares none.
const std::vector<LockOption>& option_table(const LockInfo& info);

// The lock's traits for the options a scenario gives it.
bool lock_is_fair(const LockInfo& info, const nlohmann::json& options);
int lock_nodes(const LockInfo& info, const nlohmann::json& options);
bool lock_extends(const LockInfo& info, const nlohmann::json& options);
// The linearizability model the lock's history is judged against: "rw-lock",
// "reentrant-mutex" or "mutex".
const char* checker_model(const LockInfo& info);

// The lock's assumptions for this configuration (assumptions_with, or the defaults).
std::vector<Assumption> lock_assumptions(const LockInfo& info, const LockSetup& setup);
// What any lock with a lease of `lease_ms` (0: none) and a per-command timeout of
// `timeout_ms` (0: none) may claim: a client's pauses and work together shorter than the
// lease, a client's crash when the lock has a lease, link delays and jitter
// below the command timeout.
std::vector<Assumption> default_assumptions(int64_t lease_ms, int64_t timeout_ms);
// What a lock held by a session on a server of its own (ZooKeeper's session, a MySQL
// connection) claims: a holder's pauses and its cuts from the server, each together
// shorter than `silence_ms` (`bound` says why, in words), its crash, its requests' delays
// below `timeout_ms` (0: none claimed), and any client clock (`clock_why`). The work
// counts against the silence when `work_counts` (a session kept by the lock's own
// statements, not by heartbeats).
std::vector<Assumption> session_assumptions(int64_t silence_ms, const std::string& bound, bool work_counts,
                                            const std::string& crash_words, int64_t timeout_ms,
                                            const std::string& clock_why);
// The lease a library's lock has with these options, in ms (0: none); a recipe's lease_ms.
int64_t lock_lease_ms(const LockInfo& info, const LockSetup& setup);

// Builds the named lock for the process behind `env`: a recipe from `params`, a
// library's lock from `options` on params.key. nullptr for an unknown name.
std::unique_ptr<Lock> build_lock(const std::string& name, Env& env, const LockParams& params,
                                 const nlohmann::json& options);

}  // namespace lockstep
