// A real ZooKeeper ensemble for one live run: servers zk-1..zk-N, each a JVM running
// Debian's ZooKeeper (QuorumPeerMain started directly: zkServer.sh costs seconds) in a
// scratch folder under /dev/shm, on ports the kernel picked on 127.0.0.1.
//
// What it promises:
//  - Every link between two servers goes through the run's FaultProxy as a byte stream
//    (the link zk-A -> zk-B is the one zk-A opens), so partitions and link delays reach
//    the quorum as they reach Redis replication; clients reach each server through links
//    of their own (client_address()).
//  - zk-1 leads when the ensemble starts, as in the simulator: ZooKeeper elects the
//    highest server id among equals, so zk-i runs with myid N+1-i.
//  - start() returns once a majority serves (answers "srvr" as leader or follower), or
//    says why not, with the tail of the first failed server's log.
//  - tickTime is the topology's tick_ms; initLimit 10 and syncLimit 5 ticks, as the
//    simulator's sync_limit; session timeouts are held to [2, 20] ticks (ZooKeeper's
//    defaults). Data goes to /dev/shm without fsync: the run is the durability horizon.
//  - pause() is SIGSTOP/SIGCONT, kill() SIGKILL, restart() the same server on the same
//    ports and data (ZooKeeper logs before it acknowledges, so nothing acknowledged is
//    lost). The destructor kills every server and removes the scratch folder.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "lockstep/live/fault_proxy.h"
#include "lockstep/live/live_world.h"

namespace lockstep::live {

struct ZkEnsembleSpec {
  int servers = 3;
  int64_t tick_ms = 2000;
  Nanos start_limit = Millis(60000);  // for a majority to serve
};

class ZkEnsemble {
 public:
  // The proxy runs on `loop`, which start() runs while the servers elect a leader.
  ZkEnsemble(EventLoop& loop, FaultProxy& proxy) : loop_(loop), proxy_(proxy) {}
  ~ZkEnsemble();
  ZkEnsemble(const ZkEnsemble&) = delete;
  ZkEnsemble& operator=(const ZkEnsemble&) = delete;

  // Returns "" or why the ensemble could not start (then nothing is left running).
  std::string start(const ZkEnsembleSpec& spec);
  bool started() const { return !servers_.empty(); }
  int size() const { return static_cast<int>(servers_.size()); }
  static std::string server_name(int index) { return "zk-" + std::to_string(index + 1); }
  // zk-1.. as named in scenarios; -1 when `name` is none of them.
  int index_of(const std::string& name) const;
  const NodeAddress& address(int index) const { return servers_[index].client; }
  // The servers as `process` reaches them, through its own proxy links: a connect string.
  std::string connect_string(const std::string& process);

  void pause(int index, bool on);
  void kill(int index);
  // Returns "" or why it did not start again (it does not wait for it to serve).
  std::string restart(int index);
  bool running(int index) const { return servers_[index].pid > 0; }

  // Asks a server "srvr": "leader", "follower", "standalone", or "" (not serving).
  static std::string mode(const NodeAddress& a, Nanos timeout);
  // Where Debian keeps ZooKeeper's classes, or "" if it is not installed.
  static std::string classpath();

 private:
  struct Server {
    std::string name;
    int myid = 0;
    NodeAddress client, quorum, election;
    std::string dir, config, log;
    pid_t pid = -1;
  };
  std::string start_once(const ZkEnsembleSpec& spec);
  std::string write_config(const Server& s, const ZkEnsembleSpec& spec);
  std::string spawn(Server& s);
  void stop_all();

  std::string wait_for_quorum(const ZkEnsembleSpec& spec);

  EventLoop& loop_;
  FaultProxy& proxy_;
  std::string root_;
  std::string classpath_;
  std::vector<Server> servers_;
};

}  // namespace lockstep::live
