// The live world's ZooKeeper: a real ensemble (Debian's ZooKeeper, three JVMs on loopback
// behind the fault proxy) reached over the C client, compared with the simulated ensemble.
// The operations the lock recipes use run as one script against both worlds, and the two
// transcripts must match: results, paths, sequence numbers, which session owns a znode,
// watches and what fires them, and a silent client's session expiring. What differs by
// nature (session ids, zxids) is compared by its relations. The ensemble starts once for
// the suite; each test has clients of its own.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "lockstep/live/fault_proxy.h"
#include "lockstep/live/live_world.h"
#include "lockstep/live/zk_ensemble.h"
#include "lockstep/runner/live_runner.h"
#include "lockstep/runner/scenario.h"
#include "lockstep/sim/zk_ensemble.h"
#include "lockstep/zookeeper.h"
#include "sim_harness.h"

namespace lockstep::testing {
namespace {

constexpr int64_t kTickMs = 200;
constexpr int64_t kSessionMs = 2000;

// What the script needs of a world beyond the two sessions: pausing a client as a GC
// pause does (its heartbeats stop with it).
struct ZkScriptWorld {
  Env* driver = nullptr;
  ZooKeeper* a = nullptr;
  ZooKeeper* b = nullptr;
  std::function<void(Nanos)> pause_b;
};

std::string owner_of(const ZkStat& s, int64_t a, int64_t b) {
  if (s.ephemeral_owner == 0) return "persistent";
  if (s.ephemeral_owner == a) return "a";
  if (s.ephemeral_owner == b) return "b";
  return "another session";
}

// The names, with the one of `renamed` (a path) written as "a's next".
std::string joined(const std::vector<std::string>& v, const std::string& renamed = "") {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ",") + (!renamed.empty() && renamed.ends_with("/" + s) ? "a's next" : s);
  return out;
}

Task<ZkCreated> create_in(ZooKeeper& zk, std::string path, bool ephemeral, bool sequential) {
  std::string empty;
  co_return co_await zk.create(std::move(path), std::move(empty), ZkCreateMode{.ephemeral = ephemeral, .sequential = sequential});
}

// Waits (in bounded steps) until `zk` reports `state`; whether it did.
Task<bool> wait_for_state(Env& env, ZooKeeper& zk, ZkState state, Nanos limit) {
  for (Nanos waited{0}; waited < limit; waited += Millis(50)) {
    if (zk.state() == state) co_return true;
    co_await env.sleep(Millis(50));
  }
  co_return zk.state() == state;
}

// The lock recipes' operations, one at a time, each line what came back.
Task<void> script(ZkScriptWorld w, std::shared_ptr<std::vector<std::string>> out) {
  ZooKeeper& a = *w.a;
  ZooKeeper& b = *w.b;
  auto log = [&out](std::string line) { out->push_back(std::move(line)); };
  {
    ZkCreated d = co_await create_in(a, "/d", false, false);
    log("create /d: " + std::string(to_string(d.error)));
    ZkCreated again = co_await create_in(a, "/d", false, false);
    log("create /d again: " + std::string(to_string(again.error)));
    ZkCreated orphan = co_await create_in(a, "/nope/x", false, false);
    log("create without parent: " + std::string(to_string(orphan.error)));
  }
  log(std::string("a state: ") + to_string(a.state()) + (a.session_id() != 0 ? " with a session" : ""));
  ZkCreated first = co_await create_in(a, "/d/n-", true, true);
  ZkCreated second = co_await create_in(b, "/d/n-", true, true);
  log("a's sequential: " + std::string(to_string(first.error)) + " " + first.path);
  log("b's sequential: " + std::string(to_string(second.error)) + " " + second.path);
  log(std::string("czxids rise: ") + (second.czxid > first.czxid && first.czxid > 0 ? "yes" : "no"));
  log(std::string("sessions differ: ") + (a.session_id() != b.session_id() ? "yes" : "no"));
  {
    std::string dir = "/d";
    ZkChildren c = co_await b.get_children(std::move(dir));
    log("children of /d: " + std::string(to_string(c.error)) + " " + joined(c.names));
    std::string missing = "/missing";
    ZkChildren none = co_await b.get_children(std::move(missing));
    log("children of /missing: " + std::string(to_string(none.error)));
  }
  // b watches a's znode; a deletes it.
  {
    std::string path = first.path;
    ZkExists e = co_await b.exists(std::move(path), true);
    log("b exists a's znode: " + std::string(to_string(e.error)) + (e.exists ? " exists" : " absent") + " owner " +
        owner_of(e.stat, a.session_id(), b.session_id()) + (e.watch ? " watched" : ""));
    std::string gone = first.path;
    ZkError r = co_await a.remove(std::move(gone), -1);
    log("a removes it: " + std::string(to_string(r)));
    if (e.watch) {
      ZkEvent ev = co_await e.watch->wait(Millis(10000));
      log("b's watch: " + std::string(to_string(ev)));
      ZkEvent again = co_await e.watch->wait(Millis(10));
      log("b's watch again: " + std::string(to_string(again)));
    }
  }
  // A watch on a znode that does not exist yet fires when it is created.
  {
    std::string path = "/d/later";
    ZkExists e = co_await b.exists(std::move(path), true);
    log("b exists /d/later: " + std::string(to_string(e.error)) + (e.exists ? " exists" : " absent") +
        (e.watch ? " watched" : ""));
    ZkCreated c = co_await create_in(a, "/d/later", false, false);
    log("a creates /d/later: " + std::string(to_string(c.error)));
    if (e.watch) {
      ZkEvent ev = co_await e.watch->wait(Millis(10000));
      log("b's watch: " + std::string(to_string(ev)));
    }
    std::string bad = "/d/later";
    ZkError r = co_await a.remove(std::move(bad), 5);
    log("remove with a wrong version: " + std::string(to_string(r)));
    std::string dir = "/d";
    ZkError not_empty = co_await a.remove(std::move(dir), -1);
    log("remove /d: " + std::string(to_string(not_empty)));
    std::string nothing = "/d/nothing";
    ZkError no_node = co_await a.remove(std::move(nothing), -1);
    log("remove /d/nothing: " + std::string(to_string(no_node)));
    std::string exact = "/d/later";
    ZkExists s = co_await a.exists(std::move(exact), false);
    log("exists /d/later unwatched: " + std::string(to_string(s.error)) + (s.exists ? " exists" : " absent") +
        " owner " + owner_of(s.stat, a.session_id(), b.session_id()) + " version " + std::to_string(s.stat.version) +
        (s.watch ? " watched" : ""));
  }
  // A sequential number after a deletion in the same directory: it comes after every
  // earlier one. (Its value differs: ZooKeeper 3.8 counts the parent's child creations
  // only, the simulator its deletions too; no recipe reads more than the order.)
  std::string third_path;
  {
    ZkCreated third = co_await create_in(a, "/d/n-", true, true);
    third_path = third.path;
    log("a's next sequential: " + std::string(to_string(third.error)) +
        (third.path > second.path && third.path.rfind("/d/n-", 0) == 0 ? " after b's" : " out of order"));
  }
  // b falls silent (a GC pause) for longer than its session: the leader expires it, its
  // znode goes (a's watch on it fires), and b learns of it only when it runs again.
  {
    std::string path = second.path;
    ZkExists e = co_await a.exists(std::move(path), true);
    log("a watches b's znode: " + std::string(to_string(e.error)) + (e.watch ? " watched" : ""));
    const int64_t old_session = b.session_id();
    std::vector<ZkState> states;
    b.on_state = [&states](ZkState s) {
      if (states.empty() || states.back() != s) states.push_back(s);
    };
    w.pause_b(Millis(3 * kSessionMs));
    if (e.watch) {
      ZkEvent ev = co_await e.watch->wait(Millis(3 * kSessionMs));
      log("a's watch while b is paused: " + std::string(to_string(ev)));
    }
    std::string dir = "/d";
    ZkChildren c = co_await a.get_children(std::move(dir));
    log("children of /d: " + std::string(to_string(c.error)) + " " + joined(c.names, third_path));
    const bool expired = co_await wait_for_state(*w.driver, b, ZkState::Expired, Millis(6 * kSessionMs));
    log(std::string("b expired: ") + (expired ? "yes" : "no") + ", session id " + (b.session_id() == 0 ? "cleared" : "kept"));
    log(std::string("b was suspended first: ") +
        (states.size() >= 2 && states[states.size() - 2] == ZkState::Suspended ? "yes" : "no"));
    // The next operation opens a new session.
    std::string dir2 = "/d";
    ZkChildren after = co_await b.get_children(std::move(dir2));
    log("b's next call: " + std::string(to_string(after.error)) + " " + joined(after.names, third_path) + " in state " +
        to_string(b.state()) + (b.session_id() != 0 && b.session_id() != old_session ? " with a new session" : ""));
    b.on_state = nullptr;
  }
}

std::vector<std::string> run_in_sim() {
  SimHarness h(2, 1, 1);
  sim::ZkOptions o;
  o.tick_ns = kTickMs * kMs;
  o.session_timeout_ns = kSessionMs * kMs;
  h.world.enable_zookeeper(o);
  auto out = std::make_shared<std::vector<std::string>>();
  ZkScriptWorld w{&h.env(0), h.env(0).zookeeper(), h.env(1).zookeeper(),
                  [&h](Nanos d) { h.world.pause(h.client[1], d.count()); }};
  auto done = slot<bool>();
  h.start<bool>(0, 0, done, [w, out](Env&) -> Task<bool> {
    co_await script(w, out);
    co_return true;
  });
  h.run_until_ms(120000);
  EXPECT_TRUE(done->has_value()) << "the script did not finish in the simulator";
  return *out;
}

// One real ensemble for the suite, on a world of its own: the proxy its links run
// through lives on that world's loop.
class ZooKeeperLive : public ::testing::Test {
 protected:
  struct Shared {
    live::LiveWorld world{7};
    live::FaultProxy proxy{world.loop(), 7};
    live::ZkEnsemble ensemble{world.loop(), proxy};
    std::string error;
    ~Shared() { world.stop_all(); }
  };
  static inline Shared* shared_ = nullptr;

