// LiveEnv and its connections: the Env interface over hiredis' async API on the run's
// libevent loop. hiredis callbacks only convert the reply and post it to the client;
// coroutines are resumed later from the loop, through LiveWorld::post, which is where a
// paused client's replies are held back and a crashed client's are dropped.
#include <hiredis/adapters/libevent.h>
#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <sys/time.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <optional>

#include "child_processes.h"
#include "lockstep/cluster_client.h"
#include "lockstep/cluster_slot.h"
#include "lockstep/live/live_world.h"
#include "lockstep/zookeeper.h"

namespace lockstep::live {
namespace {

// Completed by whichever comes first: the reply or the caller's timeout.
struct CallState {
  explicit CallState(EventLoop& l) : loop(l) {}
  EventLoop& loop;
  EventLoop::TimerId timer = 0;
  bool done = false;
  Reply reply;
  std::coroutine_handle<> waiter;

  void finish(Reply r) {
    if (done) return;
    done = true;
    reply = std::move(r);
    if (timer) loop.cancel(std::exchange(timer, 0));
    if (waiter) std::exchange(waiter, {}).resume();
  }
};

// Holds a plain pointer and has no destructor on purpose: GCC 12 can destroy a co_await
// temporary twice, which would drop an owning pointer's count twice. The awaiting frame
// keeps the state alive in a named local; a frame destroyed while waiting (crash, end of
// run) is never resumed because its client's epoch has moved on.
struct CallAwaiter {
  CallState* st;
  bool await_ready() const noexcept { return st->done; }
  void await_suspend(std::coroutine_handle<> h) noexcept { st->waiter = h; }
  Reply await_resume() { return std::move(st->reply); }
};

// Arms the caller's timeout: it reaches the client like any other event (held while the
// client is paused), so a reply that arrived during a pause still wins.
void arm_timeout(LiveWorld& world, int client, const std::shared_ptr<CallState>& st, Nanos timeout) {
  const uint64_t epoch = world.epoch(client);
  LiveWorld* w = &world;
  st->timer = world.loop().after(timeout, [w, client, epoch, weak = std::weak_ptr<CallState>(st)] {
    auto s = weak.lock();
    if (!s) return;
    s->timer = 0;
    w->post(client, epoch, [s] { s->finish(Reply::timeout()); });
  });
}

// A hiredis context and whether it is still alive: hiredis frees a context by itself
// when the connection fails, and tells us through the connect/disconnect callbacks.
struct Link {
  redisAsyncContext* ctx = nullptr;
  uint64_t generation = 0;
  std::string last_error;
};

void on_connect(const redisAsyncContext* ac, int status) {
  if (status == REDIS_OK) return;
  auto* link = static_cast<Link*>(ac->data);
  if (!link) return;
  link->last_error = ac->errstr ? ac->errstr : "connect failed";
  link->ctx = nullptr;  // hiredis frees it after this callback
}

void on_disconnect(const redisAsyncContext* ac, int) {
  auto* link = static_cast<Link*>(ac->data);
  if (!link) return;
  if (ac->err && ac->errstr) link->last_error = ac->errstr;
  link->ctx = nullptr;
}

std::string open_link(Link& link, const NodeAddress& a, event_base* base) {
  redisAsyncContext* ctx = redisAsyncConnect(a.host.c_str(), a.port);
  if (!ctx) return "cannot allocate a connection";
  if (ctx->err) {
    std::string why = ctx->errstr;
    redisAsyncFree(ctx);
    return why;
  }
  children::close_on_exec(ctx->c.fd);
  ctx->data = &link;
  redisLibeventAttach(ctx, base);
  redisAsyncSetConnectCallback(ctx, on_connect);
  redisAsyncSetDisconnectCallback(ctx, on_disconnect);
  link.ctx = ctx;
  return "";
}

// Writes what hiredis has buffered now rather than on the next loop turn, when the
// socket would be reported writable: one poll less per command, which is most of a
// round trip's overhead on loopback. Before the connection is up, hiredis keeps waiting
// for it as usual. A failed write disconnects, and hiredis then calls back every command
// in flight with a null reply (an I/O error), from inside this call.
void flush(Link& link) {
  if (link.ctx && (link.ctx->c.flags & REDIS_CONNECTED)) redisAsyncHandleWrite(link.ctx);
}

void close_link(Link& link) {
  if (!link.ctx) return;
  redisAsyncContext* ctx = std::exchange(link.ctx, nullptr);
  // Calls back every command in flight with a null reply (they fail as I/O errors).
  redisAsyncFree(ctx);
}

std::string io_reason(const redisAsyncContext* ac, const Link* link) {
  if (ac && ac->err && ac->errstr) return ac->errstr;
  if (link && !link->last_error.empty()) return link->last_error;
  return "connection lost";
}

// What rides along with a command through hiredis; freed by the reply callback, which
// hiredis calls exactly once per command (with a null reply if the connection went).
struct Sent {
  LiveWorld* world;
  int client;
  int node;
  uint64_t epoch;
  std::shared_ptr<CallState> st;
  std::vector<std::string> argv;
};

void on_reply(redisAsyncContext* ac, void* r, void* privdata) {
  std::unique_ptr<Sent> sent(static_cast<Sent*>(privdata));
  Reply reply = r ? reply_from_hiredis(r) : Reply::io_error(io_reason(ac, static_cast<Link*>(ac->data)));
  LiveWorld& w = *sent->world;
  if (w.closing()) return;
  if (r && w.on_command) w.on_command(CommandNote{sent->client, sent->node, &sent->argv, &reply});
  w.post(sent->client, sent->epoch, [st = std::move(sent->st), reply = std::move(reply)]() mutable {
    st->finish(std::move(reply));
  });
}

std::string send_argv(redisAsyncContext* ctx, redisCallbackFn* fn, void* privdata,
                      const std::vector<std::string>& argv) {
  std::vector<const char*> ptrs;
  std::vector<size_t> lens;
  for (const auto& a : argv) {
    ptrs.push_back(a.data());
    lens.push_back(a.size());
  }
  if (redisAsyncCommandArgv(ctx, fn, privdata, static_cast<int>(argv.size()), ptrs.data(), lens.data()) != REDIS_OK)
    return ctx->errstr ? ctx->errstr : "cannot send";
  return "";
}

// Messages for one subscription, apart from the Subscription object so that a delivery
// posted before it was destroyed finds a mailbox rather than freed memory.
struct Mailbox {
  std::deque<Message> queue;
  std::shared_ptr<CallState> waiter;  // next() or the subscribe confirmation
  bool confirmed = false;
};

struct SubTarget {
  LiveWorld* world;
  int client;
  uint64_t epoch;
  std::shared_ptr<Mailbox> box;
};

void on_pubsub(redisAsyncContext*, void* r, void* privdata) {
  auto* t = static_cast<SubTarget*>(privdata);
  if (!r || t->world->closing()) return;
  Reply reply = reply_from_hiredis(r);
  if (reply.type != Reply::Type::Array || reply.elements.size() < 3) return;
  const std::string kind = reply.elements[0].str;
  auto box = t->box;
  if (kind == "subscribe") {
    t->world->post(t->client, t->epoch, [box] {
      box->confirmed = true;
      if (box->waiter) box->waiter->finish(Reply::ok());
    });
  } else if (kind == "message") {
    Message m{false, reply.elements[1].str, reply.elements[2].str};
    t->world->post(t->client, t->epoch, [box, m = std::move(m)] {
      if (box->waiter && !box->waiter->done) {
        Reply as_reply = Reply::bulk(m.channel);
        as_reply.elements.push_back(Reply::bulk(m.payload));
        box->waiter->finish(std::move(as_reply));
      } else {
        box->queue.push_back(m);
      }
    });
  }
}

class LiveSubscription : public Subscription {
 public:
  LiveSubscription(LiveWorld& world, int client) : world_(world), client_(client), box_(std::make_shared<Mailbox>()) {
    target_ = std::make_unique<SubTarget>(SubTarget{&world, client, world.epoch(client), box_});
  }
  ~LiveSubscription() override {
    close_link(link_);  // hiredis calls on_pubsub with null first: target_ is still alive
  }

