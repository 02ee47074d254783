#include "lockstep/live/fault_proxy.h"

#include <arpa/inet.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/listener.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <deque>
#include <utility>

#include "lockstep/live/resp_frame.h"

namespace lockstep::live {

struct FaultProxy::Link {
  FaultProxy* proxy = nullptr;
  LinkSpec spec;
  NodeAddress address;
  evconnlistener* listener = nullptr;
  ~Link() {
    if (listener) evconnlistener_free(listener);
  }
};

namespace {

// Many small writes: Nagle would add delays of its own.
void set_nodelay(bufferevent* bev) {
  const int fd = static_cast<int>(bufferevent_getfd(bev));
  const int one = 1;
  if (fd >= 0) setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

std::string take_input(bufferevent* bev) {
  evbuffer* in = bufferevent_get_input(bev);
  std::string bytes(evbuffer_get_length(in), '\0');
  evbuffer_remove(in, bytes.data(), bytes.size());
  return bytes;
}

bool subscribes(const std::vector<std::string>& argv) {
  if (argv.empty()) return false;
  std::string name = argv[0];
  for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name == "subscribe" || name == "psubscribe" || name == "ssubscribe";
}

}  // namespace

// One accepted connection and its two directions.
struct FaultProxy::Pipe {
  struct Chunk {
    Nanos due;
    std::string bytes;
    std::vector<std::string> argv;  // a command: observed when it leaves
    bool lagging = false;           // still buffered at the server: no network delay drawn
  };
  struct Direction {
    bool request = true;  // client -> server
    std::string partial;  // bytes of a message not complete yet
    std::deque<Chunk> queue;
    std::deque<Chunk> gated;  // held by the process's gate; no delay drawn yet
    EventLoop::TimerId timer = 0;
    Nanos last_due{0};
    Nanos last_lag_due{0};
  };

  FaultProxy* proxy = nullptr;
  Link* link = nullptr;
  std::string from;  // the connecting process: the link's, or the one its address names
  uint64_t id = 0;
  bufferevent* down = nullptr;  // the connecting process
  bufferevent* up = nullptr;    // the server
  Direction req, rep;
  std::deque<std::pair<std::vector<std::string>, Nanos>> awaiting;  // forwarded, not yet answered
  bool subscribed = false;
  bool desynced = false;
  bool closing = false;  // the server went: close once what it had sent is delivered

  ~Pipe() {
    for (Direction* d : {&req, &rep}) {
      if (d->timer) proxy->loop_.cancel(d->timer);
    }
    if (up) bufferevent_free(up);
    if (down) bufferevent_free(down);
  }

  const std::string& source(const Direction& d) const { return d.request ? from : link->spec.to; }
  const std::string& target(const Direction& d) const { return d.request ? link->spec.to : from; }
  bool resp() const { return link->spec.framing == Framing::Resp; }

  // A byte stream waits while cut or while its server is paused; RESP messages were
  // judged when they came in.
  bool stalled(const Direction& d) const {
    if (resp()) return false;
    if (proxy->blocked(source(d), target(d)) || proxy->frozen_.count(from) > 0) return true;
    auto it = proxy->held_from_.find(link->spec.to);
    return !d.request && it != proxy->held_from_.end() && it->second;
  }

  void enqueue(Direction& d, std::string bytes, std::vector<std::string> argv) {
    if (!d.request && link->spec.lag > Nanos(0)) {
      // The server's stream is buffered for the lag first, as the simulator's master
      // buffers it; the network delay is the one in force when it leaves (depart).
      const Nanos due = std::max(proxy->loop_.now() + link->spec.lag, d.last_lag_due);
      d.last_lag_due = due;
      d.queue.push_back({due, std::move(bytes), std::move(argv), true});
    } else {
      d.queue.push_back({depart(d), std::move(bytes), std::move(argv)});
    }
    flush(d);
  }

