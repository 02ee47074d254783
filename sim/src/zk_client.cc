// A client's session with the simulated ensemble, behaving as ZooKeeper's own client
// library does underneath Curator and kazoo: one connection to one server at a time; a
// ping after a third of the session timeout of silence; nothing heard for two thirds of
// it (the read timeout) and the connection counts as lost (Suspended), every call in
// flight fails with ConnectionLoss and the client tries the next server at once, which
// either resumes the session (its watches set again) or says it expired.
//
// Calls build their requests as named locals before co_await: GCC 12 may destroy a
// temporary of a co_await expression twice.
#include <coroutine>
#include <optional>

#include "zk_internal.h"

namespace lockstep::sim {
namespace {

// One call waiting for its answer or its timeout, whichever comes first.
struct Waiter {
  bool done = false;
  ZkAnswer answer;
  std::coroutine_handle<> handle;
  Scheduler* scheduler = nullptr;
  Scheduler::EventId timeout;

  void finish(ZkAnswer a) {
    if (done) return;
    done = true;
    if (scheduler) scheduler->cancel(timeout);
    answer = std::move(a);
    if (handle) std::exchange(handle, {}).resume();
  }
};

// Holds a raw pointer for the reason PendingAwaiter does (world_internal.h).
struct WaiterAwaiter {
  Waiter* w;
  bool await_ready() const noexcept { return w->done; }
  void await_suspend(std::coroutine_handle<> h) noexcept { w->handle = h; }
  void await_resume() const noexcept {}
};

class SimZkWatch : public ZkWatch {
 public:
  SimZkWatch(World& world, int pid, std::string path, bool existed)
      : world_(world), pid_(pid), path_(std::move(path)), existed_(existed) {}

  Task<ZkEvent> wait(Nanos timeout) override {
    if (event_) co_return *event_;
    auto w = std::make_shared<Waiter>();
    waiter_ = w;
    w->scheduler = &world_.scheduler();
    w->timeout = world_.post(pid_, world_.now() + std::max<int64_t>(timeout.count(), 0),
                             [w] { w->finish(ZkAnswer{.error = ZkError::ConnectionLoss}); });
    co_await WaiterAwaiter{w.get()};
    waiter_.reset();
    co_return event_ ? *event_ : ZkEvent::TimedOut;
  }

  void fire(ZkEvent e) {
    if (event_) return;
    event_ = e;
    if (auto w = waiter_.lock()) w->finish(ZkAnswer{});
  }

  const std::string& path() const { return path_; }
  bool existed() const { return existed_; }

 private:
  World& world_;
  int pid_;
  std::string path_;
  bool existed_;
  std::optional<ZkEvent> event_;
  std::weak_ptr<Waiter> waiter_;
};

class SimZooKeeper : public ZooKeeper, public ZkClientCore, public std::enable_shared_from_this<SimZooKeeper> {
 public:
  SimZooKeeper(World& world, ZkEnsemble::Impl& ensemble, int pid)
      : world_(world), ensemble_(ensemble), pid_(pid), rng_(world.seed(), world.process(pid).name + "/zookeeper") {
    server_ = static_cast<int>(rng_.next() % static_cast<uint64_t>(zk_server_count(ensemble)));
  }

  Task<ZkCreated> create(std::string path, std::string data, ZkCreateMode mode) override {
    ZkOp op{.kind = ZkOp::Kind::Create, .path = std::move(path), .data = std::move(data), .mode = mode};
    ZkAnswer a = co_await request(std::move(op));
    co_return ZkCreated{a.error, a.path, a.czxid};
  }

  Task<ZkError> remove(std::string path, int32_t version) override {
    ZkOp op{.kind = ZkOp::Kind::Remove, .path = std::move(path), .version = version};
    ZkAnswer a = co_await request(std::move(op));
    co_return a.error;
  }

  Task<ZkChildren> get_children(std::string path) override {
    ZkOp op{.kind = ZkOp::Kind::Children, .path = std::move(path)};
    ZkAnswer a = co_await request(std::move(op));
    co_return ZkChildren{a.error, std::move(a.children)};
  }

