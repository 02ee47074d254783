// Writing the clock file liblockstep_clock reads (the format is in clock_file.h and, from
// the reader's side, in clock/clock_shift.cc).
#include "lockstep/live/clock_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmath>

#include "lockstep/live/event_loop.h"

namespace lockstep::live {
namespace {

constexpr int kCells = 7;
constexpr size_t kBytes = kCells * sizeof(int64_t);

// The drift accumulated between `base` and `now` at `rate_ppb`.
Nanos drifted(Nanos base, Nanos now, int64_t rate_ppb) {
  return Nanos(static_cast<int64_t>(static_cast<__int128>((now - base).count()) * rate_ppb / 1'000'000'000));
}

}  // namespace

ClockFile::~ClockFile() {
  if (cells_ != nullptr) munmap(cells_, kBytes);
}

// The cells live in one shared page: the process maps it too, so a store here is what
// its next clock read returns, with no file rewritten under it.
bool ClockFile::open() {
  if (cells_ != nullptr) return true;
  const int fd = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  void* m = MAP_FAILED;
  if (ftruncate(fd, static_cast<off_t>(kBytes)) == 0) m = mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (m == MAP_FAILED) return false;
  cells_ = static_cast<int64_t*>(m);
  return store();
}

bool ClockFile::set_wall_offset(Nanos offset) {
  wall_offset_ = offset;
  return open() && store();
}

bool ClockFile::set_drift(double drift_ppm, bool monotonic_too) {
  const int64_t rate = std::llround(drift_ppm * 1000.0);
  const Nanos wall = wall_clock();
  wall_offset_ += drifted(wall_base_, wall, wall_rate_ppb_);
  wall_base_ = wall;
  wall_rate_ppb_ = rate;
  if (monotonic_too) {
    const Nanos mono = mono_clock();
    mono_offset_ += drifted(mono_base_, mono, mono_rate_ppb_);
    mono_base_ = mono;
    mono_rate_ppb_ = rate;
  }
  return open() && store();
}

bool ClockFile::store() {
  if (cells_ == nullptr) return false;
  const int64_t values[kCells - 1] = {wall_offset_.count(), wall_rate_ppb_, wall_base_.count(),
                                      mono_offset_.count(), mono_rate_ppb_, mono_base_.count()};
  const int64_t seq = __atomic_load_n(&cells_[0], __ATOMIC_RELAXED);
  __atomic_store_n(&cells_[0], seq + 1, __ATOMIC_RELAXED);
  __atomic_thread_fence(__ATOMIC_RELEASE);
  for (int i = 1; i < kCells; ++i) __atomic_store_n(&cells_[i], values[i - 1], __ATOMIC_RELAXED);
  __atomic_store_n(&cells_[0], seq + 2, __ATOMIC_RELEASE);
  return true;
}

}  // namespace lockstep::live
