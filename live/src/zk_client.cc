// Env::zookeeper() in the live world: a session with the real ensemble over ZooKeeper's C
// client (libzookeeper-mt), presented as the simulator's client presents its own.
//
// Threads: the C client runs an I/O thread and a completion thread of its own. Its
// callbacks only copy the answer into plain values and post it through the loop's inbox;
// on the loop's thread it goes to the client through LiveWorld::post, so a paused
// client's answers and events are held back and a crashed client's dropped, as hiredis
// replies are. A paused client's ZooKeeper links are also frozen in the fault proxy (the
// runner's pause does it), so its heartbeats stop as a stopped process's would.
//
// States, as zookeeper.h describes them: Connecting until the first session is
// established; Connected; Suspended when the C client lost its server (it then tries the
// others by itself, and in-flight calls fail with ConnectionLoss); Expired when a server
// said so, after which the next operation opens a new session. An operation while
// Suspended fails at once with ConnectionLoss, as the simulator's client does.
//
// Closing a session handle blocks (it waits for the server to confirm), so handles are
// closed on threads of their own, joined by join_zookeeper_closers().
#include <zookeeper/zookeeper.h>

#include <algorithm>
#include <atomic>
#include <coroutine>
#include <cstdio>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "lockstep/live/live_world.h"
#include "lockstep/zookeeper.h"

namespace lockstep::live {
namespace {

// The C client logs every refused connection to stderr; a fault does that on purpose.
void quiet_c_client() {
  static std::once_flag once;
  std::call_once(once, [] {
    static FILE* null = std::fopen("/dev/null", "w");
    if (null) zoo_set_log_stream(null);
    zoo_set_debug_level(ZOO_LOG_LEVEL_ERROR);
  });
}

struct ZkClosers {
  std::mutex mu;
  std::vector<std::thread> threads;
  std::atomic<int> running{0};
};
ZkClosers& closers() {
  static ZkClosers c;
  return c;
}

ZkError error_of(int rc) {
  if (rc == ZOK) return ZkError::Ok;
  if (rc == ZNONODE) return ZkError::NoNode;
  if (rc == ZNODEEXISTS) return ZkError::NodeExists;
  if (rc == ZBADVERSION) return ZkError::BadVersion;
  if (rc == ZNOTEMPTY) return ZkError::NotEmpty;
  if (rc == ZSESSIONEXPIRED || rc == ZINVALIDSTATE) return ZkError::SessionExpired;
  return ZkError::ConnectionLoss;  // connection loss, timeouts, a closing handle
}

ZkStat stat_of(const Stat* s) {
  if (!s) return {};
  return ZkStat{s->czxid, s->mzxid, s->version, s->ephemeralOwner};
}

// What a callback hands to the loop: everything any operation answers.
struct ZkAnswerOf {
  ZkError error = ZkError::Ok;
  std::string path;
  std::vector<std::string> names;
  bool exists = false;
  ZkStat stat;
};

// An answer that is only its error (or Ok).
ZkAnswerOf failed(ZkError e) {
  ZkAnswerOf a;
  a.error = e;
  return a;
}

class LiveZooKeeper;

// The way back from the C client's threads to the client's coroutines; shared by every
// callback context so that it outlives them all.
struct ZkBridge {
  std::shared_ptr<Inbox> inbox;
  LiveWorld* world = nullptr;
  int client = 0;
  uint64_t epoch = 0;
  std::weak_ptr<LiveZooKeeper> owner;

