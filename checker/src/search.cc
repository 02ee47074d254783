#include "search.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <map>
#include <tuple>
#include <utility>

namespace lockstep::checker::detail {

namespace {
constexpr size_t kBlockWords = size_t{1} << 18;  // 1 MiB of uint32_t
constexpr uint64_t kMul = 0x9E3779B97F4A7C15ULL;
constexpr size_t kScanRecords = 64;
}  // namespace

namespace {
// splitmix64's finalizer: every input bit affects every output bit.
uint64_t mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

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

bool StateTable::grow(const Room& room) {
  size_t n = index_.empty() ? 16 : index_.size() * 2;
  if (bytes() + n * sizeof(int32_t) > room.left()) return false;
  std::vector<int32_t> index(n, 0);
  for (size_t id = 0; id < states_.size(); ++id) {
    size_t i = hashes_[id] & (n - 1);
    while (index[i] != 0) i = (i + 1) & (n - 1);
    index[i] = static_cast<int32_t>(id + 1);
  }
  index_.swap(index);
  return true;
}

int32_t StateTable::intern(const State& s, const Room& room) {
  uint64_t h = hash_bytes(s);
  if ((states_.size() + 1) * 2 > index_.size() && !grow(room)) return -1;
  size_t mask = index_.size() - 1;
  size_t i = h & mask;
  for (; index_[i] != 0; i = (i + 1) & mask) {
    auto id = static_cast<size_t>(index_[i] - 1);
    if (hashes_[id] == h && states_[id] == s) return static_cast<int32_t>(id);
  }
  if (states_.size() >= size_t{INT32_MAX}) return -1;
  // Every state's bytes count as if on the heap: over by a few bytes for short ones.
  size_t cap = states_.size() < states_.capacity() ? states_.capacity() : std::max<size_t>(16, states_.capacity() * 2);
  size_t grown = (cap - states_.capacity()) * (sizeof(State) + sizeof(uint64_t));
  if (bytes() + grown + s.size() + 1 > room.left()) return -1;
  states_.reserve(cap);
  hashes_.reserve(cap);
  states_.push_back(s);
  hashes_.push_back(h);
  heap_bytes_ += s.size() + 1;
  index_[i] = static_cast<int32_t>(states_.size());
  return static_cast<int32_t>(states_.size() - 1);
}

bool MemoCache::equal(const Slot& s, const KeySource& key, size_t len) const {
  const uint32_t* p = keys_[s.block].data() + s.offset;
  return p[0] == len && key.equals(p + 1);
}

bool MemoCache::store(const KeySource& key, size_t len, Slot& slot, const Room& room) {
  size_t need = len + 1;
  if (keys_.empty() || keys_.back().size() + need > keys_.back().capacity()) {
    // Blocks grow from 4 KiB to 1 MiB so tiny searches stay tiny: a check that allocates
    // and frees much more than 128 KiB makes malloc return and re-fetch pages every time.
    size_t words = std::max(std::min(kBlockWords, std::max<size_t>(1024, key_bytes_ / 4)), need);
    if (bytes() + words * 4 > room.left()) return false;
    keys_.emplace_back();
    keys_.back().reserve(words);
    key_bytes_ += words * 4;
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

bool MemoCache::grow(const Room& room) {
  // Doubling, from 4 KiB: the table is zeroed, so all of it is touched, and a table four
  // times too large cost more page faults than the rehashes that quadrupling saved.
  size_t n = slots_.empty() ? 256 : slots_.size() * 2;
  if (bytes() + n * sizeof(Slot) > room.left()) return false;
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

MemoCache::Insert MemoCache::add_set(Slot& slot, const uint64_t* optional, size_t words, const Room& room) {
  // Up to 8 KiB blocks: small enough that a tiny search stays tiny, large enough to be
  // few; a power of two records each, so finding a record needs no division.
  if (records_per_block_ == 0) {
    records_per_block_ = std::bit_floor(std::max<size_t>(1, 1024 / (words + 1)));
    block_shift_ = static_cast<unsigned>(std::countr_zero(records_per_block_));
  }
  if (count_ >= (size_t{1} << 32) - 1) return Insert::Full;
  if ((count_ & (records_per_block_ - 1)) == 0) {
    size_t block_words = records_per_block_ * (words + 1);
    if (bytes() + block_words * 8 > room.left()) return Insert::Full;
    sets_.emplace_back(block_words, 0);
    set_bytes_ += block_words * 8;
  }
  auto id = static_cast<uint32_t>(count_++);
  uint64_t* r = record(id, words);
  r[0] = slot.sets;
  std::copy(optional, optional + words, r + 1);
  slot.sets = id + 1;
  return Insert::Added;
}

MemoCache::Insert MemoCache::insert(const KeySource& key, size_t len, uint32_t hash, const uint64_t* optional,
                                    size_t words, const Room& room) {
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

namespace {

struct Node {
  int32_t op = -1;
  bool call = false;
  bool must = false;  // the op's, kept here to save a lookup in the scan
  int32_t match = -1;
  int32_t prev = -1;
  int32_t next = -1;
};

struct Frame {
  int32_t node;
  int32_t prev_hi;
  int32_t phase;  // the scan phase the node was lifted in, to resume there
  int32_t state;  // id of the state before the node's op
};

// A remembered step: from state id `from`, op `op` leads to state id `to` (-1: not allowed).
struct Transition {
  int32_t from = -1;
  int32_t op = -1;
  int32_t to = -1;
};

// Enough slots that the steps around the search's frontier rarely evict each other, and few
// enough that a huge history does not pay for a table it cannot fill.
unsigned transition_bits(size_t ops) {
  return std::clamp<unsigned>(static_cast<unsigned>(std::bit_width(ops * 4)), 6, 14);
}

class Searcher {
 public:
  Searcher(const SearchInput& in, const SearchBudget& budget) : in_(in), budget_(budget) {
    build_list();
    has_optional_ = std::find(in_.must.begin(), in_.must.end(), uint8_t{0}) != in_.must.end();
    find_twins();
    unsigned bits = transition_bits(in_.steps.size());
    transitions_.resize(size_t{1} << bits);
    transition_shift_ = 64 - bits;
  }

  SearchOutput run() {
    state_ = states_.intern(in_.model->initial(), states_room_);
    if (state_ < 0) return finish(Verdict::Unknown, "memory limit");
    remaining_ = static_cast<size_t>(std::count(in_.must.begin(), in_.must.end(), uint8_t{1}));
    entry_ = nodes_[0].next;
    for (uint64_t iter = 0;; ++iter) {
      if (remaining_ == 0) return finish(Verdict::Valid, "");
      // Checked every 64 steps: each step is bounded (a dominance scan compares at most
      // kScanRecords sets), so the limits are never overshot by much, and clock reads
      // stay a small part of the work.
      if ((iter & 63) == 0 && !within_limits()) return finish(Verdict::Unknown, limit_reason_);
      const Node& n = nodes_[entry_];
      if (n.call) {
        if (try_lift(n) == MemoCache::Insert::Full) return finish(Verdict::Unknown, "memory limit");
      } else if (phase_ == 0 && has_optional_) {
        // Each configuration scans the calls before its first return twice: phase 0 tries
        // ok ops, phase 1 optional (info) ones. Trying optional ops only when the ok ones
        // cannot get past the return keeps them from leading the search astray; the
        // search stays exhaustive because the two phases together try every candidate.
        phase_ = 1;
        entry_ = nodes_[0].next;
      } else {
        note_frontier(n.op);
        if (frames_.empty()) return finish(Verdict::Invalid, "");
        backtrack();
      }
    }
  }

 private:
  // Linearizes the op of call node `n` if it is a candidate, the model allows it and the
  // resulting configuration is new; otherwise moves on to the next node.
  // Most candidates lead to configurations already explored, so the new one is looked up
  // before anything is lifted: its key is built with the op left out of the holes, its hash
  // from the running hash of the ok set.
  MemoCache::Insert try_lift(const Node& n) {
    int32_t op = n.op;
    int32_t next = candidate(n, phase_) ? transition(state_, op) : kNotAllowed;
    if (next < 0) {
      entry_ = n.next;
      return next == kNoRoom ? MemoCache::Insert::Full : MemoCache::Insert::Dominated;
    }
    int32_t new_hi = n.must ? std::max(hi_, op + 1) : hi_;
    uint64_t set_hash = n.must ? set_hash_ ^ zobrist_[op] : set_hash_;
    // Every linearized ok op is below hi, so the holes are the ok ops below it less those.
    size_t linearized = ok_count_ - remaining_ + n.must;
    size_t holes = static_cast<size_t>(ok_below_[static_cast<size_t>(new_hi)]) - linearized;
    CandidateKey key(*this, new_hi, n.must ? op : -1, next);
    if (!n.must) flip_optional(op);
    auto added = cache_.insert(key, holes + 2, static_cast<uint32_t>(mix64(set_hash ^ (static_cast<uint64_t>(next) * kMul))),
                               opt_bits_.data(), opt_bits_.size(), memo_room_);
    if (!n.must) flip_optional(op);
    if (added != MemoCache::Insert::Added) {
      entry_ = n.next;
      return added;
    }
    int32_t call = entry_;
    lift(call);
    frames_.push_back(Frame{call, hi_, phase_, state_});
    state_ = next;
    hi_ = new_hi;
    remaining_ -= n.must;
    ++out_.states_visited;
    out_.max_depth = std::max(out_.max_depth, frames_.size());
    entry_ = nodes_[0].next;
    phase_ = 0;
    return added;
  }

  // Undoes the latest linearization and resumes the scan after its call node.
  void backtrack() {
    Frame& f = frames_.back();
    state_ = f.state;
    hi_ = f.prev_hi;
    phase_ = f.phase;
    unlift(f.node);
    remaining_ += nodes_[f.node].must;
    entry_ = nodes_[f.node].next;
    frames_.pop_back();
    low_water_ = std::min(low_water_, frames_.size());
  }

  // Optional ops with equal steps are interchangeable, and the earlier-invoked one can
  // stand wherever the later one could: so only the earliest unlinearized one of a group is
  // tried. This prunes the subsets of identical crashed ops without losing a linearization.
  void find_twins() {
    opt_index_.assign(in_.steps.size(), -1);
    int32_t k = 0;
    for (size_t i = 0; i < in_.steps.size(); ++i) {
      if (!in_.must[i]) opt_index_[i] = k++;
    }
    opt_bits_.assign((static_cast<size_t>(k) + 63) / 64, 0);
    twin_.assign(in_.steps.size(), -1);
    lifted_.assign(in_.steps.size(), 0);
    std::map<std::tuple<int32_t, int64_t, int64_t, int64_t, std::string>, int32_t> last;
    for (size_t i = 0; i < in_.steps.size(); ++i) {
      if (in_.must[i]) continue;
      const Step& st = in_.steps[i];
      auto [it, fresh] = last.try_emplace(std::make_tuple(st.code, st.process, st.a, st.b, st.s), static_cast<int32_t>(i));
      if (!fresh) twin_[i] = std::exchange(it->second, static_cast<int32_t>(i));
    }
  }

  bool candidate(const Node& n, int32_t phase) const {
    if (n.must) return phase == 0;
    return phase == 1 && (twin_[n.op] < 0 || lifted_[twin_[n.op]]);
  }

  void build_list() {
    struct Ev {
      size_t pos;
      int32_t op;
      bool call;
    };
    std::vector<Ev> evs;
    size_t n = in_.steps.size();
    evs.reserve(2 * n);
    for (size_t i = 0; i < n; ++i) {
      evs.push_back({in_.call_pos[i], static_cast<int32_t>(i), true});
      // Info and pending returns go after everything, in op order.
      evs.push_back({in_.ret_pos[i] == kNever ? kNever - n + i : in_.ret_pos[i], static_cast<int32_t>(i), false});
    }
    std::stable_sort(evs.begin(), evs.end(), [](const Ev& a, const Ev& b) { return a.pos < b.pos; });
    nodes_.resize(evs.size() + 1);
    std::vector<int32_t> call_node(n, -1);
    for (size_t i = 0; i < evs.size(); ++i) {
      Node& nd = nodes_[i + 1];
      nd.op = evs[i].op;
      nd.call = evs[i].call;
      nd.must = in_.must[nd.op] != 0;
      nd.prev = static_cast<int32_t>(i);
      nd.next = i + 1 < evs.size() ? static_cast<int32_t>(i + 2) : -1;
      if (nd.call) {
        call_node[nd.op] = static_cast<int32_t>(i + 1);
      } else {
        nd.match = call_node[nd.op];
        nodes_[nd.match].match = static_cast<int32_t>(i + 1);
      }
    }
    nodes_[0].next = evs.empty() ? -1 : 1;
    // The ok ops not yet linearized, in id order, as a circular list with sentinel 0 and op
    // i at i + 1: the holes of a configuration are its prefix below hi.
    ok_next_.assign(n + 1, 0);
    ok_prev_.assign(n + 1, 0);
    int32_t last = 0;
    for (size_t i = 0; i < n; ++i) {
      if (!in_.must[i]) continue;
      ok_next_[last] = static_cast<int32_t>(i + 1);
      ok_prev_[i + 1] = last;
      last = static_cast<int32_t>(i + 1);
    }
    ok_next_[last] = 0;
    ok_prev_[0] = last;
    zobrist_.resize(n);
    for (size_t i = 0; i < n; ++i) zobrist_[i] = mix64(i + 1);
    ok_below_.assign(n + 1, 0);
    for (size_t i = 0; i < n; ++i) ok_below_[i + 1] = ok_below_[i] + in_.must[i];
    ok_count_ = static_cast<size_t>(ok_below_[n]);
  }

  void unlink(int32_t i) {
    nodes_[nodes_[i].prev].next = nodes_[i].next;
    if (nodes_[i].next != -1) nodes_[nodes_[i].next].prev = nodes_[i].prev;
  }
  void relink(int32_t i) {
    nodes_[nodes_[i].prev].next = i;
    if (nodes_[i].next != -1) nodes_[nodes_[i].next].prev = i;
  }
  void ok_unlink(int32_t op) {
    int32_t i = op + 1;
    ok_next_[ok_prev_[i]] = ok_next_[i];
    ok_prev_[ok_next_[i]] = ok_prev_[i];
  }
  void ok_relink(int32_t op) {
    int32_t i = op + 1;
    ok_next_[ok_prev_[i]] = i;
    ok_prev_[ok_next_[i]] = i;
  }
  void flip_optional(int32_t op) {
    if (int32_t k = opt_index_[op]; k >= 0) opt_bits_[static_cast<size_t>(k) / 64] ^= uint64_t{1} << (k % 64);
  }
  void lift(int32_t call) {
    int32_t op = nodes_[call].op;
    lifted_[op] = 1;
    if (nodes_[call].must) {
      ok_unlink(op);
      set_hash_ ^= zobrist_[op];
    } else {
      flip_optional(op);
    }
    unlink(call);
    unlink(nodes_[call].match);
  }
  void unlift(int32_t call) {
    int32_t op = nodes_[call].op;
    lifted_[op] = 0;
    if (nodes_[call].must) {
      ok_relink(op);
      set_hash_ ^= zobrist_[op];
    } else {
      flip_optional(op);
    }
    relink(nodes_[call].match);
    relink(call);
  }

  // The state `op` leads to from state `from`: an id, kNotAllowed, or kNoRoom when the new
  // state would exceed the memory limit.
  int32_t transition(int32_t from, int32_t op) {
    uint64_t k = (uint64_t{static_cast<uint32_t>(op)} << 32) | static_cast<uint32_t>(from);
    Transition& t = transitions_[(k * kMul) >> transition_shift_];
    if (t.from == from && t.op == op) return t.to;
    int32_t to = kNotAllowed;
    if (in_.model->step(states_[from], in_.steps[op], next_)) {
      to = states_.intern(next_, states_room_);
      if (to < 0) return kNoRoom;
    }
    t = Transition{from, op, to};
    return to;
  }

  // What the memo, or the state table, may take: the limit less everything else.
  struct RoomBeside final : Room {
    RoomBeside(const Searcher& s, bool for_memo) : s(s), for_memo(for_memo) {}
    size_t left() const override {
      size_t used = s.stack_bytes() + (for_memo ? s.states_.bytes() : s.cache_.bytes());
      return s.budget_.memory_limit_bytes > used ? s.budget_.memory_limit_bytes - used : 0;
    }
    const Searcher& s;
    bool for_memo;
  };

  // The key of a candidate configuration: [hi, holes..., state id], where hi and holes are
  // over ok ops only and `skip` (the ok op about to be linearized, or -1) is not a hole;
  // the optional set is kept beside it. The holes are read off the list of ok ops.
  class CandidateKey final : public KeySource {
   public:
    CandidateKey(const Searcher& s, int32_t hi, int32_t skip, int32_t state)
        : s_(s), hi_(hi), skip_(skip), state_(state) {}
    bool equals(const uint32_t* stored) const override {
      if (stored[0] != static_cast<uint32_t>(hi_)) return false;
      size_t j = 1;
      for (int32_t i = s_.ok_next_[0]; i != 0 && i - 1 < hi_; i = s_.ok_next_[i]) {
        if (i - 1 != skip_ && stored[j++] != static_cast<uint32_t>(i - 1)) return false;
      }
      return stored[j] == static_cast<uint32_t>(state_);
    }
    void write(uint32_t* out) const override {
      size_t j = 0;
      out[j++] = static_cast<uint32_t>(hi_);
      for (int32_t i = s_.ok_next_[0]; i != 0 && i - 1 < hi_; i = s_.ok_next_[i]) {
        if (i - 1 != skip_) out[j++] = static_cast<uint32_t>(i - 1);
      }
      out[j] = static_cast<uint32_t>(state_);
    }

   private:
    const Searcher& s_;
    int32_t hi_, skip_, state_;
  };

  // The furthest return reached so far marks the first completion that cannot be reached.
  void note_frontier(int32_t op) {
    size_t pos = in_.ret_pos[op];
    if (out_.stuck_op >= 0 && (pos < best_pos_ || (pos == best_pos_ && frames_.size() <= out_.partial.size()))) return;
    best_pos_ = pos;
    out_.stuck_op = op;
    // Only the frames above the low-water mark changed since the last snapshot.
    out_.partial.resize(std::min(low_water_, out_.partial.size()));
    for (size_t i = out_.partial.size(); i < frames_.size(); ++i) out_.partial.push_back(nodes_[frames_[i].node].op);
    low_water_ = frames_.size();
    out_.partial_state = states_[state_];
  }

  size_t stack_bytes() const {
    return frames_.capacity() * sizeof(Frame) + out_.partial.capacity() * 4 + nodes_.size() * (sizeof(Node) + 16) +
           ok_below_.capacity() * 4 + transitions_.capacity() * sizeof(Transition);
  }

  bool within_limits() {
    size_t bytes = cache_.bytes() + states_.bytes() + stack_bytes();
    out_.peak_bytes = std::max(out_.peak_bytes, bytes);
    if (bytes > budget_.memory_limit_bytes) {
      limit_reason_ = "memory limit";
      return false;
    }
    if (std::chrono::steady_clock::now() >= budget_.deadline) {
      limit_reason_ = "time limit";
      return false;
    }
    return true;
  }

  SearchOutput finish(Verdict v, const std::string& reason) {
    out_.verdict = v;
    out_.unknown_reason = reason;
    out_.cache_entries = cache_.size();
    out_.peak_bytes = std::max(out_.peak_bytes, cache_.bytes() + states_.bytes() + stack_bytes());
    return std::move(out_);
  }

  const SearchInput& in_;
  SearchBudget budget_;
  static constexpr int32_t kNotAllowed = -1;
  static constexpr int32_t kNoRoom = -2;
  // The search cursor: current configuration and the node being considered.
  int32_t state_ = -1;       // id in states_
  State next_;               // scratch for the model's step
  int32_t hi_ = 0;           // 1 + the largest linearized ok op id
  int32_t entry_ = -1;
  int32_t phase_ = 0;
  size_t remaining_ = 0;     // ok ops not yet linearized
  PooledVector<Node> nodes_;  // [0] is the head sentinel
  PooledVector<Frame> frames_;
  MemoCache cache_;
  RoomBeside memo_room_{*this, true};
  RoomBeside states_room_{*this, false};
  SearchOutput out_;
  size_t best_pos_ = 0;
  size_t low_water_ = 0;
  std::string limit_reason_;
  bool has_optional_ = false;
  PooledVector<int32_t> twin_;    // the previous optional op with an equal step, or -1
  PooledVector<uint8_t> lifted_;  // 1 while the op is linearized
  PooledVector<int32_t> opt_index_;  // position among optional ops, or -1 for ok ops
  std::vector<uint64_t> opt_bits_;  // the linearized optional ops
  PooledVector<int32_t> ok_next_, ok_prev_;
  PooledVector<int32_t> ok_below_;  // by id: how many ok ops have a smaller one
  size_t ok_count_ = 0;
  // Random words by ok op; the XOR of those linearized hashes the ok set in O(1) per step.
  PooledVector<uint64_t> zobrist_;
  uint64_t set_hash_ = 0;
  StateTable states_;
  PooledVector<Transition> transitions_;  // direct-mapped by a hash of (from, op)
  unsigned transition_shift_ = 0;
};

}  // namespace

SearchOutput search(const SearchInput& in, const SearchBudget& budget) {
  if (budget.memory_limit_bytes == 0) {
    SearchOutput out;
    out.unknown_reason = "memory limit";
    return out;
  }
  return Searcher(in, budget).run();
}

}  // namespace lockstep::checker::detail
