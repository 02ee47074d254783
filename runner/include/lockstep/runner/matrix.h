// The safety matrix: one fuzz campaign per cell of (library profile x fault kind), each
// shrinking what it finds, so that a table says which library version breaks under
// which kind of trouble — and shows the smallest story for every broken cell.
//
// A cell is "broken" when its campaign found a violation within the budget and
// "no-violation" otherwise: absence of evidence within that budget, which the table
// states beside it (runs, seconds). Cells are independent and deterministic: the same
// seed and budget give the same table.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "lockstep/runner/fuzz.h"

namespace lockstep::runner {

struct MatrixOptions {
  std::vector<std::string> profiles;  // rows
  // More rows after the profiles: algorithms by name, built-in or registered
  // (lockstep/algorithms.h); a cell's `profile` then holds the algorithm's name.
  std::vector<std::string> algorithms = {};
  std::vector<std::string> faults;    // columns: fault kind names, or "none"
  uint64_t runs = 1000;               // per cell and budget
  double time_limit_s = 0;            // > 0: per cell, instead of runs
  uint64_t seed = 1;
  int shrink_runs_max = 300;
  // What ends a cell's campaign: severity classes and properties (parse_stop_on), all, or
  // safety (every class but unfair: the order of service is fuzz's and the catalogue's).
  std::string stop_on = "safety";
  // Shard `shard` of `shards` runs cells shard, shard + shards, ... in row-major order;
  // a cell's result does not depend on which shard runs it.
  int shard = 0, shards = 1;
  // Runs at once (lockstep/runner/jobs.h): cells run side by side, and a cell's own runs
  // share the jobs when there are fewer cells than jobs. The table is the same for any
  // number.
  unsigned jobs = 1;
};

// A cell's verdict: a failure within the lock's assumptions, or of a promise no fault
// excuses (a lock removed by a client that did not own it, an extension reported for a
// lock already lost), is a "bug"; one only beyond them a "limit"; none in any campaign
// "no-violation".
namespace cell_verdict {
inline constexpr const char* kBug = "bug";
inline constexpr const char* kLimit = "limit";
inline constexpr const char* kNoViolation = "no-violation";
}  // namespace cell_verdict

struct MatrixCell {
  std::string profile;
  std::string fault;
  // Both campaigns together (runs, seconds, by_class, unknown); summary.finding: the shrunk
  // counterexample of a broken cell, from the budget `found_in` names.
  FuzzSummary summary;
  Budget found_in = Budget::Within;
  bool broke_a_promise = false;  // found beyond the assumptions, of a property no fault excuses
  bool broken() const { return summary.finding.has_value(); }
  const char* verdict() const {
    if (!broken()) return cell_verdict::kNoViolation;
    return found_in == Budget::Within || broke_a_promise ? cell_verdict::kBug : cell_verdict::kLimit;
  }
};

// Runs every cell of this shard, rows first. A cell is two fuzz campaigns of `runs` each
// with the same seed: faults within the lock's assumptions, then, if that found nothing,
// faults beyond them (the `none` column has no faults, so no second campaign).
// `progress(cell_index, cell_count, cell, done)` is called on the calling thread, in cell
// order: for a cell without a summary yet (done false: it is next, and with more than one
// job it may be running already), then for that cell finished.
using MatrixProgress = std::function<void(size_t index, size_t total, const MatrixCell& cell, bool done)>;
std::vector<MatrixCell> run_matrix(const MatrixOptions& o, const MatrixProgress& progress = {});

// "" or why the options cannot run (an unknown profile or fault kind, named).
std::string matrix_options_problem(const MatrixOptions& o);

}  // namespace lockstep::runner
