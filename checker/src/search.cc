// The linearizability search of one partition (search.h).
#include "search.h"

#include <algorithm>
#include <bit>
#include <map>
#include <tuple>
#include <utility>

#include "block_pool.h"
#include "memo.h"

namespace lockstep::checker::detail {

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
  int32_t phase;  // the scan phase the node was lifted in, to resume there (kReads: a read)
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

}  // namespace

class Searcher {
 public:
  // `first_return_first`: see lift_first.
  Searcher(const SearchInput& in, const SearchBudget& budget, bool first_return_first)
      : in_(in), budget_(budget), after_reads_(first_return_first ? kFirst : kOk) {
    rules_out_ = in_.model->rules_out();
    build_list();
    has_optional_ = std::find(in_.must.begin(), in_.must.end(), uint8_t{0}) != in_.must.end();
    read_.resize(in_.steps.size());
    for (size_t i = 0; i < in_.steps.size(); ++i) read_[i] = in_.must[i] && in_.model->is_read(in_.steps[i]);
    first_phase_ = std::find(read_.begin(), read_.end(), uint8_t{1}) != read_.end() ? kReads : after_reads_;
    find_twins();
    unsigned bits = transition_bits(in_.steps.size());
    transitions_.resize(size_t{1} << bits);
    transition_shift_ = 64 - bits;
  }
  ~Searcher() { budget_.memory->resize(held_, 0); }

  // See PartitionSearch::advance.
  bool advance(uint64_t steps) {
    if (decided_) return true;
    if (!started_) {
      started_ = true;
      state_ = states_.intern(in_.model->initial(), room_);
      if (state_ < 0) return finish(Verdict::Unknown, kMemoryLimit);
      remaining_ = static_cast<size_t>(std::count(in_.must.begin(), in_.must.end(), uint8_t{1}));
      entry_ = nodes_[0].next;
      phase_ = first_phase_;
    }
    for (uint64_t done = 0; done < steps; ++done, ++iter_) {
      if (remaining_ == 0) return finish(Verdict::Valid, "");
      // Checked every 64 steps: each step is bounded (a dominance scan compares at most
      // kScanRecords sets), so the limits are never overshot by much, and clock reads
      // stay a small part of the work.
      if ((iter_ & 63) == 0) {
        if (!within_limits()) return finish(Verdict::Unknown, limit_reason_);
        if (budget_.cancel != nullptr && budget_.cancel->load(std::memory_order_relaxed)) return false;
      }
      if (phase_ == kFirst) {
        if (lift_first() == Lift::Full) return finish(Verdict::Unknown, kMemoryLimit);
        continue;
      }
      const Node& n = nodes_[entry_];
      if (n.call) {
        Lift l = try_lift(n);
        if (l == Lift::Full) return finish(Verdict::Unknown, kMemoryLimit);
        // A read allowed here whose configuration was already explored (or cannot get
        // further): this configuration can get no further either.
        if (l == Lift::Explored && phase_ == kReads && !backtrack()) return finish(Verdict::Invalid, "");
      } else if (next_phase()) {
        entry_ = nodes_[0].next;
      } else {
        note_frontier(n.op);
        if (!backtrack()) return finish(Verdict::Invalid, "");
      }
    }
    return false;
  }

  SearchOutput take_output() { return std::move(out_); }

 private:
  enum class Lift { Lifted, Skipped, Explored, Full };

