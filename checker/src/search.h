// Internal: the just-in-time linearization search (Wing & Gong, Lowe) over the operations
// of one key, and the memo cache it uses.
//
// Operations are numbered 0..n-1 in invocation order. The entries list holds a call and a
// return node per operation in real-time order; an info or pending operation's return sits
// after every recorded event (at +infinity). Linearizing an operation lifts both its nodes
// out of the list; backtracking puts them back (dancing links, LIFO).
//
// A configuration is (set of linearized ok ops, model state, set of linearized optional
// (info/pending) ops). The ok set is stored canonically and compactly as hi = 1 + the
// largest linearized ok id, plus the ok ids below hi that are not linearized ("holes"):
// these are the ok call nodes still in the list before the first call with id >= hi, so
// building it costs O(holes), not O(n). The optional set is a bitset over optional ops.
// Model states are interned: the search handles a state as the id of its bytes in a table
// of distinct states, and remembers recent (state, op) -> next state transitions, which
// `step` being pure makes exact.
//
// Memoization is by dominance, not only equality: (S, s, O1) explored means (S, s, O2) with
// O1 a subset of O2 need not be, since optional ops may always be left out, so every
// continuation of the second is one of the first. Equal keys are compared exactly.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "block_pool.h"
#include "lockstep/checker/linearizability.h"
#include "lockstep/checker/model.h"

namespace lockstep::checker::detail {

inline constexpr size_t kNever = static_cast<size_t>(-1);

struct SearchInput {
  const Model* model = nullptr;
  std::vector<Step> steps;       // by op id
  std::vector<uint8_t> must;     // 1 when the op completed ok and so must be linearized
  std::vector<size_t> call_pos;  // invocation's position in the history
  std::vector<size_t> ret_pos;   // completion's position; kNever for info and pending
};

struct SearchBudget {
  std::chrono::steady_clock::time_point deadline;
  size_t memory_limit_bytes = 0;
};

struct SearchOutput {
  Verdict verdict = Verdict::Unknown;
  std::string unknown_reason;
  int32_t stuck_op = -1;       // the op whose completion no explored order could pass
  std::vector<int32_t> partial;  // the linearization that got furthest (op ids, in order)
  State partial_state;         // the model state after it
  uint64_t states_visited = 0;
  size_t cache_entries = 0;
  size_t peak_bytes = 0;
  size_t max_depth = 0;
};

SearchOutput search(const SearchInput& in, const SearchBudget& budget);

// How many more bytes a structure may allocate under the memory limit. Asked only when it
// is about to allocate, since the answer sums every other structure's size.
class Room {
 public:
  virtual size_t left() const = 0;

 protected:
  ~Room() = default;
};

// A configuration key as the memo reads it: compared and copied where it lies, never built
// first, since most lookups find a key already stored.
class KeySource {
 public:
  // Whether the key equals the `len` words at `stored` (`len` being its length).
  virtual bool equals(const uint32_t* stored) const = 0;
  // Writes its words to `out`.
  virtual void write(uint32_t* out) const = 0;

 protected:
  ~KeySource() = default;
};

// Map from configuration key (ok set and state, compared exactly) to the optional-op sets
// explored with it. Keys are stored back to back in blocks that grow to 1 MiB, so growth is
// gradual and every byte is counted.
class MemoCache {
 public:
  enum class Insert { Added, Dominated, Full };
  // `key` is `len` words long; `hash` is any hash of them (equal keys, equal hashes).
  // `optional` holds `words` 64-bit words (the same count on every call): the linearized
  // optional ops.
  Insert insert(const KeySource& key, size_t len, uint32_t hash, const uint64_t* optional, size_t words,
                const Room& room);
  size_t size() const { return count_; }
  size_t bytes() const { return key_bytes_ + set_bytes_ + slots_.capacity() * sizeof(Slot); }

 private:
  struct Slot {
    uint32_t hash = 0;    // 0 marks an empty slot; real hashes are forced non-zero
    uint32_t block = 0;   // where the key is stored
    uint32_t offset = 0;
    uint32_t sets = 0;    // 1 + id of the newest optional-set record for this key; 0 none
  };
  // Whether a set recorded for the slot's key is a subset of `optional`.
  bool dominated(const Slot& slot, const uint64_t* optional, size_t words);
  Insert add_set(Slot& slot, const uint64_t* optional, size_t words, const Room& room);
  bool equal(const Slot& s, const KeySource& key, size_t len) const;
  bool grow(const Room& room);
  bool store(const KeySource& key, size_t len, Slot& slot, const Room& room);
  uint64_t* record(uint32_t id, size_t words);

  std::vector<PooledVector<uint32_t>> keys_;  // blocks of [length, key words...]
  // Blocks of optional-set records: [1 + id of the key's previous record or 0, words...].
  std::vector<PooledVector<uint64_t>> sets_;
  PooledVector<Slot> slots_;
  size_t records_per_block_ = 0;  // a power of two
  unsigned block_shift_ = 0;
  size_t count_ = 0;       // records: (key, optional set) pairs stored
  size_t key_count_ = 0;   // distinct keys
  size_t key_bytes_ = 0;
  size_t set_bytes_ = 0;
};

// The distinct model states seen by one search, each stored once and named by its index.
class StateTable {
 public:
  // The id of `s`, adding it if new; -1 when adding it would take more than `room`.
  int32_t intern(const State& s, const Room& room);
  const State& operator[](int32_t id) const { return states_[static_cast<size_t>(id)]; }
  size_t bytes() const {
    return states_.capacity() * sizeof(State) + heap_bytes_ + index_.capacity() * sizeof(int32_t) +
           hashes_.capacity() * sizeof(uint64_t);
  }

 private:
  bool grow(const Room& room);
  std::vector<State> states_;
  std::vector<uint64_t> hashes_;  // by id
  std::vector<int32_t> index_;    // open addressing: 1 + id, 0 empty
  size_t heap_bytes_ = 0;         // what the states hold outside their own objects
};

}  // namespace lockstep::checker::detail
