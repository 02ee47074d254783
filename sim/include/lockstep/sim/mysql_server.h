// MysqlServer is the simulated MySQL/MariaDB server: just what SQL locks use of one, as
// MariaDB 10.11 with InnoDB does it, and nothing else.
//
//  - Sessions. Each has a connection id, its own wait_timeout and innodb_lock_wait_timeout
//    (SET SESSION), its named locks and its transaction. A session ends when its client's
//    connection drops (close()), when it sat idle for wait_timeout seconds between
//    statements, or when the server crashes; ending it releases its named locks and rolls
//    its transaction back, which is what makes a cut-off holder's lock someone else's.
//  - Named locks: GET_LOCK(name, timeout) gives 1 (taken; a session may take the same
//    lock again and must release it as many times), 0 (timed out waiting; a negative
//    timeout waits forever), and waiters are served in arrival order; RELEASE_LOCK gives
//    1 (released), 0 (another session holds it), NULL (no one does); IS_USED_LOCK the
//    holder's connection id or NULL; IS_FREE_LOCK 1 or 0; RELEASE_ALL_LOCKS the count.
//  - Lock tables: a table has the fixed columns (name key, owner, expires_at, version).
//    Every statement on a row takes an exclusive lock on its key (InnoDB's record lock,
//    simplified to the key: it also locks a key that has no row), held to the end of the
//    transaction, or of the statement in autocommit. A statement that must wait gives up
//    after innodb_lock_wait_timeout with 1205 and only that statement is undone. A plain
//    SELECT never waits: it reads the last committed row (a consistent read).
//    A crash keeps committed rows and tables (InnoDB's redo log) and undoes the rest.
//
// Statements are recognised by shape from a small fixed set (mysql_statements.cc); any
// other fails with 1235, naming the statement. There is no deadlock detection: a cycle of
// waits ends at innodb_lock_wait_timeout.
//
// The server is driven from outside: the world hands it statements as they arrive and
// runs its timers; it answers through the `answer` hook, at once or later (a wait).
// Times are the scheduler's true nanoseconds.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "lockstep/sql.h"

namespace lockstep::sim {

class MysqlServer {
 public:
  struct Hooks {
    std::function<int64_t()> now_ns;
    // Runs fn at true time t on the server (held by a pause, dropped by a crash).
    std::function<void(int64_t t_ns, std::function<void()> fn)> at;
    // The answer to the statement session `id` is running leaves for its client.
    std::function<void(uint64_t id, SqlResult result)> answer;
  };
  static constexpr int64_t kWaitTimeoutDefaultS = 28800;
  static constexpr int64_t kLockWaitTimeoutDefaultS = 50;
  // The server's global values, which each new session starts from (my.cnf's).
  struct Settings {
    int64_t wait_timeout_s = kWaitTimeoutDefaultS;
    int64_t lock_wait_timeout_s = kLockWaitTimeoutDefaultS;
  };

  explicit MysqlServer(Hooks hooks);
  MysqlServer(Hooks hooks, Settings settings);

  // A new session (a client connected); its connection id.
  uint64_t open();
  bool has_session(uint64_t id) const { return sessions_.count(id) != 0; }
  // Runs a statement of session `id`, which must exist and be idle. The answer comes
  // through the hook, maybe later.
  void execute(uint64_t id, const std::string& statement, const std::vector<SqlValue>& params);
  // The client's connection dropped: the session ends (a statement it was waiting in is
  // abandoned, with no answer).
  void close(uint64_t id);
  // Everything in memory is lost; committed rows and tables stay.
  void crash();

  // For tests and truth: who holds a named lock (connection id), 0 if no one.
  uint64_t named_lock_holder(const std::string& name) const;
  size_t session_count() const { return sessions_.size(); }

  // A row of a lock table.
  struct Row {
    SqlValue owner;
    std::optional<int64_t> expires_at;
    int64_t version = 0;
    friend bool operator==(const Row&, const Row&) = default;
  };
  // The committed row of `table` under `key`, if any.
  std::optional<Row> committed_row(const std::string& table, const std::string& key) const;

  // What a recognised statement is (mysql_statements.cc).
  enum class Kind {
    GetLock, ReleaseLock, IsUsedLock, IsFreeLock, ReleaseAllLocks, ConnectionId, SelectOne,
    Begin, Commit, Rollback, SetWaitTimeout, SetLockWaitTimeout,
    CreateTable, Insert, Select, SelectForUpdate, UpdateTakeOver, UpdateOwner, UpdateExtend, Delete,
  };
  struct Statement {
    Kind kind;
    std::string table;  // lock-table statements
    size_t param_count = 0;
    std::string number;  // the digits of the shape's last %d (a SET's value written in the text)
  };
  // The statement's kind, or nullopt for one outside the set.
  static std::optional<Statement> recognise(const std::string& text);

 private:
  using RowKey = std::pair<std::string, std::string>;  // table, key
  struct Undo {
    RowKey key;
    std::optional<Row> before;
  };
  struct Session {
    uint64_t id = 0;
    int64_t wait_timeout_s = kWaitTimeoutDefaultS;
    int64_t lock_wait_timeout_s = kLockWaitTimeoutDefaultS;
    bool in_transaction = false;
    std::vector<Undo> undo;          // the transaction's, in order
    std::set<RowKey> row_locks;      // held until the transaction (or statement) ends
    std::map<std::string, int> named;  // named lock -> times taken
    // A statement in progress (running or waiting) and what it waits for.
    bool busy = false;
    Statement statement{};
    std::vector<SqlValue> params;
    uint64_t wait_id = 0;            // bumps at every wait: a stale timer finds another
    std::optional<RowKey> waiting_row;
    std::optional<std::string> waiting_named;
    uint64_t idle_id = 0;            // bumps at every statement: a stale idle check finds another
  };
  struct NamedLock {
    uint64_t holder = 0;
    std::deque<uint64_t> waiters;
  };
  using Table = std::map<std::string, Row>;

  void run(Session& s);
  void finish(Session& s, SqlResult result);
  void schedule_idle_check(Session& s);
  void end(uint64_t id);
  // Named locks.
  void get_lock(Session& s);
  void release_named(Session& s, const std::string& name);
  void hand_over(const std::string& name);
  // Rows.
  bool lock_row(Session& s, const RowKey& key);  // false: s now waits for it
  void release_rows(Session& s);
  void rollback(Session& s);
  void write_row(Session& s, const RowKey& key, std::optional<Row> row);
  void run_row_statement(Session& s);
  std::optional<Row> visible(const Session& s, const RowKey& key) const;

  Hooks hooks_;
  Settings settings_;
  uint64_t next_id_ = 1;
  std::map<uint64_t, Session> sessions_;
  std::map<std::string, NamedLock> named_;
  std::map<std::string, Table> tables_;  // rows as the latest writer left them
  std::map<RowKey, uint64_t> row_owner_;  // key -> session holding its lock
  std::map<RowKey, std::deque<uint64_t>> row_waiters_;
};

}  // namespace lockstep::sim