  static void SetUpTestSuite() {
    if (live::ZkEnsemble::classpath().empty()) return;
    shared_ = new Shared;
    live::ZkEnsembleSpec spec;
    spec.tick_ms = kTickMs;
    shared_->error = shared_->ensemble.start(spec);
    shared_->world.zk_connect = [](int client) {
      return shared_->ensemble.connect_string(shared_->world.client_name(client));
    };
    shared_->world.zk_session_timeout = Millis(kSessionMs);
  }
  static void TearDownTestSuite() {
    delete shared_;
    shared_ = nullptr;
  }
  void SetUp() override {
    if (!shared_) GTEST_SKIP() << "ZooKeeper is not installed (scripts/setup installs it)";
    ASSERT_EQ(shared_->error, "");
  }
  live::LiveWorld& world() { return shared_->world; }
  int add_client() {
    const int n = world().client_count() + 1;
    return world().add_client("client-" + std::to_string(n), n);
  }
};

TEST_F(ZooKeeperLive, TheEnsembleServesWithZk1Leading) {
  int leaders = 0, followers = 0;
  for (int i = 0; i < shared_->ensemble.size(); ++i) {
    const std::string m = live::ZkEnsemble::mode(shared_->ensemble.address(i), Millis(2000));
    leaders += m == "leader";
    followers += m == "follower";
  }
  EXPECT_EQ(leaders, 1);
  EXPECT_GE(followers, 1);
  EXPECT_EQ(live::ZkEnsemble::mode(shared_->ensemble.address(0), Millis(2000)), "leader");
}

TEST_F(ZooKeeperLive, TheLockRecipesOperationsMatchTheSimulator) {
  const std::vector<std::string> expected = run_in_sim();
  ASSERT_FALSE(expected.empty());
  const int a = add_client();
  const int b = add_client();
  auto out = std::make_shared<std::vector<std::string>>();
  // The same names in both worlds: the paths the script creates are under the suite's
  // root, which starts empty.
  ZkScriptWorld w{&world().env(a), world().env(a).zookeeper(), world().env(b).zookeeper(), [this, b](Nanos d) {
                    world().pause(b, d);
                    const std::string name = world().client_name(b);
                    shared_->proxy.freeze(name, 1);
                    world().loop().after(d, [name] { shared_->proxy.freeze(name, -1); });
                  }};
  ASSERT_NE(w.a, nullptr);
  bool done = false;
  world().spawn(a, [](ZkScriptWorld w, std::shared_ptr<std::vector<std::string>> out, bool* done) -> Task<void> {
    co_await script(w, out);
    *done = true;
  }(w, out, &done));
  world().loop().run_until([&done] { return done; }, Millis(120000));
  ASSERT_TRUE(done) << "the script did not finish against the real ensemble";
  EXPECT_EQ(*out, expected);
  for (size_t i = 0; i < std::max(out->size(), expected.size()); ++i) {
    const std::string live = i < out->size() ? (*out)[i] : "(none)";
    const std::string sim = i < expected.size() ? expected[i] : "(none)";
    EXPECT_EQ(live, sim) << "line " << i;
  }
}

TEST(ZooKeeperLiveStart, AFailedStartSaysWhy) {
  if (live::ZkEnsemble::classpath().empty()) GTEST_SKIP() << "ZooKeeper is not installed (scripts/setup installs it)";
  live::LiveWorld world(1);
  live::FaultProxy proxy(world.loop(), 1);
  live::ZkEnsemble ensemble(world.loop(), proxy);
  live::ZkEnsembleSpec spec;
  spec.servers = 1;
  spec.tick_ms = 0;  // ZooKeeper refuses to start without a tickTime
  const std::string err = ensemble.start(spec);
  EXPECT_NE(err.find("zk-1 exited while starting"), std::string::npos) << err;
  EXPECT_NE(err.find("tickTime"), std::string::npos) << err;
  EXPECT_FALSE(ensemble.started());
}

// Faults on the ensemble's servers, played on the real JVMs: a follower stopped (SIGSTOP)
// and another killed and started again while two clients take turns with the lock. A
// majority serves throughout, so the lock stays safe and every client gets its turns.
// The margins are for a loaded machine and a sanitized client: the pause (1.5 s) is
// shorter than the followers' sync limit (5 ticks, 2.5 s), sessions outlast a slow
// JVM threefold, and each attempt may wait 25 s for turns that take 0.2 s. A client whose
// server is the one killed sees its requests fail at once until it has reconnected
// elsewhere: its retries (1000 × 20 ms) cover that for as long as the wait, where 100
// once ran out on a loaded machine and lost one attempt.
TEST(ZooKeeperLiveFaults, FollowersPausedAndRestartedKeepTheLockSafe) {
  if (live::ZkEnsemble::classpath().empty()) GTEST_SKIP() << "ZooKeeper is not installed (scripts/setup installs it)";
  auto r = runner::parse_scenario(R"({
    "seed": 5, "duration_ms": 45000, "worlds": ["sim", "live"],
    "topology": {"nodes": 1, "zookeeper": {"servers": 3, "tick_ms": 500, "session_timeout_ms": 6000}},
    "lock": {"algorithm": "zookeeper", "lease_ms": 6000, "retry": {"count_max": 1000, "delay_ms": 20, "jitter_ms": 10}},
    "workload": {"clients": 2, "attempts_per_client": 8, "initial_stock": 20, "hold_ms": 200, "wait_ms": 25000, "start_stagger_ms": 100},
    "faults": [{"kind": "pause", "target": "zk-3", "at_ms": 300, "duration_ms": 1500},
               {"kind": "crash", "target": "zk-2", "at_ms": 2500, "restart_after_ms": 1000}],
    "expect": {"violations": []}})", "zk-followers");
  ASSERT_TRUE(std::holds_alternative<runner::Scenario>(r)) << std::get<runner::ScenarioError>(r).message();
  const runner::Scenario& s = std::get<runner::Scenario>(r);
  ASSERT_EQ(runner::live_unsupported(s, {}), "");
  runner::RunOutcome o = runner::run_live(s);
  ASSERT_FALSE(o.report.stats.contains("error")) << o.report.stats.dump();
  EXPECT_TRUE(o.report.violations.empty()) << o.history_jsonl.substr(0, 2000);
  // Both faults were played on the servers, not skipped.
  EXPECT_NE(o.history_jsonl.find("zk-3"), std::string::npos);
  EXPECT_NE(o.history_jsonl.find("zk-2"), std::string::npos);
  int acquired = 0;
  std::string others;
  for (const auto& e : o.history.events) {
    if (e.f != "acquire" || e.type == checker::EventType::Invoke) continue;
    acquired += e.type == checker::EventType::Ok;
    if (e.type != checker::EventType::Ok) others += checker::to_json(e).dump() + "\n";
  }
  EXPECT_EQ(acquired, 16) << others;  // every attempt got the lock in the end
}

// A clock fault on a server would not reach what ZooKeeper's timeouts run on: refused,
// with the reason, rather than played as if it had.
TEST(ZooKeeperLiveFaults, AServerClockFaultIsRefusedWithItsReason) {
  auto r = runner::parse_scenario(R"({
    "worlds": ["sim", "live"], "topology": {"nodes": 1, "zookeeper": {"servers": 3}},
    "lock": {"algorithm": "zookeeper"},
    "faults": [{"kind": "clock-jump", "target": "zk-1", "at_ms": 100, "jump_ms": 5000}],
    "expect": {"violations": []}})", "zk-clock");
  ASSERT_TRUE(std::holds_alternative<runner::Scenario>(r)) << std::get<runner::ScenarioError>(r).message();
  const std::string why = runner::live_unsupported(std::get<runner::Scenario>(r), {});
  EXPECT_NE(why.find("monotonic clock"), std::string::npos) << why;
  EXPECT_NE(why.find("zk-1"), std::string::npos) << why;
}

}  // namespace
}  // namespace lockstep::testing