  template <typename F>
  void post(F fn);
};

// One session handle and the watch contexts it was given; freed together once the
// handle is closed and can call nothing any more.
struct ZkHandle;

struct ZkWatchCtx {
  std::shared_ptr<ZkBridge> bridge;
  ZkHandle* handle = nullptr;
  uint64_t id = 0;
};

struct ZkHandle {
  zhandle_t* zh = nullptr;
  uint64_t generation = 0;
  std::shared_ptr<ZkBridge> bridge;
  std::mutex mu;
  std::vector<std::unique_ptr<ZkWatchCtx>> watches;
};

struct ZkPending {
  std::shared_ptr<ZkBridge> bridge;
  uint64_t id = 0;
};

// One call waiting for its answer or its timeout, whichever comes first.
struct ZkWaiter {
  explicit ZkWaiter(EventLoop& l) : loop(l) {}
  EventLoop& loop;
  EventLoop::TimerId timer = 0;
  bool done = false;
  ZkAnswerOf answer;
  std::coroutine_handle<> handle;

  void finish(ZkAnswerOf a) {
    if (done) return;
    done = true;
    answer = std::move(a);
    if (timer) loop.cancel(std::exchange(timer, 0));
    if (handle) std::exchange(handle, {}).resume();
  }
};

// A plain pointer for the reason live_env.cc's CallAwaiter gives.
struct ZkWaiterAwaiter {
  ZkWaiter* w;
  bool await_ready() const noexcept { return w->done; }
  void await_suspend(std::coroutine_handle<> h) noexcept { w->handle = h; }
  void await_resume() const noexcept {}
};

class LiveZkWatch : public ZkWatch {
 public:
  LiveZkWatch(LiveWorld& world, int client) : world_(world), client_(client) {}

  Task<ZkEvent> wait(Nanos timeout) override {
    if (event_) co_return *event_;
    auto w = std::make_shared<ZkWaiter>(world_.loop());
    waiter_ = w;
    arm(w, timeout);
    co_await ZkWaiterAwaiter{w.get()};
    waiter_.reset();
    co_return event_ ? *event_ : ZkEvent::TimedOut;
  }

  void fire(ZkEvent e) {
    if (event_) return;
    event_ = e;
    if (auto w = waiter_.lock()) w->finish(ZkAnswerOf{});
  }

  void arm(const std::shared_ptr<ZkWaiter>& w, Nanos timeout) {
    LiveWorld* world = &world_;
    const int client = client_;
    const uint64_t epoch = world_.epoch(client_);
    w->timer = world_.loop().after(std::max(timeout, Nanos(0)), [world, client, epoch, weak = std::weak_ptr<ZkWaiter>(w)] {
      auto s = weak.lock();
      if (!s) return;
      s->timer = 0;
      world->post(client, epoch, [s] { s->finish(failed(ZkError::ConnectionLoss)); });
    });
  }

 private:
  LiveWorld& world_;
  int client_;
  std::optional<ZkEvent> event_;
  std::weak_ptr<ZkWaiter> waiter_;
};

class LiveZooKeeper : public ZooKeeper, public std::enable_shared_from_this<LiveZooKeeper> {
 public:
  LiveZooKeeper(LiveWorld& world, int client) : world_(world), client_(client) {}
  ~LiveZooKeeper() override { close_handle(); }

  Task<ZkCreated> create(std::string path, std::string data, ZkCreateMode mode) override {
    const int flags = mode.ephemeral ? (mode.sequential ? ZOO_EPHEMERAL_SEQUENTIAL : ZOO_EPHEMERAL)
                                     : (mode.sequential ? ZOO_PERSISTENT_SEQUENTIAL : ZOO_PERSISTENT);
    auto send = [path = std::move(path), data = std::move(data), flags](zhandle_t* zh, void* ctx) {
      return zoo_acreate2(zh, path.c_str(), data.data(), static_cast<int>(data.size()), &ZOO_OPEN_ACL_UNSAFE, flags,
                          &LiveZooKeeper::on_created, ctx);
    };
    ZkAnswerOf a = co_await request(std::move(send));
    co_return ZkCreated{a.error, a.path, a.stat.czxid};
  }

