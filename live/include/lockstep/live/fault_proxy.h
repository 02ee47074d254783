// The FaultProxy gives the live world the simulator's network. Every connection a client
// makes to a server, and every replica's connection to its master, goes through a
// loopback listener of the proxy, one per link (from process, to server); on the run's
// event loop the proxy passes bytes on, and can delay them, jitter them, cut a direction
// off and observe them. The Toxiproxy idea, inside lockstep.
//
// Semantics, chosen to be the simulator's:
//  - A link direction is FIFO: nothing overtakes what went before it, however it is
//    delayed.
//  - Every message waits a draw from the scenario's latency distribution (on top of
//    loopback's own few microseconds), as in sim::Network. Delay and jitter faults
//    belong to processes: a message between A and B also waits delay(A) + delay(B)
//    plus a uniform draw in [0, jitter(A) + jitter(B)].
//  - Client links are read as RESP: delays and cuts apply to whole commands and replies.
//    A message that is complete while its direction is cut is dropped, never delivered
//    later, exactly as the simulator drops a message sent into a partition; what was
//    already on its way when the cut began still arrives. A connection that lost a
//    message can no longer match replies to commands, so when the cut heals the proxy
//    resets it (its calls still waiting fail as a lost connection, whose outcome the
//    lock records as unknown) and the client connects afresh.
//  - A process's gate holds its client links still: a whole message arriving on one of
//    them (either way) waits while the gate is closed, before its delay is drawn, and
//    moves on when it opens (or is dropped). on_arrival closes it for an event-triggered
//    fault: the fault lands before the command reaches the server (or the reply the
//    client), whatever the fault does to the delay, the process or its links.
//  - Replication links are a byte stream: a cut holds the bytes until it heals (TCP
//    retransmits), so a replica falls behind rather than diverging. A link's `lag`
//    delays what the server sends (replication_lag_ms); while that server is paused
//    nothing it had sent passes, and when it closes (a crash) what was still held is
//    dropped: the write dies in the master's buffer, as in the simulator.
//
// Safety: listeners bind 127.0.0.1 on ports the kernel picks; a link connects only to the
// upstream it was opened for. Everything runs on the loop's thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "lockstep/live/event_loop.h"
#include "lockstep/live/live_world.h"
#include "lockstep/latency.h"
#include "lockstep/random.h"

struct evconnlistener;
struct sockaddr;

namespace lockstep::live {

// A whole command or reply that crossed a client link, for ground truth: commands as
// they leave the proxy for the server, replies as they arrive from it (with the command
// they answer, when the link still pairs them).
struct ProxyMessage {
  const std::string* from = nullptr;  // the client process
  const std::string* to = nullptr;    // the server
  int node = -1;                      // the logical node the client meant
  const std::vector<std::string>* argv = nullptr;  // the command (or the one answered)
  const Reply* reply = nullptr;       // null for a command
  Nanos sent{0};                      // when the command left for the server
};

class FaultProxy {
 public:
  enum class Framing { Resp, Bytes };
  struct LinkSpec {
    std::string from;     // the connecting process: client-2, node-1-replica-1
    std::string to;       // the server it reaches: node-1
    int node = -1;        // the logical node (client links)
    NodeAddress upstream;
    Framing framing = Framing::Resp;
    Nanos lag{0};         // extra delay of what the server sends
    // A byte stream that is a client's session (ZooKeeper's protocol), not replication:
    // what the server sent before it closed the connection still arrives, as TCP
    // delivers it (the server's last word may be that the session expired).
    bool keep_on_close = false;
  };

  FaultProxy(EventLoop& loop, uint64_t seed);
  ~FaultProxy();
  FaultProxy(const FaultProxy&) = delete;
  FaultProxy& operator=(const FaultProxy&) = delete;

  // The address `spec.from` should connect to; the link's listener opens on first use.
  // Returns "" or why it could not listen.
  std::string route(const LinkSpec& spec, NodeAddress& out);

  // For tests: the next link's listener is offered `port` first, as the kernel may offer
  // a port picked free for a server that has not bound it yet.
  void offer_port_first(int port) { offered_port_ = port; }

  // Connections from `host` are `process`'s, whatever link they open: a cluster bus link
  // is opened by whichever member pings, so its link names only the member it reaches.
  void name_source(const std::string& host, const std::string& process) { source_names_[host] = process; }

  // The scenario's network latency, drawn for every message (default: none).
  void set_latency(const Latency& l) { latency_ = l; }
  void add_delay(const std::string& process, Nanos d);
  void add_jitter(const std::string& process, Nanos d);
  // +1 cuts the direction from -> to (cuts nest), -1 restores it.
  void block(const std::string& from, const std::string& to, int delta);
  // A paused server: nothing it sent that is still in a lagged link passes meanwhile.
  void hold_from(const std::string& server, bool on);
  // +1 stops a process's byte-stream links both ways (nests), -1 lets them go: a stopped
  // process neither reads nor writes, so a ZooKeeper session's heartbeats stop with it
  // while its socket stays open.
  void freeze(const std::string& process, int delta);
  // Closes every byte-stream link the process opened and drops what they held, as the
  // kernel closes a killed process's sockets: nothing it had not yet sent arrives.
  void sever(const std::string& process);

  std::function<void(const ProxyMessage&)> on_message;
  // Sees each whole command or reply the moment it reaches the proxy on a client link,
  // before anything else happens to it (`sent` is that moment); returning true closes
  // the gate of the link's client process (once more), this message held first.
  std::function<bool(const ProxyMessage&)> on_arrival;
  // A whole reply (or pushed message) handed to a client link's process, after every
  // delay and gate: when the client could first act on it.
  std::function<void(const std::string& process)> on_delivered;
  // Opens the gate once (release), or drops what it held and opens it fully (drop).
  void release(const std::string& process);
  void drop(const std::string& process);

  // Replication bytes dropped because a master closed while they were held.
  int64_t dropped_bytes() const { return dropped_bytes_; }
  // Commands and replies dropped by cuts.
  int64_t dropped_messages() const { return dropped_messages_; }

 private:
  struct Link;
  struct Pipe;
  friend struct Pipe;
  static void on_accept(evconnlistener*, int fd, ::sockaddr*, int, void* arg);

  Nanos delay_between(const std::string& a, const std::string& b);
  bool blocked(const std::string& from, const std::string& to) const;
  void close_pipe(uint64_t id, bool upstream_closed);
  void heal();

  EventLoop& loop_;
  Rng rng_;
  Latency latency_{Latency::Kind::Constant, 0, 0, 0.0};
  std::map<std::string, Nanos> delay_, jitter_;
  std::map<std::pair<std::string, std::string>, int> blocked_;
  std::map<std::string, bool> held_from_;
  std::map<std::string, int> frozen_;
  std::map<std::string, int> gates_;  // closed gates by process
  std::map<std::string, std::string> source_names_;  // source address -> process
  std::vector<std::unique_ptr<Link>> links_;
  uint64_t next_pipe_ = 1;
  std::map<uint64_t, std::unique_ptr<Pipe>> pipes_;
  int64_t dropped_bytes_ = 0;
  int64_t dropped_messages_ = 0;
  int offered_port_ = 0;  // see offer_port_first
};

}  // namespace lockstep::live
