// The simulated MySQL server against a real MariaDB: the same statements, session by
// session and in the same order, must get the same answers — rows, affected counts, error
// numbers, and sessions ending where the real server ends them. Connection ids differ
// between the two servers, so a cell holding a session's id is compared as that session's
// name. The MariaDB server is the live world's (live::MariaDbServer), here on a Unix socket
// of its own (no TCP port), and is stopped after each test.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <map>
#include <thread>

#include "lockstep/live/mariadb_server.h"
#include "lockstep/sim/mysql_server.h"

#ifdef LOCKSTEP_HAVE_MARIADB
#include <mysql.h>
#endif

namespace lockstep::testing {
namespace {

#ifdef LOCKSTEP_HAVE_MARIADB

using Rows = std::vector<std::vector<SqlValue>>;

// What is compared of one answer.
struct Answer {
  bool ok = true;
  int error = 0;       // a server error's number; 2006 and 2013 both read as kEnded
  Rows rows;
  int64_t affected = -1;  // statements without a result set only
  bool operator==(const Answer&) const = default;
};
constexpr int kEnded = 2006;

std::string show(const Answer& a) {
  if (!a.ok) return "error " + std::to_string(a.error);
  std::string out = "ok";
  if (a.affected >= 0) out += " affected " + std::to_string(a.affected);
  for (const auto& row : a.rows) {
    out += " [";
    for (size_t i = 0; i < row.size(); ++i) out += (i ? ", " : "") + (row[i] ? *row[i] : std::string("NULL"));
    out += "]";
  }
  return out;
}

// The simulated server, driven by hand: its timers run in time order whenever a statement
// waits for an answer or a test lets time pass.
class SimServer {
 public:
  SimServer() {
    sim::MysqlServer::Hooks hooks;
    hooks.now_ns = [this] { return now_; };
    hooks.at = [this](int64_t t, std::function<void()> fn) { timers_.emplace(std::max(t, now_), std::move(fn)); };
    hooks.answer = [this](uint64_t id, SqlResult r) { answers_[id] = std::move(r); };
    server_ = std::make_unique<sim::MysqlServer>(std::move(hooks));
  }

  uint64_t open() { return server_->open(); }

  SqlResult run(uint64_t id, const std::string& text, const std::vector<SqlValue>& params) {
    if (!server_->has_session(id)) return SqlResult::error(sql_error::kServerGone, "gone", true);
    server_->execute(id, text, params);
    while (!answers_.count(id) && !timers_.empty()) step();
    SqlResult r = std::move(answers_[id]);
    answers_.erase(id);
    return r;
  }

  void sleep(std::chrono::milliseconds d) {
    const int64_t until = now_ + d.count() * 1'000'000;
    while (!timers_.empty() && timers_.begin()->first <= until) step();
    now_ = until;
  }

 private:
  void step() {
    auto it = timers_.begin();
    now_ = it->first;
    auto fn = std::move(it->second);
    timers_.erase(it);
    fn();
  }

  int64_t now_ = 1'000'000'000;
  std::multimap<int64_t, std::function<void()>> timers_;
  std::map<uint64_t, SqlResult> answers_;
  std::unique_ptr<sim::MysqlServer> server_;
};

// The live world's MariaDB server, on its socket only.
class MariaDb {
 public:
  // Empty when it runs; else why not.
  std::string start() {
    live::MariaDbSettings settings;
    settings.tcp = false;
    return server_.start(settings);
  }

  MYSQL* connect(const char* db = "lockstep") const {
    MYSQL* c = mysql_init(nullptr);
    if (!c) return nullptr;
    if (!mysql_real_connect(c, nullptr, "root", nullptr, db, 0, server_.socket_path().c_str(), 0)) {
      mysql_close(c);
      return nullptr;
    }
    return c;
  }

 private:
  live::MariaDbServer server_;
};

// Both servers, and each named session on both.
class Differential {
 public:
  explicit Differential(MariaDb& db) : db_(db) {}
  ~Differential() {
    for (auto& [name, s] : sessions_)
      if (s.real) mysql_close(s.real);
  }