  Task<ZkError> remove(std::string path, int32_t version) override {
    auto send = [path = std::move(path), version](zhandle_t* zh, void* ctx) {
      return zoo_adelete(zh, path.c_str(), version, &LiveZooKeeper::on_void, ctx);
    };
    ZkAnswerOf a = co_await request(std::move(send));
    co_return a.error;
  }

  Task<ZkChildren> get_children(std::string path) override {
    auto send = [path = std::move(path)](zhandle_t* zh, void* ctx) {
      return zoo_aget_children(zh, path.c_str(), 0, &LiveZooKeeper::on_children, ctx);
    };
    ZkAnswerOf a = co_await request(std::move(send));
    co_return ZkChildren{a.error, std::move(a.names)};
  }

  Task<ZkExists> exists(std::string path, bool watch) override {
    std::shared_ptr<LiveZkWatch> w;
    uint64_t watch_id = 0;
    auto send = [this, path = std::move(path), watch, &w, &watch_id](zhandle_t* zh, void* ctx) {
      if (!watch) return zoo_awexists(zh, path.c_str(), nullptr, nullptr, &LiveZooKeeper::on_stat, ctx);
      watch_id = ++next_watch_;
      ZkWatchCtx* wc = nullptr;
      {
        std::lock_guard<std::mutex> lock(handle_->mu);
        handle_->watches.push_back(std::make_unique<ZkWatchCtx>(ZkWatchCtx{handle_->bridge, handle_.get(), watch_id}));
        wc = handle_->watches.back().get();
      }
      w = std::make_shared<LiveZkWatch>(world_, client_);
      watches_.emplace(watch_id, w);
      return zoo_awexists(zh, path.c_str(), &LiveZooKeeper::on_watch, wc, &LiveZooKeeper::on_stat, ctx);
    };
    ZkAnswerOf a = co_await request(std::move(send));
    ZkExists out{a.error, a.exists, a.stat, nullptr};
    if (watch && a.error == ZkError::Ok) {
      out.watch = w;
    } else if (watch_id) {
      watches_.erase(watch_id);
    }
    co_return out;
  }

  ZkState state() const override { return state_; }
  int64_t session_id() const override { return session_; }
  Nanos session_timeout() const override { return timeout_; }

  // On the loop's thread, in the client's turn.
  void answered(uint64_t id, ZkAnswerOf a) {
    auto it = pending_.find(id);
    if (it != pending_.end()) it->second->finish(std::move(a));
  }

  void watch_fired(uint64_t id, ZkEvent e) {
    auto it = watches_.find(id);
    if (it == watches_.end()) return;
    auto w = it->second;
    watches_.erase(it);
    w->fire(e);
  }

  void session_event(uint64_t generation, int state, int64_t session, Nanos timeout) {
    if (!handle_ || handle_->generation != generation) return;  // an older session's news
    if (state == ZOO_CONNECTED_STATE) {
      session_ = session;
      timeout_ = timeout;
      set_state(ZkState::Connected);
      if (connect_waiter_) connect_waiter_->finish(ZkAnswerOf{});
    } else if (state == ZOO_EXPIRED_SESSION_STATE || state == ZOO_AUTH_FAILED_STATE) {
      expire();
    } else if (state_ == ZkState::Connected) {
      set_state(ZkState::Suspended);
      fail_pending(ZkError::ConnectionLoss);
    }
  }

 private:
  Nanos read_timeout() const { return timeout_ * 2 / 3; }

  static void post_answer(const void* data, ZkAnswerOf a) {
    std::unique_ptr<ZkPending> p(static_cast<ZkPending*>(const_cast<void*>(data)));
    const uint64_t id = p->id;
    p->bridge->post([id, a = std::move(a)](LiveZooKeeper& zk) mutable { zk.answered(id, std::move(a)); });
  }

  static void on_created(int rc, const char* path, const Stat* stat, const void* data) {
    ZkAnswerOf a = failed(error_of(rc));
    if (rc == ZOK && path) a.path = path;
    if (rc == ZOK) a.stat = stat_of(stat);
    post_answer(data, std::move(a));
  }

