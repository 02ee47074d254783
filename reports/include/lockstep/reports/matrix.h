// The safety matrix as files: matrix.json for machines and matrix.html, a table a person
// reads at a glance — one row per library profile, one column per fault kind, each cell
// "broken" (with the violated properties, a link to its counterexample's report and the
// command that replays it) or "no-violation" (with the budget it survived).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace lockstep::reports {

// A cell broken within the lock's assumptions is a bug, one broken only beyond them a
// limit (runner/matrix.h); "broken" is what matrices written before the distinction say.
namespace matrix_verdict {
inline constexpr const char* kBug = "bug";
inline constexpr const char* kLimit = "limit";
inline constexpr const char* kBroken = "broken";
inline constexpr const char* kNoViolation = "no-violation";
}  // namespace matrix_verdict
inline bool matrix_broken(const std::string& verdict) { return verdict != matrix_verdict::kNoViolation; }

struct MatrixRow {
  std::string profile;
  std::string fault;  // a fault kind, or "none"
  std::string verdict;  // matrix_verdict::k...
  uint64_t runs = 0;
  double seconds = 0;
  uint64_t violations = 0;
  std::string counterexample;  // the scenario file, relative to the matrix directory; "" if none
  std::string report;          // its report.html, relative to the matrix directory
  std::string replay;          // the command that replays it
  std::vector<std::string> properties;  // what the counterexample violates
  std::vector<std::string> classes;     // their severity classes, most severe first
  std::string story;                    // its first violation's sentence
  // What every run of the campaign showed, by severity class, and the runs whose verdict
  // was unknown (see runner::FuzzSummary).
  std::map<std::string, uint64_t> by_class = {};
  uint64_t unknown = 0;
};

struct MatrixMeta {
  uint64_t seed = 1;
  std::string budget;   // "100 runs per cell", "30 s per cell"
  std::string command;  // how the matrix was made
};

// {"seed", "budget", "command", "cells": [{"profile", "fault", "verdict", "runs",
// "seconds", "violations", "counterexample", "properties", "classes", "by_class", "unknown",
// "report", "replay"}]}
nlohmann::ordered_json matrix_json(const std::vector<MatrixRow>& rows, const MatrixMeta& meta);
// The self-contained page (no scripts, no external files).
std::string render_matrix_html(const std::vector<MatrixRow>& rows, const MatrixMeta& meta);
// The table in Markdown (for a README or a pull-request comment).
std::string render_matrix_markdown(const std::vector<MatrixRow>& rows);

}  // namespace lockstep::reports