  // Linearizes the op of call node `n` if it is a candidate, the model allows it and the
  // resulting configuration is new (Lifted); otherwise moves on to the next node: Skipped
  // when the op is not a candidate or not allowed, Explored when its configuration was
  // explored already or cannot get further, Full when memory ran out.
  // Most candidates lead to configurations already explored, so the new one is looked up
  // before anything is lifted: its key is built with the op left out of the holes, its hash
  // from the running hash of the ok set.
  Lift try_lift(const Node& n) {
    int32_t op = n.op;
    int32_t next = candidate(n, phase_) ? transition(state_, op) : kNotAllowed;
    if (next < 0) {
      entry_ = n.next;
      return next == kNoRoom ? Lift::Full : Lift::Skipped;
    }
    int32_t new_hi = n.must ? std::max(hi_, op + 1) : hi_;
    uint64_t set_hash = n.must ? set_hash_ ^ zobrist_[op] : set_hash_;
    // Every linearized ok op is below hi, so the holes are the ok ops below it less those.
    size_t linearized = ok_count_ - remaining_ + n.must;
    size_t holes = static_cast<size_t>(ok_below_[static_cast<size_t>(new_hi)]) - linearized;
    CandidateKey key(*this, new_hi, n.must ? op : -1, next);
    if (!n.must) flip_optional(op);
    auto added = cache_.insert(key, holes + 2, static_cast<uint32_t>(mix64(set_hash ^ (static_cast<uint64_t>(next) * kMul))),
                               opt_bits_.data(), opt_bits_.size(), room_);
    if (!n.must) flip_optional(op);
    if (added == MemoCache::Insert::Full) return Lift::Full;
    if (added != MemoCache::Insert::Added || cannot_get_further(op, next)) {
      entry_ = n.next;
      return Lift::Explored;
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
    phase_ = first_phase_;
    return Lift::Lifted;
  }

  // Before the other ok ops, a configuration tries the op of its first return on its own:
  // that op must be linearized before its return, and where most ops wait on one another
  // (clients queued on a lock) it is nearly always the one that lets the search go on, so
  // the others are not lifted and given up one by one first. The scan of the ok phase
  // still tries every candidate after it, so the search stays exhaustive; only the order
  // changes, and with it which of several partial linearizations a failure reports (so
  // PartitionSearch decides failures in the plain order).
  Lift lift_first() {
    int32_t ret = nodes_[0].next;
    while (ret != -1 && nodes_[ret].call) ret = nodes_[ret].next;
    Lift l = Lift::Skipped;
    if (ret != -1 && nodes_[ret].must && !read_[nodes_[ret].op]) {
      entry_ = nodes_[ret].match;
      l = try_lift(nodes_[entry_]);
    }
    if (l != Lift::Lifted) to_ok_phase();
    return l;
  }
  void to_ok_phase() {
    phase_ = kOk;
    entry_ = nodes_[0].next;
  }

  // Each configuration scans the calls before its first return once per phase: reads
  // first, then (after lift_first) the other ok ops, then optional (info) ones. Trying
  // optional ops only when the ok ones cannot get past the return keeps them from leading
  // the search astray; the search stays exhaustive because the phases together try every
  // candidate.
  bool next_phase() {
    if (phase_ == kReads) {
      phase_ = after_reads_;
      return true;
    }
    if (phase_ == kOk && has_optional_) {
      phase_ = kOptional;
      return true;
    }
    return false;
  }

  // Whether linearizing op `x` (into state `next`) can be skipped because it cannot lead
  // anywhere new: some ok read `o` still to be linearized can never be allowed from there
  // (the model says so, given the ops invoked before o returns), so every configuration
  // below gets stuck at o's return or earlier — and the search has already been stuck at
  // o's return or beyond. The verdict and the failing operation cannot change; only orders
  // that a later read rules out are no longer tried one by one (and the partial
  // linearization reported is the first found that got as far, not necessarily the
  // longest). Only the first few reads are asked about, so a step stays bounded.
  bool cannot_get_further(int32_t x, int32_t next) {
    if (!rules_out_ || out_.stuck_op < 0) return false;
    first_.clear();
    size_t asked = 0;
    for (int32_t i = nodes_[0].next, walked = 0; i != -1 && walked < kRuleOutWalk; i = nodes_[i].next, ++walked) {
      const Node& nd = nodes_[static_cast<size_t>(i)];
      if (nd.op == x) continue;
      const Step& st = in_.steps[static_cast<size_t>(nd.op)];
      if (nd.call) {
        first_.push_back(&st);
        continue;
      }
      size_t pos = in_.ret_pos[static_cast<size_t>(nd.op)];
      if (pos > best_pos_) return false;
      if (!read_[nd.op]) continue;
      if (in_.model->never_allowed(states_[next], st, first_)) return true;
      if (++asked == kRuleOutReads) return false;
    }
    return false;
  }

  // Undoes linearizations until a configuration with candidates left to try, and resumes
  // its scan after the call node of the op undone; false when none is left.
  //
  // A read (an op that never changes the state) allowed in a configuration can always be
  // linearized there first: any way to go on from the configuration works as well with the
  // read put in front, since the read changes nothing and every op invoked after it
  // returned still follows it. So once a read's configuration is exhausted, the one it was
  // allowed in is too, and is given up without trying its other candidates — which cuts
  // the search through every subset of concurrent reads.
  bool backtrack() {
    while (!frames_.empty()) {
      Frame f = frames_.back();
      frames_.pop_back();
      state_ = f.state;
      hi_ = f.prev_hi;
      phase_ = f.phase;
      unlift(f.node);
      remaining_ += nodes_[f.node].must;
      entry_ = nodes_[f.node].next;
      if (phase_ == kFirst) to_ok_phase();  // the ok phase tries the rest
      low_water_ = std::min(low_water_, frames_.size());
      if (f.phase != kReads) return true;
    }
    return false;
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
    if (n.must) return read_[n.op] ? phase == kReads : (phase == kOk || phase == kFirst);
    return phase == kOptional && (twin_[n.op] < 0 || lifted_[twin_[n.op]]);
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
    // Calls come in op order, which is invocation order, so only the returns need
    // sorting; they are merged in after. Every position is a different event, so no two
    // are equal. Info and pending returns go after everything, in op order.
    std::vector<Ev> returns;
    returns.reserve(n);
    for (size_t i = 0; i < n; ++i) {
      returns.push_back({in_.ret_pos[i] == kNever ? kNever - n + i : in_.ret_pos[i], static_cast<int32_t>(i), false});
    }
    auto by_pos = [](const Ev& a, const Ev& b) { return a.pos < b.pos; };
    std::sort(returns.begin(), returns.end(), by_pos);
    size_t r = 0;
    for (size_t i = 0; i < n; ++i) {
      for (; r < n && returns[r].pos < in_.call_pos[i]; ++r) evs.push_back(returns[r]);
      evs.push_back({in_.call_pos[i], static_cast<int32_t>(i), true});
    }
    evs.insert(evs.end(), returns.begin() + static_cast<std::ptrdiff_t>(r), returns.end());
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
      to = states_.intern(next_, room_);
      if (to < 0) return kNoRoom;
    }
    t = Transition{from, op, to};
    return to;
  }

