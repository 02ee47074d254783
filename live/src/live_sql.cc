// LiveEnv's SQL sessions: lockstep/sql.h over libmariadb's non-blocking API on the run's
// libevent loop. libmariadb is driven from socket events (never a blocking call on the
// loop's thread); a finished statement's answer is posted to its client like a Redis
// reply, so a paused client gets it only when the pause ends and a crashed one never.
// Each connection goes to the MySQL address the world routes it to (the fault proxy), so
// partitions, delays and a paused server reach SQL as they reach Redis.
#include <event2/event.h>
#include <sys/socket.h>

#include <coroutine>
#include <functional>
#include <optional>
#include <utility>

#include "child_processes.h"
#include "lockstep/live/live_world.h"

#ifdef LOCKSTEP_HAVE_MARIADB
#include <mysql.h>
#endif

namespace lockstep::live {

#ifdef LOCKSTEP_HAVE_MARIADB
namespace {

// Completed by whichever comes first: the answer or the caller's timeout.
struct SqlCallState {
  bool done = false;
  SqlResult result;
  std::coroutine_handle<> waiter;
  EventLoop::TimerId timer = 0;

  void finish(SqlResult r) {
    if (done) return;
    done = true;
    result = std::move(r);
    if (waiter) std::exchange(waiter, {}).resume();
  }
};

// Plain pointer, no destructor: see CallAwaiter in live_env.cc (GCC 12's double
// destruction of co_await temporaries).
struct SqlAwaiter {
  SqlCallState* st;
  bool await_ready() const noexcept { return st->done; }
  void await_suspend(std::coroutine_handle<> h) noexcept { st->waiter = h; }
  SqlResult await_resume() { return std::move(st->result); }
};

// libmariadb's client errors that mean the connection is gone with its session.
bool connection_gone(unsigned e) { return e == 2006 || e == 2013 || e == 2055 || e == 4031 || e == 1927; }

// One connection and the statement running on it, driven by socket events.
class SqlConnection {
 public:
  SqlConnection(LiveWorld& world, int client) : world_(world), client_(client) {}
  ~SqlConnection() { abandon(); }

  // Runs `sql` (connecting first if needed); `done` gets the result on the loop's thread,
  // from inside a socket event or a deferred call, never from inside this call.
  void run(std::string sql, std::vector<SqlValue> params, std::function<void(SqlResult)> done) {
    done_ = std::move(done);
    statement_ = std::move(sql);
    params_ = std::move(params);
    if (!mysql_) {
      connect();
      return;
    }
    query();
  }

  // Drops the connection at once (the server sees it close) and the statement's answer
  // with it: after a timeout, a crash, the end of the session object.
  void abandon() {
    done_ = nullptr;
    close();
  }

  bool connected() const { return mysql_ != nullptr && !connecting_; }

 private:
  using Cont = std::function<int(MYSQL*, int)>;

  void close() {
    if (ev_) {
      event_free(ev_);
      ev_ = nullptr;
    }
    if (!mysql_) return;
    MYSQL* m = std::exchange(mysql_, nullptr);
    const int fd = static_cast<int>(mysql_get_socket(m));
    if (fd >= 0) shutdown(fd, SHUT_RDWR);
    // A statement in the middle of its exchange fails at once on the shut socket.
    for (int i = 0; i < 8 && status_ != 0 && cont_; ++i) status_ = cont_(m, MYSQL_WAIT_READ | MYSQL_WAIT_WRITE);
    status_ = 0;
    then_ = nullptr;
    if (result_) mysql_free_result(std::exchange(result_, nullptr));
    mysql_close(m);
  }