  void open(const std::string& name) {
    Session& s = sessions_[name];
    s.real = db_.connect();
    ASSERT_NE(s.real, nullptr) << "cannot connect to mariadbd";
    s.sim = sim_.open();
    s.real_id = static_cast<int64_t>(mysql_thread_id(s.real));
  }

  // Runs the statement on the session in both servers and expects the same answer.
  void expect_same(const std::string& name, const std::string& text, std::vector<SqlValue> params = {}) {
    Session& s = sessions_.at(name);
    // Only these statements answer with a connection id; elsewhere a 1 is a 1.
    const bool ids = text.find("CONNECTION_ID") != std::string::npos || text.find("IS_USED_LOCK") != std::string::npos;
    // A SELECT answers with a result set, empty or not; other statements with a count.
    const bool select = text.rfind("SELECT", 0) == 0;
    Answer real = real_answer(s.real, text, params);
    Answer sim = sim_answer(sim_.run(s.sim, text, params));
    if (select && sim.ok) sim.affected = -1;
    if (ids) {
      real = named(std::move(real), true);
      sim = named(std::move(sim), false);
    }
    EXPECT_EQ(sim, real) << name << ": " << text << "\n  simulated: " << show(sim) << "\n  MariaDB:   " << show(real);
  }

  void sleep(std::chrono::milliseconds d) {
    std::this_thread::sleep_for(d);
    sim_.sleep(d);
  }

 private:
  struct Session {
    MYSQL* real = nullptr;
    uint64_t sim = 0;
    int64_t real_id = 0;
  };

  static Answer sim_answer(const SqlResult& r) {
    Answer a;
    a.ok = r.ok();
    if (!a.ok) {
      a.error = r.ended || r.error_code == sql_error::kServerLost ? kEnded : r.error_code;
      return a;
    }
    a.rows = r.rows;
    a.affected = r.affected_rows;
    return a;
  }

  static std::string quoted(MYSQL* c, const std::string& v) {
    std::string out(v.size() * 2 + 1, '\0');
    out.resize(mysql_real_escape_string(c, out.data(), v.data(), v.size()));
    return "'" + out + "'";
  }

  // The statement with each `?` replaced by its parameter as a string literal, as the
  // simulated session's contract has it.
  static Answer real_answer(MYSQL* c, const std::string& text, const std::vector<SqlValue>& params) {
    std::string sql;
    size_t next = 0;
    for (char ch : text) {
      if (ch == '?' && next < params.size()) {
        const SqlValue& p = params[next++];
        sql += p ? quoted(c, *p) : "NULL";
      } else {
        sql += ch;
      }
    }
    Answer a;
    if (mysql_real_query(c, sql.data(), sql.size()) != 0) {
      a.ok = false;
      const unsigned e = mysql_errno(c);
      a.error = e == 2006 || e == 2013 ? kEnded : static_cast<int>(e);
      return a;
    }
    if (MYSQL_RES* res = mysql_store_result(c)) {
      const unsigned fields = mysql_num_fields(res);
      while (MYSQL_ROW row = mysql_fetch_row(res)) {
        const unsigned long* lengths = mysql_fetch_lengths(res);
        std::vector<SqlValue> cells;
        for (unsigned i = 0; i < fields; ++i)
          cells.push_back(row[i] ? SqlValue(std::string(row[i], lengths[i])) : SqlValue());
        a.rows.push_back(std::move(cells));
      }
      mysql_free_result(res);
    } else {
      a.affected = static_cast<int64_t>(mysql_affected_rows(c));
    }
    return a;
  }

  // A cell that is some session's connection id reads as that session's name.
  Answer named(Answer a, bool real) const {
    for (auto& row : a.rows) {
      for (auto& cell : row) {
        if (!cell) continue;
        for (const auto& [name, s] : sessions_) {
          const std::string id = std::to_string(real ? s.real_id : static_cast<int64_t>(s.sim));
          if (*cell == id) cell = "<" + name + ">";
        }
      }
    }
    return a;
  }