  Nanos depart(Direction& d) {
    const Nanos due = std::max(proxy->loop_.now() + proxy->delay_between(source(d), target(d)), d.last_due);
    d.last_due = due;
    return due;
  }

  void flush(Direction& d) {
    if (d.timer) proxy->loop_.cancel(std::exchange(d.timer, 0));
    const Nanos now = proxy->loop_.now();
    bufferevent* out = d.request ? up : down;
    while (out && !d.queue.empty() && d.queue.front().due <= now && !stalled(d)) {
      Chunk& c = d.queue.front();
      if (c.lagging) {
        c.lagging = false;
        c.due = depart(d);
        if (c.due > now) break;
      }
      bufferevent_write(out, c.bytes.data(), c.bytes.size());
      if (d.request && resp()) forwarded(std::move(c.argv), now);
      if (!d.request && resp() && proxy->on_delivered) proxy->on_delivered(from);
      d.queue.pop_front();
    }
    if (d.queue.empty() && closing && !d.request) {
      FaultProxy* p = proxy;
      const uint64_t pipe_id = id;
      proxy->loop_.defer([p, pipe_id] { p->close_pipe(pipe_id, true); });
      return;
    }
    if (d.queue.empty() || stalled(d)) return;
    FaultProxy* p = proxy;
    const uint64_t pipe_id = id;
    const bool request = d.request;
    d.timer = proxy->loop_.after(d.queue.front().due - now, [p, pipe_id, request] {
      auto it = p->pipes_.find(pipe_id);
      if (it == p->pipes_.end()) return;
      Pipe& pipe = *it->second;
      Direction& dir = request ? pipe.req : pipe.rep;
      dir.timer = 0;
      pipe.flush(dir);
    });
  }

  void forwarded(std::vector<std::string> argv, Nanos now) {
    if (subscribes(argv)) subscribed = true;
    if (proxy->on_message) {
      ProxyMessage m{&link->spec.from, &link->spec.to, link->spec.node, &argv, nullptr, now};
      proxy->on_message(m);
    }
    if (!subscribed) awaiting.push_back({std::move(argv), now});
  }

  // Cuts whole messages out of what arrived; bytes that are not RESP pass as they come.
  void arrived(Direction& d, std::string bytes) {
    if (!resp()) {
      enqueue(d, std::move(bytes), {});
      return;
    }
    d.partial += bytes;
    while (!d.partial.empty()) {
      auto len = resp_message_length(d.partial);
      if (!len) return;
      if (*len == 0) len = d.partial.size();
      std::string message = d.partial.substr(0, *len);
      d.partial.erase(0, *len);
      if (d.request) {
        request(std::move(message));
      } else {
        reply(std::move(message));
      }
    }
  }

  void request(std::string message) {
    if (proxy->blocked(link->spec.from, link->spec.to)) {
      lost();
      return;
    }
    std::vector<std::string> argv = resp_command(message);
    if (gated(req, message, argv, nullptr)) return;
    enqueue(req, std::move(message), std::move(argv));
  }

  // Shows the message to on_arrival; keeps it back while the process's gate is closed.
  bool gated(Direction& d, std::string& message, std::vector<std::string>& argv, const Reply* reply) {
    const std::string& process = link->spec.from;
    if (proxy->on_arrival) {
      ProxyMessage m{&link->spec.from, &link->spec.to, link->spec.node, argv.empty() ? nullptr : &argv, reply,
                     proxy->loop_.now()};
      if (proxy->on_arrival(m)) ++proxy->gates_[process];
    }
    auto it = proxy->gates_.find(process);
    if (it == proxy->gates_.end() && d.gated.empty()) return false;
    d.gated.push_back({Nanos(0), std::move(message), d.request ? std::move(argv) : std::vector<std::string>{}});
    return true;
  }

  // The gate opened: what it held goes on as if it had just arrived.
  void ungate() {
    for (Direction* d : {&req, &rep}) {
      auto held = std::move(d->gated);
      d->gated.clear();
      for (auto& c : held) enqueue(*d, std::move(c.bytes), std::move(c.argv));
    }
  }

