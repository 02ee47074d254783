// How a recorded run is judged, shared by both worlds so that a scenario's expected
// verdict means the same thing in the simulator and live.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "lockstep/checker/history.h"
#include "lockstep/reports/report.h"
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
// `lock_ops`, if given, returns what LockOperations drew from `h` for played.lock.key:
// the simulator draws them on a second thread while the run records. It is called once,
// on the thread that checks linearizability, and may wait for the drawing to finish.
reports::RunReport judge_run(const Scenario& s, const Scenario& played, const checker::History& h,
                             bool verdict_only = false, const std::function<checker::History()>& lock_ops = nullptr);

// The operations on the lock key that its linearizability is checked over, drawn from a
// history one event at a time, in order (why each is kept, dropped or added: the .cc).
class LockOperations {
 public:
  explicit LockOperations(std::string lock_key) : lock_key_(std::move(lock_key)) {}
  void add(const checker::Event& e);
  checker::History take() { return std::move(out_); }

 private:
  std::string lock_key_;
  checker::History out_;
  // process -> the release its hold awaits, on the thread that holds
  std::map<int64_t, std::pair<std::string, int64_t>> holding_;
  std::set<int64_t> lost_;  // processes whose next release ends a hold already lost
};

}  // namespace lockstep::runner
