#include "lockstep/zookeeper.h"

namespace lockstep {

const char* to_string(ZkError e) {
  switch (e) {
    case ZkError::Ok: return "ok";
    case ZkError::NoNode: return "no-node";
    case ZkError::NodeExists: return "node-exists";
    case ZkError::BadVersion: return "bad-version";
    case ZkError::NotEmpty: return "not-empty";
    case ZkError::ConnectionLoss: return "connection-loss";
    case ZkError::SessionExpired: return "session-expired";
  }
  return "?";
}

const char* to_string(ZkState s) {
  switch (s) {
    case ZkState::Connecting: return "connecting";
    case ZkState::Connected: return "connected";
    case ZkState::Suspended: return "suspended";
    case ZkState::Expired: return "expired";
  }
  return "?";
}

const char* to_string(ZkEvent e) {
  switch (e) {
    case ZkEvent::Created: return "created";
    case ZkEvent::Deleted: return "deleted";
    case ZkEvent::Changed: return "changed";
    case ZkEvent::SessionExpired: return "session-expired";
    case ZkEvent::TimedOut: return "timed-out";
  }
  return "?";
}

}  // namespace lockstep
