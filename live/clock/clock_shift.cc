// liblockstep_clock: preloaded into a redis-server that a scenario gives its own wall
// clock. The server's CLOCK_REALTIME, gettimeofday and time read
//     real + offset + (real - base) * rate_ppb / 1e9
// where lockstep changes offset (a jump) and rate (a drift from `base` on) while the
// server runs; monotonic clocks are left alone, as a wall-clock jump leaves them in the
// real world. (Redis expires keys by its wall clock, which is what a drift must reach.)
//
// The clock is four int64 at the start of the file named by LOCKSTEP_CLOCK_FILE, mapped
// shared: a sequence number, offset, rate and base. lockstep writes them as a seqlock
// (odd sequence while writing) and the server sees them at its next clock read, without
// a signal or a restart.
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
constexpr int kCells = 4;  // sequence, offset_ns, rate_ppb, base_ns
// A writer holds the sequence odd for a few stores; past this many tries a reader takes
// what it has rather than spin in someone's clock call.
constexpr int kReadTriesMax = 1000;
const int64_t kNoShift[kCells] = {0, 0, 0, 0};
const int64_t* g_cell = nullptr;

const int64_t* offset_cell() {
  const int64_t* cell = __atomic_load_n(&g_cell, __ATOMIC_ACQUIRE);
  if (cell != nullptr) return cell;
  const int64_t* mapped = kNoShift;
  const char* path = getenv("LOCKSTEP_CLOCK_FILE");
  if (path != nullptr && *path != '\0') {
    const int fd = static_cast<int>(syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC));
    if (fd >= 0) {
      void* m = mmap(nullptr, sizeof(int64_t) * kCells, PROT_READ, MAP_SHARED, fd, 0);
      syscall(SYS_close, fd);
      if (m != MAP_FAILED) mapped = static_cast<const int64_t*>(m);
    }
  }
  const int64_t* expected = nullptr;
  if (__atomic_compare_exchange_n(&g_cell, &expected, mapped, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
    return mapped;
  }
  // Another thread mapped it first: use theirs.
  if (mapped != kNoShift) munmap(const_cast<int64_t*>(mapped), sizeof(int64_t) * kCells);
  return expected;
}

// The shift at real time `real_ns`: a consistent offset, rate and base (seqlock).
int64_t shift_ns(int64_t real_ns) {
  const int64_t* c = offset_cell();
  int64_t offset = 0, rate = 0, base = 0;
  for (int i = 0; i < kReadTriesMax; ++i) {
    const int64_t seq = __atomic_load_n(&c[0], __ATOMIC_ACQUIRE);
    if (seq & 1) continue;
    offset = __atomic_load_n(&c[1], __ATOMIC_RELAXED);
    rate = __atomic_load_n(&c[2], __ATOMIC_RELAXED);
    base = __atomic_load_n(&c[3], __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (__atomic_load_n(&c[0], __ATOMIC_RELAXED) == seq) break;
  }
  if (rate == 0) return offset;
  return offset + static_cast<int64_t>(static_cast<__int128>(real_ns - base) * rate / kNanosPerSecond);
}

void shift(struct timespec* ts) {
  const int64_t real = static_cast<int64_t>(ts->tv_sec) * kNanosPerSecond + ts->tv_nsec;
  int64_t ns = real + shift_ns(real);
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
