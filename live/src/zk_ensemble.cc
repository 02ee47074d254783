#include "lockstep/live/zk_ensemble.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "child_processes.h"

extern char** environ;

namespace lockstep::live {
namespace {

namespace fs = std::filesystem;

std::string zk_tail_of(const std::string& file, size_t max_chars) {
  std::ifstream f(file);
  std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (all.size() > max_chars) all = all.substr(all.size() - max_chars);
  while (!all.empty() && (all.back() == '\n' || all.back() == '\r')) all.pop_back();
  return all;
}

// The last lines that say what went wrong, rather than the last lines of start-up noise.
std::string why_from_log(const std::string& file) {
  std::ifstream f(file);
  std::string line, errors;
  while (std::getline(f, line)) {
    if (line.find("ERROR") != std::string::npos || line.find("Exception") != std::string::npos ||
        line.find("Error:") != std::string::npos)
      errors += line + "\n";
  }
  if (errors.size() > 600) errors = errors.substr(errors.size() - 600);
  while (!errors.empty() && errors.back() == '\n') errors.pop_back();
  return errors.empty() ? zk_tail_of(file, 600) : errors;
}

std::string java_binary() {
  if (const char* home = std::getenv("JAVA_HOME"); home && *home) {
    std::string candidate = std::string(home) + "/bin/java";
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  for (const char* candidate : {"/usr/bin/java", "/usr/local/bin/java"}) {
    if (access(candidate, X_OK) == 0) return candidate;
  }
  return "";
}

}  // namespace

std::string ZkEnsemble::classpath() {
  // zookeeper.jar names the jars it needs in its manifest; slf4j-simple turns the
  // server's log on (to its log file), which is what a failed start is explained from.
  const char* jar = "/usr/share/java/zookeeper.jar";
  if (access(jar, R_OK) != 0) return "";
  std::string cp = jar;
  if (access("/usr/share/java/slf4j-simple.jar", R_OK) == 0) cp += ":/usr/share/java/slf4j-simple.jar";
  return cp;
}

std::string ZkEnsemble::mode(const NodeAddress& a, Nanos timeout) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return "";
  const int64_t us = std::max<int64_t>(timeout.count() / 1000, 1000);
  timeval tv{static_cast<time_t>(us / 1'000'000), static_cast<suseconds_t>(us % 1'000'000)};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<uint16_t>(a.port));
  inet_pton(AF_INET, a.host.c_str(), &sa.sin_addr);
  std::string out;
  if (connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0 && write(fd, "srvr", 4) == 4) {
    char buf[1024];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  const auto at = out.find("Mode: ");
  if (at == std::string::npos) return "";
  const auto end = out.find('\n', at);
  return out.substr(at + 6, end == std::string::npos ? std::string::npos : end - at - 6);
}

ZkEnsemble::~ZkEnsemble() { stop_all(); }

void ZkEnsemble::stop_all() {
  for (int i = 0; i < size(); ++i) kill(i);
  servers_.clear();
  if (!root_.empty()) {
    std::error_code ec;
    fs::remove_all(root_, ec);
    root_.clear();
  }
}

int ZkEnsemble::index_of(const std::string& name) const {
  for (int i = 0; i < size(); ++i) {
    if (servers_[i].name == name) return i;
  }
  return -1;
}

std::string ZkEnsemble::connect_string(const std::string& process) {
  std::string out;
  for (const auto& s : servers_) {
    NodeAddress via = s.client;
    FaultProxy::LinkSpec link{process, s.name, -1, s.client, FaultProxy::Framing::Bytes, Nanos(0), true};
    if (!proxy_.route(link, via).empty()) via = s.client;
    out += (out.empty() ? "" : ",") + via.text();
  }
  return out;
}

std::string ZkEnsemble::write_config(const Server& s, const ZkEnsembleSpec& spec) {
  std::ofstream f(s.config);
  f << "tickTime=" << spec.tick_ms << "\ninitLimit=10\nsyncLimit=5\n"
    << "dataDir=" << s.dir << "\nclientPort=" << s.client.port << "\nclientPortAddress=127.0.0.1\n"
    << "admin.enableServer=false\nforceSync=no\npreAllocSize=1024\nsnapCount=100000\n"
    << "4lw.commands.whitelist=srvr\nmaxClientCnxns=0\n"
    // A peer that cannot be reached is tried again soon rather than after the default 5 s.
    << "cnxTimeout=" << std::max<int64_t>(spec.tick_ms, 200) << "\n";
  for (const auto& peer : servers_) {
    NodeAddress quorum = peer.quorum, election = peer.election;
    if (peer.name != s.name) {
      // What this server dials to reach the peer: its own links through the proxy.
      FaultProxy::LinkSpec q{s.name, peer.name, -1, peer.quorum, FaultProxy::Framing::Bytes, Nanos(0)};
      FaultProxy::LinkSpec e{s.name, peer.name, -1, peer.election, FaultProxy::Framing::Bytes, Nanos(0)};
      if (auto err = proxy_.route(q, quorum); !err.empty()) return err;
      if (auto err = proxy_.route(e, election); !err.empty()) return err;
    }
    f << "server." << peer.myid << "=" << quorum.text() << ":" << election.port << "\n";
  }
  std::ofstream id(s.dir + "/myid");
  id << s.myid << "\n";
  f.close();
  id.close();
  return f && id ? "" : "cannot write " + s.config;
}

std::string ZkEnsemble::spawn(Server& s) {
  const std::string java = java_binary();
  if (java.empty()) return "no java found (install zookeeper: scripts/setup)";
  const std::vector<std::string> a = {java,
                                      "-Xmx64m",
                                      "-Xms16m",
                                      "-XX:+UseSerialGC",
                                      "-XX:TieredStopAtLevel=1",
                                      "-Xss512k",
                                      "-Dzookeeper.admin.enableServer=false",
                                      "-Dorg.slf4j.simpleLogger.defaultLogLevel=info",
                                      "-Dorg.slf4j.simpleLogger.showDateTime=true",
                                      "-cp",
                                      classpath_,
                                      "org.apache.zookeeper.server.quorum.QuorumPeerMain",
                                      s.config};
  const int log_fd = open(s.log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) return "cannot open " + s.log;
  const pid_t pid = children::spawn(a, nullptr, log_fd, s.dir);
  close(log_fd);
  if (pid < 0) return "fork failed";
  s.pid = pid;
  return "";
}

std::string ZkEnsemble::start(const ZkEnsembleSpec& spec) {
  // A kernel-picked port is only free until someone else binds it: another test's server
  // or any outgoing connection may take it before the JVM does. Such a start is tried
  // again on fresh ports; any other failure is reported at once.
  std::string err;
  for (int attempt = 0; attempt < 5; ++attempt) {
    err = start_once(spec);
    if (!children::lost_port_race(err)) break;
  }
  return err;
}

std::string ZkEnsemble::start_once(const ZkEnsembleSpec& spec) {
  stop_all();
  classpath_ = classpath();
  if (classpath_.empty()) return "ZooKeeper is not installed (/usr/share/java/zookeeper.jar; run scripts/setup)";
  std::string tmpl = access("/dev/shm", W_OK) == 0 ? "/dev/shm/lockstep-zk-XXXXXX" : "/tmp/lockstep-zk-XXXXXX";
  if (!mkdtemp(tmpl.data())) return "cannot create a scratch folder " + tmpl;
  root_ = tmpl;
  for (int i = 0; i < spec.servers; ++i) {
    Server s;
    s.name = server_name(i);
    s.myid = spec.servers - i;
    s.client = {"127.0.0.1", children::free_loopback_port()};
    s.quorum = {"127.0.0.1", children::free_loopback_port()};
    s.election = {"127.0.0.1", children::free_loopback_port()};
    if (!s.client.port || !s.quorum.port || !s.election.port) {
      stop_all();
      return "cannot find free ports on 127.0.0.1";
    }
    s.dir = root_ + "/" + s.name;
    s.config = s.dir + "/zoo.cfg";
    s.log = s.dir + "/server.log";
    std::error_code ec;
    fs::create_directories(s.dir, ec);
    if (ec) {
      stop_all();
      return "cannot create " + s.dir + ": " + ec.message();
    }
    servers_.push_back(std::move(s));
  }
  for (auto& s : servers_) {
    std::string err = write_config(s, spec);
    if (err.empty()) err = spawn(s);
    if (!err.empty()) {
      stop_all();
      return err;
    }
  }
  if (auto err = wait_for_quorum(spec); !err.empty()) {
    stop_all();
    return err;
  }
  return "";
}

std::string ZkEnsemble::wait_for_quorum(const ZkEnsembleSpec& spec) {
  std::string died;
  Nanos next_check{0};
  const auto serving = [&] {
    for (auto& s : servers_) {
      int status = 0;
      if (s.pid > 0 && waitpid(s.pid, &status, WNOHANG) == s.pid) {
        children::forget(s.pid);
        s.pid = -1;
        died = s.name + " exited while starting: " + why_from_log(s.log);
        return true;
      }
    }
    if (mono_clock() < next_check) return false;
    next_check = mono_clock() + Millis(100);
    int up = 0;
    for (const auto& s : servers_) {
      const std::string m = mode(s.client, Millis(200));
      if (m == "leader" || m == "follower") ++up;
    }
    return up > size() / 2;
  };
  // Bounded by start_limit; the proxy carries the election meanwhile.
  const bool ok = loop_.run_until(serving, spec.start_limit);
  if (!died.empty()) return "the ZooKeeper ensemble did not start: " + died;
  if (ok) return "";
  return "the ZooKeeper ensemble did not elect a leader within " + std::to_string(to_ms(spec.start_limit)) +
         " ms; zk-1's log ends: " + why_from_log(servers_[0].log);
}

void ZkEnsemble::pause(int index, bool on) {
  if (servers_[index].pid > 0) ::kill(servers_[index].pid, on ? SIGSTOP : SIGCONT);
}

void ZkEnsemble::kill(int index) {
  Server& s = servers_[index];
  if (s.pid <= 0) return;
  ::kill(s.pid, SIGKILL);
  int status = 0;
  waitpid(s.pid, &status, 0);  // SIGKILL cannot be ignored: this returns promptly
  children::forget(s.pid);
  s.pid = -1;
}

std::string ZkEnsemble::restart(int index) {
  kill(index);
  return spawn(servers_[index]);
}

}  // namespace lockstep::live
