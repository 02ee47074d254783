// A model is the sequential specification an object must appear to follow: from a state,
// an operation either is allowed (and yields the next state) or is not. The linearizability
// search asks the model, and nothing else, what the object may do.
//
// Invariants every model keeps:
//  - State is an opaque byte string compared and hashed exactly; two states are equal iff
//    the object would behave identically from them. Models keep it short (a few 8-byte
//    words) because the search stores one per memoized configuration.
//  - `step` is a pure function of (state, step): same input, same answer, no side effect.
//    It (and never_allowed, is_read) may be called from several threads at once, for
//    different keys, so a model keeps no mutable state.
//  - Every model is per object: the search partitions a history by Event::key and checks
//    each key on its own (P-compositionality), starting each from `initial()`.
//
// What each model expects of an operation (f is the invoke's `f`; "input" is the invoke's
// `value`, "output" the ok completion's `value`; `process` names the owner for locks):
//
//  mutex            f=acquire | release. acquire is allowed only when the lock is free and
//                   makes `process` the owner; release only by the owner, and frees it.
//                   A failed acquire (type fail) never took effect and is dropped.
//                   State: free, or the owner's process number.
//  reentrant-mutex  f=acquire | release. acquire is allowed when free or already owned by
//                   `process` (count + 1); release only by the owner (count - 1, free at 0).
//                   State: owner and hold count.
//  rw-lock          f=acquire-read | release-read | acquire-write | release-write.
//                   acquire-read: no writer, or the writer is `process` (a holder of the
//                   write lock may also read). acquire-write: no writer and no readers.
//                   release-read: `process` holds a read (count - 1). release-write: the
//                   writer is `process`. State: the writer and a multiset of readers.
//  register         f=read | write. write: input is the new value (any JSON). read: output
//                   is the value read; it must equal the current value (null = never
//                   written). A read whose outcome is unknown constrains nothing (dropped).
//  cas-register     register plus f=cas, input [old new]: allowed when the value equals
//                   old, and sets new (as in Jepsen/Knossos). Initial value null.
//  counter          f=add (input integer delta, default 1) | read (output integer).
//                   Initial value 0.
//  kv               f=get | put | append on Event::key, one string per key. put: input is
//                   the new value. append: input is concatenated to the value, as Redis
//                   APPEND and Jepsen's kv append do ("x 0 0 y" then "x 0 1 y" make
//                   "x 0 0 yx 0 1 y"). get: output is the value read, a string, nil, or a
//                   vector of the appended elements in order ([a b] after appends of a
//                   and b; a put counts as one element). A string read compares with the
//                   concatenation, a vector read element by element. Integers, booleans
//                   and keywords count as their decimal / name strings. A key never written
//                   reads per KvMissing: as "" by default (what Jepsen's and Porcupine's kv
//                   histories record; nil then reads as "" too), or as nil, distinct from "".
//
// Adding a model is one class deriving from Model plus one line in make_model (model.cc).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lockstep/checker/history.h"

namespace lockstep::checker {

using State = std::string;

// Helpers for states made of 8-byte little-endian integers.
void append_i64(State& s, int64_t v);
int64_t read_i64(const State& s, size_t word);
size_t i64_count(const State& s);

// Maps JSON values to small integers (null is always 0), so register states hold ids, not
// documents. Ids are assigned in first-seen order, so they are deterministic per history.
class Interner {
 public:
  int64_t id(const nlohmann::json& v);
  const nlohmann::json& value(int64_t id) const;