  Task<ZkExists> exists(std::string path, bool watch) override {
    const uint64_t id = watch ? ++next_watch_ : 0;
    ZkOp op{.kind = ZkOp::Kind::Exists, .path = path, .watch_id = id};
    ZkAnswer a = co_await request(std::move(op));
    ZkExists out{a.error, a.exists, a.stat, nullptr};
    if (watch && a.error == ZkError::Ok) {
      auto w = std::make_shared<SimZkWatch>(world_, pid_, std::move(path), a.exists);
      watches_.emplace(id, w);
      out.watch = std::move(w);
    }
    co_return out;
  }

  ZkState state() const override { return state_; }
  int64_t session_id() const override { return session_; }
  Nanos session_timeout() const override { return Nanos(timeout_ns_); }

  void answer(const ZkAnswer& a) override {
    last_heard_ns_ = world_.now();
    auto it = pending_.find(a.xid);
    if (it != pending_.end()) it->second->finish(ZkAnswer(a));
  }

  void watch_fired(uint64_t id, ZkEvent e) override {
    last_heard_ns_ = world_.now();
    auto it = watches_.find(id);
    if (it == watches_.end()) return;
    auto w = it->second;
    watches_.erase(it);
    w->fire(e);
  }

  void closed(bool expired) override {
    if (expired) expire();
    else suspend();
  }

 private:
  int64_t read_timeout_ns() const { return timeout_ns_ * 2 / 3; }
  int64_t connect_timeout_ns() const { return timeout_ns_ / zk_server_count(ensemble_); }
  void next_server() { server_ = (server_ + 1) % zk_server_count(ensemble_); }

  void send(const ZkOp& op) {
    const int index = server_;
    const int server = zk_server_pid(ensemble_, index);
    ZkClientLink link{pid_, world_.process(pid_).epoch, weak_from_this()};
    zk_send(world_, pid_, server, world_.process(server).epoch,
            [e = &ensemble_, index, link, op] { zk_handle(*e, index, link, op); });
  }

  // Sends one request to the current server and waits for its answer.
  Task<ZkAnswer> call(ZkOp op, int64_t timeout_ns) {
    op.xid = ++next_xid_;
    op.session = session_;
    auto w = std::make_shared<Waiter>();
    pending_.emplace(op.xid, w);
    w->scheduler = &world_.scheduler();
    w->timeout = world_.post(pid_, world_.now() + timeout_ns, [w] {
      w->finish(ZkAnswer{.error = ZkError::ConnectionLoss});
    });
    send(op);
    const uint64_t xid = op.xid;
    co_await WaiterAwaiter{w.get()};
    pending_.erase(xid);
    co_return w->answer;
  }

  // An operation: on a live connection, or after opening a new session when there is
  // none (the first call, or after an expiry).
  Task<ZkAnswer> request(ZkOp op) {
    if (state_ == ZkState::Connecting || state_ == ZkState::Expired) co_await open_session();
    if (state_ != ZkState::Connected) {
      co_return ZkAnswer{.error = state_ == ZkState::Expired ? ZkError::SessionExpired : ZkError::ConnectionLoss};
    }
    ZkAnswer a = co_await call(std::move(op), read_timeout_ns());
    if (a.error == ZkError::ConnectionLoss) suspend();
    if (a.error == ZkError::SessionExpired) expire();
    co_return a;
  }

  // Tries each server once for a new session (bounded: one attempt per server).
  Task<void> open_session() {
    if (opening_) co_return;
    opening_ = true;
    timeout_ns_ = zk_session_timeout_ns(ensemble_);
    for (int tries = 0; tries < zk_server_count(ensemble_) && state_ != ZkState::Connected; ++tries) {
      ZkOp op{.kind = ZkOp::Kind::Connect, .timeout_ns = timeout_ns_};
      ZkAnswer a = co_await call(std::move(op), connect_timeout_ns());
      if (a.error == ZkError::Ok && a.session != 0) {
        session_ = a.session;
        timeout_ns_ = a.timeout_ns;
        last_heard_ns_ = world_.now();
        set_state(ZkState::Connected);
        world_.env(pid_).spawn(heartbeat(shared_from_this(), ++generation_));
      } else {
        next_server();
      }
    }
    opening_ = false;
  }

