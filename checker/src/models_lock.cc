// The lock models: mutex, reentrant-mutex, rw-lock. Ownership is by Event::process.
#include <algorithm>
#include <cstring>

#include "model_registry.h"

namespace lockstep::checker::detail {
namespace {

bool unknown_f(const char* model, const Operation& op, const char* expected, std::string& error) {
  error = std::string(model) + ": unknown f \"" + op.f + "\" (expected " + expected + ")";
  return false;
}

// The latest op in the linearization by `process` whose f is `f`, or nullptr.
const Operation* last_by(const ExplainContext& ctx, int64_t process, const std::string& f) {
  for (auto it = ctx.linearized.rbegin(); it != ctx.linearized.rend(); ++it) {
    if ((*it)->process == process && (*it)->f == f) return *it;
  }
  return nullptr;
}

// The acquire that began `owner`'s current hold of a reentrant lock: the one that took
// its count from zero. The latest acquire may be a nested one that completed later than
// the operation being explained.
const Operation* hold_start(const ExplainContext& ctx, int64_t owner) {
  const Operation* start = nullptr;
  int64_t count = 0;
  for (const Operation* op : ctx.linearized) {
    if (op->process != owner) continue;
    if (op->f == "acquire" && count++ == 0) start = op;
    if (op->f == "release" && count > 0) --count;
  }
  return start;
}

// "since t=0.950s (acquired, never released)": when `holder` took the lock and what became
// of it afterwards in the whole history, which is what makes the failure plain.
std::string held_since(const ExplainContext& ctx, const Operation* took, const std::string& release_f) {
  if (took == nullptr) return "";
  std::string s = " since " + ctx.completed(*took);
  if (took->outcome != EventType::Ok) {
    return " since " + ctx.invoked(*took) + " (its " + took->f + " had an unknown outcome)";
  }
  for (const Operation& op : ctx.all) {
    if (op.process == took->process && op.f == release_f && op.outcome != EventType::Fail &&
        op.invoke_index > took->invoke_index) {
      return s + " (not released until " + ctx.invoked(op) + ")";
    }
  }
  return s + (took->f == "acquire" ? " (acquired, never released)" : " (never released)");
}

enum MutexCode : int32_t { kAcquire = 0, kRelease = 1 };

// State: empty when free, else [owner].
class Mutex final : public Model {
 public:
  bool completion_order_first() const override { return true; }
  const char* name() const override { return "mutex"; }
  State initial() const override { return {}; }
  bool prepare(const Operation& op, Interner&, Step& out, bool&, std::string& error) const override {
    if (op.f == "acquire") out.code = kAcquire;
    else if (op.f == "release") out.code = kRelease;
    else return unknown_f(name(), op, "acquire or release", error);
    out.process = op.process;
    return true;
  }
  bool step(const State& s, const Step& op, State& next) const override {
    if (op.code == kAcquire) {
      if (!s.empty()) return false;
      next.clear();
      append_i64(next, op.process);
      return true;
    }
    if (s.empty() || read_i64(s, 0) != op.process) return false;
    next.clear();
    return true;
  }
  std::string show(const State& s, const Interner&) const override {
    return s.empty() ? "free" : "held by process " + std::to_string(read_i64(s, 0));
  }
  std::string explain(const ExplainContext& ctx) const override {
    const Operation& x = ctx.failed;
    std::string head = "process " + std::to_string(x.process) + "'s " + x.f + " completed at " + ctx.completed(x);
    if (ctx.state.empty()) {
      if (x.f != "release") return Model::explain(ctx);
      const Operation* rel = ctx.linearized.empty() ? nullptr : last_by(ctx, ctx.linearized.back()->process, "release");
      return head + " but the lock was free" +
             (rel ? " (last released by process " + std::to_string(rel->process) + " at " + ctx.completed(*rel) + ")"
                  : " (process " + std::to_string(x.process) + " never acquired it)");
    }
    int64_t owner = read_i64(ctx.state, 0);
    const Operation* took = last_by(ctx, owner, "acquire");
    std::string since = held_since(ctx, took, "release");
    if (x.f == "acquire" && owner == x.process) {
      // The holder acquiring again: its hold ended without a release it knew of. Name the
      // failed release, which is where a lease that ran out during the hold shows.
      for (const Operation& op : ctx.all) {
        if (took && op.process == owner && op.f == "release" && op.outcome == EventType::Fail &&
            op.invoke_index > took->invoke_index && op.invoke_index < x.invoke_index) {
          return head + " although process " + std::to_string(owner) + " had not released the lock it took at " +
                 ctx.completed(*took) + ": its release at " + ctx.completed(op) +
                 " failed, so the lock was lost while held (a lease that ran out?) rather than released";
        }
      }
      return head + " although process " + std::to_string(owner) + " already held the lock" + since;
    }
    if (x.f == "acquire") {
      return head + " while process " + std::to_string(owner) + " still held the lock" + since;
    }
    return head + " while process " + std::to_string(owner) + " held the lock" + since + ", so process " +
           std::to_string(x.process) + " did not own it";
  }
};

// State: empty when free, else [owner, count].
class ReentrantMutex final : public Model {
 public:
  bool completion_order_first() const override { return true; }
  const char* name() const override { return "reentrant-mutex"; }
  State initial() const override { return {}; }
  bool prepare(const Operation& op, Interner& v, Step& out, bool& d, std::string& error) const override {
    return Mutex().prepare(op, v, out, d, error) || (error = std::string(name()) + error.substr(5), false);
  }
  bool step(const State& s, const Step& op, State& next) const override {
    bool held = !s.empty();
    int64_t owner = read_i64(s, 0), count = read_i64(s, 1);
    if (held && owner != op.process) return false;
    if (op.code == kRelease && !held) return false;
    count += op.code == kAcquire ? 1 : -1;
    next.clear();
    if (count > 0) {
      append_i64(next, op.process);
      append_i64(next, count);
    }
    return true;
  }
  std::string show(const State& s, const Interner&) const override {
    if (s.empty()) return "free";
    return "held " + std::to_string(read_i64(s, 1)) + "x by process " + std::to_string(read_i64(s, 0));
  }
  std::string explain(const ExplainContext& ctx) const override {
    const Operation& x = ctx.failed;
    std::string head = "process " + std::to_string(x.process) + "'s " + x.f + " completed at " + ctx.completed(x);
    if (ctx.state.empty()) {
      return x.f == "release" ? head + " but the lock was free (process " + std::to_string(x.process) +
                                    " held no acquisition to release)"
                              : Model::explain(ctx);
    }
    int64_t owner = read_i64(ctx.state, 0);
    if (owner == x.process) return Model::explain(ctx);
    const int64_t count = read_i64(ctx.state, 1);
    const Operation* took = hold_start(ctx, owner);
    const std::string who = "process " + std::to_string(owner);
    if (count > 1 && took) {
      // More holds than the holder nested: a release of its that failed left one open.
      for (const Operation& op : ctx.all) {
        if (op.process == owner && op.f == "release" && op.outcome == EventType::Fail &&
            op.invoke_index > took->invoke_index && op.invoke_index < x.invoke_index) {
          return head + " while " + who + " still held the lock: it took it at " + ctx.completed(*took) +
                 ", its release at " + ctx.completed(op) +
                 " failed, so that hold never ended (a lease that ran out?), and it took the lock again after";
        }
      }
      return head + " while " + who + " held the lock, taken " + std::to_string(count) + " times over (reentrant)" +
             held_since(ctx, took, "release");
    }
    return head + " while " + who + " held the lock" + held_since(ctx, took, "release");
  }
};

enum RwCode : int32_t { kAcquireRead, kReleaseRead, kAcquireWrite, kReleaseWrite };

// State: [writer or -1] then (process, count) pairs sorted by process, counts > 0.
class RwLock final : public Model {
 public:
  bool completion_order_first() const override { return true; }
  const char* name() const override { return "rw-lock"; }
  State initial() const override {
    State s;
    append_i64(s, -1);
    return s;
  }
  bool prepare(const Operation& op, Interner&, Step& out, bool&, std::string& error) const override {
    static const std::pair<const char*, RwCode> kFs[] = {{"acquire-read", kAcquireRead},
                                                         {"release-read", kReleaseRead},
                                                         {"acquire-write", kAcquireWrite},
                                                         {"release-write", kReleaseWrite}};
    for (const auto& [f, c] : kFs) {
      if (op.f == f) {
        out.code = c;
        out.process = op.process;
        return true;
      }
    }
    return unknown_f(name(), op, "acquire-read, release-read, acquire-write or release-write", error);
  }
  bool step(const State& s, const Step& op, State& next) const override {
    int64_t writer = read_i64(s, 0);
    size_t pairs = (i64_count(s) - 1) / 2;
    switch (op.code) {
      case kAcquireWrite:
        if (writer != -1 || pairs != 0) return false;
        next = s;
        std::memcpy(next.data(), &op.process, 8);
        return true;
      case kReleaseWrite:
        if (writer != op.process) return false;
        next = s;
        writer = -1;
        std::memcpy(next.data(), &writer, 8);
        return true;
      case kAcquireRead:
        if (writer != -1 && writer != op.process) return false;
        return adjust_reader(s, op.process, +1, next);
      default:
        return adjust_reader(s, op.process, -1, next);
    }
  }
  std::string show(const State& s, const Interner&) const override {
    std::string out;
    int64_t writer = read_i64(s, 0);
    if (writer != -1) out = "write-held by process " + std::to_string(writer);
    for (size_t i = 1; i + 1 < i64_count(s); i += 2) {
      out += (out.empty() ? "read-held by process " : ", read by process ") + std::to_string(read_i64(s, i));
    }
    return out.empty() ? "free" : out;
  }
  std::string explain(const ExplainContext& ctx) const override {
    const Operation& x = ctx.failed;
    std::string head = "process " + std::to_string(x.process) + "'s " + x.f + " completed at " + ctx.completed(x);
    int64_t writer = read_i64(ctx.state, 0);
    if (x.f == "acquire-read" || (x.f == "acquire-write" && writer != -1)) {
      if (writer == -1 || writer == x.process) return Model::explain(ctx);
      return head + " while process " + std::to_string(writer) + " held the write lock" +
             held_since(ctx, last_by(ctx, writer, "acquire-write"), "release-write");
    }
    if (x.f == "acquire-write") {
      int64_t reader = read_i64(ctx.state, 1);
      return head + " while process " + std::to_string(reader) + " held a read lock" +
             held_since(ctx, last_by(ctx, reader, "acquire-read"), "release-read");
    }
    const char* what = x.f == "release-read" ? "a read lock" : "the write lock";
    return head + " but process " + std::to_string(x.process) + " did not hold " + what + " (the lock was " +
           show(ctx.state, ctx.values) + ")";
  }

 private:
  // Adds `delta` to `process`'s read count, keeping pairs sorted and counts positive.
  static bool adjust_reader(const State& s, int64_t process, int64_t delta, State& next) {
    next.assign(s, 0, 8);
    bool found = false;
    for (size_t i = 1; i + 1 < i64_count(s); i += 2) {
      int64_t p = read_i64(s, i), c = read_i64(s, i + 1);
      if (!found && p > process && delta > 0) {
        append_i64(next, process);
        append_i64(next, delta);
        found = true;
      }
      if (p == process) {
        found = true;
        c += delta;
        if (c == 0) continue;
      }
      append_i64(next, p);
      append_i64(next, c);
    }
    if (found) return true;
    if (delta < 0) return false;
    append_i64(next, process);
    append_i64(next, delta);
    return true;
  }
};

}  // namespace

std::unique_ptr<Model> make_mutex() { return std::make_unique<Mutex>(); }
std::unique_ptr<Model> make_reentrant_mutex() { return std::make_unique<ReentrantMutex>(); }
std::unique_ptr<Model> make_rw_lock() { return std::make_unique<RwLock>(); }

}  // namespace lockstep::checker::detail