 private:
  std::map<std::string, int64_t> ids_{{"null", 0}};
  std::vector<nlohmann::json> values_{nullptr};
};

// One operation as the history recorded it: an invocation paired with its completion (by
// process and thread). A pending operation (no completion) counts as info.
struct Operation {
  int64_t process = -1;
  int64_t thread = 0;
  std::string f;
  std::string key;
  nlohmann::json input;   // the invoke's value
  nlohmann::json output;  // the ok completion's value; null for info/pending/fail
  EventType outcome = EventType::Info;  // Ok, Fail or Info
  bool pending = false;                 // never completed in the history
  size_t invoke_index = 0;              // positions in History::events
  size_t complete_index = 0;            // == invoke_index when pending
  int64_t invoke_ns = 0;
  int64_t complete_ns = 0;
};

// A model's compiled form of an operation: what `step` reads in the search's inner loop,
// so no JSON is touched there.
struct Step {
  int32_t code = 0;
  int64_t process = 0;
  int64_t a = 0;
  int64_t b = 0;
  std::string s;
};

// What a model gets to explain why an operation could not be linearized.
struct ExplainContext {
  const Operation& failed;                         // the op whose completion was unreachable
  const State& state;                              // state after the partial linearization
  const std::vector<const Operation*>& linearized; // that partial linearization, in order
  const std::vector<Operation>& all;               // every op on this key, failed too, by invocation
  const Interner& values;
  bool has_time = false;                           // the history carries real times

  // "t=1.204s" when the history has times, else "event 13" (1-based position).
  std::string invoked(const Operation& op) const;
  std::string completed(const Operation& op) const;
  // "process 3's acquire", with the input value when it has one.
  static std::string name(const Operation& op);
};

class Model {
 public:
  virtual ~Model() = default;
  virtual const char* name() const = 0;
  virtual State initial() const = 0;
  // Compiles `op`. Sets `drop` when the op can neither change nor constrain the state (e.g.
  // a read with unknown outcome); returns false with `error` when the op is malformed.
  virtual bool prepare(const Operation& op, Interner& values, Step& out, bool& drop,
                       std::string& error) const = 0;
  // Whether `op` is allowed from `s`; if so writes the resulting state into `next`.
  virtual bool step(const State& s, const Step& op, State& next) const = 0;
  // The state in words, e.g. "held by process 1".
  virtual std::string show(const State& s, const Interner& values) const = 0;
  // One sentence saying why ctx.failed could not be linearized. The default is generic.
  virtual std::string explain(const ExplainContext& ctx) const;

  // Optional, for speed: whether `op` can never be allowed again once the object is in
  // state `s`, if only the operations in `may_come_first` (in any order, any of them) can
  // be linearized before it — e.g. a kv read of "ab" once the value is "ac" and only
  // appends can follow. The search then abandons orders that a later read rules out,
  // which changes no verdict and no explanation. Saying false is always safe; saying true
  // wrongly would call valid histories invalid.
  virtual bool never_allowed(const State& s, const Step& op, std::span<const Step* const> may_come_first) const;
  // Whether never_allowed can ever say true; the search asks it only then.
  virtual bool rules_out() const { return false; }
  // Whether `op` never changes the state: from any state it is either not allowed or
  // leaves the state as it was (a read). The search linearizes an allowed read at once
  // and does not try orders without it there. Saying false is always safe.
  virtual bool is_read(const Step&) const { return false; }
  // Optional, for speed: whether the search should try first, wherever it stands, the
  // operation whose completion comes next. That pays where operations mostly wait on
  // one another in turn (clients queued on a lock); elsewhere (a register whose reads
  // follow concurrent writes) it mostly tries the wrong one first. Either way the search
  // stays exhaustive and explains a failure as the plain order does.
  virtual bool completion_order_first() const { return false; }
};

// How the kv model reads a key that was never written.
enum class KvMissing {
  Empty,  // as "": Jepsen's and Porcupine's kv histories record "" for a missing key
  Nil,    // as nil: a get of a never-written key must return nil, and "" only after a write
};
const char* to_string(KvMissing m);
bool parse_kv_missing(const std::string& s, KvMissing& out);  // "empty" or "nil"

// Choices a model's semantics leave to the user; each model reads the ones it has.
struct ModelOptions {
  KvMissing kv_missing = KvMissing::Empty;
};

// nullptr when `name` is not one of model_names().
std::unique_ptr<Model> make_model(const std::string& name, const ModelOptions& options = {});
std::vector<std::string> model_names();

}  // namespace lockstep::checker