  void connect() {
    const std::optional<NodeAddress> at = world_.mysql_address(client_);
    if (!at) {
      finish(SqlResult::error(sql_error::kNoServer, "this world has no MySQL server"));
      return;
    }
    mysql_ = mysql_init(nullptr);
    if (!mysql_) {
      finish(SqlResult::error(sql_error::kCantConnect, "cannot allocate a connection"));
      return;
    }
    mysql_options(mysql_, MYSQL_OPT_NONBLOCK, nullptr);
    connecting_ = true;
    MYSQL* ret = nullptr;
    status_ = mysql_real_connect_start(&ret, mysql_, at->host.c_str(), "root", nullptr, "lockstep", at->port, nullptr, 0);
    cont_ = [](MYSQL* m, int ready) {
      MYSQL* r = nullptr;
      return mysql_real_connect_cont(&r, m, ready);
    };
    step([this] {
      connecting_ = false;
      if (mysql_errno(mysql_) != 0) {
        const unsigned e = mysql_errno(mysql_);
        std::string why = mysql_error(mysql_);
        close();
        // Whatever stopped it (no server, a cut link), no session began.
        finish(SqlResult::error(sql_error::kCantConnect, "Can't connect to MySQL server (" + std::to_string(e) + ": " + why + ")",
                                true));
        return;
      }
      children::close_on_exec(static_cast<int>(mysql_get_socket(mysql_)));
      query();
    });
  }

  std::string quoted(const std::string& v) {
    std::string out(v.size() * 2 + 1, '\0');
    out.resize(mysql_real_escape_string(mysql_, out.data(), v.data(), static_cast<unsigned long>(v.size())));
    return "'" + out + "'";
  }

  void query() {
    // Each `?` takes the next parameter as a string literal (or NULL), as sql.h says.
    sql_.clear();
    size_t next = 0;
    for (char ch : statement_) {
      if (ch == '?' && next < params_.size()) {
        const SqlValue& p = params_[next++];
        sql_ += p ? quoted(*p) : "NULL";
      } else {
        sql_ += ch;
      }
    }
    int ret = 0;
    status_ = mysql_real_query_start(&ret, mysql_, sql_.data(), static_cast<unsigned long>(sql_.size()));
    cont_ = [](MYSQL* m, int ready) {
      int r = 0;
      return mysql_real_query_cont(&r, m, ready);
    };
    step([this] {
      if (mysql_errno(mysql_) != 0) return failed();
      MYSQL_RES* res = nullptr;
      status_ = mysql_store_result_start(&res, mysql_);
      cont_ = [this](MYSQL* m, int ready) {
        MYSQL_RES* r = nullptr;
        const int s = mysql_store_result_cont(&r, m, ready);
        if (s == 0) result_ = r;
        return s;
      };
      if (status_ == 0) result_ = res;
      step([this] {
        MYSQL_RES* r = std::exchange(result_, nullptr);
        if (!r) {
          if (mysql_errno(mysql_) != 0) return failed();
          finish(SqlResult::ok_affected(static_cast<int64_t>(mysql_affected_rows(mysql_))));
          return;
        }
        std::vector<std::vector<SqlValue>> rows;
        const unsigned fields = mysql_num_fields(r);
        while (MYSQL_ROW row = mysql_fetch_row(r)) {
          const unsigned long* lengths = mysql_fetch_lengths(r);
          std::vector<SqlValue> cells;
          for (unsigned i = 0; i < fields; ++i) cells.push_back(row[i] ? SqlValue(std::string(row[i], lengths[i])) : SqlValue());
          rows.push_back(std::move(cells));
        }
        mysql_free_result(r);
        finish(SqlResult::ok_rows(std::move(rows)));
      });
    });
  }

  // The statement's error; a lost connection ends the session and the next statement
  // connects anew.
  void failed() {
    const unsigned e = mysql_errno(mysql_);
    std::string why = mysql_error(mysql_);
    if (connection_gone(e)) {
      close();
      const int code = e == 2006 ? sql_error::kServerGone : sql_error::kServerLost;
      finish(SqlResult::error(code, why, true));
      return;
    }
    finish(SqlResult::error(static_cast<int>(e), why));
  }

  void finish(SqlResult r) {
    auto done = std::exchange(done_, nullptr);
    if (done) done(std::move(r));
  }

  // Waits for what libmariadb asked for, calls it again, until the call is over; then
  // `then`.
  void step(std::function<void()> then) {
    then_ = std::move(then);
    if (status_ == 0) {
      auto t = std::exchange(then_, nullptr);
      t();
      return;
    }
    arm();
  }

