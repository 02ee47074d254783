// ZooKeeper as a lock sees it: one client session of this process with an ensemble, the
// handful of znode operations lock recipes use, one-shot watches and the session's
// connection states. Lock code reaches it through Env::zookeeper() only, so one recipe
// runs against the simulated ensemble and, later, a real one.
//
// What a session promises (ZooKeeper's own guarantees, as a client library presents them):
//  - Writes (create, remove) go through the ensemble's leader and are applied once a
//    majority of servers has logged them; every write gets a zxid, and zxids rise in the
//    order the ensemble applied the writes. A znode's czxid is the zxid that created it.
//  - Reads (get_children, exists) are answered by the server this session is connected
//    to and may lag the leader; they never go back in time for one session.
//  - An ephemeral znode lives as long as the session that created it. The leader expires
//    a session when it has heard nothing from it for the session timeout, on its own
//    clock; the client only learns of it when it next reaches a server.
//  - A watch fires at most once, for the first change of its znode after it was set.
//  - Connection states are what Curator and kazoo report: Connected; Suspended (no server
//    has answered for a while: the session may or may not still be alive, and locks must
//    not be trusted); Expired (a server said so: every ephemeral znode is gone). After
//    Expired, the next operation opens a new session, as both libraries do.
//  - An operation whose answer never came returns ConnectionLoss: like a Redis timeout,
//    a create may still have happened.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "lockstep/env.h"
#include "lockstep/task.h"

namespace lockstep {

enum class ZkError { Ok, NoNode, NodeExists, BadVersion, NotEmpty, ConnectionLoss, SessionExpired };
const char* to_string(ZkError e);

enum class ZkState { Connecting, Connected, Suspended, Expired };
const char* to_string(ZkState s);

struct ZkCreateMode {
  bool ephemeral = false;
  bool sequential = false;  // the server appends a 10-digit counter of the parent
};

struct ZkStat {
  int64_t czxid = 0;            // the write that created the znode
  int64_t mzxid = 0;            // the last write that changed it
  int32_t version = 0;          // data changes since creation
  int64_t ephemeral_owner = 0;  // the session that owns it, 0 for a persistent znode
};

struct ZkCreated {
  ZkError error = ZkError::Ok;
  std::string path;  // with the sequence number, for a sequential znode
  int64_t czxid = 0;
};

struct ZkChildren {
  ZkError error = ZkError::Ok;
  std::vector<std::string> names;  // in the server's (sorted) order
};

enum class ZkEvent { Created, Deleted, Changed, SessionExpired, TimedOut };
const char* to_string(ZkEvent e);

// A one-shot watch on one znode. wait() returns its event once it fired (again on every
// later call), or TimedOut when it did not fire within `timeout`.
class ZkWatch {
 public:
  virtual ~ZkWatch() = default;
  virtual Task<ZkEvent> wait(Nanos timeout) = 0;
};

struct ZkExists {
  ZkError error = ZkError::Ok;
  bool exists = false;
  ZkStat stat;
  std::shared_ptr<ZkWatch> watch;  // set when asked for and the call succeeded
};

class ZooKeeper {
 public:
  virtual ~ZooKeeper() = default;
  // Parents must exist; a version of -1 matches any.
  virtual Task<ZkCreated> create(std::string path, std::string data, ZkCreateMode mode) = 0;
  virtual Task<ZkError> remove(std::string path, int32_t version) = 0;
  virtual Task<ZkChildren> get_children(std::string path) = 0;
  virtual Task<ZkExists> exists(std::string path, bool watch) = 0;

  virtual ZkState state() const = 0;
  virtual int64_t session_id() const = 0;  // 0 before the first session
  virtual Nanos session_timeout() const = 0;
  // Called at every change of state(), as Curator's ConnectionStateListener and kazoo's
  // add_listener are.
  std::function<void(ZkState)> on_state;
};

}  // namespace lockstep