  // Keeps the session alive while connected and looks for a server while suspended. Ends
  // with the session (a new session starts its own); every turn waits (a sleep, or a
  // call with its timeout), so it is bounded by the run.
  static Task<void> heartbeat(std::shared_ptr<SimZooKeeper> self, uint64_t generation) {
    Env& env = self->world_.env(self->pid_);
    while (self->generation_ == generation && self->state_ != ZkState::Expired) {
      if (self->state_ == ZkState::Suspended) {
        // At once, as the client library does: each try waits for its own timeout.
        co_await self->reconnect(generation);
        continue;
      }
      co_await env.sleep(Nanos(self->timeout_ns_ / 3));
      if (self->generation_ != generation || self->state_ != ZkState::Connected) continue;
      // The connection is dead once nothing has come for the read timeout.
      const int64_t left_ns = self->read_timeout_ns() - (self->world_.now() - self->last_heard_ns_);
      if (left_ns <= 0) {
        self->suspend();
        continue;
      }
      ZkOp ping{.kind = ZkOp::Kind::Ping};
      ZkAnswer a = co_await self->call(std::move(ping), left_ns);
      if (self->generation_ != generation) break;
      if (a.error == ZkError::SessionExpired) self->expire();
      if (a.error == ZkError::ConnectionLoss) self->suspend();
    }
  }

  // Tries the next server with this session: resumed (its watches set there again), or
  // told it expired.
  Task<void> reconnect(uint64_t generation) {
    next_server();
    ZkOp op{.kind = ZkOp::Kind::Connect, .timeout_ns = timeout_ns_};
    ZkAnswer a = co_await call(std::move(op), connect_timeout_ns());
    if (generation_ != generation || state_ != ZkState::Suspended) co_return;
    if (a.error == ZkError::SessionExpired) {
      expire();
    } else if (a.error == ZkError::Ok) {
      last_heard_ns_ = world_.now();
      set_state(ZkState::Connected);
      for (const auto& [id, w] : watches_) {
        ZkOp set{.kind = ZkOp::Kind::SetWatch, .xid = ++next_xid_, .session = session_, .path = w->path(),
                 .watch_id = id, .existed = w->existed()};
        send(set);
      }
    }
  }

  void suspend() {
    if (state_ != ZkState::Connected) return;
    set_state(ZkState::Suspended);
    fail_pending(ZkError::ConnectionLoss);
  }

  void expire() {
    if (state_ == ZkState::Expired) return;
    session_ = 0;
    ++generation_;
    set_state(ZkState::Expired);
    fail_pending(ZkError::SessionExpired);
    auto fired = std::move(watches_);
    watches_.clear();
    for (auto& [id, w] : fired) w->fire(ZkEvent::SessionExpired);
  }

  void fail_pending(ZkError e) {
    auto pending = pending_;  // finishing resumes callers, which erase their entries
    for (auto& [xid, w] : pending) w->finish(ZkAnswer{.xid = xid, .error = e});
  }

  void set_state(ZkState s) {
    state_ = s;
    if (on_state) on_state(s);
  }

  World& world_;
  ZkEnsemble::Impl& ensemble_;
  int pid_;
  Rng rng_;
  int server_ = 0;
  ZkState state_ = ZkState::Connecting;
  int64_t session_ = 0;
  int64_t timeout_ns_ = 0;
  int64_t last_heard_ns_ = 0;
  uint64_t next_xid_ = 0;
  uint64_t next_watch_ = 0;
  uint64_t generation_ = 0;
  bool opening_ = false;
  std::map<uint64_t, std::shared_ptr<Waiter>> pending_;
  std::map<uint64_t, std::shared_ptr<SimZkWatch>> watches_;
};

}  // namespace

std::shared_ptr<ZooKeeper> make_sim_zookeeper(World& world, ZkEnsemble::Impl& ensemble, int client_pid) {
  return std::make_shared<SimZooKeeper>(world, ensemble, client_pid);
}

}  // namespace lockstep::sim
