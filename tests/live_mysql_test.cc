// MySQL locks in the live world: a real MariaDB started per run, SQL sessions over
// libmariadb's non-blocking API on the run's loop and through the fault proxy, and the
// scenarios of scenarios/mysql/ reaching the verdict they reach in the simulator.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "lockstep/live/cluster.h"
#include "lockstep/live/mariadb_server.h"
#include "lockstep/runner/live_runner.h"
#include "lockstep/runner/sim_runner.h"
#include "live_support.h"
#include "scenario_files.h"
#include "scenario_param_name.h"

namespace lockstep::runner {
namespace {

namespace fs = std::filesystem;

std::string mysql_missing() {
  if (!live::mariadb_client_missing().empty()) return live::mariadb_client_missing();
  if (live::find_mariadbd().empty()) return "mariadbd not installed (scripts/setup installs mariadb-server)";
  if (live::find_redis_server().empty()) return "redis-server not installed: live tests need it";
  return "";
}

// One client of a live world with mysql-1 behind the fault proxy, driven by hand.
class MysqlWorld {
 public:
  std::string start(int64_t wait_timeout_s = 28800) {
    live::ClusterSpec spec;
    live::MariaDbSettings db;
    db.wait_timeout_s = wait_timeout_s;
    spec.mysql = db;
    if (auto err = cluster_.start(spec); !err.empty()) return err;
    world_.mysql_route = [this](int client, const live::NodeAddress& a) {
      live::NodeAddress via;
      live::FaultProxy::LinkSpec link{world_.client_name(client), "mysql-1", -1, a, live::FaultProxy::Framing::Bytes,
                                      Nanos(0)};
      return cluster_.proxy().route(link, via).empty() ? via : a;
    };
    client_ = world_.add_client("client-1", 1);
    return "";
  }

  // Runs one statement on `session` to completion on the loop.
  SqlResult run(SqlSession& session, std::string sql, std::vector<SqlValue> params = {}, Nanos timeout = Millis(3000)) {
    std::optional<SqlResult> out;
    world_.spawn(client_, run_one(session, std::move(sql), std::move(params), timeout, out));
    world_.loop().run_until([&] { return out.has_value(); }, Millis(20000));
    return out.value_or(SqlResult::error(-1, "no answer within 20 s"));
  }

  Task<void> run_one(SqlSession& session, std::string sql, std::vector<SqlValue> params, Nanos timeout,
                     std::optional<SqlResult>& out) {
    SqlResult r = co_await session.execute(std::move(sql), std::move(params), timeout);
    out = std::move(r);
  }

  std::unique_ptr<SqlSession> session() { return world_.env(client_).sql_session(); }
  live::LiveWorld& world() { return world_; }
  live::Cluster& cluster() { return cluster_; }
  int client() const { return client_; }

