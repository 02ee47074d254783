// The MySQL server process of a World and the SQL sessions of its clients. A statement is
// a message from the client to the server and its answer a message back, on the same
// network as Redis commands, so latency, partitions, pauses and crashes reach SQL locks
// as they reach Redis locks. A connection's end travels too: a client that crashes, gives
// up on a statement or drops its session sends the server a close (the kernel's FIN),
// which a partition loses — then only wait_timeout ends the session.
#include <coroutine>
#include <utility>

#include "lockstep/sim/world.h"

namespace lockstep::sim {

// What a client knows of its connection: the server session it last heard of.
struct SqlConnection {
  uint64_t session = 0;  // 0: not connected; the next statement connects
  uint64_t server_epoch = 0;
  std::shared_ptr<World::SqlCall> last;  // the last statement sent, for the close
};

struct World::SqlCall {
  int client_pid = 0;
  uint64_t client_epoch = 0;
  std::string statement;
  std::vector<SqlValue> params;
  int64_t deadline_ns = 0;
  // The session it runs in: the client's when sent, the server's new one if it connected.
  uint64_t session = 0;
  uint64_t server_epoch = 0;
  std::shared_ptr<SqlConnection> conn;
  // Completion: the answer or the caller's timeout, whichever comes first.
  bool done = false;
  SqlResult result;
  std::coroutine_handle<> waiter;
  Scheduler::EventId timeout;

  void finish(Scheduler& sched, SqlResult r) {
    if (done) return;
    done = true;
    sched.cancel(timeout);
    result = std::move(r);
    if (waiter) std::exchange(waiter, {}).resume();
  }
};

namespace {

struct SqlAwaiter {
  World::SqlCall* call;
  bool await_ready() const noexcept { return call->done; }
  void await_suspend(std::coroutine_handle<> h) noexcept { call->waiter = h; }
  SqlResult await_resume() { return std::move(call->result); }
};

class SimSqlSession : public SqlSession {
 public:
  SimSqlSession(World& world, int pid) : world_(world), pid_(pid), conn_(std::make_shared<SqlConnection>()) {}
  // Dropping a session closes its connection: the server ends it when the close arrives.
  ~SimSqlSession() override {
    if (conn_->last) world_.close_sql(conn_->last);
    conn_->last.reset();  // the last call points back at the connection
  }

  Task<SqlResult> execute(std::string statement, std::vector<SqlValue> params, Nanos timeout) override {
    auto call = std::make_shared<World::SqlCall>();
    call->client_pid = pid_;
    call->client_epoch = world_.process(pid_).epoch;
    call->statement = std::move(statement);
    call->params = std::move(params);
    call->deadline_ns = world_.now() + std::max<int64_t>(timeout.count(), 0);
    call->session = conn_->session;
    call->server_epoch = conn_->server_epoch;
    call->conn = conn_;
    conn_->last = call;
    world_.send_sql(call);
    co_return co_await SqlAwaiter{call.get()};
  }

 private:
  World& world_;
  int pid_;
  std::shared_ptr<SqlConnection> conn_;
};

}  // namespace

int World::add_mysql(const std::string& name, Clock clock, MysqlServer::Settings settings) {
  auto p = new_process(name, clock);
  p->is_node = true;
  const int pid = p->id;
  MysqlServer::Hooks hooks;
  hooks.now_ns = [this] { return sched_.now(); };
  hooks.at = [this, pid](int64_t t, std::function<void()> fn) { post(pid, t, std::move(fn)); };
  hooks.answer = [this](uint64_t session, SqlResult r) { answer_sql(session, std::move(r)); };
  p->mysql = std::make_unique<MysqlServer>(std::move(hooks), settings);
  procs_.push_back(std::move(p));
  mysql_pid_ = pid;
  return pid;
}

void World::send_sql(const std::shared_ptr<SqlCall>& call) {
  const int server = mysql_pid_;
  // Always armed: a statement may wait on the server for as long as its lock does.
  call->timeout = post_epoch(call->client_pid, call->client_epoch, call->deadline_ns, [this, call] {
    if (call->done) return;
    call->finish(sched_, SqlResult::timeout());
    // libmariadb closes the connection after a read timeout; the next statement connects.
    close_sql(call);
    *call->conn = SqlConnection{};
  });
  auto arrival = net_.transit(call->client_pid, server, sched_.now());
  if (!arrival) return;
  sched_.at(*arrival, [this, server, call] {
    Process& p = *procs_[server];
    if (p.crashed) {
      reply_sql(call, SqlResult::error(sql_error::kCantConnect, "Can't connect to MySQL server (connection refused)",
                                       call->session != 0));
      return;
    }
    auto run = [this, server, call] {
      Process& sp = *procs_[server];
      if (call->session != 0 && (call->server_epoch != sp.epoch || !sp.mysql->has_session(call->session))) {
        reply_sql(call, SqlResult::error(sql_error::kServerGone, "MySQL server has gone away", true));
        return;
      }
      if (call->session == 0) {
        call->session = sp.mysql->open();
        call->server_epoch = sp.epoch;
      }
      sql_calls_[call->session] = call;
      sp.mysql->execute(call->session, call->statement, call->params);
    };
    run_in(server, p.epoch, run);
  });
}

void World::answer_sql(uint64_t session, SqlResult result) {
  auto it = sql_calls_.find(session);
  if (it == sql_calls_.end()) return;
  auto call = std::move(it->second);
  sql_calls_.erase(it);
  reply_sql(call, std::move(result));
}

void World::reply_sql(const std::shared_ptr<SqlCall>& call, SqlResult result) {
  auto arrival = net_.transit(mysql_pid_, call->client_pid, sched_.now());
  if (!arrival) return;  // the client's timeout decides
  post_epoch(call->client_pid, call->client_epoch, *arrival, [this, call, result = std::move(result)]() mutable {
    if (call->done) return;
    SqlConnection& conn = *call->conn;
    if (conn.last == call) {
      if (result.ended) conn = SqlConnection{};
      else {
        conn.session = call->session;
        conn.server_epoch = call->server_epoch;
      }
    }
    call->finish(sched_, std::move(result));
  });
}

void World::close_sql(const std::shared_ptr<SqlCall>& last) {
  if (mysql_pid_ < 0) return;
  auto arrival = net_.transit(last->client_pid, mysql_pid_, sched_.now());
  if (!arrival) return;
  const int server = mysql_pid_;
  // Behind the statement on the same link: by then the server has named its session.
  sched_.at(*arrival, [this, server, last] {
    Process& p = *procs_[server];
    auto close = [this, server, last] {
      Process& sp = *procs_[server];
      if (last->session == 0 || last->server_epoch != sp.epoch) return;
      sql_calls_.erase(last->session);
      sp.mysql->close(last->session);
    };
    run_in(server, p.epoch, close);
  });
}

void World::crash_mysql(int pid) {
  // The dying server's sockets close: every statement in progress ends with 2013.
  auto calls = std::move(sql_calls_);
  sql_calls_.clear();
  for (auto& [session, call] : calls) {
    reply_sql(call, SqlResult::error(sql_error::kServerLost, "Lost connection to MySQL server during query", true));
  }
  procs_[pid]->mysql->crash();
}

std::unique_ptr<SqlSession> SimEnv::sql_session() {
  if (world_.mysql_process() < 0) return std::make_unique<NoSqlServer>();
  return std::make_unique<SimSqlSession>(world_, pid_);
}

}  // namespace lockstep::sim