  std::string open(int node, const std::string& channel) {
    const NodeAddress a = world_.route ? world_.route(client_, node, world_.node_address(node)) : world_.node_address(node);
    if (auto err = open_link(link_, a, world_.loop().base()); !err.empty()) return err;
    std::vector<std::string> argv{"SUBSCRIBE", channel};
    return send_argv(link_.ctx, on_pubsub, target_.get(), argv);
  }

  Task<void> confirmed(Nanos timeout) {
    if (box_->confirmed) co_return;
    box_->waiter = std::make_shared<CallState>(world_.loop());
    arm_timeout(world_, client_, box_->waiter, timeout);
    auto st = box_->waiter;
    co_await CallAwaiter{st.get()};
    box_->waiter.reset();
  }

  Task<Message> next(Nanos timeout) override {
    if (!box_->queue.empty()) {
      Message m = std::move(box_->queue.front());
      box_->queue.pop_front();
      co_return m;
    }
    auto st = std::make_shared<CallState>(world_.loop());
    box_->waiter = st;
    arm_timeout(world_, client_, st, timeout);
    Reply r = co_await CallAwaiter{st.get()};
    box_->waiter.reset();
    if (r.type != Reply::Type::Bulk) co_return Message{true, {}, {}};
    co_return Message{false, r.str, r.elements.empty() ? std::string() : r.elements[0].str};
  }

