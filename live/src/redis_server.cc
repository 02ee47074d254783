#include "lockstep/live/redis_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "child_processes.h"

extern char** environ;

namespace lockstep::live {
namespace children {
namespace {


// Live children, readable from a signal handler: only atomics, no allocation.
constexpr size_t kSlots = 1024;
std::array<std::atomic<pid_t>, kSlots> g_children{};
struct sigaction g_old_int, g_old_term, g_old_hup;
std::once_flag g_handlers_once;

std::mutex g_started_mu;
std::vector<pid_t> g_started;

void kill_children_now() {
  for (auto& slot : g_children) {
    const pid_t pid = slot.load();
    if (pid != 0) ::kill(pid, SIGKILL);  // negative: a process group
  }
}

void on_fatal_signal(int sig) {
  kill_children_now();
  // Reaping is left to the kernel (we are about to die: init adopts and reaps them).
  const struct sigaction* old = sig == SIGINT ? &g_old_int : sig == SIGTERM ? &g_old_term : &g_old_hup;
  sigaction(sig, old, nullptr);
  raise(sig);
}

}  // namespace

// Idempotent: only the first call installs anything.
void install_handlers() {
  std::call_once(g_handlers_once, [] {
    struct sigaction sa {};
    sa.sa_handler = on_fatal_signal;
    sigemptyset(&sa.sa_mask);
    // A signal the process was started ignoring (a background job's SIGINT) stays ignored.
    for (auto [sig, old] : {std::pair{SIGINT, &g_old_int}, {SIGTERM, &g_old_term}, {SIGHUP, &g_old_hup}}) {
      sigaction(sig, &sa, old);
      if (old->sa_handler == SIG_IGN) sigaction(sig, old, nullptr);
    }
    std::atexit(kill_children_now);
  });
}

void remember(pid_t pid, bool server) {
  for (auto& slot : g_children) {
    pid_t empty = 0;
    if (slot.compare_exchange_strong(empty, pid)) break;
  }
  if (!server) return;
  std::lock_guard lock(g_started_mu);
  g_started.push_back(pid);
}

std::vector<pid_t> started_servers() {
  std::lock_guard lock(g_started_mu);
  return g_started;
}

void forget(pid_t pid) {
  for (auto& slot : g_children) {
    pid_t expected = pid;
    if (slot.compare_exchange_strong(expected, 0)) return;
  }
}

int free_loopback_port() {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int port = 0;
  socklen_t len = sizeof a;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    port = ntohs(a.sin_port);
  close(fd);
  return port;
}

bool lost_port_race(const std::string& why) { return why.find("already in use") != std::string::npos; }

pid_t spawn(const std::vector<std::string>& argv, const std::vector<std::string>* env, int out_fd,
            const std::string& dir) {
  std::vector<char*> args, envp;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  if (env) {
    for (const auto& e : *env) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
  }
  char* const* child_env = env ? envp.data() : environ;
  const char* workdir = dir.empty() ? nullptr : dir.c_str();
  install_handlers();
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(1);  // the parent died before prctl took effect
    const int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (devnull >= 0) dup2(devnull, STDIN_FILENO);
    const int out = out_fd >= 0 ? out_fd : devnull;
    if (out >= 0) {
      dup2(out, STDOUT_FILENO);
      dup2(out, STDERR_FILENO);
    }
    if (workdir && chdir(workdir) != 0) _exit(126);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    execve(args[0], args.data(), child_env);
    _exit(127);
  }
  remember(pid, /*server=*/true);
  return pid;
}

}  // namespace children

