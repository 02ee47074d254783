// The memo of explored configurations and the table of model states (memo.h).
#include "memo.h"

#include <algorithm>
#include <bit>
#include <cstring>

namespace lockstep::checker::detail {

namespace {
constexpr size_t kBlockWords = size_t{1} << 18;  // 1 MiB of uint32_t

// What adding one block to a table of blocks costs the table: nothing while it has room,
// else its new array, allocated while the old one is still held.
template <class Table>
size_t table_growth(const Table& t) {
  if (t.size() < t.capacity()) return 0;
  return BlockPool::heap_footprint(std::max<size_t>(1, t.capacity() * 2) * sizeof(t[0]));
}
constexpr size_t kScanRecords = 64;

uint64_t hash_bytes(const State& s) {
  uint64_t h = kMul ^ s.size();
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    h = (h ^ w) * 0xff51afd7ed558ccdULL;
    h ^= h >> 29;
  }
  if (i < s.size()) {
    uint64_t w = 0;
    std::memcpy(&w, s.data() + i, s.size() - i);
    h = (h ^ w) * 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 29;
  }
  return h ^ (h >> 33);
}
}  // namespace

bool StateTable::grow(Room& room) {
  size_t n = index_.empty() ? 16 : index_.size() * 2;
  if (!room.admit(BlockPool::heap_footprint(n * sizeof(int32_t)))) return false;
  std::vector<int32_t> index(n, 0);
  for (size_t id = 0; id < states_.size(); ++id) {
    size_t i = hashes_[id] & (n - 1);
    while (index[i] != 0) i = (i + 1) & (n - 1);
    index[i] = static_cast<int32_t>(id + 1);
  }
  index_.swap(index);
  return true;
}

int32_t StateTable::intern(const State& s, Room& room) {
  uint64_t h = hash_bytes(s);
  if ((states_.size() + 1) * 2 > index_.size() && !grow(room)) return -1;
  size_t mask = index_.size() - 1;
  size_t i = h & mask;
  for (; index_[i] != 0; i = (i + 1) & mask) {
    auto id = static_cast<size_t>(index_[i] - 1);
    if (hashes_[id] == h && states_[id] == s) return static_cast<int32_t>(id);
  }
  if (states_.size() >= size_t{INT32_MAX}) return -1;
  // Growing, the new arrays are allocated while the old ones (counted until then) are
  // still held; a state longer than a string holds inline has its bytes on the heap.
  size_t cap = states_.size() < states_.capacity() ? states_.capacity() : std::max<size_t>(16, states_.capacity() * 2);
  size_t grown = cap == states_.capacity() ? 0
                                           : BlockPool::heap_footprint(cap * sizeof(State)) +
                                                 BlockPool::heap_footprint(cap * sizeof(uint64_t));
  static const size_t kInline = State().capacity();
  size_t text = s.size() > kInline ? BlockPool::heap_footprint(s.size() + 1) : 0;
  if (!room.admit(grown + text)) return -1;
  states_.reserve(cap);
  hashes_.reserve(cap);
  states_.push_back(s);
  hashes_.push_back(h);
  heap_bytes_ += text;
  index_[i] = static_cast<int32_t>(states_.size());
  return static_cast<int32_t>(states_.size() - 1);
}

bool MemoCache::equal(const Slot& s, const KeySource& key, size_t len) const {
  const uint32_t* p = keys_[s.block].data() + s.offset;
  return p[0] == len && key.equals(p + 1);
}

bool MemoCache::store(const KeySource& key, size_t len, Slot& slot, Room& room) {
  size_t need = len + 1;
  if (keys_.empty() || keys_.back().size() + need > keys_.back().capacity()) {
    // Blocks grow from 4 KiB to 1 MiB so tiny searches stay tiny: a check that allocates
    // and frees much more than 128 KiB makes malloc return and re-fetch pages every time.
    size_t words = std::max(std::min(kBlockWords, std::max<size_t>(1024, key_bytes_ / 4)), need);
    const size_t block = BlockPool::footprint(words * 4);
    if (!room.admit(block + table_growth(keys_))) return false;
    keys_.emplace_back();
    keys_.back().reserve(words);
    key_bytes_ += words * 4;
    block_bytes_ += block;
  }
  auto& b = keys_.back();
  slot.block = static_cast<uint32_t>(keys_.size() - 1);
  slot.offset = static_cast<uint32_t>(b.size());
  b.push_back(static_cast<uint32_t>(len));
  size_t at = b.size();
  b.resize(at + len);
  key.write(b.data() + at);
  return true;
}

