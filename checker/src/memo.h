// Internal: the two tables a linearizability search fills, the memo of explored
// configurations and the table of distinct model states, and the Room through which they
// ask for memory.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "block_pool.h"
#include "lockstep/checker/model.h"

namespace lockstep::checker::detail {

inline constexpr uint64_t kMul = 0x9E3779B97F4A7C15ULL;

// splitmix64's finalizer: every input bit affects every output bit.
inline uint64_t mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Asked by a structure about to allocate: may it hold `extra` more bytes? Saying yes
// reserves them under the check's memory limit (memory_ledger.h), which every other
// structure and partition shares, so it is asked only when allocating.
class Room {
 public:
  virtual bool admit(size_t extra) = 0;

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
                Room& room);
  size_t size() const { return count_; }
  // As allocated: blocks by their size class, the tables of blocks by malloc's measure.
  size_t bytes() const {
    return block_bytes_ + BlockPool::footprint(slots_.capacity() * sizeof(Slot)) +
           BlockPool::heap_footprint(keys_.capacity() * sizeof(keys_[0])) +
           BlockPool::heap_footprint(sets_.capacity() * sizeof(sets_[0]));
  }

 private:
  struct Slot {
    uint32_t hash = 0;    // 0 marks an empty slot; real hashes are forced non-zero
    uint32_t block = 0;   // where the key is stored
    uint32_t offset = 0;
    uint32_t sets = 0;    // 1 + id of the newest optional-set record for this key; 0 none
  };
  // Whether a set recorded for the slot's key is a subset of `optional`.
  bool dominated(const Slot& slot, const uint64_t* optional, size_t words);
  Insert add_set(Slot& slot, const uint64_t* optional, size_t words, Room& room);
  bool equal(const Slot& s, const KeySource& key, size_t len) const;
  bool grow(Room& room);
  bool store(const KeySource& key, size_t len, Slot& slot, Room& room);
  uint64_t* record(uint32_t id, size_t words);

  std::vector<PooledVector<uint32_t>> keys_;  // blocks of [length, key words...]
  // Blocks of optional-set records: [1 + id of the key's previous record or 0, words...].
  std::vector<PooledVector<uint64_t>> sets_;
  PooledVector<Slot> slots_;
  size_t records_per_block_ = 0;  // a power of two
  unsigned block_shift_ = 0;
  size_t count_ = 0;       // records: (key, optional set) pairs stored
  size_t key_count_ = 0;   // distinct keys
  size_t key_bytes_ = 0;    // asked for key blocks, which sets the next block's size
  size_t block_bytes_ = 0;  // key and set blocks as allocated
};

// The distinct model states seen by one search, each stored once and named by its index.
class StateTable {
 public:
  // The id of `s`, adding it if new; -1 when adding it would take more than `room`.
  int32_t intern(const State& s, Room& room);
  const State& operator[](int32_t id) const { return states_[static_cast<size_t>(id)]; }
  size_t bytes() const {
    return BlockPool::heap_footprint(states_.capacity() * sizeof(State)) + heap_bytes_ +
           BlockPool::heap_footprint(index_.capacity() * sizeof(int32_t)) +
           BlockPool::heap_footprint(hashes_.capacity() * sizeof(uint64_t));
  }

 private:
  bool grow(Room& room);
  std::vector<State> states_;
  std::vector<uint64_t> hashes_;  // by id
  std::vector<int32_t> index_;    // open addressing: 1 + id, 0 empty
  size_t heap_bytes_ = 0;         // what the states hold outside their own objects, as allocated
};

}  // namespace lockstep::checker::detail