namespace {

namespace fs = std::filesystem;

std::string which(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::stringstream ss(path ? path : "/usr/local/bin:/usr/bin:/bin");
  std::string dir;
  while (std::getline(ss, dir, ':')) {
    if (dir.empty()) continue;
    std::string candidate = dir + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

std::string tail_of(const std::string& file, size_t max_chars = 300) {
  std::ifstream f(file);
  std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (all.size() > max_chars) all = all.substr(all.size() - max_chars);
  while (!all.empty() && (all.back() == '\n' || all.back() == '\r')) all.pop_back();
  return all;
}

// "$TMPDIR/<name>-XXXXXX" (/tmp without TMPDIR): a template for mkdtemp.
std::string temp_template(const char* name) {
  const char* tmp = std::getenv("TMPDIR");
  return std::string(tmp && *tmp ? tmp : "/tmp") + "/" + name + "-XXXXXX";
}

}  // namespace

std::string find_redis_server() {
  if (const char* env = std::getenv("LOCKSTEP_REDIS_SERVER"); env && *env) return access(env, X_OK) == 0 ? env : "";
  return which("redis-server");
}

std::string find_redis_sentinel() {
  if (const char* env = std::getenv("LOCKSTEP_REDIS_SENTINEL"); env && *env) return access(env, X_OK) == 0 ? env : "";
  return which("redis-sentinel");
}

std::string find_clock_library() {
  if (const char* env = std::getenv("LOCKSTEP_CLOCK_LIBRARY"); env && *env) return access(env, R_OK) == 0 ? env : "";
#ifdef LOCKSTEP_CLOCK_LIBRARY
  if (access(LOCKSTEP_CLOCK_LIBRARY, R_OK) == 0) return LOCKSTEP_CLOCK_LIBRARY;
#endif
  // Where `cmake --install` and the Debian package put it, for programs linking an
  // installed lockstep, whose build tree is gone.
#ifdef LOCKSTEP_CLOCK_LIBRARY_INSTALLED
  if (access(LOCKSTEP_CLOCK_LIBRARY_INSTALLED, R_OK) == 0) return LOCKSTEP_CLOCK_LIBRARY_INSTALLED;
#endif
  std::error_code ec;
  const fs::path beside = fs::read_symlink("/proc/self/exe", ec).parent_path() / "liblockstep_clock.so";
  if (!ec && access(beside.c_str(), R_OK) == 0) return beside.string();
  return "";
}

namespace {

// Runs `redis-server --version` with the clock library preloaded and a deadline; true if
// it answered.
bool shifted_clock_probe(const std::string& binary, const std::string& lib, const std::string& dir) {
  const std::string out = dir + "/probe-out";
  const std::vector<std::string> env = {"LD_PRELOAD=" + lib, "PATH=/usr/bin:/bin"};
  const int fd = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  const pid_t pid = children::spawn({binary, "--version"}, &env, fd);
  close(fd);
  if (pid < 0) return false;
  int status = 0;
  bool exited = false;
  for (int i = 0; i < 300 && !exited; ++i) {  // 3 s at most
    exited = waitpid(pid, &status, WNOHANG) == pid;
    if (!exited) std::this_thread::sleep_for(Millis(10));
  }
  if (!exited) {
    ::kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
  }
  children::forget(pid);
  return exited && WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
         tail_of(out, 2000).find("Redis server v=") != std::string::npos;
}

}  // namespace

const std::string& shifted_clock_unusable_reason() {
  static const std::string reason = [] {
    const std::string binary = find_redis_server();
    if (binary.empty()) return std::string("redis-server not found");
    const std::string lib = find_clock_library();
    if (lib.empty()) return std::string("liblockstep_clock.so not found (build it, or set LOCKSTEP_CLOCK_LIBRARY)");
    std::string dir = temp_template("lockstep-clock");
    if (!mkdtemp(dir.data())) return std::string("cannot create a temporary directory");
    const bool ok = shifted_clock_probe(binary, lib, dir);
    std::error_code ec;
    fs::remove_all(dir, ec);
    return ok ? std::string() : "redis-server does not start with " + lib + " preloaded";
  }();
  return reason;
}

std::vector<pid_t> started_server_pids() {
  return children::started_servers();
}

RedisServer::RedisServer(std::string binary, std::string dir, ServerConfig config)
    : binary_(std::move(binary)), dir_(std::move(dir)), config_(std::move(config)), clock_(dir_ + "/wall-clock-offset") {
  // Stored when the file is first mapped, at start: the directory does not exist yet.
  if (config_.shifted_clock) clock_.set_wall_offset(config_.initial_clock_offset);
}

RedisServer::~RedisServer() { kill(); }

std::vector<std::string> RedisServer::args() const {
  if (config_.sentinel()) {
    // Sentinel reads (and rewrites) a file; the same binary under another name is
    // Sentinel only when told so.
    std::vector<std::string> a = {binary_, sentinel_file()};
    if (fs::path(binary_).filename() != "redis-sentinel") a.push_back("--sentinel");
    return a;
  }
  std::vector<std::string> a = {binary_,  "--port",      std::to_string(port_), "--bind", "127.0.0.1",
                                "--daemonize", "no",     "--save",              "",       "--dir",
                                dir_,      "--logfile",  "",
                                // Replicas sync at once instead of after the default 5 s.
                                "--repl-diskless-sync-delay", "0"};
  if (config_.persistence == Persistence::None) {
    a.insert(a.end(), {"--appendonly", "no"});
  } else {
    const std::string fsync = config_.persistence == Persistence::AofAlways ? "always" : "everysec";
    a.insert(a.end(), {"--appendonly", "yes", "--appendfsync", fsync});
  }
  if (config_.min_replicas_to_write > 0) {
    // On every node, as in the simulator: a promoted replica refuses writes just the same.
    a.insert(a.end(), {"--min-replicas-to-write", std::to_string(config_.min_replicas_to_write)});
  }
  if (config_.maxmemory_bytes > 0) {
    // On every node; a replica ignores it until promoted (replica-ignore-maxmemory).
    a.insert(a.end(), {"--maxmemory", std::to_string(config_.maxmemory_bytes), "--maxmemory-policy",
                       to_string(config_.maxmemory_policy), "--maxmemory-samples", std::to_string(config_.maxmemory_samples)});
  }
  if (config_.replica_of) {
    a.insert(a.end(), {"--replicaof", config_.replica_of->host, std::to_string(config_.replica_of->port)});
  }
  if (config_.cluster()) {
    // The bus would default to port + 10000, past 65535 for most ports the kernel picks.
    // Once the cluster forms, peers reach the bus and everything else that names this
    // node (MOVED, ASK, CLUSTER SLOTS, a replica's link to its master) names the
    // announced ports: the fault proxy's.
    a.insert(a.end(), {"--cluster-enabled", "yes", "--cluster-port", std::to_string(bus_port_),
                       "--cluster-config-file", "nodes.conf", "--cluster-node-timeout",
                       std::to_string(config_.cluster_node_timeout_ms), "--cluster-announce-ip", "127.0.0.1",
                       "--cluster-announce-bus-port", std::to_string(announce_bus_port_ > 0 ? announce_bus_port_ : bus_port_)});
    if (announce_port_ > 0) a.insert(a.end(), {"--cluster-announce-port", std::to_string(announce_port_)});
  }
  if (!config_.source_addr.empty()) a.insert(a.end(), {"--bind-source-addr", config_.source_addr});
  return a;
}

// Written afresh on every start: the port may have changed since the last attempt.
std::string RedisServer::write_sentinel_config() const {
  std::ofstream f(sentinel_file());
  f << "port " << port_ << "\nbind 127.0.0.1\ndaemonize no\ndir " << dir_ << "\nlogfile \"\"\n";
  for (const auto& m : config_.monitors) {
    f << "sentinel monitor " << m.name << " " << m.address.host << " " << m.address.port << " " << m.quorum << "\n"
      << "sentinel down-after-milliseconds " << m.name << " " << m.down_after_ms << "\n"
      << "sentinel failover-timeout " << m.name << " " << m.failover_timeout_ms << "\n"
      << "sentinel parallel-syncs " << m.name << " 1\n";
  }
  f.close();
  return f ? "" : "cannot write " + sentinel_file();
}

std::string RedisServer::spawn() {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) return "cannot create " + dir_ + ": " + ec.message();
  if (config_.sentinel()) {
    if (auto err = write_sentinel_config(); !err.empty()) return err;
  }
  if (config_.shifted_clock && !clock_.open()) return "cannot create the clock file " + clock_.path();
  std::vector<std::string> env_strings;
  for (char** e = environ; e && *e; ++e) {
    if (config_.shifted_clock && std::string_view(*e).starts_with("LD_PRELOAD=")) continue;
    env_strings.emplace_back(*e);
  }
  if (config_.shifted_clock) {
    env_strings.push_back("LD_PRELOAD=" + find_clock_library());
    env_strings.push_back("LOCKSTEP_CLOCK_FILE=" + clock_.path());
  }
  const std::string log = log_file();
  const int log_fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) return "cannot open " + log;
  const pid_t pid = children::spawn(args(), &env_strings, log_fd);
  close(log_fd);
  if (pid < 0) return "fork failed";
  pid_ = pid;
  paused_ = false;
  return "";
}

