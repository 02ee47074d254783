#include "lockstep/runner/matrix.h"

#include <algorithm>

#include "lockstep/algorithms.h"
#include "lockstep/profiles.h"
#include "lockstep/runner/jobs.h"

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

namespace {

// One cell's two campaigns, on `jobs` threads.
MatrixCell run_cell(const MatrixOptions& o, const std::string& row, const std::string& fault, unsigned jobs) {
  MatrixCell cell{row, fault, {}};
  FuzzSpace space;
  parse_stop_on(o.stop_on, space);  // checked by matrix_options_problem
  space.locks = {row};
  if (fault != "none") space.fault_kinds = {*fault_kind_named(fault)};
  FuzzOptions fo;
  fo.seed = o.seed;
  fo.runs = o.runs;
  fo.time_limit_s = o.time_limit_s;
  fo.shrink_runs_max = o.shrink_runs_max;
  fo.jobs = jobs;
  space.budget = Budget::Within;
  cell.summary = fuzz(space, fo);
  auto beyond_campaign = [&](const FuzzSpace& sp) {
    FuzzSummary beyond = fuzz(sp, fo);
    beyond.runs += cell.summary.runs;
    beyond.seconds += cell.summary.seconds;
    beyond.unknown += cell.summary.unknown;
    for (const auto& [c, n] : cell.summary.by_class) beyond.by_class[c] += n;
    cell.summary = std::move(beyond);
    cell.found_in = Budget::Beyond;
  };
  if (!cell.summary.finding && fault != "none") {
    // Beyond its assumptions a lock may lose its lease, never these promises: first a
    // campaign that stops only on them (a lease's ordinary failures would end the next
    // one before it reaches them), then one on everything the cell stops on.
    FuzzSpace promises = space;
    promises.budget = Budget::Beyond;
    promises.classes.clear();
    promises.properties = {"foreign-unlock", "false-extend"};
    beyond_campaign(promises);
    cell.broke_a_promise = cell.summary.finding.has_value();
    if (!cell.broke_a_promise) {
      space.budget = Budget::Beyond;
      beyond_campaign(space);
    }
  }
  if (cell.summary.finding) cell.summary.finding->shrunk.name = "counterexample";
  return cell;
}

}  // namespace

std::vector<MatrixCell> run_matrix(const MatrixOptions& o, const MatrixProgress& progress) {
  std::vector<std::string> rows = o.profiles;
  rows.insert(rows.end(), o.algorithms.begin(), o.algorithms.end());
  const size_t shards = static_cast<size_t>(std::max(o.shards, 1)), shard = static_cast<size_t>(o.shard);
  // This shard's cells, row by row.
  std::vector<std::pair<std::string, std::string>> mine;
  size_t k = 0;
  for (const auto& row : rows) {
    for (const auto& fault : o.faults) {
      if (k++ % shards == shard) mine.emplace_back(row, fault);
    }
  }
  const size_t total = mine.size();
  std::vector<MatrixCell> cells;
  if (total == 0) return cells;
  // Cells are the coarse grain: each runs on one job while there are cells enough; with
  // fewer cells than jobs, each cell's campaign shares out the rest.
  const unsigned jobs = std::max(1u, o.jobs);
  const unsigned cell_jobs = total >= jobs ? 1u : jobs / static_cast<unsigned>(total);
  const unsigned outer = static_cast<unsigned>(std::min<size_t>(jobs, total));
  auto pending = [&](size_t i) { return MatrixCell{mine[i].first, mine[i].second, {}}; };
  if (progress) progress(0, total, pending(0), false);
  // A cell is long: the calling thread only takes, so each shows as soon as it ends.
  InOrderPlan plan{outer, total, {}, 2, false};
  auto make_worker = [&] { return [&](uint64_t i) { return run_cell(o, mine[i].first, mine[i].second, cell_jobs); }; };
  run_in_order<MatrixCell>(plan, make_worker, [&](uint64_t i, MatrixCell&& cell) {
    if (progress) progress(i, total, cell, true);
    cells.push_back(std::move(cell));
    if (progress && i + 1 < total) progress(i + 1, total, pending(i + 1), false);
    return true;
  });
  return cells;
}

}  // namespace lockstep::runner