 private:
  live::LiveWorld world_{7};
  live::Cluster cluster_{world_};
  int client_ = -1;
};

#define START_MYSQL_WORLD(w, ...)                                          \
  if (std::string why = mysql_missing(); !why.empty()) GTEST_SKIP() << why; \
  MysqlWorld w;                                                            \
  if (std::string err = w.start(__VA_ARGS__); !err.empty()) FAIL() << err;

TEST(LiveMysql, SessionsAnswerAsSqlHSays) {
  START_MYSQL_WORLD(w);
  auto a = w.session();
  auto b = w.session();
  EXPECT_EQ(w.run(*a, "SELECT GET_LOCK(?, ?)", {"k", "0"}).scalar(), SqlValue("1"));
  EXPECT_EQ(w.run(*b, "SELECT GET_LOCK(?, ?)", {"k", "0"}).scalar(), SqlValue("0"));
  EXPECT_EQ(w.run(*b, "SELECT ?", {"it's"}).scalar(), SqlValue("it's"));  // quoted, not spliced
  EXPECT_EQ(w.run(*b, "SELECT ?", {SqlValue()}).scalar(), SqlValue());
  SqlResult create = w.run(*a, "CREATE TABLE t (name VARCHAR(20) PRIMARY KEY, v BIGINT)");
  EXPECT_TRUE(create.ok()) << create.message;
  EXPECT_EQ(w.run(*a, "INSERT INTO t VALUES (?, ?)", {"x", "1"}).affected_rows, 1);
  EXPECT_TRUE(w.run(*b, "INSERT INTO t VALUES (?, ?)", {"x", "2"}).is_error(sql_error::kDupEntry));
  EXPECT_TRUE(w.run(*b, "SELECT nonsense FROM").is_error(sql_error::kParse));
  SqlResult rows = w.run(*b, "SELECT name, v FROM t");
  ASSERT_EQ(rows.rows.size(), 1u);
  EXPECT_EQ(rows.rows[0], (std::vector<SqlValue>{"x", "1"}));
  EXPECT_EQ(w.run(*a, "SELECT RELEASE_LOCK(?)", {"k"}).scalar(), SqlValue("1"));
  EXPECT_EQ(w.run(*b, "SELECT GET_LOCK(?, ?)", {"k", "0"}).scalar(), SqlValue("1"));
}

// A statement without an answer in time fails with Timeout and closes the connection: the
// server ends the session once it notices (here when SLEEP returns), its lock is freed,
// and the next statement is a new session.
TEST(LiveMysql, ATimeoutClosesTheSession) {
  START_MYSQL_WORLD(w);
  auto a = w.session();
  auto b = w.session();
  const SqlValue id = w.run(*a, "SELECT CONNECTION_ID()").scalar();
  EXPECT_EQ(w.run(*a, "SELECT GET_LOCK(?, ?)", {"k", "0"}).scalar(), SqlValue("1"));
  SqlResult slow = w.run(*a, "SELECT SLEEP(1)", {}, Millis(200));
  EXPECT_EQ(slow.status, SqlResult::Status::Timeout);
  EXPECT_TRUE(slow.ended);
  EXPECT_EQ(w.run(*b, "SELECT GET_LOCK(?, ?)", {"k", "15"}, Millis(16000)).scalar(), SqlValue("1"));
  const SqlValue again = w.run(*a, "SELECT CONNECTION_ID()").scalar();
  ASSERT_TRUE(again.has_value());
  EXPECT_NE(again, id);
}

// An idle session past wait_timeout is ended by the server; a paused client's connection
// stays silent meanwhile, and its next statement learns the session is gone.
TEST(LiveMysql, APausedClientsSessionEndsAtWaitTimeout) {
  START_MYSQL_WORLD(w, 1);
  auto a = w.session();
  auto b = w.session();
  EXPECT_EQ(w.run(*a, "SELECT GET_LOCK(?, ?)", {"k", "0"}).scalar(), SqlValue("1"));
  w.world().pause(w.client(), Millis(2500));
  live_support::run_until(w.world().loop(), [] { return false; }, Millis(2600));
  SqlResult gone = w.run(*a, "SELECT 1");
  EXPECT_FALSE(gone.ok());
  EXPECT_TRUE(gone.ended);
  EXPECT_EQ(w.run(*b, "SELECT GET_LOCK(?, ?)", {"k", "0"}).scalar(), SqlValue("1"));
  EXPECT_EQ(w.run(*a, "SELECT 1").scalar(), SqlValue("1"));  // a new session
}

// A partition between the client and mysql-1 holds the statement (TCP retransmits): no
// answer within the timeout, the session closed.
TEST(LiveMysql, APartitionCutsTheSessionsTraffic) {
  START_MYSQL_WORLD(w);
  auto a = w.session();
  EXPECT_EQ(w.run(*a, "SELECT 1").scalar(), SqlValue("1"));
  w.cluster().proxy().block("client-1", "mysql-1", +1);
  SqlResult cut = w.run(*a, "SELECT 2", {}, Millis(300));
  EXPECT_EQ(cut.status, SqlResult::Status::Timeout);
  w.cluster().proxy().block("client-1", "mysql-1", -1);
  EXPECT_EQ(w.run(*a, "SELECT 3").scalar(), SqlValue("3"));
}

// The server ends a session cut off past wait_timeout; once the cut heals the client's
// next statement learns it at once, not at its timeout.
TEST(LiveMysql, ASessionCutOffPastWaitTimeoutIsGoneAfterTheCut) {
  START_MYSQL_WORLD(w, 1);
  auto a = w.session();
  EXPECT_EQ(w.run(*a, "SELECT GET_LOCK(?, ?)", {"k", "0"}).scalar(), SqlValue("1"));
  w.cluster().proxy().block("client-1", "mysql-1", +1);
  w.cluster().proxy().block("mysql-1", "client-1", +1);
  live_support::run_until(w.world().loop(), [] { return false; }, Millis(2000));
  w.cluster().proxy().block("client-1", "mysql-1", -1);
  w.cluster().proxy().block("mysql-1", "client-1", -1);
  const Nanos sent = live::mono_clock();
  SqlResult gone = w.run(*a, "SELECT RELEASE_LOCK(?)", {"k"}, Millis(3000));
  EXPECT_EQ(gone.status, SqlResult::Status::Error) << gone.message;
  EXPECT_TRUE(gone.ended);
  EXPECT_LT(live::mono_clock() - sent, Millis(1000));
}

// A crashed server ends every session (2013 or 2006, ended); after its restart the next
// statement connects to a new session. A paused one answers late.
TEST(LiveMysql, ServerFaultsEndOrDelaySessions) {
  START_MYSQL_WORLD(w);
  auto a = w.session();
  EXPECT_EQ(w.run(*a, "SELECT GET_LOCK(?, ?)", {"k", "0"}).scalar(), SqlValue("1"));
  w.cluster().pause("mysql-1", true);
  EXPECT_EQ(w.run(*a, "SELECT 1", {}, Millis(300)).status, SqlResult::Status::Timeout);
  w.cluster().pause("mysql-1", false);
  EXPECT_EQ(w.run(*a, "SELECT 1").scalar(), SqlValue("1"));
  w.cluster().kill("mysql-1");
  SqlResult down = w.run(*a, "SELECT 1");
  EXPECT_FALSE(down.ok());
  EXPECT_TRUE(down.ended);
  ASSERT_EQ(w.cluster().mysql()->restart(true), "");
  auto b = w.session();
  EXPECT_EQ(w.run(*b, "SELECT GET_LOCK(?, ?)", {"k", "0"}).scalar(), SqlValue("1"));
}

TEST(LiveMysql, ClockFaultsOnTheServerAreRefusedWithAReason) {
  auto r = load_scenario_file((fs::path(LOCKSTEP_SOURCE_DIR) / "scenarios/mysql/03-named-holder-paused.json").string());
  ASSERT_TRUE(std::holds_alternative<Scenario>(r));
  Scenario s = std::get<Scenario>(r);
  FaultSpec jump;
  jump.kind = FaultKind::ClockJump;
  jump.target = "mysql-1";
  jump.at_ms = 100;
  jump.jump_ms = 1000;
  s.faults.push_back(jump);
  EXPECT_NE(live_unsupported(s, {}).find("clock faults on the MySQL server are simulator-only"), std::string::npos)
      << live_unsupported(s, {});
  EXPECT_EQ(sim_unsupported(s), "");
}

std::vector<std::string> mysql_scenarios() {
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(fs::path(LOCKSTEP_SOURCE_DIR) / "scenarios/mysql")) {
    if (e.path().extension() == ".json") files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

class LiveMysqlCatalogue : public ::testing::TestWithParam<std::string> {};

// The same verdict in both worlds, from the same file.
TEST_P(LiveMysqlCatalogue, SameVerdictAsInTheSimulator) {
  if (std::string why = mysql_missing(); !why.empty()) GTEST_SKIP() << why;
  auto r = load_scenario_file(GetParam());
  ASSERT_TRUE(std::holds_alternative<Scenario>(r)) << std::get<ScenarioError>(r).message();
  const Scenario& s = std::get<Scenario>(r);
  ASSERT_TRUE(s.runs_in(World::Live));
  ASSERT_EQ(live_unsupported(s, {}), "");
  RunOutcome o = run_live(s);
  ASSERT_FALSE(o.report.stats.contains("error")) << o.report.stats.dump();
  EXPECT_EQ(o.report.world, "live");
  scenario_files::expect_shipped_verdict(o.report, s, o.history_jsonl);
  RunOutcome sim = run_in_sim(s);
  EXPECT_EQ(o.report.verdict, sim.report.verdict);
  EXPECT_EQ(o.report.found_violations(), sim.report.found_violations());
}

INSTANTIATE_TEST_SUITE_P(Scenarios, LiveMysqlCatalogue, ::testing::ValuesIn(mysql_scenarios()), scenario_param_name);

}  // namespace
}  // namespace lockstep::runner