bool RedisServer::wait_ready(Nanos limit) {
  const Nanos deadline = mono_clock() + limit;
  // Bounded by the deadline; each round costs at most ~220 ms.
  while (mono_clock() < deadline) {
    if (pid_ <= 0) return false;
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      children::forget(pid_);
      pid_ = -1;
      return false;
    }
    std::vector<std::string> ping{"PING"};
    Reply r = sync_command(address(), ping, Millis(200));
    if (r.type == Reply::Type::Status && r.str == "PONG") return true;
    std::this_thread::sleep_for(Millis(10));
  }
  return false;
}

std::string RedisServer::start() {
  std::string last;
  for (int attempt = 0; attempt < 5; ++attempt) {
    port_ = children::free_loopback_port();
    if (port_ == 0) return "cannot find a free port on 127.0.0.1";
    if (config_.cluster()) {
      bus_port_ = children::free_loopback_port();
      if (bus_port_ == 0 || bus_port_ == port_) return "cannot find a free bus port on 127.0.0.1";
    }
    if (auto err = spawn(); !err.empty()) return err;
    if (wait_ready(Millis(5000))) return "";
    kill();
    last = tail_of(log_file());
    if (!children::lost_port_race(last)) break;
  }
  return config_.name + " did not start: " + (last.empty() ? "no answer to PING" : last);
}

