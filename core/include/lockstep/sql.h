// A SQL session is one client connection to a MySQL/MariaDB server as lock code sees it:
// statements go out one at a time and each gets the server's answer — rows, an affected
// count, or an error numbered as MariaDB numbers them — or no answer at all.
//
// What a session promises:
//  - Statements run in order; one waits for the previous one's answer.
//  - The session is the server's: named locks (GET_LOCK) and an open transaction belong
//    to it and die with it. The server ends a session when it sees the connection drop
//    (the client crashed, or gave up on a statement and closed the socket) or when it sat
//    idle longer than wait_timeout. The next statement then fails with `ended` set
//    (2006, "server has gone away", or 2013, "lost connection") and the session after it
//    is a new one: a new connection id, no locks, no transaction — as a client library
//    that reconnects, never silently.
//  - A statement without an answer within its timeout fails with Status::Timeout; the
//    client closes the connection (as libmariadb does after a read timeout), so the
//    server ends the session as soon as it notices, and the statement may have run.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lockstep/task.h"

namespace lockstep {

// One value of a parameter or a result cell: SQL NULL is nullopt, anything else its text
// as the server prints it (a number's decimal form).
using SqlValue = std::optional<std::string>;

// MariaDB's error numbers for what locks meet (server errors 1xxx, client errors 2xxx).
namespace sql_error {
inline constexpr int kNotNull = 1048;           // ER_BAD_NULL_ERROR: NULL into a NOT NULL column
inline constexpr int kDupEntry = 1062;          // ER_DUP_ENTRY: the unique key is taken
inline constexpr int kParse = 1064;             // ER_PARSE_ERROR
inline constexpr int kNoSuchTable = 1146;       // ER_NO_SUCH_TABLE
inline constexpr int kWrongTypeForVar = 1232;   // ER_WRONG_TYPE_FOR_VAR: SET with a value of the wrong type
inline constexpr int kLockWaitTimeout = 1205;   // ER_LOCK_WAIT_TIMEOUT: innodb_lock_wait_timeout ran out
inline constexpr int kDeadlock = 1213;          // ER_LOCK_DEADLOCK
inline constexpr int kNotSupported = 1235;      // ER_NOT_SUPPORTED_YET: a statement a model does not know
inline constexpr int kWrongValue = 1366;        // ER_TRUNCATED_WRONG_VALUE_FOR_FIELD: not a number
inline constexpr int kCantConnect = 2003;       // CR_CONN_HOST_ERROR: no server listening
inline constexpr int kServerGone = 2006;        // CR_SERVER_GONE_ERROR: the session was ended while idle
inline constexpr int kServerLost = 2013;        // CR_SERVER_LOST: the connection dropped mid-statement
inline constexpr int kNoServer = 2047;          // CR_CONN_UNKNOW_PROTOCOL: this world has no MySQL server
}  // namespace sql_error

struct SqlResult {
  enum class Status : uint8_t {
    Ok,       // the statement ran: rows and affected_rows say what it did
    Error,    // the server or the client library refused it: error_code, message
    Timeout,  // no answer in time: it may have run; the session is closed
  };
  Status status = Status::Ok;
  int error_code = 0;
  std::string message;
  std::vector<std::vector<SqlValue>> rows;
  int64_t affected_rows = 0;
  // The session this statement was sent on is gone (its locks and transaction with it).
  bool ended = false;

  static SqlResult ok_rows(std::vector<std::vector<SqlValue>> rows) {
    SqlResult r;
    r.rows = std::move(rows);
    return r;
  }
  static SqlResult ok_affected(int64_t n) {
    SqlResult r;
    r.affected_rows = n;
    return r;
  }
  static SqlResult error(int code, std::string message, bool ended = false) {
    SqlResult r;
    r.status = Status::Error;
    r.error_code = code;
    r.message = std::move(message);
    r.ended = ended;
    return r;
  }
  static SqlResult timeout() {
    SqlResult r;
    r.status = Status::Timeout;
    r.message = "timeout";
    r.ended = true;
    return r;
  }

  bool ok() const { return status == Status::Ok; }
  bool is_error(int code) const { return status == Status::Error && error_code == code; }
  // The one cell of a one-row, one-column answer (SELECT GET_LOCK(...)); nullopt for NULL
  // or for no row at all.
  SqlValue scalar() const { return rows.empty() || rows[0].empty() ? SqlValue{} : rows[0][0]; }
};

class SqlSession {
 public:
  virtual ~SqlSession() = default;
  // Runs one statement. Each `?` in it is replaced by the next parameter, quoted as a
  // string literal (or NULL); MariaDB converts it where a number is expected.
  virtual Task<SqlResult> execute(std::string statement, std::vector<SqlValue> params, std::chrono::nanoseconds timeout) = 0;
};

// The session of a world without a MySQL server: every statement fails with kNoServer.
class NoSqlServer : public SqlSession {
 public:
  Task<SqlResult> execute(std::string statement, std::vector<SqlValue> params, std::chrono::nanoseconds timeout) override;
};

}  // namespace lockstep
