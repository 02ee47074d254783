// What an external client reports, turned into history. docs/external-clients.md is the
// contract: JSON lines on stdout (invoke / ok / fail / info of acquire, release, extend,
// read, write; cs-enter / cs-exit), stamped by the recorder when they are read.
//
// A ClientReport follows one client across its incarnations. Anything that breaks the
// protocol — a malformed line, an outcome nobody invoked, an exit of its own with a
// status other than 0 — becomes a problem: one sentence naming the client and the line,
// which makes the run's verdict unknown. The history stays well formed whatever the
// program writes: the client's open operation becomes unknown (info), its critical
// section ends where the report broke, a lock it held is left to its lease, and its later
// lines are ignored until a restart.
//
// Threads: a line may name the thread it comes from ("thread"; absent: the main thread).
// Each thread has at most one operation open, and the threads' lines interleave freely,
// so a library's background renewal can report its extends while the main thread holds
// or waits. The lock and the critical section are the client's, not a thread's: an
// acquire on any thread makes the client the holder, and cs-enter / cs-exit pair up per
// client. In the history, thread n of incarnation k records on thread
// (k - 1) * kThreadsMax + n, the main thread being 0, so lockstep's checks read a named
// thread as they read lockstep's own background renewals (threads above 0), and each
// named thread's events carry its name as "client_thread".
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lockstep/runner/recorder.h"

namespace lockstep::runner {

// One line of the protocol.
struct ClientLine {
  enum class Type { Invoke, Ok, Fail, Info, CsEnter, CsExit };
  Type type = Type::Invoke;
  std::string f;  // acquire, release, extend, read, write; "" for cs-enter / cs-exit
  std::optional<int64_t> value;
  std::optional<int64_t> token;
  std::string error;
  std::string thread;  // "" for the main thread; an integer thread n is named "n"
};

// Parses one line; nullopt and the reason in `why` when the protocol does not allow it.
std::optional<ClientLine> parse_client_line(std::string_view text, std::string& why);

class ClientReport {
 public:
  // A run holds at most this many protocol lines, all its clients together: the bound on
  // the history's size. The client whose line goes over it is broken there.
  static constexpr int64_t kLinesMax = 100'000;
  // Threads one incarnation of a client may name, the main thread included; a line on one
  // more breaks the report (history thread numbers stay apart between incarnations).
  static constexpr int64_t kThreadsMax = 16;

  ClientReport(Recorder& rec, int64_t process, std::string lock_key, std::string stock_key);

  // Counts lines against kLinesMax in `*run_lines`, shared by the run's clients, instead of
  // in this report alone; it must outlive the report.
  void count_lines_in(int64_t* run_lines) { run_lines_ = run_lines; }
  // A line of incarnation `incarnation` (1, then 2 after the first restart, ...).
  void line(int incarnation, std::string_view text, bool overlong);
  // The program ended by itself; the last line of its stderr is quoted if that was wrong.
  void exited(int incarnation, int wait_status, const std::string& stderr_quote);
  // The program could not be started.
  void start_failed(int incarnation, const std::string& why);
  // The run ended with the program still running (it is killed).
  void killed_at_end();

  const std::vector<std::string>& problems() const { return problems_; }
  const std::optional<std::string>& still_running() const { return still_running_; }
  int64_t lines() const { return lines_total_; }
  // Whether any thread has an acquire invoked and not yet completed, whether any thread
  // has an operation open at all, and whether the client holds the lock by its own report
  // (an `ok` of acquire and no release invoked since, on whichever threads).
  bool acquiring() const;
  bool operation_open() const { return !open_.empty(); }
  bool holding() const { return holding_; }
  int64_t line_number() const { return line_no_; }
  int64_t ignored_lines() const { return ignored_; }
  // Whether its lines are being ignored (a line broke the report; until a restart).
  bool silenced() const { return broken_; }

 private:
  std::string name() const;
  std::string where() const;
  struct Open {
    std::string f;
    int64_t line = 0;
  };
  // The history thread of a protocol thread, numbering it on first sight (-1: one thread
  // too many).
  int64_t thread(const std::string& name);
  int64_t history_thread(int64_t n) const { return (incarnation_ > 0 ? incarnation_ - 1 : 0) * kThreadsMax + n; }
  void op(checker::EventType type, const std::string& thread_name, const std::string& f, nlohmann::json value);
  void begin(int incarnation);
  void broken(const std::string& why);
  // Leaves the history as a crash would: the open operation unknown, the critical
  // section ended, a held lock left to its lease.
  void close_open(const char* cause);
  void record(const ClientLine& l);

  Recorder& rec_;
  int64_t process_;
  std::string lock_key_, stock_key_;
  int incarnation_ = 0;
  int64_t line_no_ = 0;
  int64_t lines_total_ = 0;
  int64_t own_lines_ = 0;
  int64_t* run_lines_ = &own_lines_;
  int64_t ignored_ = 0;
  bool broken_ = false;
  std::map<std::string, Open> open_;              // thread -> its open operation
  std::map<std::string, int64_t> threads_;        // thread -> its number, this incarnation
  bool in_cs_ = false;
  int64_t cs_line_ = 0;
  bool holding_ = false;
  std::string holder_thread_;  // the thread whose acquire made the client the holder
  std::vector<std::string> problems_;
  std::optional<std::string> still_running_;
};

}  // namespace lockstep::runner
