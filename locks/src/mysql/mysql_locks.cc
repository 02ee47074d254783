#include "mysql_locks.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "../retry.h"

namespace lockstep {
namespace {

constexpr const char* kTableDdl =
    "CREATE TABLE IF NOT EXISTS lockstep_locks (name VARCHAR(255) PRIMARY KEY, owner VARCHAR(255), "
    "expires_at BIGINT, version BIGINT)";
constexpr const char* kInsertRow = "INSERT INTO lockstep_locks (name, owner, expires_at, version) VALUES (?, ?, ?, ?)";

std::string seconds_text(Nanos d) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", static_cast<double>(d.count()) / 1e9);
  return buf;
}

// A statement's parameters. (A function, not a braced list: GCC 12 cannot keep a braced
// list's array alive across a co_await.)
template <typename... A>
std::vector<SqlValue> sql_args(A&&... a) {
  std::vector<SqlValue> v;
  (v.emplace_back(std::forward<A>(a)), ...);
  return v;
}

// A session's settings, sent once on every new session (a new one after the server ended
// the last): 0 leaves the server's default.
struct SessionSettings {
  int64_t wait_timeout_s = 0;
  int64_t lock_wait_timeout_s = 0;
};

// One session of a lock and what it was told: the lock's statements go through here, so
// a session the server ended is seen once and the next one is set up again.
class LockSession {
 public:
  LockSession(Env& env, SessionSettings settings, Nanos timeout)
      : env_(env), session_(env.sql_session()), settings_(settings), timeout_(timeout) {}

  Task<SqlResult> run(std::string statement, std::vector<SqlValue> params, Nanos extra = Nanos(0)) {
    if (!set_up_) {
      if (settings_.wait_timeout_s > 0) {
        // A number in the text: MariaDB refuses a quoted value for a variable (1232).
        std::string set = "SET SESSION wait_timeout = " + std::to_string(settings_.wait_timeout_s);
        SqlResult r = co_await session_->execute(std::move(set), {}, timeout_);
        if (!r.ok()) co_return r;
      }
      if (settings_.lock_wait_timeout_s > 0) {
        std::string set = "SET SESSION innodb_lock_wait_timeout = " + std::to_string(settings_.lock_wait_timeout_s);
        SqlResult r = co_await session_->execute(std::move(set), {}, timeout_);
        if (!r.ok()) co_return r;
      }
      set_up_ = true;
    }
    SqlResult r = co_await session_->execute(std::move(statement), std::move(params), timeout_ + extra);
    if (r.ended) set_up_ = false;
    co_return r;
  }

 private:
  Env& env_;
  std::unique_ptr<SqlSession> session_;
  SessionSettings settings_;
  Nanos timeout_;
  bool set_up_ = false;
};

// How long the server lets a statement wait for a row lock (innodb_lock_wait_timeout):
// the lock's own setting, else MariaDB's default. A call that may wait is given as long.
Nanos server_lock_wait(const LockParams& p) { return std::chrono::seconds(option_or(p, "lock_wait_timeout_s", 50)); }

SessionSettings settings_of(const LockParams& p) {
  return {option_or(p, "wait_timeout_s", 0), option_or(p, "lock_wait_timeout_s", 0)};
}

// What every MySQL lock holds: its parameters, its one session and its owner token.
class SqlLock : public Lock {
 public:
  SqlLock(Env& env, const LockParams& p, std::string token)
      : env_(env), params_(p), session_(env, settings_of(p), p.command_timeout), token_(std::move(token)) {}
  const std::string& token() const override { return token_; }

 protected:
  Env& env_;
  LockParams params_;
  LockSession session_;
  std::string token_;
};

class NamedLock : public SqlLock {
 public:
  NamedLock(Env& env, const LockParams& p) : SqlLock(env, p, env.process_name()) {}

  // One GET_LOCK that waits on the server for the whole budget: the server queues waiters.
  Task<AcquireOutcome> acquire(Nanos wait) override {
    const Nanos w = std::max(wait, Nanos(0));
    SqlResult r = co_await session_.run("SELECT GET_LOCK(?, ?)", sql_args(params_.key, seconds_text(w)), w);
    if (r.status == SqlResult::Status::Timeout) co_return AcquireOutcome::Unknown;
    co_return r.ok() && r.scalar() == SqlValue("1") ? AcquireOutcome::Acquired : AcquireOutcome::NotAcquired;
  }

