// Progress of a long command (run over many files, live, fuzz, matrix) on a terminal: one
// line on stderr, rewritten in place. It is drawn only when stderr is a terminal, so CI
// logs and files keep nothing but the commands' own output; stdout is never touched, so
// what a script reads from it is the same either way.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace lockstep::runner {

// "run  [######              ] 12/47  26%  09-set-px-lua-gc-pause  0:42, ~1:57 left", cut
// to `width_max` columns (a line that wraps could not be rewritten in place). With
// `total` 0 (a time-limited fuzz campaign) it counts: "fuzz  1234 runs  0:42".
std::string format_progress(std::string_view command, uint64_t done, uint64_t total, std::string_view detail,
                            double elapsed_s, size_t width_max);

class Progress {
 public:
  // `enabled` defaults to whether stderr is a terminal.
  explicit Progress(std::string command);
  Progress(std::string command, bool enabled);
  ~Progress() { clear(); }
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // Redraws at most ten times a second, and always for the last item, so a fuzz campaign
  // of thousands of runs a second spends its time fuzzing.
  void show(uint64_t done, uint64_t total, std::string_view detail = "");
  // Erases the line: call before printing to stdout, which shares the terminal.
  void clear();

 private:
  std::string command_;
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace lockstep::runner