  MariaDb& db_;
  SimServer sim_;
  std::map<std::string, Session> sessions_;
};

#define START_MARIADB(db)                                  \
  MariaDb db;                                              \
  if (std::string why = db.start(); !why.empty()) {        \
    if (why.find("not installed") != std::string::npos) {  \
      GTEST_SKIP() << why;                                 \
    }                                                      \
    FAIL() << why;                                         \
  }

TEST(MysqlLiveDifferential, NamedLocksAnswerAsMariaDb) {
  START_MARIADB(db);
  Differential d(db);
  d.open("a");
  d.open("b");
  d.expect_same("a", "SELECT CONNECTION_ID()");
  d.expect_same("a", "SELECT GET_LOCK(?, ?)", {"k", "0"});
  d.expect_same("b", "SELECT GET_LOCK(?, ?)", {"k", "0"});
  d.expect_same("b", "SELECT IS_FREE_LOCK(?)", {"k"});
  d.expect_same("b", "SELECT IS_USED_LOCK(?)", {"k"});
  d.expect_same("a", "SELECT GET_LOCK(?, ?)", {"k", "0"});  // again: held twice
  d.expect_same("a", "SELECT RELEASE_LOCK(?)", {"k"});
  d.expect_same("b", "SELECT GET_LOCK(?, ?)", {"k", "0.3"});  // waits 0.3 s in vain
  d.expect_same("a", "SELECT RELEASE_LOCK(?)", {"k"});
  d.expect_same("a", "SELECT RELEASE_LOCK(?)", {"k"});  // no one holds it
  d.expect_same("b", "SELECT GET_LOCK(?, ?)", {"k", "0"});
  d.expect_same("a", "SELECT RELEASE_LOCK(?)", {"k"});  // another session's
  d.expect_same("b", "SELECT GET_LOCK(?, ?)", {"other", "0"});
  d.expect_same("b", "SELECT RELEASE_ALL_LOCKS()");
  d.expect_same("a", "SELECT IS_FREE_LOCK(?)", {"k"});
  d.expect_same("a", "SELECT IS_USED_LOCK(?)", {"k"});
  d.expect_same("a", "SELECT 1");
}

TEST(MysqlLiveDifferential, LockTableStatementsAnswerAsMariaDb) {
  START_MARIADB(db);
  Differential d(db);
  d.open("a");
  d.open("b");
  const std::string create =
      "CREATE TABLE IF NOT EXISTS locks (name VARCHAR(255) PRIMARY KEY, owner VARCHAR(255), expires_at BIGINT, "
      "version BIGINT)";
  const std::string insert = "INSERT INTO locks (name, owner, expires_at, version) VALUES (?, ?, ?, ?)";
  const std::string select = "SELECT owner, expires_at, version FROM locks WHERE name = ?";
  const std::string take_over =
      "UPDATE locks SET owner = ?, expires_at = ?, version = version + 1 WHERE name = ? AND expires_at < ?";
  d.expect_same("a", create);
  d.expect_same("b", create);  // IF NOT EXISTS: already there
  d.expect_same("a", insert, {"k", "alice", "1000", "1"});
  d.expect_same("b", insert, {"k", "bob", "2000", "1"});  // 1062: the name is taken
  d.expect_same("b", select, {"k"});
  d.expect_same("b", take_over, {"bob", "2000", "k", "500"});   // not expired at 500
  d.expect_same("b", take_over, {"bob", "3000", "k", "1500"});  // expired: taken over
  d.expect_same("a", select, {"k"});
  // A read-first takeover's write: by name alone, whatever the row holds.
  const std::string by_name = "UPDATE locks SET owner = ?, expires_at = ?, version = version + 1 WHERE name = ?";
  d.expect_same("a", by_name, {"carol", "4000", "k"});
  d.expect_same("a", by_name, {"carol", "4000", "missing"});  // no row: 0 affected
  d.expect_same("a", by_name, {"carol", "later", "k"});       // 1366
  d.expect_same("a", select, {"k"});
  d.expect_same("b", take_over, {"bob", "3000", "k", "5000"});  // carol's expired too
  d.expect_same("a", select, {"k"});
  d.expect_same("a", "UPDATE locks SET expires_at = ? WHERE name = ? AND owner = ?", {"9000", "k", "alice"});
  d.expect_same("b", "UPDATE locks SET expires_at = ? WHERE name = ? AND owner = ?", {"9000", "k", "bob"});
  d.expect_same("a", "DELETE FROM locks WHERE name = ? AND owner = ?", {"k", "alice"});
  d.expect_same("b", "DELETE FROM locks WHERE name = ? AND owner = ?", {"k", "bob"});
  d.expect_same("a", select, {"k"});
  d.expect_same("a", insert, {"n", SqlValue(), SqlValue(), "0"});  // NULL owner and expiry
  d.expect_same("a", select, {"n"});
  d.expect_same("a", insert, {"x", "alice", "soon", "1"});  // 1366: not a number (strict mode)
  d.expect_same("a", "SELECT owner, expires_at, version FROM no_such_table WHERE name = ?", {"k"});  // 1146
}

TEST(MysqlLiveDifferential, TransactionsAndRowLocksAnswerAsMariaDb) {
  START_MARIADB(db);
  Differential d(db);
  d.open("a");
  d.open("b");
  d.expect_same("a", "CREATE TABLE IF NOT EXISTS locks (name VARCHAR(255) PRIMARY KEY, owner VARCHAR(255), "
                     "expires_at BIGINT, version BIGINT)");
  d.expect_same("a", "INSERT INTO locks (name, owner, expires_at, version) VALUES (?, ?, ?, ?)", {"k", SqlValue(), SqlValue(), "0"});
  d.expect_same("b", "SET SESSION innodb_lock_wait_timeout = ?", {"1"});  // 1232: a quoted value
  d.expect_same("b", "SET SESSION innodb_lock_wait_timeout = 1");
  d.expect_same("a", "BEGIN");
  d.expect_same("a", "SELECT owner, expires_at, version FROM locks WHERE name = ? FOR UPDATE", {"k"});
  d.expect_same("b", "BEGIN");
  d.expect_same("b", "SELECT owner, expires_at, version FROM locks WHERE name = ? FOR UPDATE", {"k"});  // 1205 after 1 s
  d.expect_same("b", "ROLLBACK");
  d.expect_same("a", "UPDATE locks SET owner = ?, expires_at = ?, version = version + 1 WHERE name = ? AND expires_at < ?",
                {"alice", "100", "k", "50"});  // expires_at NULL: no row matches
  d.expect_same("a", "UPDATE locks SET expires_at = ? WHERE name = ? AND owner = ?", {"100", "k", "nobody"});
  d.expect_same("b", "SELECT owner, expires_at, version FROM locks WHERE name = ?", {"k"});  // a consistent read
  d.expect_same("a", "COMMIT");
  d.expect_same("b", "SELECT owner, expires_at, version FROM locks WHERE name = ? FOR UPDATE", {"k"});  // autocommit: free now
  d.expect_same("a", "START TRANSACTION");
  d.expect_same("a", "DELETE FROM locks WHERE name = ? AND owner = ?", {"k", SqlValue()});  // owner = NULL matches nothing
  d.expect_same("a", "ROLLBACK");
  d.expect_same("b", "SELECT owner, expires_at, version FROM locks WHERE name = ?", {"k"});
}

// A session silent past its wait_timeout is ended by the server, its named lock freed;
// the client learns it at its next statement.
TEST(MysqlLiveDifferential, AnIdleSessionEndsAtItsWaitTimeout) {
  START_MARIADB(db);
  Differential d(db);
  d.open("a");
  d.open("b");
  d.expect_same("a", "SET SESSION wait_timeout = 1");
  d.expect_same("a", "SELECT GET_LOCK(?, ?)", {"k", "0"});
  d.expect_same("b", "SELECT IS_FREE_LOCK(?)", {"k"});
  d.sleep(std::chrono::milliseconds(2500));
  d.expect_same("b", "SELECT IS_FREE_LOCK(?)", {"k"});
  d.expect_same("a", "SELECT 1");  // the session is gone
}

#else

TEST(MysqlLiveDifferential, NeedsLibmariadb) {
  GTEST_SKIP() << "built without libmariadb (scripts/setup installs libmariadb-dev): the simulated MySQL server is "
                  "not compared with a real one";
}

#endif

}  // namespace
}  // namespace lockstep::testing