 private:
  LiveWorld& world_;
  int client_;
  std::shared_ptr<Mailbox> box_;
  std::unique_ptr<SubTarget> target_;
  Link link_;
};

class LiveConnection : public Connection {
 public:
  // To logical node `node` wherever it is now, or, with `server`, to that server alone
  // (a cluster member, which the cluster itself moves between roles).
  LiveConnection(LiveWorld& world, int client, int node, std::optional<NodeAddress> server = std::nullopt)
      : world_(world), client_(client), node_(node), fixed_(std::move(server)) {}
  ~LiveConnection() override { close_link(link_); }

  Task<Reply> call(std::vector<std::string> argv, Nanos timeout) override {
    auto st = issue(std::move(argv), timeout);
    Reply r = co_await CallAwaiter{st.get()};
    co_return r;
  }

  Task<std::unique_ptr<Subscription>> subscribe(std::string channel) override {
    // Like Redisson, a subscription has a connection of its own: a subscribed
    // connection cannot send ordinary commands.
    auto sub = std::make_unique<LiveSubscription>(world_, client_);
    if (sub->open(node_, channel).empty()) co_await sub->confirmed(Nanos(1'000'000'000));
    co_return sub;
  }

  void close() { close_link(link_); }

 private:
  std::shared_ptr<CallState> issue(std::vector<std::string> argv, Nanos timeout) {
    auto st = std::make_shared<CallState>(world_.loop());
    auto* sent = new Sent{&world_, client_, node_, world_.epoch(client_), st, std::move(argv)};
    arm_timeout(world_, client_, st, timeout);
    if (world_.on_command && world_.on_command(CommandNote{client_, node_, &sent->argv, nullptr})) {
      // Dropped with the client's incarnation if a fault crashes it first; `this` lives
      // as long as that incarnation.
      auto held = std::make_shared<std::unique_ptr<Sent>>(sent);
      world_.post(client_, sent->epoch, [this, held] { transmit(held->release()); });
    } else {
      transmit(sent);
    }
    return st;
  }

  // Connects if needed and writes the command; any failure completes the call with an
  // I/O error.
  void transmit(Sent* sent) {
    std::shared_ptr<CallState> st = sent->st;
    if (link_.ctx && !fixed_ && link_.generation != world_.node_generation(node_)) close_link(link_);
    if (!link_.ctx) {
      link_.last_error.clear();
      link_.generation = world_.node_generation(node_);
      const NodeAddress& server = fixed_ ? *fixed_ : world_.node_address(node_);
      const NodeAddress a = world_.route ? world_.route(client_, node_, server) : server;
      if (auto err = open_link(link_, a, world_.loop().base()); !err.empty()) {
        delete sent;
        st->finish(Reply::io_error(err));
        return;
      }
    }
    if (auto err = send_argv(link_.ctx, on_reply, sent, sent->argv); !err.empty()) {
      delete sent;
      st->finish(Reply::io_error(err));
      return;
    }
    flush(link_);  // `sent` may be gone after this: a failed write calls back at once
  }

  LiveWorld& world_;
  int client_;
  int node_;
  std::optional<NodeAddress> fixed_;
  Link link_;
};

// A cluster client's connection: ClusterRouter (shared with the simulator) decides where
// each command goes; it goes over a connection of this client's to that member, through
// the fault proxy like any other. Members are named in replies by their announced
// address, which is translated back to the member here.
class LiveClusterConnection : public Connection, private ClusterRouter {
 public:
  LiveClusterConnection(LiveWorld& world, int client)
      : ClusterRouter(seeds(world)), world_(world), client_(client) {
    for (const auto& m : world.cluster_members())
      members_.push_back(std::make_unique<LiveConnection>(world, client, m.node, m.server));
  }

  Task<Reply> call(std::vector<std::string> argv, Nanos timeout) override {
    co_return co_await ClusterRouter::call(std::move(argv), timeout);
  }

  // Messages of a channel come from the logical node serving its slot, which follows its
  // shard's master after a failover (as in the simulator).
  Task<std::unique_ptr<Subscription>> subscribe(std::string channel) override {
    LiveConnection c(world_, client_, slot_master(world_.node_count(), key_hash_slot(channel)));
    co_return co_await c.subscribe(std::move(channel));
  }

 private:
  static std::vector<int> seeds(LiveWorld& world) {
    std::vector<int> out;
    for (size_t i = 0; i < world.cluster_members().size(); ++i) out.push_back(static_cast<int>(i));
    return out;
  }

  int64_t now_ns() override { return mono_clock().count(); }

  int find(const std::string& host, int64_t port) override {
    const auto& members = world_.cluster_members();
    for (size_t i = 0; i < members.size(); ++i) {
      const auto& m = members[i];
      if (m.announced.port == port && (m.announced.host == host || m.server.host == host)) return static_cast<int>(i);
    }
    return -1;
  }

  Task<Reply> send(int member, std::vector<std::string> argv, int64_t deadline_ns) override {
    const Nanos left(std::max<int64_t>(deadline_ns - now_ns(), 0));
    co_return co_await members_[static_cast<size_t>(member)]->call(std::move(argv), left);
  }

  LiveWorld& world_;
  int client_;
  std::vector<std::unique_ptr<LiveConnection>> members_;
};

// As CallAwaiter: nothing owning in the awaiter itself. The timer owns the wake-up.
struct SleepAwaiter {
  LiveWorld& world;
  int client;
  Nanos d;
  bool await_ready() const noexcept { return false; }
  void await_suspend(std::coroutine_handle<> h) {
    LiveWorld* w = &world;
    const int c = client;
    const uint64_t epoch = world.epoch(client);
    world.loop().after(d, [w, c, epoch, h] { w->post(c, epoch, [h] { h.resume(); }); });
  }
  void await_resume() const noexcept {}
};

}  // namespace

Reply reply_from_hiredis(const void* p) {
  const auto* r = static_cast<const redisReply*>(p);
  switch (r->type) {
    case REDIS_REPLY_STATUS: return Reply::status(std::string(r->str, r->len));
    case REDIS_REPLY_ERROR: return Reply::error(std::string(r->str, r->len));
    case REDIS_REPLY_INTEGER: return Reply::integer_of(r->integer);
    case REDIS_REPLY_STRING: return Reply::bulk(std::string(r->str, r->len));
    case REDIS_REPLY_NIL: return Reply::nil();
    case REDIS_REPLY_ARRAY: {
      std::vector<Reply> elements;
      elements.reserve(r->elements);
      for (size_t i = 0; i < r->elements; ++i) elements.push_back(reply_from_hiredis(r->element[i]));
      return Reply::array(std::move(elements));
    }
    default: return Reply::error("LOCKSTEP unknown reply type " + std::to_string(r->type));
  }
}

Reply sync_command(const NodeAddress& address, const std::vector<std::string>& argv, Nanos timeout) {
  const int64_t us = std::max<int64_t>(timeout.count() / 1000, 1000);
  timeval tv{static_cast<time_t>(us / 1'000'000), static_cast<suseconds_t>(us % 1'000'000)};
  redisContext* c = redisConnectWithTimeout(address.host.c_str(), address.port, tv);
  if (!c) return Reply::io_error("cannot allocate a connection");
  if (c->err) {
    Reply out = Reply::io_error(c->errstr);
    redisFree(c);
    return out;
  }
  children::close_on_exec(c->fd);
  redisSetTimeout(c, tv);
  std::vector<const char*> ptrs;
  std::vector<size_t> lens;
  for (const auto& a : argv) {
    ptrs.push_back(a.data());
    lens.push_back(a.size());
  }
  void* r = redisCommandArgv(c, static_cast<int>(argv.size()), ptrs.data(), lens.data());
  Reply out;
  if (r) {
    out = reply_from_hiredis(r);
    freeReplyObject(r);
  } else if (c->err == REDIS_ERR_IO && (errno == EAGAIN || errno == EWOULDBLOCK)) {
    out = Reply::timeout();
  } else {
    out = Reply::io_error(c->errstr);
  }
  redisFree(c);
  return out;
}

LiveEnv::LiveEnv(LiveWorld& world, int client) : world_(world), client_(client) {}
LiveEnv::~LiveEnv() = default;

Nanos LiveEnv::now_wall() { return wall_clock() + world_.wall_offset(client_) + world_.drift(client_, mono_clock()); }
Nanos LiveEnv::now_mono() {
  const Nanos now = mono_clock();
  return now + world_.drift(client_, now);
}

Task<void> LiveEnv::sleep(Nanos d) {
  co_await SleepAwaiter{world_, client_, std::max(d, Nanos(0))};
}

void LiveEnv::spawn(Task<void> t) { world_.spawn(client_, std::move(t)); }
uint64_t LiveEnv::random() { return world_.clients_[client_]->rng.next(); }
int LiveEnv::node_count() const { return world_.cluster_client(client_) ? 1 : world_.node_count(); }

Connection& LiveEnv::node(int index) {
  if (world_.cluster_client(client_)) {
    if (!cluster_connection_) cluster_connection_ = std::make_unique<LiveClusterConnection>(world_, client_);
    return *cluster_connection_;
  }
  // Nodes added after this client was created get connections lazily.
  while (static_cast<int>(connections_.size()) < world_.node_count()) {
    connections_.push_back(std::make_unique<LiveConnection>(world_, client_, static_cast<int>(connections_.size())));
  }
  return *connections_[index];
}

std::string LiveEnv::process_name() const { return world_.client_name(client_); }

ZooKeeper* LiveEnv::zookeeper() {
  if (!world_.zk_connect) return nullptr;
  if (!zookeeper_) zookeeper_ = make_live_zookeeper(world_, client_);
  return zookeeper_.get();
}

void LiveEnv::close_connections() {
  connections_.clear();
  cluster_connection_.reset();
  zookeeper_.reset();
}

void LiveEnv::close_node(int node) {
  if (node < static_cast<int>(connections_.size())) static_cast<LiveConnection&>(*connections_[node]).close();
}

}  // namespace lockstep::live
