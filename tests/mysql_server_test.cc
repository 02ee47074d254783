// The simulated MySQL server, through the SQL sessions of simulated clients: named locks,
// row locks and the lock table's statements, and how sessions end (connection loss,
// wait_timeout, a crash) under the world's faults.
#include <gtest/gtest.h>

#include <concepts>

#include "sim_harness.h"

namespace lockstep::testing {
namespace {

using Rows = std::vector<std::vector<SqlValue>>;

struct Step {
  std::string statement;
  std::vector<SqlValue> params;
  int64_t wait_ms = 0;       // slept before the statement
  int64_t timeout_ms = 60'000;
};

struct Outcome {
  SqlResult result;
  int64_t at_ms = 0;  // true time the answer came back
};

// Runs the steps on one session of a client, in order; the session ends with the script.
Task<std::vector<Outcome>> script(sim::World& world, Env& env, std::vector<Step> steps) {
  auto session = env.sql_session();
  std::vector<Outcome> out;
  for (auto& s : steps) {
    if (s.wait_ms) co_await env.sleep(Millis(s.wait_ms));
    SqlResult r = co_await session->execute(s.statement, s.params, Millis(s.timeout_ms));
    out.push_back({std::move(r), world.now() / kMs});
  }
  co_return out;
}

struct MysqlWorld : SimHarness {
  MysqlWorld() : SimHarness(3, 0, 1) { server = world.add_mysql("mysql", sim::Clock()); }
  using Slot = std::shared_ptr<std::optional<std::vector<Outcome>>>;
  Slot run(int client, int64_t t_ms, std::vector<Step> steps) {
    auto out = slot<std::vector<Outcome>>();
    start<std::vector<Outcome>>(client, t_ms, out, [this, steps](Env& e) { return script(world, e, steps); });
    return out;
  }
  int server = -1;
};

SqlValue v(const char* s) { return SqlValue(s); }
template <std::integral T>
SqlValue v(T n) {
  return SqlValue(std::to_string(n));
}
const SqlValue kNull;
const char* kTable = "CREATE TABLE IF NOT EXISTS locks (name VARCHAR(255) PRIMARY KEY, owner VARCHAR(255), expires_at BIGINT, version BIGINT)";
const char* kInsert = "INSERT INTO locks (name, owner, expires_at, version) VALUES (?, ?, ?, ?)";
const char* kSelect = "SELECT owner, expires_at, version FROM locks WHERE name = ?";
const char* kForUpdate = "SELECT owner, expires_at, version FROM locks WHERE name = ? FOR UPDATE";
const char* kTakeOver = "UPDATE locks SET owner = ?, expires_at = ?, version = version + 1 WHERE name = ? AND expires_at < ?";
const char* kExtend = "UPDATE locks SET expires_at = ? WHERE name = ? AND owner = ?";
const char* kDelete = "DELETE FROM locks WHERE name = ? AND owner = ?";

TEST(MysqlStatements, RecognisedByShapeWhateverTheSpacingAndCase) {
  auto s = sim::MysqlServer::recognise("  select   get_lock( ?,?) ;");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->kind, sim::MysqlServer::Kind::GetLock);
  EXPECT_EQ(s->param_count, 2u);
  auto u = sim::MysqlServer::recognise("update Lock_Rows set owner=?, expires_at=?, version=version+1\n where name=? and expires_at<?");
  ASSERT_TRUE(u);
  EXPECT_EQ(u->kind, sim::MysqlServer::Kind::UpdateTakeOver);
  EXPECT_EQ(u->table, "lock_rows");
  auto by_name = sim::MysqlServer::recognise("UPDATE locks SET owner = ?, expires_at = ?, version = version + 1 WHERE name = ?");
  ASSERT_TRUE(by_name);
  EXPECT_EQ(by_name->kind, sim::MysqlServer::Kind::UpdateOwner);
  EXPECT_EQ(by_name->param_count, 3u);
  EXPECT_FALSE(sim::MysqlServer::recognise("SELECT GET_LOCK(?, ?) FROM dual"));
  EXPECT_FALSE(sim::MysqlServer::recognise("DELETE FROM locks WHERE name = ?"));
}

TEST(MysqlNamedLock, ReturnValuesAsTheServerGivesThem) {
  MysqlWorld h;
  auto a = h.run(0, 0, {{"SELECT GET_LOCK(?, ?)", {v("a"), v(0)}},
                        {"SELECT GET_LOCK(?, ?)", {v("a"), v(0)}},  // the same session again
                        {"SELECT CONNECTION_ID()", {}},
                        {"SELECT RELEASE_LOCK(?)", {v("a")}, 100},
                        {"SELECT RELEASE_LOCK(?)", {v("a")}},
                        {"SELECT RELEASE_LOCK(?)", {v("a")}}});
  auto b = h.run(1, 50, {{"SELECT GET_LOCK(?, ?)", {v("a"), v(0)}},
                         {"SELECT IS_USED_LOCK(?)", {v("a")}},
                         {"SELECT IS_FREE_LOCK(?)", {v("a")}},
                         {"SELECT RELEASE_LOCK(?)", {v("a")}},
                         {"SELECT IS_USED_LOCK(?)", {v("nobody")}}});
  h.run_until_ms(1000);
  ASSERT_TRUE(*a && *b);
  const auto& x = **a;
  const auto& y = **b;
  EXPECT_EQ(x[0].result.scalar(), v("1"));
  EXPECT_EQ(x[1].result.scalar(), v("1"));
  EXPECT_EQ(y[0].result.scalar(), v("0"));  // held by another session, no wait
  EXPECT_EQ(y[1].result.scalar(), x[2].result.scalar());
  EXPECT_EQ(y[2].result.scalar(), v("0"));
  EXPECT_EQ(y[3].result.scalar(), v("0"));  // not its lock
  EXPECT_EQ(y[4].result.scalar(), kNull);
  EXPECT_EQ(x[3].result.scalar(), v("1"));  // taken twice, released twice
  EXPECT_EQ(x[4].result.scalar(), v("1"));
  EXPECT_EQ(x[5].result.scalar(), kNull);   // no one holds it
}

TEST(MysqlNamedLock, AWaiterGetsTheLockWhenReleasedOrGivesUpAtItsTimeout) {
  MysqlWorld h;
  h.run(0, 0, {{"SELECT GET_LOCK(?, ?)", {v("a"), v(0)}}, {"SELECT RELEASE_LOCK(?)", {v("a")}, 300}});
  auto waiter = h.run(1, 10, {{"SELECT GET_LOCK(?, ?)", {v("a"), v(10)}}});
  auto quitter = h.run(2, 10, {{"SELECT GET_LOCK(?, ?)", {v("a"), v("0.05")}}});
  h.run_until_ms(2000);
  ASSERT_TRUE(*waiter && *quitter);
  EXPECT_EQ((**waiter)[0].result.scalar(), v("1"));
  EXPECT_GE((**waiter)[0].at_ms, 301);
  EXPECT_EQ((**quitter)[0].result.scalar(), v("0"));
  EXPECT_EQ((**quitter)[0].at_ms, 10 + 1 + 50 + 1);  // its 50 ms, counted on the server
}

TEST(MysqlSession, AClientCrashEndsItsSessionAndFreesItsLock) {
  MysqlWorld h;
  h.run(0, 0, {{"SELECT GET_LOCK(?, ?)", {v("a"), v(0)}}, {"SELECT 1", {}, 10'000}});
  h.world.scheduler().at(100 * kMs, [&h] { h.world.crash(h.client[0]); });
  auto b = h.run(1, 10, {{"SELECT GET_LOCK(?, ?)", {v("a"), v(5)}}});
  h.run_until_ms(1000);
  ASSERT_TRUE(*b);
  EXPECT_EQ((**b)[0].result.scalar(), v("1"));
  EXPECT_EQ((**b)[0].at_ms, 100 + 1 + 1);  // the close's trip, then the answer's
}

TEST(MysqlSession, ACutOffHolderKeepsItsLockUntilWaitTimeoutThenFindsItsSessionGone) {
  MysqlWorld h;
  auto a = h.run(0, 0, {{"SET SESSION wait_timeout = 2", {}},
                        {"SELECT GET_LOCK(?, ?)", {v("a"), v(0)}},
                        {"SELECT RELEASE_LOCK(?)", {v("a")}, 4000},
                        {"SELECT CONNECTION_ID()", {}}});
  auto b = h.run(1, 10, {{"SELECT GET_LOCK(?, ?)", {v("a"), v(10)}}});
  // The partition starts after the holder's last answer and heals before its next statement:
  // the server never hears from it, and ends the session at wait_timeout.
  h.world.scheduler().at(100 * kMs, [&h] {
    h.world.network().block(h.client[0], h.server, 1);
    h.world.network().block(h.server, h.client[0], 1);
  });
  h.world.scheduler().at(3000 * kMs, [&h] {
    h.world.network().block(h.client[0], h.server, -1);
    h.world.network().block(h.server, h.client[0], -1);
  });
  h.run_until_ms(10'000);
  ASSERT_TRUE(*a && *b);
  const auto& x = **a;
  EXPECT_EQ(x[1].result.scalar(), v("1"));
  EXPECT_EQ((**b)[0].result.scalar(), v("1"));
  EXPECT_EQ((**b)[0].at_ms, x[1].at_ms - 1 + 2000 + 1);  // the server's idle clock starts at its answer
  EXPECT_TRUE(x[2].result.is_error(sql_error::kServerGone));
  EXPECT_TRUE(x[2].result.ended);
  ASSERT_TRUE(x[3].result.ok());  // a new session
  EXPECT_NE(x[3].result.scalar(), v("1"));
}

TEST(MysqlSession, AHolderPausedPastWaitTimeoutLosesItsLock) {
  MysqlWorld h;
  auto a = h.run(0, 0, {{"SET SESSION wait_timeout = 1", {}},
                        {"SELECT GET_LOCK(?, ?)", {v("a"), v(0)}},
                        {"SELECT IS_USED_LOCK(?)", {v("a")}, 100}});
  h.world.scheduler().at(50 * kMs, [&h] { h.world.pause(h.client[0], 3000 * kMs); });
  auto b = h.run(1, 20, {{"SELECT GET_LOCK(?, ?)", {v("a"), v(30)}}, {"SELECT CONNECTION_ID()", {}}});
  h.run_until_ms(10'000);
  ASSERT_TRUE(*a && *b);
  EXPECT_EQ((**b)[0].result.scalar(), v("1"));
  EXPECT_LT((**b)[0].at_ms, 1100);
  // Back from the pause, the holder's statement finds its session gone.
  EXPECT_TRUE((**a)[2].result.is_error(sql_error::kServerGone));
}

TEST(MysqlSession, AStatementTimeoutClosesTheConnectionAndTheServerDropsTheWait) {
  MysqlWorld h;
  h.run(0, 0, {{"SELECT GET_LOCK(?, ?)", {v("a"), v(0)}}, {"SELECT RELEASE_LOCK(?)", {v("a")}, 500}});
  auto b = h.run(1, 10, {{"SELECT GET_LOCK(?, ?)", {v("a"), v(60)}, 0, 100}, {"SELECT IS_USED_LOCK(?)", {v("a")}, 600}});
  h.run_until_ms(2000);
  ASSERT_TRUE(*b);
  EXPECT_EQ((**b)[0].result.status, SqlResult::Status::Timeout);
  // Its wait ended with its connection: the lock went to no one when released.
  EXPECT_EQ((**b)[1].result.scalar(), kNull);
}

TEST(MysqlRows, TheLockTableStatements) {
  MysqlWorld h;
  auto a = h.run(0, 0, {{kTable, {}},
                        {kInsert, {v("r"), v("c1"), v(1000), v(1)}},
                        {kInsert, {v("r"), v("c2"), v(1000), v(1)}},
                        {kTakeOver, {v("c2"), v(3000), v("r"), v(999)}},   // not expired yet
                        {kTakeOver, {v("c2"), v(3000), v("r"), v(1001)}},  // expired
                        {kSelect, {v("r")}},
                        {kExtend, {v(4000), v("r"), v("c1")}},            // not c1's any more
                        {kDelete, {v("r"), v("c1")}},
                        {kDelete, {v("r"), v("c2")}},
                        {kSelect, {v("r")}},
                        {"SELECT owner, expires_at, version FROM nope WHERE name = ?", {v("r")}},
                        {kInsert, {v("r"), v("c1"), v("soon"), v(1)}}});
  h.run_until_ms(1000);
  ASSERT_TRUE(*a);
  const auto& x = **a;
  EXPECT_EQ(x[1].result.affected_rows, 1);
  EXPECT_TRUE(x[2].result.is_error(sql_error::kDupEntry));
  EXPECT_EQ(x[2].result.message, "Duplicate entry 'r' for key 'PRIMARY'");
  EXPECT_EQ(x[3].result.affected_rows, 0);
  EXPECT_EQ(x[4].result.affected_rows, 1);
  EXPECT_EQ(x[5].result.rows, (Rows{{v("c2"), v("3000"), v("2")}}));
  EXPECT_EQ(x[6].result.affected_rows, 0);
  EXPECT_EQ(x[7].result.affected_rows, 0);
  EXPECT_EQ(x[8].result.affected_rows, 1);
  EXPECT_TRUE(x[9].result.rows.empty());
  EXPECT_TRUE(x[10].result.is_error(sql_error::kNoSuchTable));
  EXPECT_TRUE(x[11].result.is_error(sql_error::kWrongValue));
}

TEST(MysqlRows, ForUpdateWaitsUntilTheHolderEndsAndTimesOutWith1205) {
  MysqlWorld h;
  h.run(0, 0, {{kTable, {}},
               {kInsert, {v("r"), v("seed"), kNull, v(0)}},
               {"BEGIN", {}},
               {kForUpdate, {v("r")}},
               {kTakeOver, {v("c1"), v(1), v("r"), v(0)}},  // NULL expiry: never taken over
               {"COMMIT", {}, 1500}});
  auto b = h.run(1, 50, {{"SET SESSION innodb_lock_wait_timeout = 1", {}},
                         {"BEGIN", {}},
                         {kForUpdate, {v("r")}},
                         {kSelect, {v("r")}},  // a plain read does not wait
                         {kForUpdate, {v("r")}},
                         {"COMMIT", {}}});
  h.run_until_ms(5000);
  ASSERT_TRUE(*b);
  const auto& y = **b;
  EXPECT_TRUE(y[2].result.is_error(sql_error::kLockWaitTimeout));
  EXPECT_EQ(y[2].at_ms, 50 + 3 * 2 + 1000);  // SET, BEGIN, then the wait on the server
  EXPECT_EQ(y[3].result.rows, (Rows{{v("seed"), kNull, v("0")}}));
  EXPECT_TRUE(y[4].result.ok());  // took the lock when the holder committed
  EXPECT_GE(y[4].at_ms, 1500);
}

TEST(MysqlRows, ADisconnectRollsTheTransactionBack) {
  MysqlWorld h;
  h.run(0, 0, {{kTable, {}}, {"BEGIN", {}}, {kInsert, {v("r"), v("c1"), v(5), v(1)}}, {"SELECT 1", {}, 60'000}});
  auto during = h.run(1, 50, {{kSelect, {v("r")}}});
  h.world.scheduler().at(100 * kMs, [&h] { h.world.crash(h.client[0]); });
  auto after = h.run(1, 200, {{kInsert, {v("r"), v("c2"), v(5), v(1)}}});
  h.run_until_ms(1000);
  ASSERT_TRUE(*during && *after);
  EXPECT_TRUE((**during)[0].result.rows.empty());  // not committed: not seen
  EXPECT_EQ((**after)[0].result.affected_rows, 1);
  EXPECT_EQ(h.world.mysql().committed_row("locks", "r")->owner, v("c2"));
}

TEST(MysqlServerCrash, KeepsCommittedRowsAndLosesSessionsLocksAndWaits) {
  MysqlWorld h;
  auto a = h.run(0, 0, {{kTable, {}},
                        {kInsert, {v("r"), v("c1"), v(5), v(1)}},
                        {"BEGIN", {}},
                        {kDelete, {v("r"), v("c1")}},
                        {"SELECT GET_LOCK(?, ?)", {v("a"), v(0)}},
                        {"SELECT 1", {}, 500}});
  auto b = h.run(1, 50, {{"SELECT GET_LOCK(?, ?)", {v("a"), v(-1)}}});
  h.world.scheduler().at(200 * kMs, [&h] { h.world.crash(h.server); });
  h.world.scheduler().at(300 * kMs, [&h] { h.world.restart(h.server); });
  auto c = h.run(2, 400, {{"SELECT IS_USED_LOCK(?)", {v("a")}}, {kSelect, {v("r")}}});
  h.run_until_ms(2000);
  ASSERT_TRUE(*a && *b && *c);
  EXPECT_TRUE((**b)[0].result.is_error(sql_error::kServerLost));
  EXPECT_TRUE((**a)[5].result.is_error(sql_error::kServerGone));  // its session died with the server
  EXPECT_EQ((**c)[0].result.scalar(), kNull);
  EXPECT_EQ((**c)[1].result.rows, (Rows{{v("c1"), v("5"), v("1")}}));  // the delete was undone
}

TEST(MysqlServerCrash, ADownServerRefusesConnections) {
  MysqlWorld h;
  h.world.crash(h.server);
  auto a = h.run(0, 0, {{"SELECT 1", {}}});
  h.run_until_ms(100);
  ASSERT_TRUE(*a);
  EXPECT_TRUE((**a)[0].result.is_error(sql_error::kCantConnect));
}

TEST(MysqlStatements, OneOutsideTheModelIsRefusedByName) {
  MysqlWorld h;
  auto a = h.run(0, 0, {{"SELECT NOW()", {}}, {"SELECT GET_LOCK(?, ?)", {v("a")}}});
  h.run_until_ms(100);
  ASSERT_TRUE(*a);
  EXPECT_TRUE((**a)[0].result.is_error(sql_error::kNotSupported));
  EXPECT_NE((**a)[0].result.message.find("SELECT NOW()"), std::string::npos);
  EXPECT_TRUE((**a)[1].result.is_error(sql_error::kParse));
}

TEST(MysqlSession, AWorldWithoutAServerSaysSo) {
  SimHarness h(1, 1);
  auto out = slot<SqlResult>();
  h.start<SqlResult>(0, 0, out, [](Env& e) -> Task<SqlResult> {
    auto s = e.sql_session();
    co_return co_await s->execute("SELECT 1", {}, 1s);
  });
  h.run_until_ms(10);
  ASSERT_TRUE(*out);
  EXPECT_TRUE((*out)->is_error(sql_error::kNoServer));
}

}  // namespace
}  // namespace lockstep::testing