  // The memo and the state table grow through this: the search's share of the ledger
  // becomes everything it holds plus the growth, if the check's limit allows.
  struct LedgerRoom final : Room {
    explicit LedgerRoom(Searcher& s) : s(s) {}
    bool admit(size_t extra) override { return s.budget_.memory->resize(s.held_, s.bytes_held() + extra); }
    Searcher& s;
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

  // Everything else the search holds, as allocated (block_pool.h).
  size_t stack_bytes() const {
    auto pooled = [](const auto& v) { return BlockPool::footprint(v.capacity() * sizeof(v[0])); };
    auto heap = [](const auto& v) { return BlockPool::heap_footprint(v.capacity() * sizeof(v[0])); };
    return sizeof(Searcher) + pooled(nodes_) + pooled(frames_) + pooled(twin_) + pooled(lifted_) + pooled(read_) +
           pooled(opt_index_) + pooled(ok_next_) + pooled(ok_prev_) + pooled(ok_below_) + pooled(zobrist_) +
           pooled(transitions_) + heap(opt_bits_) + heap(first_) + heap(out_.partial);
  }

  size_t bytes_held() const { return cache_.bytes() + states_.bytes() + stack_bytes(); }

  // Also brings the search's share of the ledger to what it holds: down after a table
  // freed its old array, up as its stacks grew.
  bool within_limits() {
    size_t bytes = bytes_held();
    out_.peak_bytes = std::max(out_.peak_bytes, bytes);
    if (!budget_.memory->resize(held_, bytes)) {
      limit_reason_ = kMemoryLimit;
      return false;
    }
    if (std::chrono::steady_clock::now() >= budget_.deadline) {
      limit_reason_ = kTimeLimit;
      return false;
    }
    return true;
  }