bool MemoCache::grow(Room& room) {
  // Doubling, from 4 KiB: the table is zeroed, so all of it is touched, and a table four
  // times too large cost more page faults than the rehashes that quadrupling saved.
  size_t n = slots_.empty() ? 256 : slots_.size() * 2;
  if (!room.admit(BlockPool::footprint(n * sizeof(Slot)))) return false;
  PooledVector<Slot> old;
  old.swap(slots_);
  slots_.resize(n);
  for (const Slot& s : old) {
    if (s.hash == 0) continue;
    size_t i = s.hash & (n - 1);
    while (slots_[i].hash != 0) i = (i + 1) & (n - 1);
    slots_[i] = s;
  }
  return true;
}

uint64_t* MemoCache::record(uint32_t id, size_t words) {
  return sets_[id >> block_shift_].data() + (id & (records_per_block_ - 1)) * (words + 1);
}

bool MemoCache::dominated(const Slot& slot, const uint64_t* optional, size_t words) {
  // Only the newest kScanRecords sets are compared, so one insert costs O(1) even when a
  // key has collected thousands of incomparable sets (pathological histories). Missing an
  // older dominating set only costs re-exploration, never a wrong verdict.
  size_t scanned = 0;
  if (words == 1) {  // up to 64 optional ops: the common case, without the inner loop
    for (uint32_t id = slot.sets; id != 0 && scanned < kScanRecords; ++scanned) {
      const uint64_t* r = record(id - 1, 1);
      if ((r[1] & ~optional[0]) == 0) return true;
      id = static_cast<uint32_t>(r[0]);
    }
    return false;
  }
  for (uint32_t id = slot.sets; id != 0 && scanned < kScanRecords; ++scanned) {
    const uint64_t* r = record(id - 1, words);
    bool subset = true;
    for (size_t w = 0; w < words && subset; ++w) subset = (r[1 + w] & ~optional[w]) == 0;
    if (subset) return true;
    id = static_cast<uint32_t>(r[0]);
  }
  return false;
}

MemoCache::Insert MemoCache::add_set(Slot& slot, const uint64_t* optional, size_t words, Room& room) {
  // Up to 8 KiB blocks: small enough that a tiny search stays tiny, large enough to be
  // few; a power of two records each, so finding a record needs no division.
  if (records_per_block_ == 0) {
    records_per_block_ = std::bit_floor(std::max<size_t>(1, 1024 / (words + 1)));
    block_shift_ = static_cast<unsigned>(std::countr_zero(records_per_block_));
  }
  if (count_ >= (size_t{1} << 32) - 1) return Insert::Full;
  if ((count_ & (records_per_block_ - 1)) == 0) {
    size_t block_words = records_per_block_ * (words + 1);
    const size_t block = BlockPool::footprint(block_words * 8);
    if (!room.admit(block + table_growth(sets_))) return Insert::Full;
    sets_.emplace_back(block_words, 0);
    block_bytes_ += block;
  }
  auto id = static_cast<uint32_t>(count_++);
  uint64_t* r = record(id, words);
  r[0] = slot.sets;
  std::copy(optional, optional + words, r + 1);
  slot.sets = id + 1;
  return Insert::Added;
}

MemoCache::Insert MemoCache::insert(const KeySource& key, size_t len, uint32_t hash, const uint64_t* optional,
                                    size_t words, Room& room) {
  if ((key_count_ + 1) * 2 > slots_.size() && !grow(room)) return Insert::Full;
  size_t mask = slots_.size() - 1;
  hash |= 1;  // 0 marks empty slots
  // Probing ends: the load factor stays <= 1/2, so an empty slot exists.
  for (size_t i = hash & mask;; i = (i + 1) & mask) {
    Slot& s = slots_[i];
    if (s.hash == 0) {
      if (!store(key, len, s, room)) return Insert::Full;
      s.hash = hash;
      ++key_count_;
      return add_set(s, optional, words, room);
    }
    if (s.hash == hash && equal(s, key, len)) {
      return dominated(s, optional, words) ? Insert::Dominated : add_set(s, optional, words, room);
    }
  }
}

}  // namespace lockstep::checker::detail