  void arm() {
    const int fd = static_cast<int>(mysql_get_socket(mysql_));
    short what = 0;
    if (status_ & MYSQL_WAIT_READ) what |= EV_READ;
    if (status_ & MYSQL_WAIT_WRITE) what |= EV_WRITE;
    if (ev_) event_free(ev_);
    ev_ = event_new(world_.loop().base(), fd, what, &SqlConnection::on_event, this);
    timeval tv{};
    timeval* timeout = nullptr;
    if (status_ & MYSQL_WAIT_TIMEOUT) {
      const unsigned ms = mysql_get_timeout_value_ms(mysql_);
      tv.tv_sec = ms / 1000;
      tv.tv_usec = (ms % 1000) * 1000;
      timeout = &tv;
    }
    event_add(ev_, timeout);
  }

  static void on_event(evutil_socket_t, short what, void* arg) {
    auto* self = static_cast<SqlConnection*>(arg);
    int ready = 0;
    if (what & EV_READ) ready |= MYSQL_WAIT_READ;
    if (what & EV_WRITE) ready |= MYSQL_WAIT_WRITE;
    if (what & EV_TIMEOUT) ready |= MYSQL_WAIT_TIMEOUT;
    self->status_ = self->cont_(self->mysql_, ready);
    if (self->status_ != 0) {
      self->arm();
      return;
    }
    auto then = std::exchange(self->then_, nullptr);
    if (then) then();
  }

  LiveWorld& world_;
  int client_;
  MYSQL* mysql_ = nullptr;
  MYSQL_RES* result_ = nullptr;
  bool connecting_ = false;
  int status_ = 0;
  Cont cont_ = nullptr;
  event* ev_ = nullptr;
  std::function<void()> then_;
  std::function<void(SqlResult)> done_;
  std::string statement_, sql_;
  std::vector<SqlValue> params_;
};

class LiveSqlSession : public SqlSession {
 public:
  LiveSqlSession(LiveWorld& world, int client)
      : world_(world), client_(client), conn_(std::make_shared<SqlConnection>(world, client)) {}
  ~LiveSqlSession() override {
    if (timer_) world_.loop().cancel(timer_);
  }

  Task<SqlResult> execute(std::string statement, std::vector<SqlValue> params, Nanos timeout) override {
    auto st = std::make_shared<SqlCallState>();
    const uint64_t epoch = world_.epoch(client_);
    LiveWorld* w = &world_;
    const int c = client_;
    std::weak_ptr<SqlConnection> weak_conn = conn_;
    std::weak_ptr<SqlCallState> weak = st;
    conn_->run(std::move(statement), std::move(params), [w, c, epoch, weak](SqlResult r) {
      auto s = weak.lock();
      if (!s) return;
      w->post(c, epoch, [s, r = std::move(r)]() mutable { s->finish(std::move(r)); });
    });
    // The timeout reaches the client like any other event (held while it is paused), so
    // an answer that arrived during a pause still wins; if it fires first, the client
    // closes the connection as libmariadb does after a read timeout.
    timer_ = world_.loop().after(std::max(timeout, Nanos(0)), [this, w, c, epoch, weak, weak_conn] {
      timer_ = 0;
      w->post(c, epoch, [weak, weak_conn] {
        auto s = weak.lock();
        if (!s || s->done) return;
        if (auto conn = weak_conn.lock()) conn->abandon();
        s->finish(SqlResult::timeout());
      });
    });
    SqlResult r = co_await SqlAwaiter{st.get()};
    if (timer_) world_.loop().cancel(std::exchange(timer_, 0));
    co_return r;
  }

 private:
  LiveWorld& world_;
  int client_;
  std::shared_ptr<SqlConnection> conn_;
  EventLoop::TimerId timer_ = 0;
};

}  // namespace

std::unique_ptr<SqlSession> LiveEnv::sql_session() {
  if (!world_.has_mysql()) return std::make_unique<NoSqlServer>();
  return std::make_unique<LiveSqlSession>(world_, client_);
}

#else

std::unique_ptr<SqlSession> LiveEnv::sql_session() { return std::make_unique<NoSqlServer>(); }

#endif

}  // namespace lockstep::live
