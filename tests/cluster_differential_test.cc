// Differential test of cluster mode: two real redis-server --cluster-enabled yes nodes on
// kernel-picked loopback ports (slots 0-8191 and 8192-16383, joined with CLUSTER MEET)
// against a simulated node given the same layout. CLUSTER KEYSLOT of many keys, MOVED,
// CROSSSLOT and the script errors must be byte-identical.
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <gtest/gtest.h>
#include <sstream>
#include <thread>

#include "lockstep/random.h"
#include "lockstep/sim/redis_node.h"
#include "hiredis_support.h"
#include "reply_print.h"

namespace lockstep::sim {
namespace {

using Args = std::vector<std::string>;
using hiredis_support::find_binary;
using hiredis_support::free_loopback_port;
using hiredis_support::send;


// One cluster-enabled server in a directory of its own (nodes.conf), its bus on a second
// kernel-picked port, killed with the test.
class ClusterServer {
 public:
  ClusterServer(const std::string& binary, const std::filesystem::path& dir) : port_(free_loopback_port()) {
    std::filesystem::create_directories(dir);
    const std::string port = std::to_string(port_);
    // The bus would default to port + 10000, past 65535 for most ports the kernel picks.
    bus_port_ = free_loopback_port();
    const std::string bus = std::to_string(bus_port_);
    const std::string d = dir.string();
    pid_ = ::fork();
    if (pid_ == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      ::freopen("/dev/null", "w", stdout);
      ::execl(binary.c_str(), binary.c_str(), "--port", port.c_str(), "--bind", "127.0.0.1", "--dir", d.c_str(),
              "--cluster-enabled", "yes", "--cluster-port", bus.c_str(), "--cluster-config-file", "nodes.conf", "--save", "", "--appendonly", "no",
              "--daemonize", "no", "--logfile", "", static_cast<char*>(nullptr));
      ::_exit(127);
    }
    for (int i = 0; i < 100 && !ctx_; ++i) {
      timeval tv{0, 200000};
      redisContext* c = redisConnectWithTimeout("127.0.0.1", port_, tv);
      if (c && !c->err) ctx_ = c;
      else {
        if (c) redisFree(c);
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
    }
  }
  ~ClusterServer() {
    if (ctx_) redisFree(ctx_);
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  bool up() const { return ctx_ != nullptr; }
  int port() const { return port_; }
  int bus_port() const { return bus_port_; }
  Reply run(const Args& argv) { return send(ctx_, argv); }

 private:
  int port_;
  int bus_port_ = -1;
  pid_t pid_ = -1;
  redisContext* ctx_ = nullptr;
};

// Both servers report cluster_state:ok once the MEET and the slots have spread: an event
// we wait for (up to 20 s, polled every 50 ms), not a sleep.
bool wait_cluster_ok(ClusterServer& a, ClusterServer& b) {
  for (int i = 0; i < 400; ++i) {
    const Reply ia = a.run({"CLUSTER", "INFO"}), ib = b.run({"CLUSTER", "INFO"});
    if (ia.str.rfind("cluster_state:ok", 0) == 0 && ib.str.rfind("cluster_state:ok", 0) == 0) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

ClusterLayout two_nodes(int port_a, int port_b) {
  ClusterLayout l;
  l.slot_first = {0, 8192};
  l.slot_last = {8191, 16383};
  for (int i = 0; i < 2; ++i) {
    ClusterLayout::Member m;
    m.id = std::string(40, static_cast<char>('a' + i));
    m.host = "127.0.0.1";
    m.port = i == 0 ? port_a : port_b;
    m.shard = i;
    l.members.push_back(m);
  }
  return l;
}

TEST(ClusterDifferential, KeyslotMovedAndCrossslotLikeRedisServer) {
  const std::string binary = find_binary("redis-server");
  if (binary.empty()) GTEST_SKIP() << "redis-server is not installed (not found on PATH)";
  char tmpl[] = "/tmp/lockstep-cluster-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::filesystem::path dir(tmpl);
  {
    ClusterServer a(binary, dir / "a"), b(binary, dir / "b");
    ASSERT_TRUE(a.up() && b.up());
    ASSERT_EQ(a.run({"CLUSTER", "ADDSLOTSRANGE", "0", "8191"}), Reply::ok());
    ASSERT_EQ(b.run({"CLUSTER", "ADDSLOTSRANGE", "8192", "16383"}), Reply::ok());
    ASSERT_EQ(a.run({"CLUSTER", "MEET", "127.0.0.1", std::to_string(b.port()), std::to_string(b.bus_port())}), Reply::ok());
    ASSERT_TRUE(wait_cluster_ok(a, b)) << "the two nodes never agreed on the cluster";

    RedisNode node;
    node.set_cluster(two_nodes(a.port(), b.port()), 0);
    ClientState client;
    const auto both = [&](const Args& argv) {
      const Reply real = a.run(argv);
      const Reply sim = node.execute(client, argv, 0);
      std::string line;
      for (const auto& x : argv) line += "'" + x + "' ";
      EXPECT_EQ(sim, real) << line;
    };
    // Keys with and without tags, empty tags, unclosed and nested braces.
    Rng rng(42, "cluster-differential");
    const std::string alphabet = "ab{}:x1";
    for (int i = 0; i < 300; ++i) {
      std::string key;
      const int64_t len = rng.between(0, 12);
      for (int64_t j = 0; j < len; ++j) key += alphabet[static_cast<size_t>(rng.between(0, 6))];
      both({"CLUSTER", "KEYSLOT", key});
    }
    for (const char* key : {"foo", "bar", "lock", "stock", "{user1000}.following", "redisson_lock_queue:{lock}"}) {
      both({"CLUSTER", "KEYSLOT", key});
      both({"GET", key});  // its value (nil) or MOVED to b
    }
    both({"SET", "bar", "1"});
    both({"MGET", "bar", "foo"});
    both({"MGET", "bar", "{bar}x"});
    both({"DEL", "bar", "hello"});
    both({"MSET", "bar", "1", "lock", "2"});
    // A cluster node's dictEntry carries two more pointers, which MEMORY USAGE counts.
    both({"SET", "bar", "some value"});
    both({"MEMORY", "USAGE", "bar"});
    both({"MEMORY", "USAGE", "foo"});
    both({"RENAME", "bar", "{bar}x"});
    both({"RENAME", "{bar}x", "foo"});
    both({"RENAMENX", "{bar}x", "bar"});
    both({"MEMORY", "USAGE", "bar"});
    both({"EVAL", "return 1", "2", "bar", "lock"});
    both({"EVAL", "return redis.call('get', KEYS[1])", "1", "bar"});
    both({"EVAL", "return redis.call('get', 'foo')", "0"});
    both({"EVAL", "return redis.call('get', 'foo')", "1", "bar"});
    both({"EVALSHA", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "1", "foo"});
    // A script with a shebang may not run on a cluster if it says no-cluster, and stays
    // in one slot unless it allows cross-slot keys; one without may roam this node's.
    both({"EVAL", "#!lua flags=no-cluster\nreturn 1", "0"});
    both({"EVAL", "#!lua\nredis.call('get', 'bar') return redis.call('get', 'lock')", "0"});
    both({"EVAL", "#!lua\nredis.call('get', KEYS[1]) return redis.call('get', 'lock')", "1", "bar"});
    both({"EVAL", "#!lua\nreturn redis.call('mget', 'bar', '{bar}x')", "1", "bar"});
    both({"EVAL", "#!lua flags=allow-cross-slot-keys\nredis.call('get', 'bar') return redis.call('get', 'lock')", "0"});
    both({"EVAL", "redis.call('get', 'bar') return redis.call('get', 'lock')", "0"});
    both({"EVAL", "#!lua\nreturn redis.call('get', 'foo')", "0"});
    both({"MULTI"});
    both({"SET", "bar", "2"});
    both({"GET", "foo"});
    both({"EXEC"});
    both({"CLUSTER", "KEYSLOT"});
    both({"CLUSTER", "NOSUCH"});
    both({"ASKING"});
    // A real server names itself with a random id; the simulated layout names node i with
    // 40 copies of 'a' + i. The topology replies are compared with the real ids put back.
    const std::map<std::string, std::string> ids = {{a.run({"CLUSTER", "MYID"}).str, std::string(40, 'a')},
                                                    {b.run({"CLUSTER", "MYID"}).str, std::string(40, 'b')}};
    const std::function<Reply(Reply)> renamed = [&](Reply r) {
      if (auto it = ids.find(r.str); it != ids.end()) r.str = it->second;
      for (auto& e : r.elements) e = renamed(std::move(e));
      return r;
    };
    // The server lists its shards in the order of a dict it hashes with a seed of its own:
    // CLUSTER SHARDS is compared as a set of shards.
    const auto shards_in_order = [](Reply r) {
      std::sort(r.elements.begin(), r.elements.end(),
                [](const Reply& x, const Reply& y) { return to_resp(x) < to_resp(y); });
      return r;
    };
    EXPECT_EQ(to_resp(node.execute(client, {"CLUSTER", "MYID"}, 0)), to_resp(renamed(a.run({"CLUSTER", "MYID"}))));
    EXPECT_EQ(to_resp(node.execute(client, {"CLUSTER", "SLOTS"}, 0)), to_resp(renamed(a.run({"CLUSTER", "SLOTS"}))));
    EXPECT_EQ(to_resp(shards_in_order(node.execute(client, {"CLUSTER", "SHARDS"}, 0))),
              to_resp(shards_in_order(renamed(a.run({"CLUSTER", "SHARDS"})))));
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace lockstep::sim