  // The server answered: the truth is what it did, whether or not the answer arrives.
  void reply(std::string message) {
    std::vector<std::string> argv;
    Nanos sent{0};
    if (!subscribed && !awaiting.empty()) {
      argv = std::move(awaiting.front().first);
      sent = awaiting.front().second;
      awaiting.pop_front();
    }
    if (proxy->on_message) {
      const Reply r = resp_reply(message);
      ProxyMessage m{&link->spec.from, &link->spec.to, link->spec.node, argv.empty() ? nullptr : &argv, &r, sent};
      proxy->on_message(m);
    }
    if (proxy->blocked(link->spec.to, link->spec.from)) {
      lost();
      return;
    }
    if (const Reply r = resp_reply(message); gated(rep, message, argv, &r)) return;
    enqueue(rep, std::move(message), {});
  }

  void lost() {
    ++proxy->dropped_messages_;
    desynced = true;
  }

  static void on_down_read(bufferevent* bev, void* arg) {
    auto* p = static_cast<Pipe*>(arg);
    p->arrived(p->req, take_input(bev));
  }

  static void on_up_read(bufferevent* bev, void* arg) {
    auto* p = static_cast<Pipe*>(arg);
    p->arrived(p->rep, take_input(bev));
  }

  static void on_up_event(bufferevent*, short events, void* arg) {
    auto* p = static_cast<Pipe*>(arg);
    if (events & BEV_EVENT_CONNECTED) {
      set_nodelay(p->up);
      return;
    }
    if (events & (BEV_EVENT_EOF | BEV_EVENT_ERROR)) p->proxy->close_pipe(p->id, true);
  }

  static void on_down_event(bufferevent*, short events, void* arg) {
    auto* p = static_cast<Pipe*>(arg);
    if (events & (BEV_EVENT_EOF | BEV_EVENT_ERROR)) p->proxy->close_pipe(p->id, false);
  }