  static void on_void(int rc, const void* data) { post_answer(data, failed(error_of(rc))); }

  static void on_children(int rc, const String_vector* names, const void* data) {
    ZkAnswerOf a = failed(error_of(rc));
    if (rc == ZOK && names) {
      for (int32_t i = 0; i < names->count; ++i) a.names.emplace_back(names->data[i]);
      std::sort(a.names.begin(), a.names.end());  // the server's order is its hash set's
    }
    post_answer(data, std::move(a));
  }

  static void on_stat(int rc, const Stat* stat, const void* data) {
    ZkAnswerOf a;
    if (rc == ZNONODE) {
      a.exists = false;  // not an error: the watch waits for its creation
    } else {
      a.error = error_of(rc);
      a.exists = rc == ZOK;
      if (rc == ZOK) a.stat = stat_of(stat);
    }
    post_answer(data, std::move(a));
  }

  static void on_watch(zhandle_t*, int type, int state, const char*, void* ctx) {
    auto* wc = static_cast<ZkWatchCtx*>(ctx);
    ZkEvent e;
    if (type == ZOO_SESSION_EVENT) {
      // Every watch hears every session event; only the end of the session ends it.
      if (state != ZOO_EXPIRED_SESSION_STATE) return;
      e = ZkEvent::SessionExpired;
    } else if (type == ZOO_CREATED_EVENT) {
      e = ZkEvent::Created;
    } else if (type == ZOO_DELETED_EVENT) {
      e = ZkEvent::Deleted;
    } else {
      e = ZkEvent::Changed;
    }
    const uint64_t id = wc->id;
    wc->bridge->post([id, e](LiveZooKeeper& zk) { zk.watch_fired(id, e); });
  }

  static void on_session(zhandle_t* zh, int type, int state, const char*, void* ctx) {
    if (type != ZOO_SESSION_EVENT) return;
    auto* h = static_cast<ZkHandle*>(ctx);
    int64_t session = 0;
    Nanos timeout{0};
    if (state == ZOO_CONNECTED_STATE) {
      if (const clientid_t* id = zoo_client_id(zh)) session = id->client_id;
      timeout = Millis(zoo_recv_timeout(zh));
    }
    const uint64_t generation = h->generation;
    h->bridge->post([generation, state, session, timeout](LiveZooKeeper& zk) {
      zk.session_event(generation, state, session, timeout);
    });
  }

  // Opens a new session, waiting for it at most the session timeout.
  Task<void> open_session() {
    close_handle();
    quiet_c_client();
    const std::string hosts = world_.zk_connect ? world_.zk_connect(client_) : std::string();
    if (hosts.empty()) co_return;
    auto bridge = std::make_shared<ZkBridge>(
        ZkBridge{world_.loop().inbox(), &world_, client_, world_.epoch(client_), weak_from_this()});
    handle_ = std::make_shared<ZkHandle>();
    handle_->generation = ++generation_;
    handle_->bridge = bridge;
    timeout_ = world_.zk_session_timeout;
    handle_->zh = zookeeper_init(hosts.c_str(), &LiveZooKeeper::on_session, static_cast<int>(to_ms(timeout_)), nullptr,
                                 handle_.get(), 0);
    if (!handle_->zh) {
      handle_.reset();
      co_return;
    }
    auto w = std::make_shared<ZkWaiter>(world_.loop());
    connect_waiter_ = w;
    arm(w, world_.zk_session_timeout);
    co_await ZkWaiterAwaiter{w.get()};
    connect_waiter_.reset();
    if (state_ != ZkState::Connected) close_handle();  // never established: try afresh next time
  }

