#include "lockstep/runner/matrix.h"

#include <algorithm>

#include "lockstep/algorithms.h"
#include "lockstep/profiles.h"

namespace lockstep::runner {

std::string matrix_options_problem(const MatrixOptions& o) {
  if (o.profiles.empty() && o.algorithms.empty()) return "no profiles or algorithms to run";
  if (o.faults.empty()) return "no fault kinds to run";
  for (const auto& p : o.profiles) {
    if (!profile_named(p)) return "unknown profile \"" + p + "\" (lockstep profiles lists them)";
  }
  for (const auto& a : o.algorithms) {
    if (!is_algorithm(a)) return "unknown algorithm \"" + a + "\" (one of " + [] {
      std::string all;
      for (const auto& n : algorithm_names()) all += (all.empty() ? "" : ", ") + n;
      return all;
    }() + ")";
  }
  for (const auto& f : o.faults) {
    if (f != "none" && !fault_kind_named(f)) return "unknown fault kind \"" + f + "\"";
  }
  FuzzSpace space;
  if (std::string why = parse_stop_on(o.stop_on, space); !why.empty()) return "--stop-on: " + why;
  return "";
}

std::vector<MatrixCell> run_matrix(const MatrixOptions& o, const MatrixProgress& progress) {
  std::vector<MatrixCell> cells;
  std::vector<std::string> rows = o.profiles;
  rows.insert(rows.end(), o.algorithms.begin(), o.algorithms.end());
  const size_t all = rows.size() * o.faults.size();
  const size_t shards = static_cast<size_t>(std::max(o.shards, 1)), shard = static_cast<size_t>(o.shard);
  const size_t total = all / shards + (shard < all % shards ? 1 : 0);
  size_t k = 0;
  for (size_t r = 0; r < rows.size(); ++r) {
    const std::string& row = rows[r];
    for (const auto& fault : o.faults) {
      if (k++ % shards != shard) continue;
      MatrixCell cell{row, fault, {}};
      if (progress) progress(cells.size(), total, cell, false);
      FuzzSpace space;
      parse_stop_on(o.stop_on, space);  // checked by matrix_options_problem
      space.locks = {row};
      if (fault != "none") space.fault_kinds = {*fault_kind_named(fault)};
      FuzzOptions fo;
      fo.seed = o.seed;
      fo.runs = o.runs;
      fo.time_limit_s = o.time_limit_s;
      fo.shrink_runs_max = o.shrink_runs_max;
      space.budget = Budget::Within;
      cell.summary = fuzz(space, fo);
      if (!cell.summary.finding && fault != "none") {
        space.budget = Budget::Beyond;
        FuzzSummary beyond = fuzz(space, fo);
        beyond.runs += cell.summary.runs;
        beyond.seconds += cell.summary.seconds;
        beyond.unknown += cell.summary.unknown;
        for (const auto& [c, n] : cell.summary.by_class) beyond.by_class[c] += n;
        cell.summary = std::move(beyond);
        cell.found_in = Budget::Beyond;
      }
      if (cell.summary.finding) cell.summary.finding->shrunk.name = "counterexample";
      if (progress) progress(cells.size(), total, cell, true);
      cells.push_back(std::move(cell));
    }
  }
  return cells;
}

}  // namespace lockstep::runner
