// The live world's fault proxy against real redis-server processes on free loopback
// ports: RESP framing, delay and FIFO per link, a cut that drops whole commands and
// resets the link once healed, what it sees for ground truth, and the replication link's
// lag (a master crash loses a write its client saw succeed).
#include "lockstep/live/fault_proxy.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <optional>
#include <thread>

#include "lockstep/live/redis_server.h"
#include "lockstep/live/resp_frame.h"
#include "hiredis_support.h"
#include "live_support.h"

namespace lockstep {
namespace {

using Argv = std::vector<std::string>;
using live::FaultProxy;
using live::NodeAddress;

using live_support::has_redis;
using live_support::run_until;
using live_support::server_config;

using live_support::sync;

// A blocking command through the proxy: it runs on a thread of its own while the loop
// (which the proxy lives on) runs here.
Reply through(live::EventLoop& loop, const NodeAddress& a, Argv argv, Nanos timeout = Millis(2000)) {
  std::atomic<bool> done{false};
  Reply r;
  std::thread t([&] {
    r = sync(a, argv, timeout);
    done = true;
  });
  loop.run_until([&] { return done.load(); }, timeout + Millis(2000));
  t.join();
  return r;
}


// One server (node-1) and client-1's link to it through a proxy.
struct ClientLink {
  live::ServerFarm farm;
  live::RedisServer* server = nullptr;
  live::EventLoop loop;
  FaultProxy proxy{loop, 1};
  NodeAddress via;
  std::string error;

