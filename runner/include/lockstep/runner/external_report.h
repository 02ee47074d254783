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
#pragma once

#include <cstdint>
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
};

// Parses one line; nullopt and the reason in `why` when the protocol does not allow it.
std::optional<ClientLine> parse_client_line(std::string_view text, std::string& why);

class ClientReport {
 public:
  // A run holds at most this many protocol lines, all its clients together: the bound on
  // the history's size. The client whose line goes over it is broken there.
  static constexpr int64_t kLinesMax = 100'000;

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
  // The operation invoked and not yet completed ("" for none), and whether the client
  // holds the lock by its own report (an `ok` of acquire and no release invoked since).
  const std::string& open_operation() const { return open_f_; }
  bool holding() const { return holding_; }
  int64_t line_number() const { return line_no_; }
  int64_t ignored_lines() const { return ignored_; }

 private:
  std::string name() const;
  std::string where() const;
  int64_t thread() const { return incarnation_ > 0 ? incarnation_ - 1 : 0; }
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
  std::string open_f_;
  int64_t open_line_ = 0;
  bool in_cs_ = false;
  int64_t cs_line_ = 0;
  bool holding_ = false;
  std::vector<std::string> problems_;
  std::optional<std::string> still_running_;
};

}  // namespace lockstep::runner