  Task<ReleaseOutcome> release() override {
    SqlResult r = co_await session_.run("SELECT RELEASE_LOCK(?)", sql_args(params_.key));
    if (r.status == SqlResult::Status::Timeout) co_return ReleaseOutcome::Unknown;
    co_return r.ok() && r.scalar() == SqlValue("1") ? ReleaseOutcome::Released : ReleaseOutcome::NotOwner;
  }
};

class ForUpdateLock : public SqlLock {
 public:
  ForUpdateLock(Env& env, const LockParams& p) : SqlLock(env, p, env.process_name()) {}

  Task<AcquireOutcome> acquire(Nanos wait) override {
    // The row must exist for FOR UPDATE to lock something; whoever inserts it first wins
    // nothing by it (1062 for the others is expected).
    // The server waits up to innodb_lock_wait_timeout; the calls that may wait, that long too.
    const Nanos server_wait = server_lock_wait(params_);
    SqlResult t = co_await session_.run(kTableDdl, {});
    if (t.status == SqlResult::Status::Timeout) co_return AcquireOutcome::Unknown;
    // The duplicate check waits for the holder's row lock too (1062 or 1205 are both fine).
    co_await session_.run(kInsertRow,
                          sql_args(params_.key, SqlValue{}, SqlValue{}, "0"), server_wait);
    SqlResult b = co_await session_.run("BEGIN", {});
    if (!b.ok()) co_return b.status == SqlResult::Status::Timeout ? AcquireOutcome::Unknown : AcquireOutcome::NotAcquired;
    SqlResult r = co_await session_.run("SELECT owner, expires_at, version FROM lockstep_locks WHERE name = ? FOR UPDATE",
                                        sql_args(params_.key), server_wait);
    (void)wait;  // the wait is the server's innodb_lock_wait_timeout, as the seeds' recipe has it
    if (r.ok()) co_return AcquireOutcome::Acquired;
    if (r.status == SqlResult::Status::Timeout) co_return AcquireOutcome::Unknown;
    if (!r.ended) co_await session_.run("ROLLBACK", {});
    co_return AcquireOutcome::NotAcquired;
  }

  Task<ReleaseOutcome> release() override {
    SqlResult r = co_await session_.run("COMMIT", {});
    if (r.status == SqlResult::Status::Timeout) co_return ReleaseOutcome::Unknown;
    // A session that ended took the transaction, and the row lock, with it.
    co_return r.ok() ? ReleaseOutcome::Released : ReleaseOutcome::NotOwner;
  }
};

class TableLock : public SqlLock {
 public:
  TableLock(Env& env, const LockParams& p, bool fenced)
      : SqlLock(env, p, random_uuid(env)),
        fenced_(fenced),
        take_over_(option_or(p, "take_over", 1) != 0),
        read_first_(option_or(p, "read_first", 0) != 0),
        transaction_(option_or(p, "transaction", 0) != 0) {}

  Task<AcquireOutcome> acquire(Nanos wait) override {
    SqlResult t = co_await session_.run(kTableDdl, {});
    if (t.status == SqlResult::Status::Timeout) co_return AcquireOutcome::Unknown;
    co_return co_await acquire_with_retries(env_, params_.retry, wait, [this] { return attempt(); });
  }

  Task<ReleaseOutcome> release() override {
    // The fenced lock keeps its row (and its version) and only expires it.
    SqlResult r;
    if (fenced_) {
      r = co_await session_.run("UPDATE lockstep_locks SET expires_at = ? WHERE name = ? AND owner = ?",
                                sql_args("0", params_.key, token_));
    } else {
      r = co_await session_.run("DELETE FROM lockstep_locks WHERE name = ? AND owner = ?", sql_args(params_.key, token_));
    }
    if (r.status == SqlResult::Status::Timeout) co_return ReleaseOutcome::Unknown;
    co_return r.ok() && r.affected_rows == 1 ? ReleaseOutcome::Released : ReleaseOutcome::NotOwner;
  }

  int64_t fencing_token() const override { return fenced_ ? version_ : -1; }