  // An operation: on a live connection, or after opening a new session when there is
  // none (the first call, or after an expiry).
  template <typename Send>
  Task<ZkAnswerOf> request(Send send) {
    if (state_ == ZkState::Connecting || state_ == ZkState::Expired) co_await open_session();
    if (state_ != ZkState::Connected || !handle_) {
      co_return failed(state_ == ZkState::Expired ? ZkError::SessionExpired : ZkError::ConnectionLoss);
    }
    const uint64_t id = ++next_id_;
    auto w = std::make_shared<ZkWaiter>(world_.loop());
    pending_.emplace(id, w);
    arm(w, read_timeout());
    auto* p = new ZkPending{handle_->bridge, id};
    if (const int rc = send(handle_->zh, p); rc != ZOK) {
      delete p;
      w->finish(failed(error_of(rc)));
    }
    co_await ZkWaiterAwaiter{w.get()};
    pending_.erase(id);
    co_return w->answer;
  }

  void arm(const std::shared_ptr<ZkWaiter>& w, Nanos timeout) {
    LiveWorld* world = &world_;
    const int client = client_;
    const uint64_t epoch = world_.epoch(client_);
    w->timer = world_.loop().after(std::max(timeout, Nanos(0)), [world, client, epoch, weak = std::weak_ptr<ZkWaiter>(w)] {
      auto s = weak.lock();
      if (!s) return;
      s->timer = 0;
      world->post(client, epoch, [s] { s->finish(failed(ZkError::ConnectionLoss)); });
    });
  }

  void expire() {
    if (state_ == ZkState::Expired) return;
    session_ = 0;
    set_state(ZkState::Expired);
    fail_pending(ZkError::SessionExpired);
    auto fired = std::move(watches_);
    watches_.clear();
    for (auto& [id, w] : fired) w->fire(ZkEvent::SessionExpired);
    close_handle();
  }

  void fail_pending(ZkError e) {
    auto pending = pending_;  // finishing resumes callers, which erase their entries
    for (auto& [id, w] : pending) w->finish(failed(e));
  }

  void set_state(ZkState s) {
    state_ = s;
    if (on_state) on_state(s);
  }

  // Hands the handle to a thread of its own: closing waits for the server.
  void close_handle() {
    if (!handle_) return;
    std::shared_ptr<ZkHandle> h = std::move(handle_);
    handle_.reset();
    if (!h->zh) return;
    ZkClosers& c = closers();
    std::lock_guard<std::mutex> lock(c.mu);
    ++c.running;
    c.threads.emplace_back([h] {
      zookeeper_close(h->zh);
      h->zh = nullptr;
      --closers().running;
    });
  }

  LiveWorld& world_;
  int client_;
  ZkState state_ = ZkState::Connecting;
  int64_t session_ = 0;
  Nanos timeout_{0};
  uint64_t generation_ = 0;
  uint64_t next_id_ = 0;
  uint64_t next_watch_ = 0;
  std::shared_ptr<ZkHandle> handle_;
  std::shared_ptr<ZkWaiter> connect_waiter_;
  std::map<uint64_t, std::shared_ptr<ZkWaiter>> pending_;
  std::map<uint64_t, std::shared_ptr<LiveZkWatch>> watches_;
};

template <typename F>
void ZkBridge::post(F fn) {
  // The world is alive whenever its loop runs, and the loop is the only one to run this.
  inbox->post([keep = owner, world = world, client = client, epoch = epoch, fn = std::move(fn)]() mutable {
    world->post(client, epoch, [keep, fn = std::move(fn)]() mutable {
      if (auto zk = keep.lock()) fn(*zk);
    });
  });
}

}  // namespace

std::shared_ptr<ZooKeeper> make_live_zookeeper(LiveWorld& world, int client) {
  return std::make_shared<LiveZooKeeper>(world, client);
}

bool zookeeper_closers_running() { return closers().running.load() > 0; }

void join_zookeeper_closers() {
  std::vector<std::thread> threads;
  {
    std::lock_guard<std::mutex> lock(closers().mu);
    threads.swap(closers().threads);
  }
  for (auto& t : threads) t.join();
}

}  // namespace lockstep::live
