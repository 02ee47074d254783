// Live lock cycles per second through LiveEnv: one client on one connection, the real
// `redisson` lock code (acquire = EVAL of the reentrant-lock script, release = EVAL of
// the reentrant-unlock script, a fixed lease so no watchdog runs), against the
// redis-server at 127.0.0.1:PORT. Each cycle is two round trips, so it compares with
// redis-benchmark's EVAL rate over one connection divided by two.
//
//   live_cycle PORT [SECONDS]   prints {"cycles": N, "seconds": S, "cycles_per_s": R}
//
// It touches one key of its own ("lockstep:bench:live-cycle") and deletes it at the end;
// it never starts or stops a server (scripts/bench does).
#include <cstdio>
#include <cstdlib>
#include <string>

#include "lockstep/live/live_world.h"
#include "lockstep/lock.h"

namespace {

using namespace lockstep;

constexpr const char* kKey = "lockstep:bench:live-cycle";

struct Count {
  int64_t cycles = 0;
  bool failed = false;
};

Task<void> cycles_until(Env& env, Nanos until_mono, Count& count) {
  LockParams p;
  p.key = kKey;
  p.lease = Millis(30000);
  p.command_timeout = Millis(2000);
  std::unique_ptr<Lock> lock = make_lock("redisson", env, p);
  while (env.now_mono() < until_mono) {  // bounded by the clock
    if (co_await lock->acquire(Millis(1000)) != AcquireOutcome::Acquired ||
        co_await lock->release() != ReleaseOutcome::Released) {
      count.failed = true;
      co_return;
    }
    ++count.cycles;
  }
}

int usage() {
  std::fputs("usage: live_cycle PORT [SECONDS]\n", stderr);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) return usage();
  live::NodeAddress address;
  if (!live::parse_address(std::string("127.0.0.1:") + argv[1], address)) return usage();
  const double seconds = argc == 3 ? std::atof(argv[2]) : 3.0;
  if (!(seconds > 0 && seconds <= 600)) return usage();

  Count count;
  Nanos elapsed{0};
  {
    live::LiveWorld world(1);
    world.add_node(address);
    const int client = world.add_client("client-1", 1);
    // A short warm-up connects and loads the scripts before the clock starts.
    Count warm;
    world.spawn(client, cycles_until(world.env(client), live::mono_clock() + Millis(200), warm));
    world.loop().run_until([&] { return world.idle(client); }, Millis(5000));
    if (warm.failed || warm.cycles == 0) {
      std::fprintf(stderr, "live_cycle: no lock cycle completed against %s\n", address.text().c_str());
      return 1;
    }
    const Nanos start = live::mono_clock();
    const Nanos until = start + Nanos(static_cast<int64_t>(seconds * 1e9));
    world.spawn(client, cycles_until(world.env(client), until, count));
    world.loop().run_until([&] { return world.idle(client); }, until - start + Millis(5000));
    elapsed = live::mono_clock() - start;
  }
  live::sync_command(address, {"DEL", kKey}, Millis(1000));
  if (count.failed) {
    std::fputs("live_cycle: a lock cycle failed\n", stderr);
    return 1;
  }
  const double s = static_cast<double>(elapsed.count()) / 1e9;
  std::printf("{\"cycles\": %lld, \"seconds\": %.3f, \"cycles_per_s\": %.0f}\n", static_cast<long long>(count.cycles), s,
              static_cast<double>(count.cycles) / s);
  return 0;
}
