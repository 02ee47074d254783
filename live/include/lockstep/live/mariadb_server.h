// MariaDbServer: one real MariaDB server (mariadbd) that lockstep starts, faults and
// removes itself, for the MySQL locks in the live world and for the tests that compare
// the simulated server with a real one.
//
// Safety and speed:
//  - A child process forked here, listening on 127.0.0.1 on a port the kernel just
//    reported free and on a Unix socket in its own mkdtemp directory; grant tables are
//    skipped (root, no password): nothing but loopback can reach it.
//  - Its data directory lives in memory where the machine has /dev/shm, and InnoDB is set
//    to write little and fsync less: a start takes well under a second, and the fsyncs of
//    Redis servers running beside it keep their margins.
//  - Killed and reaped by its destructor, by lockstep's signal handlers and by the kernel
//    if lockstep dies (PR_SET_PDEATHSIG); its directory is removed with it. Every wait is
//    bounded.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "lockstep/live/live_world.h"

namespace lockstep::live {

// mariadbd (or mysqld): $LOCKSTEP_MARIADBD, else the usual sbin and bin folders. Empty if
// there is none.
std::string find_mariadbd();

// Whether this build can talk to MariaDB at all (libmariadb); "" if so, else why not.
const std::string& mariadb_client_missing();

struct MariaDbSettings {
  // Server globals, as topology.mysql sets them (MariaDB's defaults otherwise).
  int64_t wait_timeout_s = 28800;
  int64_t innodb_lock_wait_timeout_s = 50;
  bool tcp = true;  // listen on a kernel-picked loopback port besides the socket
};

class MariaDbServer {
 public:
  MariaDbServer() = default;
  ~MariaDbServer();
  MariaDbServer(const MariaDbServer&) = delete;
  MariaDbServer& operator=(const MariaDbServer&) = delete;

  // Starts the server from a fresh data directory and creates the `lockstep` database.
  // Returns "" or why not (a message with "not installed" when mariadbd is missing).
  std::string start(const MariaDbSettings& settings);

  // Faults: SIGSTOP/SIGCONT, SIGKILL, and a start on the same port and data directory
  // (InnoDB recovers what it had written).
  void pause();
  void resume();
  void kill();
  std::string restart(bool wait);
  bool running() const { return pid_ > 0; }
  bool paused() const { return paused_; }
  pid_t pid() const { return pid_; }

  NodeAddress address() const { return {"127.0.0.1", port_}; }
  const std::string& socket_path() const { return socket_; }
  const std::string& dir() const { return dir_; }
  static constexpr const char* kDatabase = "lockstep";

  // Waits (at most `limit`) until it answers a connection; false if it exited first.
  bool wait_ready(Nanos limit);

 private:
  std::string spawn();
  std::string log_tail() const;

  MariaDbSettings settings_;
  std::string binary_;
  std::string dir_;
  std::string socket_;
  int port_ = 0;
  pid_t pid_ = -1;
  bool paused_ = false;
};

}  // namespace lockstep::live
