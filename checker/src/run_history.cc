#include "lockstep/checker/run_history.h"

#include <algorithm>

namespace lockstep::checker {

// The lock operations of a history, as the linearizability checker should see them.
// A process that crashed while holding the lock never releases it, yet its lease runs
// out: that is an `info` release from the crash on (it may take effect at any later
// point), which is exactly what a lease promises and no more. An operation it had under
// way when it crashed gets an `info` completion there (it may or may not have taken
// effect); an acquire cut short so is followed by the same open release, since if it
// took effect only the lease ends that hold. A client that comes back after a crash is a
// new process to the lock (as in Jepsen: process P's n-th life is P + n * kLifeStride),
// so that the open release of its old hold cannot end a hold of its new life.
// A client's own extend that did not succeed (the library said the lock is gone, or
// failed to say anything) ends its hold there: the client stops relying on the lock, as
// the libraries tell it to, so that is a release, and its later unlock of that hold is
// no operation on a lock it holds. If the extension did take effect, the keys it left
// keep everyone else out until they expire, so no overlap hides behind this release.
// Background renewals (threads above 0) are not the client's word.
void LockOperations::add(const Event& original) {
  const std::string& lock_key = lock_key_;
  if (original.type == EventType::Truth) {
    if (!f_is(original, truth::kCrash) || original.process < 0) return;
    crashed(original);
    return;
  }
  if (original.key != lock_key) return;
  Event e = original;
  if (auto life = lives_.find(e.process); life != lives_.end()) e.process += life->second * kLifeStride;
  if (f_is(e, "extend") && e.thread == 0) {
    auto it = holding_.find(e.process);
    const bool gave_up = e.type == EventType::Fail || e.type == EventType::Info;
    if (gave_up && it != holding_.end() && it->second.held) {
      Event release = e;
      release.f = it->second.release_f;
      release.thread = it->second.thread;
      release.value = "lost";
      release.type = EventType::Invoke;
      keep(release);
      release.type = EventType::Ok;
      keep(std::move(release));
      it->second.held = false;
      lost_.insert(e.process);
    }
    return;
  }
  if (!lost_.empty() && lost_.count(e.process)) {
    if (is_acquire(e.f)) lost_.erase(e.process);  // a new hold: its release counts
    if (is_release(e.f)) {
      if (e.type != EventType::Invoke) lost_.erase(e.process);
      return;
    }
  }
  if (!is_acquire(e.f) && !is_release(e.f)) return;
  if (e.type == EventType::Ok && is_acquire(e.f)) {
    Hold& hold = holding_[e.process];
    hold.held = true;
    hold.release_f.assign("release").append(e.f, 7, std::string::npos);
    hold.thread = e.thread;
  }
  if (e.type == EventType::Invoke && is_release(e.f)) {
    if (auto it = holding_.find(e.process); it != holding_.end()) it->second.held = false;
  }
  if (e.type == EventType::Invoke) {
    pending_[e.process] = out_.events.size();  // where keep puts it
  } else if (auto p = pending_.find(e.process); p != pending_.end()) {
    p->second = kNone;
  }
  keep(std::move(e));
}

void LockOperations::crashed(const Event& crash) {
  const int64_t client = crash.process;
  const int64_t process = client + (lives_.count(client) ? lives_[client] * kLifeStride : 0);
  auto open_release = [&](const std::string& release_f, int64_t thread) {
    Event release = crash;
    release.type = EventType::Invoke;
    release.process = process;
    release.f = release_f;
    release.thread = thread;
    release.key = lock_key_;
    release.value = nullptr;
    keep(std::move(release));
  };
  if (auto p = pending_.find(process); p != pending_.end() && p->second != kNone) {
    Event cut = out_.events[p->second];
    cut.type = EventType::Info;
    cut.time_ns = crash.time_ns;
    cut.value = nullptr;
    const bool acquire = is_acquire(cut.f);
    const std::string release_f = acquire ? "release" + cut.f.substr(7) : "";
    const int64_t thread = cut.thread;
    p->second = kNone;
    keep(std::move(cut));
    if (acquire) open_release(release_f, thread);
  }
  if (auto it = holding_.find(process); it != holding_.end() && it->second.held) {
    open_release(it->second.release_f, it->second.thread);
    it->second.held = false;
  }
  lost_.erase(process);
  ++lives_[client];
}

bool is_run_history(const History& h) {
  return std::any_of(h.events.begin(), h.events.end(), [](const Event& e) { return e.type == EventType::Truth; });
}

namespace {

void add_key(std::vector<std::string>& keys, const std::string& key) {
  if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
}

// The model a lock key's operations call for: a read-write lock has sides; a lock whose
// holder asks for it again while holding it is reentrant (a plain lock's clients never do).
std::string lock_model_of(const History& ops) {
  std::map<int64_t, int64_t> holds;  // process -> acquisitions without a release yet
  bool reentrant = false;
  for (const auto& e : ops.events) {
    if (e.f.find("-read") != std::string::npos || e.f.find("-write") != std::string::npos) return "rw-lock";
    if (is_acquire(e.f) && e.type == EventType::Invoke && holds[e.process] > 0) reentrant = true;
    if (is_acquire(e.f) && e.type == EventType::Ok) ++holds[e.process];
    if (is_release(e.f) && e.type != EventType::Invoke && holds[e.process] > 0) --holds[e.process];
  }
  return reentrant ? "reentrant-mutex" : "mutex";
}

}  // namespace

namespace {

// The resource's reads and writes: the stock's "read"/"write", a cache-aside database's
// "db-read"/"db-write" (its cache is left out: entries expire by TTL, no register does).
bool resource_f(const Event& e, bool& is_write) {
  is_write = f_is(e, "write") || f_is(e, "db-write");
  return is_write || f_is(e, "read") || f_is(e, "db-read");
}

}  // namespace

std::vector<HistoryPart> run_history_parts(const History& h) {
  std::vector<std::string> lock_keys, resource_keys;
  std::map<std::string, nlohmann::json> initial;  // resource key -> its value at the start
  for (const auto& e : h.events) {
    bool is_write = false;
    if (e.type == EventType::Truth) {
      if (f_is(e, truth::kResource) && e.value.is_object() && e.value.contains("initial")) initial[e.key] = e.value["initial"];
      continue;
    }
    if (is_acquire(e.f) || is_release(e.f)) add_key(lock_keys, e.key);
    if (resource_f(e, is_write)) add_key(resource_keys, e.key);
  }
  std::vector<HistoryPart> parts;
  for (const auto& key : lock_keys) {
    LockOperations drawn(key);
    for (const auto& e : h.events) drawn.add(e);
    HistoryPart p{"lock", key, "", drawn.take()};
    p.model = lock_model_of(p.ops);
    parts.push_back(std::move(p));
  }
  for (const auto& key : resource_keys) {
    HistoryPart p{"resource", key, "register", {}};
    std::vector<Event> ops;
    std::set<std::string> written;
    for (const auto& e : h.events) {
      bool is_write = false;
      if (e.type == EventType::Truth || e.key != key || !resource_f(e, is_write)) continue;
      Event op = e;
      op.f = is_write ? "write" : "read";
      // A write under a fencing token records {value, token}: the register holds the value.
      if (is_write && op.value.is_object() && op.value.contains("value")) op.value = nlohmann::json(op.value["value"]);
      if (is_write) written.insert(op.value.dump());
      ops.push_back(std::move(op));
    }
    // The value before any client ran: as the run recorded it, else the one a read
    // returned that no write wrote (a register can only have had it from the start).
    nlohmann::json start;
    if (auto it = initial.find(key); it != initial.end()) {
      start = it->second;
    } else {
      for (const auto& op : ops) {
        if (op.type == EventType::Ok && f_is(op, "read") && !written.count(op.value.dump())) {
          start = op.value;
          break;
        }
      }
    }
    Event seed;
    seed.process = 0;
    seed.f = "write";
    seed.key = key;
    seed.value = start;
    p.ops.events.push_back(seed);
    seed.type = EventType::Ok;
    p.ops.events.push_back(seed);
    for (auto& op : ops) p.ops.events.push_back(std::move(op));
    parts.push_back(std::move(p));
  }
  return parts;
}

}  // namespace lockstep::checker
