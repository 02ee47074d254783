#include "lockstep/live/mariadb_server.h"

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
#include <vector>

#include "child_processes.h"

#ifdef LOCKSTEP_HAVE_MARIADB
#include <mysql.h>
#endif

extern char** environ;

namespace lockstep::live {
namespace {

namespace fs = std::filesystem;

// Connects as root over the socket and runs `sql` if given; true when both worked.
bool answers(const std::string& socket, const char* sql) {
#ifdef LOCKSTEP_HAVE_MARIADB
  MYSQL* c = mysql_init(nullptr);
  if (!c) return false;
  const unsigned timeout = 1;
  mysql_options(c, MYSQL_OPT_CONNECT_TIMEOUT, &timeout);
  mysql_options(c, MYSQL_OPT_READ_TIMEOUT, &timeout);
  bool ok = mysql_real_connect(c, nullptr, "root", nullptr, nullptr, 0, socket.c_str(), 0) != nullptr;
  if (ok && sql) ok = mysql_query(c, sql) == 0;
  mysql_close(c);
  return ok;
#else
  (void)socket;
  (void)sql;
  return false;
#endif
}

}  // namespace

std::string find_mariadbd() {
  if (const char* env = std::getenv("LOCKSTEP_MARIADBD"); env && *env) return access(env, X_OK) == 0 ? env : "";
  for (const char* dir : {"/usr/sbin", "/usr/local/sbin", "/usr/bin", "/usr/local/bin"}) {
    for (const char* name : {"mariadbd", "mysqld"}) {
      const fs::path p = fs::path(dir) / name;
      if (access(p.c_str(), X_OK) == 0) return p;
    }
  }
  return "";
}

const std::string& mariadb_client_missing() {
#ifdef LOCKSTEP_HAVE_MARIADB
  static const std::string none;
  return none;
#else
  static const std::string why = "this lockstep was built without libmariadb (scripts/setup installs libmariadb-dev)";
  return why;
#endif
}

MariaDbServer::~MariaDbServer() {
  kill();
  std::error_code ec;
  if (!dir_.empty()) fs::remove_all(dir_, ec);
}

std::string MariaDbServer::start(const MariaDbSettings& settings) {
  if (!mariadb_client_missing().empty()) return mariadb_client_missing();
  settings_ = settings;
  binary_ = find_mariadbd();
  if (binary_.empty()) return "mariadbd not installed (scripts/setup installs mariadb-server, or set LOCKSTEP_MARIADBD)";
  // In memory where the machine has a tmpfs: InnoDB writes some 80 MB as it starts, and
  // on disk that would slow the fsyncs of the Redis servers beside it.
  const char* tmp = std::getenv("TMPDIR");
  std::string tmpl = access("/dev/shm", W_OK) == 0 ? "/dev/shm/lockstep-mariadb-XXXXXX"
                                                    : std::string(tmp && *tmp ? tmp : "/tmp") + "/lockstep-mariadb-XXXXXX";
  if (!mkdtemp(tmpl.data())) return "cannot create a scratch directory from " + tmpl;
  dir_ = tmpl;
  std::error_code ec;
  fs::create_directory(fs::path(dir_) / "data", ec);
  if (ec) return "cannot create " + dir_ + "/data: " + ec.message();
  socket_ = dir_ + "/sock";
  std::string last;
  for (int attempt = 0; attempt < 3; ++attempt) {
    port_ = settings_.tcp ? children::free_loopback_port() : 0;
    if (settings_.tcp && port_ == 0) return "cannot find a free port on 127.0.0.1";
    if (auto err = spawn(); !err.empty()) return err;
    if (wait_ready(Millis(30000))) {
      if (!answers(socket_, "CREATE DATABASE IF NOT EXISTS lockstep")) return "mariadbd: cannot create the database lockstep";
      return "";
    }
    last = log_tail();
    kill();
    if (!children::lost_port_race(last)) break;
  }
  return "mariadbd did not start: " + (last.empty() ? std::string("no answer") : last);
}

std::string MariaDbServer::spawn() {
  std::vector<std::string> args = {binary_,
                                   "--no-defaults",
                                   "--datadir=" + dir_ + "/data",
                                   "--socket=" + socket_,
                                   "--skip-grant-tables",
                                   "--innodb-buffer-pool-size=16M",
                                   "--innodb-log-file-size=4M",
                                   "--innodb-undo-tablespaces=0",
                                   "--innodb-doublewrite=0",
                                   "--innodb-flush-log-at-trx-commit=0",
                                   "--skip-log-bin",
                                   "--wait-timeout=" + std::to_string(settings_.wait_timeout_s),
                                   "--innodb-lock-wait-timeout=" + std::to_string(settings_.innodb_lock_wait_timeout_s),
                                   "--log-error=" + dir_ + "/error.log",
                                   "--pid-file=" + dir_ + "/mariadbd.pid"};
  if (settings_.tcp) {
    args.push_back("--bind-address=127.0.0.1");
    args.push_back("--port=" + std::to_string(port_));
  } else {
    args.push_back("--skip-networking");
  }
  if (geteuid() == 0) args.push_back("--user=root");
  // What it says before --log-error opens goes nowhere.
  const pid_t pid = children::spawn(args, nullptr, -1);
  if (pid < 0) return "fork failed";
  pid_ = pid;
  paused_ = false;
  return "";
}

bool MariaDbServer::wait_ready(Nanos limit) {
  const Nanos deadline = mono_clock() + limit;
  while (mono_clock() < deadline) {
    if (pid_ <= 0) return false;
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      children::forget(pid_);
      pid_ = -1;
      return false;
    }
    if (answers(socket_, nullptr)) return true;
    std::this_thread::sleep_for(Millis(20));
  }
  return false;
}

void MariaDbServer::pause() {
  if (pid_ > 0 && !paused_ && ::kill(pid_, SIGSTOP) == 0) paused_ = true;
}

void MariaDbServer::resume() {
  if (pid_ > 0 && paused_ && ::kill(pid_, SIGCONT) == 0) paused_ = false;
}

void MariaDbServer::kill() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  int status = 0;
  waitpid(pid_, &status, 0);  // SIGKILL cannot be ignored: this returns promptly
  children::forget(pid_);
  pid_ = -1;
  paused_ = false;
}

std::string MariaDbServer::restart(bool wait) {
  kill();
  for (int attempt = 0; attempt < 3; ++attempt) {
    if (auto err = spawn(); !err.empty()) return err;
    if (!wait || wait_ready(Millis(30000))) return "";
    kill();
  }
  return "mariadbd did not restart on port " + std::to_string(port_) + ": " + log_tail();
}

std::string MariaDbServer::log_tail() const {
  std::ifstream f(dir_ + "/error.log");
  std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (all.size() > 300) all = all.substr(all.size() - 300);
  while (!all.empty() && (all.back() == '\n' || all.back() == '\r')) all.pop_back();
  return all;
}

}  // namespace lockstep::live