 private:
  // One attempt, in a transaction of its own with `transaction`: the row is then read FOR
  // UPDATE, so a read-first takeover's check and write are one step nobody can split.
  Task<AcquireOutcome> attempt() {
    if (!transaction_) co_return co_await steps();
    SqlResult b = co_await session_.run("BEGIN", {});
    if (!b.ok()) co_return b.status == SqlResult::Status::Timeout ? AcquireOutcome::Unknown : AcquireOutcome::NotAcquired;
    const AcquireOutcome o = co_await steps();
    if (o != AcquireOutcome::Acquired) {
      // A session that ended took the transaction with it; otherwise nothing is kept.
      SqlResult r = co_await session_.run("ROLLBACK", {});
      co_return o == AcquireOutcome::Unknown || r.status == SqlResult::Status::Timeout ? AcquireOutcome::Unknown : o;
    }
    SqlResult c = co_await session_.run("COMMIT", {});
    if (c.ok()) co_return AcquireOutcome::Acquired;
    // No answer: the commit may have landed. An error: the session ended and rolled it back.
    co_return c.status == SqlResult::Status::Timeout ? AcquireOutcome::Unknown : AcquireOutcome::NotAcquired;
  }

  Task<AcquireOutcome> steps() {
    if (read_first_) return read_then_write();
    return try_once();
  }

  // A hand-made lock's takeover: read the row, judge its expiry here, then write it by name.
  // Without a transaction two waiters can both read the expired row before either writes,
  // and both hold.
  Task<AcquireOutcome> read_then_write() {
    const std::string read = std::string("SELECT owner, expires_at, version FROM lockstep_locks WHERE name = ?") +
                             (transaction_ ? " FOR UPDATE" : "");
    const Nanos server_wait = server_lock_wait(params_);
    SqlResult row = co_await session_.run(read, sql_args(params_.key), transaction_ ? server_wait : Nanos(0));
    if (row.status == SqlResult::Status::Timeout) co_return AcquireOutcome::Unknown;
    if (!row.ok()) co_return AcquireOutcome::NotAcquired;
    const int64_t now_ms = to_ms(env_.now_wall());
    const std::string expires = std::to_string(now_ms + to_ms(params_.lease));
    if (row.rows.empty()) {
      SqlResult ins = co_await session_.run(kInsertRow,
                                            sql_args(params_.key, token_, expires, "1"));
      if (ins.status == SqlResult::Status::Timeout) co_return AcquireOutcome::Unknown;
      if (!ins.ok()) co_return AcquireOutcome::NotAcquired;
      version_ = 1;
      co_return AcquireOutcome::Acquired;
    }
    const SqlValue& expires_at = row.rows[0][1];
    const bool expired = expires_at && std::stoll(*expires_at) < now_ms;
    if (!expired || !take_over_ || !row.rows[0][2]) co_return AcquireOutcome::NotAcquired;
    SqlResult up = co_await session_.run(
        "UPDATE lockstep_locks SET owner = ?, expires_at = ?, version = version + 1 WHERE name = ?",
        sql_args(token_, expires, params_.key));
    if (up.status == SqlResult::Status::Timeout) co_return AcquireOutcome::Unknown;
    if (!up.ok() || up.affected_rows != 1) co_return AcquireOutcome::NotAcquired;
    // The version this write made, as far as this client can tell: without a transaction
    // another takeover may have written in between, and the token is then a shared one.
    version_ = std::stoll(*row.rows[0][2]) + 1;
    co_return AcquireOutcome::Acquired;
  }

  Task<AcquireOutcome> try_once() {
    const int64_t now_ms = to_ms(env_.now_wall());
    const std::string expires = std::to_string(now_ms + to_ms(params_.lease));
    SqlResult ins = co_await session_.run(kInsertRow,
                                          sql_args(params_.key, token_, expires, "1"));
    if (ins.status == SqlResult::Status::Timeout) co_return AcquireOutcome::Unknown;
    if (ins.ok()) {
      version_ = 1;
      co_return AcquireOutcome::Acquired;
    }
    if (!ins.is_error(sql_error::kDupEntry) || !take_over_) co_return AcquireOutcome::NotAcquired;
    SqlResult up = co_await session_.run(
        "UPDATE lockstep_locks SET owner = ?, expires_at = ?, version = version + 1 WHERE name = ? AND expires_at < ?",
        sql_args(token_, expires, params_.key, std::to_string(now_ms)));
    if (up.status == SqlResult::Status::Timeout) co_return AcquireOutcome::Unknown;
    if (!up.ok() || up.affected_rows != 1) co_return AcquireOutcome::NotAcquired;
    if (fenced_) {
      SqlResult row = co_await session_.run("SELECT owner, expires_at, version FROM lockstep_locks WHERE name = ?", sql_args(params_.key));
      // Read back the version this hold made; a row someone took over since is not ours.
      if (!row.ok() || row.rows.empty() || row.rows[0][0] != SqlValue(token_) || !row.rows[0][2]) {
        co_return AcquireOutcome::Unknown;
      }
      version_ = std::stoll(*row.rows[0][2]);
    }
    co_return AcquireOutcome::Acquired;
  }

