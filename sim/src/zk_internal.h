// Shared by zk_ensemble.cc (the servers) and zk_client.cc (a client's session): the
// messages between them.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "lockstep/sim/world.h"
#include "lockstep/sim/zk_ensemble.h"

namespace lockstep::sim {

class ZkClientCore;

// A client's request, as its server receives it.
struct ZkOp {
  enum class Kind { Connect, Ping, Create, Remove, Children, Exists, SetWatch };
  Kind kind = Kind::Ping;
  uint64_t xid = 0;
  int64_t session = 0;
  int64_t timeout_ns = 0;  // Connect: what the client asks for
  std::string path = {};
  std::string data = {};
  ZkCreateMode mode = {};
  int32_t version = -1;
  uint64_t watch_id = 0;   // Exists, SetWatch: 0 for none
  bool existed = false;    // SetWatch: whether the client last saw the znode
};

// A server's answer to one request.
struct ZkAnswer {
  uint64_t xid = 0;
  ZkError error = ZkError::Ok;
  std::string path = {};
  int64_t czxid = 0;
  bool exists = false;
  ZkStat stat = {};
  std::vector<std::string> children = {};
  int64_t session = 0;
  int64_t timeout_ns = 0;
};

// Where a client is reached: its process incarnation and its session object.
struct ZkClientLink {
  int pid = -1;
  uint64_t epoch = 0;
  std::weak_ptr<ZkClientCore> core;
};

// The client side of the messages a server sends (zk_client.cc).
class ZkClientCore {
 public:
  virtual ~ZkClientCore() = default;
  virtual void answer(const ZkAnswer& a) = 0;
  virtual void watch_fired(uint64_t watch_id, ZkEvent e) = 0;
  // The server closed the connection: the session expired, or it stopped serving.
  virtual void closed(bool expired) = 0;
};

// Sends `fn` from process `from` to `to` over the world's network; lost on a partition
// and dropped if `to` crashes (or restarts) before it arrives.
template <typename F>
void zk_send(World& world, int from, int to, uint64_t to_epoch, F fn) {
  auto arrival = world.network().transit(from, to, world.now());
  if (!arrival) return;
  world.post_epoch(to, to_epoch, *arrival, std::move(fn));
}

std::shared_ptr<ZooKeeper> make_sim_zookeeper(World& world, ZkEnsemble::Impl& ensemble, int client_pid);

// Used by the client: the servers and the entry point of a request.
int zk_server_count(const ZkEnsemble::Impl& e);
int zk_server_pid(const ZkEnsemble::Impl& e, int index);
int64_t zk_session_timeout_ns(const ZkEnsemble::Impl& e);
// Runs on server `index` when the request arrives.
void zk_handle(ZkEnsemble::Impl& e, int index, const ZkClientLink& from, const ZkOp& op);

}  // namespace lockstep::sim
