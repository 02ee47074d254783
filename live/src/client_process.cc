// Starting, reading, signalling and removing a user's client program (client_process.h
// has the rules), and telling whether lockstep's clock library can reach its clocks.
#include "lockstep/live/client_process.h"

#include <elf.h>
#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include "child_processes.h"
#include "lockstep/live/redis_server.h"

extern char** environ;

namespace lockstep::live {
namespace {

// How often a program's exit is looked for when the kernel has no pidfd to say so.
constexpr Nanos kExitPollPeriod = Millis(20);

// CLOSE_RANGE_CLOEXEC (Linux 5.11) from <linux/close_range.h>, which not every libc ships.
constexpr unsigned kCloseRangeCloexec = 1u << 2;

bool has_key(const std::vector<std::string>& env, std::string_view entry) {
  const auto eq = entry.find('=');
  for (const auto& e : env) {
    if (e.compare(0, eq + 1, entry.substr(0, eq + 1)) == 0) return true;
  }
  return false;
}

// Whether the (not yet reaped) process has exited: waitid with WNOWAIT leaves it a
// zombie, so its pid, which is also its group's id, cannot be reused meanwhile.
bool has_exited(pid_t pid) {
  siginfo_t info{};
  return waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid;
}

}  // namespace

std::string resolve_program(const std::string& argv0, const std::string& directory) {
  if (argv0.empty()) return "";
  if (argv0.find('/') != std::string::npos) {
    std::string path = argv0[0] == '/' || directory.empty() ? argv0 : directory + "/" + argv0;
    if (access(path.c_str(), X_OK) != 0) return "";
    // Absolute, because the child changes to `directory` before it runs the program: a
    // relative `directory` would otherwise be applied a second time.
    std::error_code ec;
    const auto absolute = std::filesystem::absolute(path, ec);
    return ec ? path : absolute.lexically_normal().string();
  }
  const char* path = std::getenv("PATH");
  std::stringstream ss(path ? path : "/usr/local/bin:/usr/bin:/bin");
  std::string dir;
  while (std::getline(ss, dir, ':')) {
    if (dir.empty()) continue;
    const std::string candidate = dir + "/" + argv0;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

std::string clock_unreachable_reason(const std::string& program) {
  std::ifstream f(program, std::ios::binary);
  Elf64_Ehdr eh{};
  if (!f.read(reinterpret_cast<char*>(&eh), sizeof eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) {
    return "";  // a script: its interpreter is what runs, and those are C programs
  }
  if (eh.e_ident[EI_CLASS] != ELFCLASS64) return program + " is not a 64-bit program";
  bool dynamic = false;
  for (int i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph{};
    f.seekg(static_cast<std::streamoff>(eh.e_phoff + static_cast<uint64_t>(i) * eh.e_phentsize));
    if (!f.read(reinterpret_cast<char*>(&ph), sizeof ph)) break;
    dynamic = dynamic || ph.p_type == PT_INTERP;
  }
  if (!dynamic) return program + " is statically linked: a preloaded library cannot replace its clock functions";
  // Go's runtime reads the clock through the vDSO itself, never through the C library.
  Elf64_Shdr names{};
  f.seekg(static_cast<std::streamoff>(eh.e_shoff + static_cast<uint64_t>(eh.e_shstrndx) * eh.e_shentsize));
  if (eh.e_shoff == 0 || !f.read(reinterpret_cast<char*>(&names), sizeof names)) return "";
  for (int i = 0; i < eh.e_shnum; ++i) {
    Elf64_Shdr sh{};
    f.seekg(static_cast<std::streamoff>(eh.e_shoff + static_cast<uint64_t>(i) * eh.e_shentsize));
    if (!f.read(reinterpret_cast<char*>(&sh), sizeof sh)) break;
    char name[32] = {};
    f.seekg(static_cast<std::streamoff>(names.sh_offset + sh.sh_name));
    f.read(name, sizeof name - 1);
    if (std::string_view(name) == ".go.buildinfo" || std::string_view(name) == ".note.go.buildid")
      return program + " is a Go program: Go reads the clock through the kernel's vDSO, not the C library";
  }
  return "";
}

ClientProcess::ClientProcess(EventLoop& loop, ClientProcessSpec spec) : loop_(loop), spec_(std::move(spec)) {}

ClientProcess::~ClientProcess() {
  *alive_ = false;
  on_line = nullptr;
  if (pid_ > 0) {
    ::kill(-pid_, SIGKILL);
    reap();
  }
  close_output();
}

std::string ClientProcess::start() {
  if (pid_ > 0) return "";
  const std::string program = resolve_program(spec_.argv.empty() ? "" : spec_.argv[0], spec_.directory);
  if (program.empty())
    return "cannot find " + (spec_.argv.empty() ? std::string("a program") : spec_.argv[0]) +
           (spec_.argv.empty() || spec_.argv[0].find('/') != std::string::npos ? "" : " on PATH");
  // Everything the child needs is prepared before fork: after it, only async-signal-safe
  // calls until exec.
  std::vector<std::string> env_strings = spec_.env;
  if (!spec_.clock_file.empty()) {
    env_strings.push_back("LD_PRELOAD=" + find_clock_library());
    env_strings.push_back("LOCKSTEP_CLOCK_FILE=" + spec_.clock_file);
  }
  for (char** e = environ; e && *e; ++e) {
    if (!has_key(env_strings, *e)) env_strings.emplace_back(*e);
  }
  std::vector<char*> envp, argv;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = spec_.argv;
  for (auto& s : args) argv.push_back(s.data());
  argv.push_back(nullptr);
  const std::string cannot_run = "lockstep: cannot run " + program + "\n";

  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) return std::string("cannot create a pipe: ") + std::strerror(errno);
  const int err_fd = open(spec_.stderr_file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  const int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (err_fd < 0 || devnull < 0) {
    for (int fd : {out[0], out[1], err_fd, devnull}) {
      if (fd >= 0) close(fd);
    }
    return "cannot open " + spec_.stderr_file;
  }
  children::install_handlers();
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(1);  // the parent died before prctl took effect
    setpgid(0, 0);
    dup2(devnull, STDIN_FILENO);
    dup2(out[1], STDOUT_FILENO);
    dup2(err_fd, STDERR_FILENO);
#ifdef SYS_close_range
    // lockstep's own descriptors are opened close-on-exec; this also covers what a linked
    // library may have opened without the flag. The program sees its stdio and nothing else.
    syscall(SYS_close_range, 3u, ~0u, kCloseRangeCloexec);
#endif
    // The program starts as from a shell: no blocked signals, default dispositions.
    for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGCHLD}) signal(sig, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    if (spec_.directory.empty() || chdir(spec_.directory.c_str()) == 0) execve(program.c_str(), argv.data(), envp.data());
    if (write(STDERR_FILENO, cannot_run.data(), cannot_run.size()) < 0) _exit(127);
    _exit(127);
  }
  close(out[1]);
  close(err_fd);
  close(devnull);
  if (pid < 0) {
    close(out[0]);
    return std::string("fork failed: ") + std::strerror(errno);
  }
  // Also here, so the group exists before anything signals it, whichever runs first.
  setpgid(pid, pid);
  pid_ = pid;
  children::remember(-pid, /*server=*/false);
  out_fd_ = out[0];
  fcntl(out_fd_, F_SETFL, fcntl(out_fd_, F_GETFL) | O_NONBLOCK);
  out_event_ = event_new(loop_.base(), out_fd_, EV_READ | EV_PERSIST, &ClientProcess::on_readable, this);
  event_add(out_event_, nullptr);
  exit_fd_ = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (exit_fd_ >= 0) {
    exit_event_ = event_new(loop_.base(), exit_fd_, EV_READ, &ClientProcess::on_exit_event, this);
    event_add(exit_event_, nullptr);
  } else {
    exit_event_ = evtimer_new(loop_.base(), &ClientProcess::on_exit_event, this);
    const timeval period{0, static_cast<suseconds_t>(kExitPollPeriod.count() / 1000)};
    event_add(exit_event_, &period);
  }
  return "";
}

void ClientProcess::stop() {
  if (pid_ > 0) ::kill(-pid_, SIGSTOP);
}

void ClientProcess::resume() {
  if (pid_ > 0) ::kill(-pid_, SIGCONT);
}

void ClientProcess::kill() {
  if (pid_ <= 0) return;
  ::kill(-pid_, SIGKILL);
  reap();
}

void ClientProcess::on_exit_event(int, short, void* arg) {
  auto* self = static_cast<ClientProcess*>(arg);
  if (self->pid_ <= 0) return;
  if (!has_exited(self->pid_)) {
    if (self->exit_fd_ < 0) {  // polled: look again later
      const timeval period{0, static_cast<suseconds_t>(kExitPollPeriod.count() / 1000)};
      event_add(self->exit_event_, &period);
    }
    return;
  }
  self->exited();
}

void ClientProcess::exited() {
  // Whatever the program left running in its group goes with it.
  ::kill(-pid_, SIGKILL);
  std::weak_ptr<bool> alive = alive_;
  const int status = [&] {
    int s = 0;
    waitpid(pid_, &s, 0);
    return s;
  }();
  children::forget(-pid_);
  pid_ = -1;
  read_rest();
  if (alive.expired() || !*alive.lock()) return;
  close_output();
  if (on_exit) on_exit(status);
}

// The program is dead (or about to be): reap it, then take in what it wrote before.
void ClientProcess::reap() {
  int status = 0;
  waitpid(pid_, &status, 0);  // SIGKILL cannot be ignored: this returns promptly
  children::forget(-pid_);
  pid_ = -1;
  read_rest();
  close_output();
}

// Everything still in the pipe, and a last line the program ended without a newline.
void ClientProcess::read_rest() {
  std::weak_ptr<bool> alive = alive_;
  read_output();
  if (alive.expired() || !*alive.lock() || partial_.empty() || skipping_) return;
  const std::string line = std::move(partial_);
  partial_.clear();
  if (on_line) on_line(line, false);
}

void ClientProcess::read_output() {
  if (out_fd_ < 0) return;
  std::weak_ptr<bool> alive = alive_;
  char buf[16 * 1024];
  // Bounded: a pipe holds at most what the program wrote, and each pass takes 16 KiB.
  for (;;) {
    const ssize_t n = ::read(out_fd_, buf, sizeof buf);
    if (n > 0) {
      split(buf, static_cast<size_t>(n));
      if (alive.expired() || !*alive.lock()) return;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n == 0 && out_event_) {  // EOF: the program closed its stdout
      event_del(out_event_);
    }
    return;
  }
}

void ClientProcess::on_readable(int, short, void* arg) { static_cast<ClientProcess*>(arg)->read_output(); }

void ClientProcess::split(const char* data, size_t n) {
  std::weak_ptr<bool> alive = alive_;
  for (size_t i = 0; i < n; ++i) {
    const char c = data[i];
    if (c == '\n') {
      if (!skipping_) {
        if (!partial_.empty() && partial_.back() == '\r') partial_.pop_back();
        const std::string line = std::move(partial_);
        partial_.clear();
        if (on_line) on_line(line, false);
        if (alive.expired() || !*alive.lock()) return;
      }
      skipping_ = false;
      continue;
    }
    if (skipping_) continue;
    partial_.push_back(c);
    if (partial_.size() >= kLineBytesMax) {
      const std::string line = std::move(partial_);
      partial_.clear();
      skipping_ = true;
      if (on_line) on_line(line, true);
      if (alive.expired() || !*alive.lock()) return;
    }
  }
}

void ClientProcess::close_output() {
  for (event** e : {&out_event_, &exit_event_}) {
    if (*e) event_free(std::exchange(*e, nullptr));
  }
  for (int* fd : {&out_fd_, &exit_fd_}) {
    if (*fd >= 0) close(std::exchange(*fd, -1));
  }
  partial_.clear();
  skipping_ = false;
}

std::string ClientProcess::stderr_tail(size_t lines) const {
  std::ifstream f(spec_.stderr_file);
  std::deque<std::string> last;
  std::string line;
  // Bounded by the file, which the program wrote; only `lines` of it are kept.
  while (std::getline(f, line)) {
    if (line.size() > 500) line = line.substr(0, 500) + "…";
    last.push_back(line);
    if (last.size() > lines) last.pop_front();
  }
  std::string out;
  for (const auto& l : last) out += (out.empty() ? "" : "\n") + l;
  return out;
}

}  // namespace lockstep::live