  bool fenced_;
  bool take_over_;
  bool read_first_;
  bool transaction_;
  int64_t version_ = -1;
};

std::vector<LockOption> session_options() {
  return {integer_option("wait_timeout_s", 0, 0, 31536000,
                         "SET SESSION wait_timeout on each new session (s); 0 keeps the server's 28800"),
          integer_option("lock_wait_timeout_s", 0, 0, 100000000,
                         "SET SESSION innodb_lock_wait_timeout on each new session (s); 0 keeps the server's 50")};
}

// A lock held by its session (GET_LOCK, an open transaction) lasts while the server keeps
// the session: the holder sends nothing while it works, so its work and any pause or cut
// together must stay under wait_timeout. The server's timers run on its own clock.
std::vector<Assumption> session_lock_assumptions(const LockSetup& s) {
  const int64_t option = s.options.is_object() && s.options.contains("wait_timeout_s") &&
                                 s.options["wait_timeout_s"].is_number_integer()
                             ? s.options["wait_timeout_s"].get<int64_t>()
                             : 0;
  const int64_t wait_ms = (option > 0 ? option : 28800) * 1000;
  const std::string bound = "shorter than wait_timeout (" + std::to_string(wait_ms) + " ms" +
                            (option > 0 ? "" : ", MariaDB's default") + "), its work included: the server ends a silent session";
  return lockstep::session_assumptions(wait_ms, bound, true, "its connection drops and the server frees its lock",
                             s.command_timeout_ms, "the server keeps the session on its own clock");
}

// The lock table's expiry is the holder's wall clock plus the lease: a lease lock's claims,
// only about the client's side (nothing here reaches a Redis node), and none about clocks.
std::vector<Assumption> table_assumptions(const LockSetup& s) {
  std::vector<Assumption> list;
  for (auto& a : default_assumptions(s.lease_ms, s.command_timeout_ms))
    if (a.hits == "client") list.push_back(std::move(a));
  return list;
}

}  // namespace

std::vector<LockInfo> mysql_locks() {
  std::vector<LockInfo> out;
  LockInfo named{"mysql-named", [](Env& e, const LockParams& p) -> std::unique_ptr<Lock> { return std::make_unique<NamedLock>(e, p); },
                 "MySQL GET_LOCK/RELEASE_LOCK on the lock's own session: held while the server keeps the session", 1,
                 session_options()};
  out.push_back(std::move(named));

  LockInfo for_update{"mysql-for-update",
                      [](Env& e, const LockParams& p) -> std::unique_ptr<Lock> { return std::make_unique<ForUpdateLock>(e, p); },
                      "SELECT … FOR UPDATE on a lock row in a transaction held open; COMMIT releases", 1,
                      session_options()};
  out.push_back(std::move(for_update));

  auto table_options = [] {
    auto o = session_options();
    o.push_back(integer_option("take_over", 1, 0, 1, "take over a row whose expiry passed with a conditional UPDATE (1) or only wait for its DELETE (0)"));
    o.push_back(integer_option("read_first", 0, 0, 1,
                               "1: SELECT the row, judge its expiry in the client, then UPDATE it by name (a hand-made "
                               "lock's read-modify-write); 0: one conditional UPDATE"));
    o.push_back(integer_option("transaction", 0, 0, 1,
                               "1: each attempt in a transaction (BEGIN, the row read FOR UPDATE, COMMIT); 0: autocommit"));
    return o;
  };
  LockInfo table{"mysql-table",
                 [](Env& e, const LockParams& p) -> std::unique_ptr<Lock> { return std::make_unique<TableLock>(e, p, false); },
                 "a lock table with an expiry column: INSERT, take over an expired row, DELETE your own", 1,
                 table_options()};
  out.push_back(std::move(table));

  LockInfo fenced{"mysql-table-fenced",
                  [](Env& e, const LockParams& p) -> std::unique_ptr<Lock> { return std::make_unique<TableLock>(e, p, true); },
                  "the lock table whose row version is a fencing token (release expires the row, never deletes it)", 1,
                  table_options()};
  fenced.fencing_tokens = true;
  out.push_back(std::move(fenced));
  for (auto& l : out) {
    l.service = LockService::MySql;
    l.assumptions_with = l.name == "mysql-named" || l.name == "mysql-for-update" ? session_lock_assumptions : table_assumptions;
  }
  return out;
}

}  // namespace lockstep
