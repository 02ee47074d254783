// liblockstep_clock: preloaded into a process whose clocks a scenario moves — a
// redis-server, or a user's external client program. The process's wall clock
// (CLOCK_REALTIME, gettimeofday, time) reads
//     real + offset + (real - base) * rate_ppb / 1e9
// where lockstep changes offset (a jump) and rate (a drift from `base` on) while the
// process runs. Its monotonic clocks read the same form with their own offset, rate and
// base, which only a client's drift moves (a wall-clock jump leaves them alone, as in
// the real world; a server's drift is its wall clock only, by which Redis expires keys).
//
// The clock is seven int64 at the start of the file named by LOCKSTEP_CLOCK_FILE,
// mapped shared (live/include/lockstep/live/clock_file.h has the writer): a sequence
// number, then offset, rate and base of the wall clock, then of the monotonic clock.
// lockstep writes them as a seqlock (odd sequence while writing) and the process sees
// them at its next clock read, without a signal or a restart.
//
// A sleep until an absolute time on a shifted clock (clock_nanosleep with TIMER_ABSTIME,
// which is how CPython's time.sleep waits) is turned back into real time before the
// kernel sees it; otherwise a process whose clock runs ahead would oversleep by the shift.
//
// Nothing here may allocate or call anything that reads a clock: redis-server's allocator
// reads clocks while it initialises, and a clock function that recursed into it would hang
// the server before it starts. So the real clocks are read by system call, not through
// the C library, and the file is mapped with plain system calls on first use.
#include <errno.h>
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
constexpr int kCells = 7;  // sequence, then offset_ns, rate_ppb, base_ns for wall and monotonic
// A writer holds the sequence odd for a few stores; past this many tries a reader takes
// what it has rather than spin in someone's clock call.
constexpr int kReadTriesMax = 1000;
const int64_t kNoShift[kCells] = {0, 0, 0, 0, 0, 0, 0};
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

bool is_wall(clockid_t id) { return id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE; }
bool is_monotonic(clockid_t id) {
  return id == CLOCK_MONOTONIC || id == CLOCK_MONOTONIC_COARSE || id == CLOCK_MONOTONIC_RAW || id == CLOCK_BOOTTIME;
}

struct Shift {
  int64_t offset = 0, rate = 0, base = 0;
  int64_t at(int64_t real_ns) const {
    if (rate == 0) return offset;
    return offset + static_cast<int64_t>(static_cast<__int128>(real_ns - base) * rate / kNanosPerSecond);
  }
};

// The wall or monotonic shift now in effect: a consistent offset, rate and base (seqlock).
Shift shift_of(bool wall) {
  const int64_t* c = offset_cell();
  const int first = wall ? 1 : 4;
  Shift s;
  for (int i = 0; i < kReadTriesMax; ++i) {
    const int64_t seq = __atomic_load_n(&c[0], __ATOMIC_ACQUIRE);
    if (seq & 1) continue;
    s.offset = __atomic_load_n(&c[first], __ATOMIC_RELAXED);
    s.rate = __atomic_load_n(&c[first + 1], __ATOMIC_RELAXED);
    s.base = __atomic_load_n(&c[first + 2], __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (__atomic_load_n(&c[0], __ATOMIC_RELAXED) == seq) break;
  }
  return s;
}

int64_t to_ns(const struct timespec& ts) { return static_cast<int64_t>(ts.tv_sec) * kNanosPerSecond + ts.tv_nsec; }

void from_ns(int64_t ns, struct timespec* ts) {
  int64_t sec = ns / kNanosPerSecond, rem = ns % kNanosPerSecond;
  if (rem < 0) {
    rem += kNanosPerSecond;
    --sec;
  }
  ts->tv_sec = static_cast<time_t>(sec);
  ts->tv_nsec = static_cast<long>(rem);
}

void shift(clockid_t id, struct timespec* ts) {
  if (!is_wall(id) && !is_monotonic(id)) return;
  const int64_t real = to_ns(*ts);
  from_ns(real + shift_of(is_wall(id)).at(real), ts);
}

// The real time at which the shifted clock reads `shifted`: the inverse of
// real + offset + (real - base) * rate / 1e9, exact while the rate holds.
int64_t unshift(const Shift& s, int64_t shifted) {
  const __int128 num = static_cast<__int128>(shifted - s.offset - s.base) * kNanosPerSecond;
  return s.base + static_cast<int64_t>(num / (kNanosPerSecond + s.rate));
}

int real_clock(clockid_t id, struct timespec* ts) { return static_cast<int>(syscall(SYS_clock_gettime, id, ts)); }

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int clock_gettime(clockid_t id, struct timespec* ts) {
  if (real_clock(id, ts) != 0) return -1;  // errno is set
  shift(id, ts);
  return 0;
}

__attribute__((visibility("default"))) int gettimeofday(struct timeval* __restrict tv, void* __restrict) {
  struct timespec ts;
  if (real_clock(CLOCK_REALTIME, &ts) != 0) return -1;
  shift(CLOCK_REALTIME, &ts);
  tv->tv_sec = ts.tv_sec;  // the C library declares tv never null
  tv->tv_usec = static_cast<suseconds_t>(ts.tv_nsec / 1000);
  return 0;
}

__attribute__((visibility("default"))) time_t time(time_t* out) {
  struct timespec ts;
  if (real_clock(CLOCK_REALTIME, &ts) != 0) return static_cast<time_t>(-1);
  shift(CLOCK_REALTIME, &ts);
  if (out != nullptr) *out = ts.tv_sec;
  return ts.tv_sec;
}

// Returns an error number, not -1 and errno, as the C library's does.
__attribute__((visibility("default"))) int clock_nanosleep(clockid_t id, int flags, const struct timespec* request,
                                                           struct timespec* remain) {
  struct timespec real_request = *request;
  if ((flags & TIMER_ABSTIME) != 0 && (is_wall(id) || is_monotonic(id))) {
    from_ns(unshift(shift_of(is_wall(id)), to_ns(*request)), &real_request);
  }
  if (syscall(SYS_clock_nanosleep, id, flags, &real_request, remain) != 0) return errno;
  return 0;
}

}  // extern "C"
