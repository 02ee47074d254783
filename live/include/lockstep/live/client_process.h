// A ClientProcess is one run of a user's own client program (an external client): a
// child process lockstep starts, whose stdout it reads line by line on the live world's
// event loop, and which a fault may stop, continue or kill.
//
// Invariants (the safety rules of redis_server.h, for programs lockstep did not write):
//  - The program runs in a process group of its own, and every signal goes to the whole
//    group: a program that forks (a shell, npm, a worker pool) is paused, crashed and
//    removed with everything it started.
//  - Every process group started is killed and reaped: by kill(), by the destructor, when
//    the program exits (whatever it left behind in its group), by lockstep's
//    SIGINT/SIGTERM/SIGHUP handler and at exit, and by the kernel if lockstep itself dies
//    (PR_SET_PDEATHSIG: only the program itself, not what it forked).
//  - A group is signalled only while its leader is alive or not yet reaped, so its id can
//    never belong to someone else's processes.
//  - Lines are bounded (kLineBytesMax); nothing the program writes can exhaust memory.
#pragma once

#include <sys/types.h>

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "lockstep/live/clock_file.h"
#include "lockstep/live/event_loop.h"

struct event;

namespace lockstep::live {

struct ClientProcessSpec {
  std::string name;               // client-3: for messages
  std::vector<std::string> argv;  // argv[0] is looked up on PATH unless it holds a '/'
  std::string directory;          // the working directory
  std::vector<std::string> env;   // "KEY=VALUE" set on top of lockstep's own environment
  std::string stderr_file;        // the program's stderr is appended here
  // Non-empty: the clock library is preloaded with this clock file (LD_PRELOAD).
  std::string clock_file;
};

class ClientProcess {
 public:
  static constexpr size_t kLineBytesMax = 64 * 1024;

  ClientProcess(EventLoop& loop, ClientProcessSpec spec);
  ~ClientProcess();
  ClientProcess(const ClientProcess&) = delete;
  ClientProcess& operator=(const ClientProcess&) = delete;

  // Starts the program; "" or why it could not (the program is not found, fork failed).
  std::string start();
  bool running() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }

  void stop();    // SIGSTOP to the group: a real stop-the-world pause
  void resume();  // SIGCONT
  // SIGKILL to the group and reap; what the program wrote before it died is handed to
  // on_line first. on_exit is not called: the caller knows why it died.
  void kill();
  // Hands every complete line the program has written so far to on_line, now.
  void read_output();

  // Each line without its newline; `overlong`: the line was cut at kLineBytesMax.
  std::function<void(std::string_view line, bool overlong)> on_line;
  // The program ended by itself (exited or was killed by a signal lockstep did not
  // send); its last lines have been handed to on_line. `wait_status` as waitpid gives it.
  std::function<void(int wait_status)> on_exit;

  // The last `lines` lines of the program's stderr (all incarnations), for reports.
  std::string stderr_tail(size_t lines) const;

 private:
  static void on_readable(int fd, short, void* arg);
  static void on_exit_event(int fd, short, void* arg);
  void exited();
  void reap();
  void read_rest();
  void close_output();
  void split(const char* data, size_t n);

  EventLoop& loop_;
  ClientProcessSpec spec_;
  pid_t pid_ = -1;
  int out_fd_ = -1;
  int exit_fd_ = -1;  // a pidfd, readable when the program exits; -1 when polled instead
  event* out_event_ = nullptr;
  event* exit_event_ = nullptr;
  std::string partial_;
  bool skipping_ = false;  // the rest of an overlong line
  // Guards against this object being destroyed inside one of its callbacks.
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

// The program a command would run: argv[0] as given if it holds a '/' (relative to
// `directory`, made absolute), else the first match on PATH. "" if none is found.
std::string resolve_program(const std::string& argv0, const std::string& directory);

// "" if lockstep's clock library reaches the clocks of `program` (a dynamically linked
// ELF that reads time through the C library, or a script whose interpreter does), else
// why not: a statically linked binary, or a Go binary (Go reads the clock through the
// kernel's vDSO itself).
std::string clock_unreachable_reason(const std::string& program);

}  // namespace lockstep::live
