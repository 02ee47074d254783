// How a recorded run is judged, shared by both worlds so that a scenario's expected
// verdict means the same thing in the simulator and live.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "lockstep/checker/history.h"
#include "lockstep/checker/linearizability.h"
#include "lockstep/reports/report.h"
#include "lockstep/runner/history_stream.h"
#include "lockstep/runner/scenario.h"

namespace lockstep::runner {

// The report of a recorded run: the invariants, then the linearizability of the lock
// operations; the verdict (unknown when the check ran out of its limits or the run out of
// its event bound); the scenario, its faults and the counts in stats. `played` is the
// scenario as run, whose key names the history carries (live under --redis they have a
// prefix); all else comes from `s`. The caller adds what depends on the world (world,
// seed and replay) and the digest of the history's JSON lines, which it may write while
// this runs. With `verdict_only` the report leaves out the scenario's definition and its
// faults.
// `streamed`, if given, is how the simulator recorded `h` (below).
struct StreamedHistory;
reports::RunReport judge_run(const Scenario& s, const Scenario& played, const checker::History& h,
                             bool verdict_only = false, const StreamedHistory* streamed = nullptr);

// The operations on the lock key that its linearizability is checked over, drawn from a
// history one event at a time, in order (why each is kept, dropped or added: the .cc).
class LockOperations {
 public:
  explicit LockOperations(std::string lock_key) : lock_key_(std::move(lock_key)) {}
  void add(const checker::Event& e);
  checker::History take() { return std::move(out_); }
  // The operations paired from what take() gives, as they were kept: the pairing is done
  // while the run records, not after it.
  checker::OperationCollector take_operations() { return std::move(ops_); }

 private:
  void keep(checker::Event e) {
    out_.events.push_back(std::move(e));
    ops_.add(out_.events.back());
  }

  std::string lock_key_;
  checker::History out_;
  checker::OperationCollector ops_;
  // process -> the release its hold awaits, on the thread that holds
  std::map<int64_t, std::pair<std::string, int64_t>> holding_;
  std::set<int64_t> lost_;  // processes whose next release ends a hold already lost
};

// A history written as it was recorded: `stream`, closed, wrote it on a thread of its own
// and handed each event to `lock_ops`, which drew them for played.lock.key. The judgment
// checks the invariants on that thread once it has written the last event.
struct StreamedHistory {
  HistoryStream& stream;
  LockOperations& lock_ops;
};

}  // namespace lockstep::runner
