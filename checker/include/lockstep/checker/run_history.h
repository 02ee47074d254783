// lockstep's own run histories hold several objects at once: the lock key's acquires,
// releases and extends, the protected resource's reads and writes, and the world's ground
// truth. A linearizability model describes one kind of object, so such a history is
// checked in parts: each lock key against a lock model, each resource against a register.
// This is how `lockstep check` reads a history lockstep wrote, with no flags, and how a
// run's judgment draws the lock's operations (LockOperations).
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "lockstep/checker/history.h"
#include "lockstep/checker/linearizability.h"

namespace lockstep::checker {

// The operations on a lock key that its linearizability is checked over, drawn from a
// history one event at a time, in order (why each is kept, dropped or added: the .cc).
class LockOperations {
 public:
  // A client's lives after crashes are told apart by process number: process P's n-th
  // life after its first is P + n * kLifeStride (the .cc says why).
  static constexpr int64_t kLifeStride = 1000;

  explicit LockOperations(std::string lock_key) : lock_key_(std::move(lock_key)) {}
  void add(const Event& e);
  History take() { return std::move(out_); }
  // The operations paired from what take() gives, as they were kept: the pairing is done
  // while the run records, not after it.
  OperationCollector take_operations() { return std::move(ops_); }

 private:
  void keep(Event e) {
    out_.events.push_back(std::move(e));
    ops_.add(out_.events.back());
  }
  void crashed(const Event& crash);

  std::string lock_key_;
  History out_;
  OperationCollector ops_;
  // A process's hold: the release it awaits, on the thread that holds. Entries stay once
  // made (as the pending ones below): a run has few processes and many holds.
  struct Hold {
    bool held = false;
    std::string release_f;
    int64_t thread = 0;
  };
  std::map<int64_t, Hold> holding_;
  std::set<int64_t> lost_;  // processes whose next release ends a hold already lost
  static constexpr size_t kNone = static_cast<size_t>(-1);
  std::map<int64_t, size_t> pending_;  // process -> its lock operation under way (in out_), or kNone
  std::map<int64_t, int64_t> lives_;  // client -> crashes so far
};

// Whether `h` is a history lockstep recorded (it carries ground-truth records).
bool is_run_history(const History& h);

// One object of a run history and the model it is checked against.
struct HistoryPart {
  std::string what;   // "lock", "resource"
  std::string key;
  std::string model;  // a make_model() name
  History ops;
};

// The parts of a run history: every lock key (mutex, reentrant mutex when a holder takes
// it again, rw-lock when it has sides) and every resource key — the stock's reads and
// writes, a cache-aside database's — as a register that starts from the value the run
// recorded, or else from a value read that no write wrote (a write carrying a fencing
// token writes its value). Keys in the order they first appear.
std::vector<HistoryPart> run_history_parts(const History& h);

}  // namespace lockstep::checker