  ClientLink() {
    server = farm.start(server_config("node-1"));
    if (!server) {
      error = farm.error();
      return;
    }
    error = proxy.route({"client-1", "node-1", 0, server->address(), FaultProxy::Framing::Resp, Nanos(0)}, via);
  }
};

TEST(RespFrame, FindsWholeMessagesInAStream) {
  EXPECT_EQ(live::resp_message_length("*2\r\n$3\r\nGET\r\n$4\r\nlock\r\n*1"), 23u);
  EXPECT_EQ(live::resp_message_length("*2\r\n$3\r\nGET\r\n$4\r\nlo"), std::nullopt);
  EXPECT_EQ(live::resp_message_length("$-1\r\n+OK"), 5u);
  EXPECT_EQ(live::resp_message_length("*2\r\n:1\r\n*1\r\n+x\r\n"), 16u);
  EXPECT_EQ(live::resp_message_length("%1\r\n+a\r\n:1\r\n"), 12u);  // a RESP3 map
  EXPECT_EQ(live::resp_message_length("PING\r\nPING\r\n"), 6u);     // an inline command
  EXPECT_EQ(live::resp_message_length("$3\r\nabcXY"), 0u) << "not RESP: passed on as bytes";
  EXPECT_EQ(live::resp_command("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n"), (Argv{"SET", "k", "v"}));
  EXPECT_EQ(live::resp_command("SET k  v\r\n"), (Argv{"SET", "k", "v"}));
  Reply r = live::resp_reply("*2\r\n$1\r\na\r\n$-1\r\n");
  ASSERT_EQ(r.type, Reply::Type::Array);
  EXPECT_EQ(r.elements[0], Reply::bulk("a"));
  EXPECT_TRUE(r.elements[1].is_nil());
}

using hiredis_support::free_loopback_port;

// The kernel may offer a link's listener the port picked for a server that has not bound
// it yet: the link's own upstream (it would connect to itself on every accept, until the
// process ran out of descriptors) or another link's (it would take that server's port).
// The proxy passes over such a port and leaves it free for its server.
TEST(LiveFaultProxy, ALinkNeverListensOnAServersPortTheKernelOffers) {
  live::EventLoop loop;
  FaultProxy proxy{loop, 1};
  const int own = free_loopback_port(), other = free_loopback_port();
  ASSERT_GT(own, 0);
  ASSERT_GT(other, 0);
  NodeAddress via_a, via_b;
  proxy.offer_port_first(own);
  ASSERT_EQ(proxy.route({"client-1", "node-1", 0, {"127.0.0.1", own}, FaultProxy::Framing::Resp, Nanos(0)}, via_a), "");
  EXPECT_NE(via_a.port, own);
  proxy.offer_port_first(other);
  ASSERT_EQ(proxy.route({"client-2", "node-2", 1, {"127.0.0.1", other}, FaultProxy::Framing::Resp, Nanos(0)}, via_b), "");
  proxy.offer_port_first(own);
  NodeAddress via_c;
  ASSERT_EQ(proxy.route({"client-3", "node-2", 1, {"127.0.0.1", other}, FaultProxy::Framing::Resp, Nanos(0)}, via_c), "");
  for (const NodeAddress* via : {&via_a, &via_b, &via_c}) {
    EXPECT_NE(via->port, own);
    EXPECT_NE(via->port, other);
  }
  // Both ports are free again for their servers.
  for (int port : {own, other}) {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(static_cast<uint16_t>(port));
    EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0) << "port " << port << " is still taken";
    close(fd);
  }
  // A port no server claims is used as offered.
  const int spare = free_loopback_port();
  NodeAddress via_d;
  proxy.offer_port_first(spare);
  ASSERT_EQ(proxy.route({"client-4", "node-1", 0, {"127.0.0.1", own}, FaultProxy::Framing::Resp, Nanos(0)}, via_d), "");
  EXPECT_EQ(via_d.port, spare);
}

TEST(LiveFaultProxy, DelaysAClientLinkAndSeesCommandsWithTheirReplies) {
  if (!has_redis()) GTEST_SKIP() << "redis-server not installed: live tests need it";
  ClientLink link;
  ASSERT_EQ(link.error, "");
  live::EventLoop& loop = link.loop;
  FaultProxy& proxy = link.proxy;
  const NodeAddress& via = link.via;
  std::vector<std::string> seen;
  proxy.on_message = [&](const live::ProxyMessage& m) {
    seen.push_back((m.reply ? "reply " : "command ") + *m.from + " " + (m.argv ? (*m.argv)[0] : "?") +
                   (m.reply ? " " + to_short_text(*m.reply) : ""));
  };
  EXPECT_EQ(through(loop, via, {"SET", "k", "1"}), Reply::ok());
  EXPECT_EQ(seen, (std::vector<std::string>{"command client-1 SET", "reply client-1 SET OK"}));

  // 100 ms on each end of the link: a round trip takes at least 400 ms.
  proxy.add_delay("client-1", Millis(100));
  proxy.add_delay("node-1", Millis(100));
  const Nanos start = live::mono_clock();
  EXPECT_EQ(through(loop, via, {"GET", "k"}), Reply::bulk("1"));
  EXPECT_GE(live::mono_clock() - start, Millis(400));
  proxy.add_delay("client-1", -Millis(100));
  proxy.add_delay("node-1", -Millis(100));
}

TEST(LiveFaultProxy, ACutDropsWholeCommandsAndTheLinkIsResetWhenItHeals) {
  if (!has_redis()) GTEST_SKIP() << "redis-server not installed: live tests need it";
  ClientLink link;
  ASSERT_EQ(link.error, "");
  live::EventLoop& loop = link.loop;
  FaultProxy& proxy = link.proxy;
  const NodeAddress& via = link.via;

  proxy.block("client-1", "node-1", +1);
  // The command is dropped: it never runs, and its caller times out.
  EXPECT_EQ(through(loop, via, {"SET", "cut", "1"}, Millis(300)).type, Reply::Type::Timeout);
  EXPECT_EQ(sync(link.server->address(), {"EXISTS", "cut"}), Reply::integer_of(0));
  EXPECT_EQ(proxy.dropped_messages(), 1);
  proxy.block("client-1", "node-1", -1);
  // Healed: a new connection goes through.
  EXPECT_EQ(through(loop, via, {"SET", "cut", "2"}), Reply::ok());
  EXPECT_EQ(sync(link.server->address(), {"GET", "cut"}), Reply::bulk("2"));

  // One way only: the command runs, its reply is lost.
  proxy.block("node-1", "client-1", +1);
  EXPECT_EQ(through(loop, via, {"SET", "one-way", "1"}, Millis(300)).type, Reply::Type::Timeout);
  EXPECT_EQ(sync(link.server->address(), {"GET", "one-way"}), Reply::bulk("1"));
  proxy.block("node-1", "client-1", -1);
}

TEST(LiveFaultProxy, ReplicationLagHoldsWritesAndAMasterCrashLosesThem) {
  if (!has_redis()) GTEST_SKIP() << "redis-server not installed: live tests need it";
  live::ServerFarm farm;
  live::RedisServer* master = farm.start(server_config("node-1"));
  ASSERT_NE(master, nullptr) << farm.error();
  live::EventLoop loop;
  FaultProxy proxy(loop, 1);
  NodeAddress via;
  ASSERT_EQ(proxy.route({"node-1-replica-1", "node-1", 0, master->address(), FaultProxy::Framing::Bytes, Millis(300)},
                        via),
            "");
  EXPECT_NE(via.port, master->address().port);
  live::RedisServer* replica = farm.start(server_config("node-1-replica-1", via));
  ASSERT_NE(replica, nullptr) << farm.error();
  auto linked = [&] {
    Reply r = sync(replica->address(), {"INFO", "replication"});
    return r.type == Reply::Type::Bulk && r.str.find("master_link_status:up") != std::string::npos;
  };
  ASSERT_TRUE(run_until(loop, linked, Millis(10000)));
  // Streaming has begun once a first write came through: what follows is held by the
  // proxy alone.
  ASSERT_TRUE(sync(master->address(), {"SET", "warm", "1"}).is_ok());
  ASSERT_TRUE(run_until(loop, [&] { return sync(replica->address(), {"GET", "warm"}) == Reply::bulk("1"); }, Millis(5000)));

  const Nanos written = live::mono_clock();
  ASSERT_TRUE(sync(master->address(), {"SET", "a", "1"}).is_ok());
  loop.run_for(Millis(100));
  EXPECT_EQ(sync(replica->address(), {"GET", "a"}), Reply::nil()) << "the proxy passed the write on early";
  ASSERT_TRUE(run_until(loop, [&] { return sync(replica->address(), {"GET", "a"}) == Reply::bulk("1"); }, Millis(3000)));
  EXPECT_GE(live::mono_clock() - written, Millis(300));

  // The lag is the master's buffer: a delay that begins while a write is still held
  // there slows it too, as in the simulator (the network delay is drawn when it leaves).
  ASSERT_TRUE(sync(master->address(), {"SET", "late", "1"}).is_ok());
  const Nanos late_written = live::mono_clock();
  loop.run_for(Millis(50));
  proxy.add_delay("node-1", Millis(700));
  ASSERT_TRUE(run_until(loop, [&] { return sync(replica->address(), {"GET", "late"}) == Reply::bulk("1"); }, Millis(5000)));
  EXPECT_GE(live::mono_clock() - late_written, Millis(1000));
  proxy.add_delay("node-1", -Millis(700));

  // A paused master sends nothing: held, a write stays past its lag until released.
  proxy.hold_from("node-1", true);
  ASSERT_TRUE(sync(master->address(), {"SET", "c", "1"}).is_ok());
  loop.run_for(Millis(500));
  EXPECT_EQ(sync(replica->address(), {"GET", "c"}), Reply::nil());
  proxy.hold_from("node-1", false);
  EXPECT_TRUE(run_until(loop, [&] { return sync(replica->address(), {"GET", "c"}) == Reply::bulk("1"); }, Millis(1000)));

  // A cut holds the stream (TCP retransmits) until it heals.
  proxy.block("node-1", "node-1-replica-1", +1);
  ASSERT_TRUE(sync(master->address(), {"SET", "d", "1"}).is_ok());
  loop.run_for(Millis(500));
  EXPECT_EQ(sync(replica->address(), {"GET", "d"}), Reply::nil());
  proxy.block("node-1", "node-1-replica-1", -1);
  EXPECT_TRUE(run_until(loop, [&] { return sync(replica->address(), {"GET", "d"}) == Reply::bulk("1"); }, Millis(1000)));

  // Killed while the write is still held: the replica never gets it.
  ASSERT_TRUE(sync(master->address(), {"SET", "b", "1"}).is_ok());
  loop.run_for(Millis(50));
  master->kill();
  loop.run_for(Millis(600));
  EXPECT_EQ(sync(replica->address(), {"GET", "b"}), Reply::nil());
  EXPECT_EQ(sync(replica->address(), {"GET", "a"}), Reply::bulk("1"));
  EXPECT_GT(proxy.dropped_bytes(), 0);
}

// A cluster bus link is opened by whichever member pings: the proxy names a connection
// by the address it comes from, so a delay of the member that opened it applies both
// ways, and a connection from an unnamed address stays the link's.
TEST(LiveFaultProxy, AConnectionIsTheProcessItsSourceAddressNames) {
  if (!has_redis()) GTEST_SKIP() << "redis-server not installed: live tests need it";
  ClientLink link;
  ASSERT_EQ(link.error, "");
  link.proxy.name_source("127.0.0.7", "node-9");
  link.proxy.add_delay("node-9", Millis(300));
  // PING from a socket bound to `source`, through the proxy; returns the round trip.
  auto ping_from = [&](const char* source) {
    std::atomic<bool> done{false};
    std::string answer;
    Nanos took{0};
    std::thread t([&] {
      const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in from{}, to{};
      from.sin_family = to.sin_family = AF_INET;
      inet_pton(AF_INET, source, &from.sin_addr);
      inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
      to.sin_port = htons(static_cast<uint16_t>(link.via.port));
      const Nanos start = live::mono_clock();
      if (::bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof from) == 0 &&
          ::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) == 0) {
        const std::string ping = "*1\r\n$4\r\nPING\r\n";
        if (::write(fd, ping.data(), ping.size()) == static_cast<ssize_t>(ping.size())) {
          char buf[16] = {};
          const ssize_t n = ::read(fd, buf, sizeof buf);
          if (n > 0) answer.assign(buf, static_cast<size_t>(n));
        }
      }
      took = live::mono_clock() - start;
      ::close(fd);
      done = true;
    });
    link.loop.run_until([&] { return done.load(); }, Millis(5000));
    t.join();
    EXPECT_EQ(answer, "+PONG\r\n") << source;
    return took;
  };
  EXPECT_GE(ping_from("127.0.0.7"), Millis(600));
  EXPECT_LT(ping_from("127.0.0.1"), Millis(300));
}

}  // namespace
}  // namespace lockstep
