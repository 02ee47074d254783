// Every process the live world starts — redis-server, redis-sentinel, a user's external
// client program — is registered here, so that none outlives lockstep: a SIGINT, SIGTERM
// or SIGHUP, or lockstep's normal exit, SIGKILLs every one still registered (the handler
// only reads atomics, so it is safe in a signal). Each child also asks the kernel for
// SIGKILL when lockstep dies (PR_SET_PDEATHSIG); that is the child's own business.
#pragma once

#include <fcntl.h>
#include <sys/types.h>

#include <string>
#include <vector>

namespace lockstep::live::children {

// Installs the signal handlers and the exit hook; only the first call does anything.
void install_handlers();
// Registers a started process (a pid) or process group (a negative pgid) to be killed on
// a fatal signal or at exit. `server`: also listed by started_server_pids().
void remember(pid_t pid_or_group, bool server);
// The process (group) was killed and reaped by its owner.
void forget(pid_t pid_or_group);
// Every server or sentinel ever started, in order.
std::vector<pid_t> started_servers();

// Starts `argv` (argv[0] a path) as a child that dies with lockstep (PR_SET_PDEATHSIG)
// and is registered as a server: stdin from /dev/null, stdout and stderr to `out_fd`
// (/dev/null when -1), working in `dir` when it is not empty, with `env` ("KEY=VALUE"
// each; lockstep's own environment when null), every signal unblocked. Everything is
// prepared before fork: after it, the child makes only async-signal-safe calls. Returns
// the pid, or -1 when fork failed; the caller still owns `out_fd`.
pid_t spawn(const std::vector<std::string>& argv, const std::vector<std::string>* env, int out_fd,
            const std::string& dir = "");

// A TCP port the kernel says is free on 127.0.0.1 right now (0 if it would not say).
// Another process may take it before a server binds it: each server's start() says so
// from its log, or tries again with another.
int free_loopback_port();
// Whether a server's start-up error or log says another process bound its port first:
// the one failure worth starting again on fresh ports.
bool lost_port_race(const std::string& why);

// Marks a descriptor a library opened without O_CLOEXEC (hiredis's sockets) close-on-exec,
// so that no program lockstep starts inherits it: a client that could reach a server
// around its fault proxy would make every fault on its link a lie.
inline void close_on_exec(int fd) {
  if (fd >= 0) fcntl(fd, F_SETFD, fcntl(fd, F_GETFD) | FD_CLOEXEC);
}

}  // namespace lockstep::live::children