  bool finish(Verdict v, const std::string& reason) {
    decided_ = true;
    out_.verdict = v;
    out_.unknown_reason = reason;
    out_.cache_entries = cache_.size();
    out_.peak_bytes = std::max(out_.peak_bytes, bytes_held());
    return true;
  }

  const SearchInput& in_;
  SearchBudget budget_;
  static constexpr int32_t kNotAllowed = -1;
  static constexpr int32_t kNoRoom = -2;
  // Bounds on cannot_get_further's look ahead: list nodes walked, reads asked about.
  static constexpr int32_t kRuleOutWalk = 256;
  static constexpr size_t kRuleOutReads = 4;
  bool rules_out_ = false;
  std::vector<const Step*> first_;  // cannot_get_further's scratch: ops invoked so far
  // The search cursor: current configuration and the node being considered.
  int32_t state_ = -1;       // id in states_
  State next_;               // scratch for the model's step
  int32_t hi_ = 0;           // 1 + the largest linearized ok op id
  int32_t entry_ = -1;
  static constexpr int32_t kReads = 0;     // scan phases, see next_phase
  static constexpr int32_t kOk = 1;
  static constexpr int32_t kOptional = 2;
  static constexpr int32_t kFirst = 3;     // lift_first's
  int32_t phase_ = kOk;
  int32_t first_phase_ = kOk;
  int32_t after_reads_ = kOk;  // kFirst when lift_first is used
  size_t remaining_ = 0;     // ok ops not yet linearized
  PooledVector<Node> nodes_;  // [0] is the head sentinel
  PooledVector<Frame> frames_;
  MemoCache cache_;
  LedgerRoom room_{*this};
  size_t held_ = 0;  // this search's share of the ledger
  uint64_t iter_ = 0;
  bool started_ = false;
  bool decided_ = false;
  SearchOutput out_;
  size_t best_pos_ = 0;
  size_t low_water_ = 0;
  std::string limit_reason_;
  bool has_optional_ = false;
  PooledVector<int32_t> twin_;    // the previous optional op with an equal step, or -1
  PooledVector<uint8_t> lifted_;  // 1 while the op is linearized
  PooledVector<uint8_t> read_;    // 1 for an ok op that never changes the state
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

PartitionSearch::PartitionSearch(const SearchInput& in, const SearchBudget& budget)
    : in_(in),
      budget_(budget),
      quick_(in.model->completion_order_first()),
      s_(std::make_unique<Searcher>(in, budget, quick_)) {}
PartitionSearch::~PartitionSearch() = default;

// With a model that asks for it (Model::completion_order_first), a valid history is
// decided by the quick order (lift_first). A failure, or a limit met, is decided again in
// the plain invocation order: the partial linearization a failure reports (and so its
// explanation) is the one that order finds, whichever found the failure first, and a
// history the quick order could not decide within the limits gets the plain order's
// chance. Failures are rare next to valid runs, so the second search costs little
// overall.
bool PartitionSearch::advance(uint64_t steps) {
  if (!s_->advance(steps)) return false;
  if (quick_) {
    quick_ = false;
    quick_out_ = s_->take_output();
    // Out of time, the plain order cannot get anywhere either.
    if (quick_out_.verdict == Verdict::Valid || quick_out_.unknown_reason == kTimeLimit) {
      out_ = std::move(quick_out_);
      return true;
    }
    s_.reset();  // gives its memory back first
    s_ = std::make_unique<Searcher>(in_, budget_, false);
    if (!s_->advance(steps)) return false;
  }
  out_ = s_->take_output();
  // A failure the plain order did not reach within a limit is still a failure.
  if (out_.verdict == Verdict::Unknown && quick_out_.verdict == Verdict::Invalid) out_ = std::move(quick_out_);
  return true;
}
SearchOutput PartitionSearch::take_output() { return std::move(out_); }

SearchOutput search(const SearchInput& in, const SearchBudget& budget) {
  PartitionSearch s(in, budget);
  s.advance(UINT64_MAX);
  return s.take_output();
}

}  // namespace lockstep::checker::detail