void RedisServer::kill() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  int status = 0;
  waitpid(pid_, &status, 0);  // SIGKILL cannot be ignored: this returns promptly
  children::forget(pid_);
  pid_ = -1;
  paused_ = false;
}

std::string RedisServer::restart(bool wait) {
  kill();
  for (int attempt = 0; attempt < 3; ++attempt) {
    if (auto err = spawn(); !err.empty()) return err;
    if (!wait) return "";
    if (wait_ready(Millis(5000))) return "";
    kill();
  }
  return config_.name + " did not restart on port " + std::to_string(port_) + ": " + tail_of(log_file());
}

void RedisServer::pause() {
  if (pid_ > 0 && !paused_ && ::kill(pid_, SIGSTOP) == 0) paused_ = true;
}

void RedisServer::resume() {
  if (pid_ > 0 && paused_ && ::kill(pid_, SIGCONT) == 0) paused_ = false;
}

bool RedisServer::set_clock_offset(Nanos offset) { return config_.shifted_clock && clock_.set_wall_offset(offset); }

bool RedisServer::set_clock_drift(double drift_ppm) {
  return config_.shifted_clock && clock_.set_drift(drift_ppm, /*monotonic_too=*/false);
}

ServerFarm::ServerFarm() {
  binary_ = find_redis_server();
  if (binary_.empty()) {
    error_ = "redis-server not found (install redis-server or set LOCKSTEP_REDIS_SERVER)";
    return;
  }
  sentinel_binary_ = find_redis_sentinel();
  if (sentinel_binary_.empty()) sentinel_binary_ = binary_;
  std::string templ = temp_template("lockstep-live");
  if (!mkdtemp(templ.data())) {
    error_ = "cannot create a temporary directory from " + templ;
    return;
  }
  dir_ = templ;
}

ServerFarm::~ServerFarm() {
  stop_all();
  if (!dir_.empty()) {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
}

RedisServer* ServerFarm::start(const ServerConfig& config) {
  if (!error_.empty()) return nullptr;
  if (config.shifted_clock && !shifted_clock_unusable_reason().empty()) {
    error_ = "server clock faults: " + shifted_clock_unusable_reason();
    return nullptr;
  }
  auto s = std::make_unique<RedisServer>(config.sentinel() ? sentinel_binary_ : binary_, dir_ + "/" + config.name,
                                         config);
  if (auto err = s->start(); !err.empty()) {
    error_ = err;
    return nullptr;
  }
  servers_.push_back(std::move(s));
  return servers_.back().get();
}

RedisServer* ServerFarm::find(const std::string& name) {
  for (auto& s : servers_) {
    if (s->config().name == name) return s.get();
  }
  return nullptr;
}

void ServerFarm::stop_all() {
  for (auto& s : servers_) s->kill();
}

}  // namespace lockstep::live
