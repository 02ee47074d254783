// lockstep's MySQL locks, written once against Env::sql_session() (lockstep/sql.h):
//
//  mysql-named       GET_LOCK on the lock's own session. The session is the lease: the
//                    server frees the lock when it ends the session (connection lost,
//                    wait_timeout), while the holder, cut off, may still believe it holds.
//  mysql-for-update  SELECT … FOR UPDATE on a lock row inside a transaction kept open for
//                    the hold; released by COMMIT, lost with the session.
//  mysql-table       A row per lock with an owner and an expiry: INSERT (a unique key says
//                    who was first), take over an expired row with a conditional UPDATE,
//                    DELETE only your own row. The expiry is the holder's wall clock plus
//                    the lease, so it has the SETNX lease's races, in SQL. Options choose
//                    a hand-made lock's steps: read the row and judge its expiry in the
//                    client (read_first), each attempt in a transaction (transaction).
//  mysql-table-fenced  The same table, never deleting the row (release expires it), so the
//                    row's version rises with every hold: a fencing token.
#pragma once

#include <vector>

#include "lockstep/locks.h"

namespace lockstep {

std::vector<LockInfo> mysql_locks();

}  // namespace lockstep
