// liblockstep_clock: preloaded into a redis-server that a scenario gives its own wall
// clock. The server's CLOCK_REALTIME, gettimeofday and time read real time plus an offset
// that lockstep changes while the server runs; monotonic clocks are left alone, as a
// wall-clock jump leaves them in the real world.
//
// The offset is 8 bytes at the start of the file named by LOCKSTEP_CLOCK_FILE, mapped
// shared: lockstep stores to its own mapping and the server sees the new value at its next
// clock read, without a signal or a restart.
//
// Nothing here may allocate or call anything that reads a clock: redis-server's allocator
// reads clocks while it initialises, and a clock function that recursed into it would hang
// the server before it starts. So the real clocks are read by system call, not through
// the C library, and the file is mapped with plain system calls on first use.
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

namespace {

constexpr int64_t kNanosPerSecond = 1'000'000'000;
const int64_t kNoOffset = 0;
const int64_t* g_cell = nullptr;

const int64_t* offset_cell() {
  const int64_t* cell = __atomic_load_n(&g_cell, __ATOMIC_ACQUIRE);
  if (cell != nullptr) return cell;
  const int64_t* mapped = &kNoOffset;
  const char* path = getenv("LOCKSTEP_CLOCK_FILE");
  if (path != nullptr && *path != '\0') {
    const int fd = static_cast<int>(syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC));
    if (fd >= 0) {
      void* m = mmap(nullptr, sizeof(int64_t), PROT_READ, MAP_SHARED, fd, 0);
      syscall(SYS_close, fd);
      if (m != MAP_FAILED) mapped = static_cast<const int64_t*>(m);
    }
  }
  const int64_t* expected = nullptr;
  if (__atomic_compare_exchange_n(&g_cell, &expected, mapped, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
    return mapped;
  }
  // Another thread mapped it first: use theirs.
  if (mapped != &kNoOffset) munmap(const_cast<int64_t*>(mapped), sizeof(int64_t));
  return expected;
}

int64_t offset_ns() { return __atomic_load_n(offset_cell(), __ATOMIC_RELAXED); }

void shift(struct timespec* ts) {
  int64_t ns = static_cast<int64_t>(ts->tv_sec) * kNanosPerSecond + ts->tv_nsec + offset_ns();
  int64_t sec = ns / kNanosPerSecond, rem = ns % kNanosPerSecond;
  if (rem < 0) {
    rem += kNanosPerSecond;
    --sec;
  }
  ts->tv_sec = static_cast<time_t>(sec);
  ts->tv_nsec = static_cast<long>(rem);
}

int real_clock(clockid_t id, struct timespec* ts) { return static_cast<int>(syscall(SYS_clock_gettime, id, ts)); }

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int clock_gettime(clockid_t id, struct timespec* ts) {
  if (real_clock(id, ts) != 0) return -1;  // errno is set
  if (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE) shift(ts);
  return 0;
}

__attribute__((visibility("default"))) int gettimeofday(struct timeval* __restrict tv, void* __restrict) {
  struct timespec ts;
  if (real_clock(CLOCK_REALTIME, &ts) != 0) return -1;
  shift(&ts);
  tv->tv_sec = ts.tv_sec;  // the C library declares tv never null
  tv->tv_usec = static_cast<suseconds_t>(ts.tv_nsec / 1000);
  return 0;
}

__attribute__((visibility("default"))) time_t time(time_t* out) {
  struct timespec ts;
  if (real_clock(CLOCK_REALTIME, &ts) != 0) return static_cast<time_t>(-1);
  shift(&ts);
  if (out != nullptr) *out = ts.tv_sec;
  return ts.tv_sec;
}

}  // extern "C"
