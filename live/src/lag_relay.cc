#include "lockstep/live/lag_relay.h"

#include <arpa/inet.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/listener.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <deque>
#include <utility>

namespace lockstep::live {

struct LagRelay::Pair {
  struct Chunk {
    Nanos due;
    std::string bytes;
  };

  LagRelay* relay = nullptr;
  uint64_t id = 0;
  bufferevent* down = nullptr;  // the replica
  bufferevent* up = nullptr;    // the master
  std::deque<Chunk> held;       // from the master, not yet due
  EventLoop::TimerId timer = 0;

  ~Pair() {
    if (timer) relay->loop_.cancel(timer);
    if (up) bufferevent_free(up);
    if (down) bufferevent_free(down);
  }

  // Passes on every chunk that is due and waits for the next one.
  void flush() {
    timer = 0;
    if (relay->held_) return;
    const Nanos now = relay->loop_.now();
    while (!held.empty() && held.front().due <= now) {
      bufferevent_write(down, held.front().bytes.data(), held.front().bytes.size());
      held.pop_front();
    }
    arm();
  }

  void arm() {
    if (timer || held.empty() || relay->held_) return;
    LagRelay* r = relay;
    const uint64_t pair_id = id;
    timer = relay->loop_.after(held.front().due - relay->loop_.now(), [r, pair_id] {
      if (auto it = r->pairs_.find(pair_id); it != r->pairs_.end()) it->second->flush();
    });
  }

  static void on_up_read(bufferevent* bev, void* arg) {
    auto* p = static_cast<Pair*>(arg);
    evbuffer* in = bufferevent_get_input(bev);
    std::string bytes(evbuffer_get_length(in), '\0');
    evbuffer_remove(in, bytes.data(), bytes.size());
    p->held.push_back({p->relay->loop_.now() + p->relay->lag_, std::move(bytes)});
    p->arm();
  }

  static void on_down_read(bufferevent* bev, void* arg) {
    auto* p = static_cast<Pair*>(arg);
    bufferevent_write_buffer(p->up, bufferevent_get_input(bev));
  }

  static void on_up_event(bufferevent*, short events, void* arg) {
    auto* p = static_cast<Pair*>(arg);
    if (events & BEV_EVENT_CONNECTED) {
      set_nodelay(p->up);
      return;
    }
    if (events & (BEV_EVENT_EOF | BEV_EVENT_ERROR)) p->relay->close_pair(p->id, true);
  }

  static void on_down_event(bufferevent*, short events, void* arg) {
    auto* p = static_cast<Pair*>(arg);
    if (events & (BEV_EVENT_EOF | BEV_EVENT_ERROR)) p->relay->close_pair(p->id, false);
  }

  // What was already due when the master went is still delivered, then the replica
  // sees the link close.
  static void on_down_drained(bufferevent*, void* arg) {
    auto* p = static_cast<Pair*>(arg);
    p->relay->close_pair(p->id, false);
  }

  // Replication is many small writes; Nagle would add delays of its own on top of the lag.
  static void set_nodelay(bufferevent* bev) {
    const int fd = static_cast<int>(bufferevent_getfd(bev));
    const int one = 1;
    if (fd >= 0) setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
};

LagRelay::LagRelay(EventLoop& loop, NodeAddress upstream, Nanos lag)
    : loop_(loop), upstream_(std::move(upstream)), lag_(lag) {}

LagRelay::~LagRelay() {
  pairs_.clear();
  if (listener_) evconnlistener_free(listener_);
}

std::string LagRelay::start() {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;  // the kernel picks a free port: never a fixed one
  listener_ = evconnlistener_new_bind(loop_.base(), &LagRelay::on_accept, this,
                                      LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, 16,
                                      reinterpret_cast<sockaddr*>(&a), sizeof a);
  if (!listener_) return "cannot listen on 127.0.0.1 for the replication relay";
  socklen_t len = sizeof a;
  if (getsockname(static_cast<int>(evconnlistener_get_fd(listener_)), reinterpret_cast<sockaddr*>(&a), &len) != 0)
    return "cannot read the replication relay's port";
  port_ = ntohs(a.sin_port);
  return "";
}

void LagRelay::on_accept(evconnlistener*, int fd, sockaddr*, int, void* arg) {
  auto* self = static_cast<LagRelay*>(arg);
  event_base* base = self->loop_.base();
  auto p = std::make_unique<Pair>();
  p->relay = self;
  p->id = self->next_id_++;
  p->down = bufferevent_socket_new(base, fd, BEV_OPT_CLOSE_ON_FREE);
  p->up = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
  if (!p->down || !p->up) return;  // ~Pair closes what was opened
  Pair::set_nodelay(p->down);
  bufferevent_setcb(p->down, &Pair::on_down_read, nullptr, &Pair::on_down_event, p.get());
  bufferevent_setcb(p->up, &Pair::on_up_read, nullptr, &Pair::on_up_event, p.get());
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(static_cast<uint16_t>(self->upstream_.port));
  if (inet_pton(AF_INET, self->upstream_.host.c_str(), &to.sin_addr) != 1) return;
  // Refused at once (the master is down): the replica sees its link fail and retries.
  if (bufferevent_socket_connect(p->up, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0) return;
  bufferevent_enable(p->down, EV_READ | EV_WRITE);
  bufferevent_enable(p->up, EV_READ | EV_WRITE);
  const uint64_t id = p->id;
  self->pairs_.emplace(id, std::move(p));
}

void LagRelay::hold(bool on) {
  held_ = on;
  if (on) return;
  for (auto& [id, pair] : pairs_) {
    if (!pair->timer && pair->up) pair->flush();
  }
}

void LagRelay::close_pair(uint64_t id, bool upstream_closed) {
  auto it = pairs_.find(id);
  if (it == pairs_.end()) return;
  Pair& p = *it->second;
  if (upstream_closed && p.up) {
    for (const auto& c : p.held) dropped_bytes_ += static_cast<int64_t>(c.bytes.size());
    p.held.clear();
    if (p.timer) loop_.cancel(std::exchange(p.timer, 0));
    bufferevent_free(std::exchange(p.up, nullptr));
    if (evbuffer_get_length(bufferevent_get_output(p.down)) > 0) {
      bufferevent_setcb(p.down, nullptr, &Pair::on_down_drained, &Pair::on_down_event, &p);
      return;
    }
  }
  pairs_.erase(it);
}

}  // namespace lockstep::live
