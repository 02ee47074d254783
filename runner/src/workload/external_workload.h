// The external workload of a live run: the user's program started once per client, with
// the run's facts in its environment (docs/external-clients.md lists them), its lines
// turned into history by a ClientReport each, and what went wrong with any of them
// collected for the report. The programs themselves are the ExternalControl's; faults
// reach them through it like any WorldControl, never from here.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lockstep/runner/external_report.h"
#include "lockstep/live/external_control.h"
#include "lockstep/runner/scenario.h"

namespace lockstep::runner {

class ExternalWorkload {
 public:
  // `s` is the scenario as run (its keys are the ones the programs must use).
  ExternalWorkload(const Scenario& s, live::ExternalControl& control, Recorder& rec);
  ~ExternalWorkload();
  ExternalWorkload(const ExternalWorkload&) = delete;
  ExternalWorkload& operator=(const ExternalWorkload&) = delete;

  // Registers client-1..N; `redis` gives a client's LOCKSTEP_REDIS (its proxy addresses),
  // `zookeeper` (with an ensemble) its LOCKSTEP_ZOOKEEPER connect string.
  void add_clients(const std::function<std::string(const std::string& client)>& redis,
                   const std::function<std::string(const std::string& client)>& zookeeper = nullptr);
  // With topology.mysql: the address a client reaches mysql-1 at (LOCKSTEP_MYSQL), set
  // before add_clients.
  std::function<std::string(const std::string& client)> mysql;
  // Client i starts at (i - 1) * start_stagger_ms on the control's timeline, or with
  // workload.start_after_hold start_stagger_ms after client i-1 first holds or ends.
  void start();
  // The run is over: programs still running are killed and named.
  void stop();

  // A command the proxy saw the client send. The keys written while the client's acquire
  // is open are its lock's keys: the lock key, or the key its library derives from it.
  // A command on the stock (or on the lock, unless the client holds it) sent while no
  // operation of the client is open must be announced by its next line: a line read more
  // than kLateLineNs after it shows the program's output lagging what it does (stdout
  // not flushed per line), which would move its events in time, so it is a problem.
  void sent(int64_t client, const std::vector<std::string>& argv);
  static constexpr int64_t kLateLineNs = 500'000'000;
  // A reply the proxy handed to the client. An `ok` read more than kLateOutcomeNs after
  // the last one, when every command the client sent had its reply, it has sent nothing
  // since, no line invoked anything since, and no fault pauses it, reports late too. The
  // margin is wider: the client must still be scheduled to write the line.
  void delivered(int64_t client);
  static constexpr int64_t kLateOutcomeNs = 2'000'000'000;
  // The key lockstep watches for the lock (lock.key until a client's acquire shows that its
  // library writes another), and the commands of the acquire that showed it, for the truth
  // to attribute again: called once, the moment the key is learnt.
  std::function<void(const std::string& key, int64_t client, const std::vector<std::vector<std::string>>& acquire)>
      on_lock_key;
  const std::string& watched() const { return watched_; }
  // Acquires reported `ok` with no write to the watched key: the ground truth of the lock
  // key (who set it, who deleted it) did not see those holds.
  const std::vector<std::string>& unseen_acquires() const { return unseen_; }

  // One sentence per thing that went wrong; any makes the verdict unknown.
  std::vector<std::string> problems() const;
  // For report.stats: the command, line counts, clients killed at the end, stderr tails.
  nlohmann::json stats() const;

 private:
  ClientReport& report(int64_t client);

  const Scenario& s_;
  live::ExternalControl& control_;
  Recorder& rec_;
  void start_at(int64_t client, Nanos t);
  // start_after_hold: the last client scheduled has held the lock, or will never: the next
  // one may start.
  void let_next_start(int64_t client);
  int64_t scheduled_ = 0;  // the highest client whose start is scheduled
  std::map<int64_t, std::unique_ptr<ClientReport>> reports_;
  void line_read(int64_t client, int incarnation, std::string_view line, bool overlong);

  std::string watched_;       // the lock's key on the servers
  std::string learnt_from_;   // "client-2's acquire (line 1)" once learnt, else ""
  std::map<int64_t, std::vector<std::vector<std::string>>> acquiring_;  // an open acquire's writes
  std::vector<std::string> unseen_;
  struct Unannounced {
    int64_t at_ns = 0;
    std::string command;  // "SET on lock"
  };
  std::map<int64_t, Unannounced> unannounced_;  // client -> its first command no line has announced yet
  std::map<int64_t, std::string> late_;         // client -> why its output came late
  std::string never_started_;  // the client start_after_hold still held back at the end, and why
  struct Traffic {
    int64_t forwarded = 0, delivered = 0;  // commands sent on, replies handed back
    int64_t last_forward_ns = -1, last_delivery_ns = -1, last_invoke_ns = -1;
    bool subscribed = false;  // pushed messages make the counts meaningless
  };
  std::map<int64_t, Traffic> traffic_;  // client -> its current incarnation's traffic
  std::set<int64_t> paused_;             // clients a pause fault targets
  void check_outcome(int64_t client, std::string_view line, const ClientReport& r, size_t problems_before);
  int64_t run_lines_ = 0;  // protocol lines of every client, against ClientReport::kLinesMax
  std::map<std::string, std::string> stderr_;  // client -> its stderr's end, when it went wrong
};

// The environment a client gets besides LOCKSTEP_REDIS, LOCKSTEP_INCARNATION and TMPDIR:
// "KEY=VALUE" for its name, the keys, the lease, the workload's timings and the seed.
std::vector<std::string> external_environment(const Scenario& s, const std::string& client);

}  // namespace lockstep::runner