  // What was already due when the server went is still delivered, then the connecting
  // side sees the link close.
  static void on_down_drained(bufferevent*, void* arg) {
    auto* p = static_cast<Pipe*>(arg);
    p->proxy->pipes_.erase(p->id);
  }
};

FaultProxy::FaultProxy(EventLoop& loop, uint64_t seed) : loop_(loop), rng_(seed, "network") {}

FaultProxy::~FaultProxy() {
  pipes_.clear();
  links_.clear();
}

std::string FaultProxy::route(const LinkSpec& spec, NodeAddress& out) {
  for (const auto& l : links_) {
    if (l->spec.from == spec.from && l->spec.to == spec.to && l->spec.upstream.port == spec.upstream.port &&
        l->spec.node == spec.node) {
      out = l->address;
      return "";
    }
  }
  auto link = std::make_unique<Link>();
  link->proxy = this;
  link->spec = spec;
  // A server's port is picked free before the server binds it, so the kernel may hand the
  // same port to a listener here first. A link listening on its own upstream would connect
  // to itself on every accept, without end, until the process runs out of descriptors;
  // one listening on another link's upstream would take that server's port. Such a port
  // is held while another is asked for, then given back to its server.
  const auto reserved = [&](int port) {
    if (port == spec.upstream.port) return true;
    for (const auto& l : links_)
      if (l->spec.upstream.port == port) return true;
    return false;
  };
  std::vector<evconnlistener*> held;
  sockaddr_in a{};
  constexpr size_t kTries = 16;
  for (size_t attempt = 0; attempt < kTries; ++attempt) {
    a = {};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    // The kernel picks a free port: never a fixed one, except the one a test offers first.
    const int offered = attempt == 0 ? std::exchange(offered_port_, 0) : 0;
    a.sin_port = htons(static_cast<uint16_t>(offered));
    link->listener = evconnlistener_new_bind(loop_.base(), &FaultProxy::on_accept, link.get(),
                                             LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, 64,
                                             reinterpret_cast<sockaddr*>(&a), sizeof a);
    if (!link->listener && offered != 0) continue;  // taken meanwhile: as if never offered
    if (!link->listener) break;
    socklen_t len = sizeof a;
    if (getsockname(static_cast<int>(evconnlistener_get_fd(link->listener)), reinterpret_cast<sockaddr*>(&a), &len) != 0) {
      evconnlistener_free(std::exchange(link->listener, nullptr));
      break;
    }
    if (!reserved(ntohs(a.sin_port))) break;
    // Disabled at once: nothing may be accepted on a port that belongs to a server.
    evconnlistener_disable(link->listener);
    held.push_back(std::exchange(link->listener, nullptr));
  }
  const bool crowded = held.size() == kTries;  // every port offered was a server's
  for (auto* l : held) evconnlistener_free(l);
  if (crowded) return "cannot find a port for the fault proxy apart from its servers' ports";
  if (!link->listener) return "cannot listen on 127.0.0.1 for the fault proxy";
  link->address = NodeAddress{"127.0.0.1", ntohs(a.sin_port)};
  out = link->address;
  links_.push_back(std::move(link));
  return "";
}

void FaultProxy::on_accept(evconnlistener*, int fd, sockaddr* peer, int, void* arg) {
  auto* link = static_cast<Link*>(arg);
  FaultProxy* self = link->proxy;
  event_base* base = self->loop_.base();
  auto p = std::make_unique<Pipe>();
  p->proxy = self;
  p->link = link;
  p->from = link->spec.from;
  if (peer && peer->sa_family == AF_INET && !self->source_names_.empty()) {
    char host[INET_ADDRSTRLEN] = {};
    if (inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(peer)->sin_addr, host, sizeof host)) {
      if (auto it = self->source_names_.find(host); it != self->source_names_.end()) p->from = it->second;
    }
  }
  p->id = self->next_pipe_++;
  p->rep.request = false;
  p->down = bufferevent_socket_new(base, fd, BEV_OPT_CLOSE_ON_FREE);
  // libevent would open the upstream socket without close-on-exec; a client started
  // later would inherit lockstep's own connection to the server.
  const int up_fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  p->up = up_fd < 0 ? nullptr : bufferevent_socket_new(base, up_fd, BEV_OPT_CLOSE_ON_FREE);
  if (up_fd >= 0 && !p->up) close(up_fd);
  if (!p->down || !p->up) return;  // ~Pipe closes what was opened
  set_nodelay(p->down);
  bufferevent_setcb(p->down, &Pipe::on_down_read, nullptr, &Pipe::on_down_event, p.get());
  bufferevent_setcb(p->up, &Pipe::on_up_read, nullptr, &Pipe::on_up_event, p.get());
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(static_cast<uint16_t>(link->spec.upstream.port));
  if (inet_pton(AF_INET, link->spec.upstream.host.c_str(), &to.sin_addr) != 1) return;
  // Refused at once (the server is down): the connecting side sees its link fail.
  if (bufferevent_socket_connect(p->up, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0) return;
  bufferevent_enable(p->down, EV_READ | EV_WRITE);
  bufferevent_enable(p->up, EV_READ | EV_WRITE);
  const uint64_t id = p->id;
  self->pipes_.emplace(id, std::move(p));
}

Nanos FaultProxy::delay_between(const std::string& a, const std::string& b) {
  auto get = [](const std::map<std::string, Nanos>& m, const std::string& k) {
    auto it = m.find(k);
    return it == m.end() ? Nanos(0) : it->second;
  };
  Nanos d = Nanos(latency_.draw(rng_)) + get(delay_, a) + get(delay_, b);
  const Nanos jitter = get(jitter_, a) + get(jitter_, b);
  if (jitter > Nanos(0)) d += Nanos(rng_.between(0, jitter.count()));
  return std::max(d, Nanos(0));
}

bool FaultProxy::blocked(const std::string& from, const std::string& to) const {
  return blocked_.count({from, to}) > 0;
}

void FaultProxy::add_delay(const std::string& process, Nanos d) { delay_[process] += d; }
void FaultProxy::add_jitter(const std::string& process, Nanos d) { jitter_[process] += d; }

void FaultProxy::block(const std::string& from, const std::string& to, int delta) {
  int& n = blocked_[{from, to}];
  n += delta;
  if (n > 0) return;
  blocked_.erase({from, to});
  heal();
}

void FaultProxy::release(const std::string& process) {
  auto it = gates_.find(process);
  if (it == gates_.end() || --it->second > 0) return;
  gates_.erase(it);
  for (auto& [id, pipe] : pipes_) {
    if (pipe->link->spec.from == process) pipe->ungate();
  }
}

// A reply dropped here leaves its connection unable to pair the rest: it is reset, as
// after a partition, once the gate is open.
void FaultProxy::drop(const std::string& process) {
  gates_.erase(process);
  std::vector<uint64_t> reset;
  for (auto& [id, pipe] : pipes_) {
    if (pipe->link->spec.from != process) continue;
    dropped_messages_ += static_cast<int64_t>(pipe->req.gated.size() + pipe->rep.gated.size());
    if (!pipe->rep.gated.empty()) reset.push_back(id);
    pipe->req.gated.clear();
    pipe->rep.gated.clear();
  }
  for (uint64_t id : reset) pipes_.erase(id);
}

void FaultProxy::hold_from(const std::string& server, bool on) {
  held_from_[server] = on;
  if (!on) heal();
}

void FaultProxy::freeze(const std::string& process, int delta) {
  int& n = frozen_[process];
  n += delta;
  if (n > 0) return;
  frozen_.erase(process);
  heal();
}

void FaultProxy::sever(const std::string& process) {
  std::vector<uint64_t> gone;
  for (auto& [id, pipe] : pipes_) {
    if (pipe->from == process && !pipe->resp()) gone.push_back(id);
  }
  for (uint64_t id : gone) pipes_.erase(id);
}

// Held bytes move on; a client link that lost a message while cut is reset once no cut
// touches it any more.
void FaultProxy::heal() {
  std::vector<uint64_t> reset;
  for (auto& [id, pipe] : pipes_) {
    pipe->flush(pipe->req);
    pipe->flush(pipe->rep);
    const auto& s = pipe->link->spec;
    if (pipe->desynced && !blocked(s.from, s.to) && !blocked(s.to, s.from)) reset.push_back(id);
  }
  for (uint64_t id : reset) pipes_.erase(id);
}

void FaultProxy::close_pipe(uint64_t id, bool upstream_closed) {
  auto it = pipes_.find(id);
  if (it == pipes_.end()) return;
  Pipe& p = *it->second;
  if (!upstream_closed) {  // the connecting side went: nothing left to deliver
    pipes_.erase(it);
    return;
  }
  if (p.up) {
    bufferevent_free(std::exchange(p.up, nullptr));
    p.req.queue.clear();  // commands for a server that is gone
    if (!p.resp() && !p.link->spec.keep_on_close) {
      // A replication stream still held in the lag dies with its master.
      for (const auto& c : p.rep.queue) dropped_bytes_ += static_cast<int64_t>(c.bytes.size());
      p.rep.queue.clear();
      if (p.rep.timer) loop_.cancel(std::exchange(p.rep.timer, 0));
    }
  }
  if (!p.rep.queue.empty()) {
    // Replies the server sent before it went were on their way: they still arrive.
    p.closing = true;
    return;
  }
  // What was already written still reaches the connecting side, then it sees the close.
  if (p.down && evbuffer_get_length(bufferevent_get_output(p.down)) > 0) {
    bufferevent_setcb(p.down, nullptr, &Pipe::on_down_drained, &Pipe::on_down_event, &p);
    return;
  }
  pipes_.erase(it);
}

}  // namespace lockstep::live
