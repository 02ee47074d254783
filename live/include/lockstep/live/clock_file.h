// A ClockFile is lockstep's side of the clock library (liblockstep_clock.so): the small
// shared file a preloaded process maps and reads at every clock call, and that lockstep
// writes while the process runs. It is the one writer of that file's format, for servers
// (whose wall clock a scenario moves) and external clients (whose both clocks it may).
//
// Format: seven int64 cells, written as a seqlock (the sequence is odd while the others
// change, so a reader never mixes two writes):
//   0 sequence
//   1 wall offset ns      2 wall rate ppb      3 wall base ns (CLOCK_REALTIME)
//   4 monotonic offset ns 5 monotonic rate ppb 6 monotonic base ns (CLOCK_MONOTONIC)
// A clock reads real + offset + (real - base) * rate / 1e9. A rate change folds the drift
// so far into the offset, so a clock never steps when its rate changes; the monotonic
// offset only ever grows by drift, so that clock never goes backwards.
//
// Not thread-safe; everything runs on the live world's one thread.
#pragma once

#include <cstdint>
#include <string>

#include "lockstep/env.h"

namespace lockstep::live {

class ClockFile {
 public:
  explicit ClockFile(std::string path) : path_(std::move(path)) {}
  ~ClockFile();
  ClockFile(const ClockFile&) = delete;
  ClockFile& operator=(const ClockFile&) = delete;

  // Creates (or reuses) the file and maps it; true once mapped. Idempotent.
  bool open();
  const std::string& path() const { return path_; }

  // The wall clock reads real time + `offset` (plus any drift); a jump adds to it.
  bool set_wall_offset(Nanos offset);
  Nanos wall_offset() const { return wall_offset_; }
  // From now on the wall clock (and, with `monotonic_too`, the monotonic clock) runs
  // drift_ppm fast (negative: slow). Servers drift their wall clock only: Redis expires
  // keys by it, and its monotonic clock stays what the machine's is.
  bool set_drift(double drift_ppm, bool monotonic_too);

 private:
  bool store();

  std::string path_;
  int64_t* cells_ = nullptr;
  Nanos wall_offset_{0};
  int64_t wall_rate_ppb_ = 0;
  Nanos wall_base_{0};
  Nanos mono_offset_{0};
  int64_t mono_rate_ppb_ = 0;
  Nanos mono_base_{0};
};

}  // namespace lockstep::live
