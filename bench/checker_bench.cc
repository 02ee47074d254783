// Linearizability checker benchmarks on generated histories: a CAS register with crashed
// operations pending to the end, a long mutex history, kv histories over many keys, and
// the shapes of Jepsen's and Porcupine's kv tests — 50 clients appending to 10 keys, one
// of them made non-linearizable — and of Knossos' CAS-register tests with crashed writes.
// Histories come from a small discrete-event simulation of a correct object with a fixed
// seed (std::mt19937_64 output is fully specified), so every run checks the same bytes.
//
// Times are wall times (UseRealTime): the checker searches keys on several threads, and a
// user waits for the wall clock. max_rss_bytes is the process's peak resident memory, read
// after the benchmark (each benchmark runs in its own process under scripts/bench).
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <queue>
#include <random>
#include <string>
#include <vector>

#include "lockstep/checker/linearizability.h"

namespace lockstep::checker {
namespace {

using nlohmann::json;

// What a simulated client does next and what the object answers at the linearization point.
class Workload {
 public:
  virtual ~Workload() = default;
  virtual void next(int slot, std::string& f, json& input, std::string& key) = 0;
  // Applies the op to the true object; returns false when it fails (fail completion) and
  // sets `output` for ok reads.
  virtual bool apply(int slot, const std::string& f, const json& input, const std::string& key, json& output) = 0;
};

struct SimOptions {
  int slots = 5;         // concurrent clients
  size_t ops = 100;
  size_t crashes = 0;    // ops that crash: pending to the end, taking effect or not
  std::string crash_f;   // when set, only ops with this f crash (e.g. "write")
  uint64_t seed = 1;
};

struct Pending {
  int64_t time;
  uint64_t seq;
  int kind;  // 0 invoke, 1 linearize, 2 complete
  int slot;
  bool operator>(const Pending& o) const { return time != o.time ? time > o.time : seq > o.seq; }
};

History simulate(Workload& w, const SimOptions& o) {
  std::mt19937_64 rng(o.seed);
  auto rnd = [&](uint64_t n) { return static_cast<int64_t>(rng() % n); };
  std::vector<bool> crash(o.ops, false);
  for (size_t c = 0; c < o.crashes && c < o.ops; ++c) {
    size_t i = static_cast<size_t>(rnd(o.ops));
    while (crash[i]) i = (i + 1) % o.ops;
    crash[i] = true;
  }
  struct Slot {
    int64_t process;
    std::string f, key;
    json input, output;
    bool ok = true, crashed = false;
    int64_t complete_at = 0;
  };
  std::vector<Slot> slots(static_cast<size_t>(o.slots));
  std::priority_queue<Pending, std::vector<Pending>, std::greater<Pending>> q;
  uint64_t seq = 0;
  for (int s = 0; s < o.slots; ++s) {
    slots[static_cast<size_t>(s)].process = s;
    q.push({rnd(5), seq++, 0, s});
  }
  History h;
  size_t started = 0;
  auto emit = [&](EventType t, const Slot& s, const json& v, int64_t time) {
    Event e;
    e.type = t;
    e.process = s.process;
    e.f = s.f;
    e.key = s.key;
    e.value = v;
    e.time_ns = time * 1000;
    h.events.push_back(std::move(e));
  };
  while (!q.empty()) {
    Pending p = q.top();
    q.pop();
    Slot& s = slots[static_cast<size_t>(p.slot)];
    if (p.kind == 0) {
      if (started == o.ops) continue;
      bool chosen = crash[started++];
      w.next(p.slot, s.f, s.input, s.key);
      s.crashed = chosen && (o.crash_f.empty() || s.f == o.crash_f);
      emit(EventType::Invoke, s, s.input, p.time);
      int64_t dur = 1 + rnd(10);
      s.complete_at = p.time + dur;
      // A crashed op takes effect half of the time, at some point after its invocation.
      if (!s.crashed || rnd(2) == 0) q.push({p.time + rnd(dur + 1), seq++, 1, p.slot});
      q.push({s.complete_at, seq++, 2, p.slot});
    } else if (p.kind == 1) {
      s.output = nullptr;
      s.ok = w.apply(p.slot, s.f, s.input, s.key, s.output);
    } else {
      if (s.crashed) {
        s.process += o.slots;  // Jepsen gives a crashed client a new process number
      } else {
        emit(s.ok ? EventType::Ok : EventType::Fail, s, s.ok && !s.output.is_null() ? s.output : s.input,
             p.time);
      }
      q.push({p.time + rnd(3), seq++, 0, p.slot});
    }
  }
  return h;
}

class CasWorkload final : public Workload {
 public:
  explicit CasWorkload(uint64_t seed) : rng_(seed) {}
  void next(int, std::string& f, json& input, std::string&) override {
    uint64_t r = rng_() % 3;
    f = r == 0 ? "read" : r == 1 ? "write" : "cas";
    input = f == "read" ? json() : f == "write" ? json(rng_() % 5) : json::array({rng_() % 5, rng_() % 5});
  }
  bool apply(int, const std::string& f, const json& in, const std::string&, json& out) override {
    if (f == "read") out = value_;
    else if (f == "write") value_ = in;
    else if (value_ == in[0]) value_ = in[1];
    else return false;
    return true;
  }

 private:
  std::mt19937_64 rng_;
  json value_;
};

class MutexWorkload final : public Workload {
 public:
  explicit MutexWorkload(int slots) : holding_(static_cast<size_t>(slots), false) {}
  void next(int slot, std::string& f, json&, std::string&) override {
    f = holding_[static_cast<size_t>(slot)] ? "release" : "acquire";
  }
  bool apply(int slot, const std::string& f, const json&, const std::string&, json&) override {
    auto i = static_cast<size_t>(slot);
    if (f == "acquire") {
      if (owner_ != -1) return false;
      owner_ = slot;
      holding_[i] = true;
    } else {
      owner_ = -1;
      holding_[i] = false;
    }
    return true;
  }

 private:
  std::vector<bool> holding_;
  int owner_ = -1;
};

// Jepsen's and Porcupine's kv workload: get, put and append of "x <client> <n> y" on random
// keys, in the proportions of Porcupine's c50 histories (45% get, 5% put, 50% append);
// appends concatenate, and a key never written reads as "".
class KvWorkload final : public Workload {
 public:
  KvWorkload(uint64_t seed, int keys) : rng_(seed), keys_(keys) {}
  void next(int slot, std::string& f, json& input, std::string& key) override {
    uint64_t r = rng_() % 20;
    f = r < 9 ? "get" : r == 9 ? "put" : "append";
    key = "k" + std::to_string(rng_() % static_cast<uint64_t>(keys_));
    input = f == "get" ? json() : json("x " + std::to_string(slot) + " " + std::to_string(count_++) + " y");
  }
  bool apply(int, const std::string& f, const json& in, const std::string& key, json& out) override {
    std::string& v = data_[key];
    if (f == "get") out = v;
    else if (f == "put") v = in.get<std::string>();
    else v += in.get<std::string>();
    return true;
  }

 private:
  std::mt19937_64 rng_;
  int keys_;
  uint64_t count_ = 0;
  std::map<std::string, std::string> data_;
};

// Makes one key non-linearizable: the get of `key` nearest the middle of the history that
// read something returns it with an append no client ever made.
History with_bad_read(History h, const std::string& key) {
  size_t mid = h.events.size() / 2, best = h.events.size();
  for (size_t i = 0; i < h.events.size(); ++i) {
    const Event& e = h.events[i];
    if (e.key != key || e.f != "get" || e.type != EventType::Ok || e.value == "") continue;
    if (best == h.events.size() || (i > mid ? i - mid : mid - i) < (best > mid ? best - mid : mid - best)) best = i;
  }
  if (best < h.events.size()) h.events[best].value = h.events[best].value.get<std::string>() + "x 99 99 y";
  return h;
}

size_t max_rss_bytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<size_t>(u.ru_maxrss) * 1024;
}

// CHECKER_BENCH_DUMP=dir writes each history to dir/<name>.jsonl, so that a goal can be
// investigated, or measured end to end (scripts/bench), with `lockstep check`.
void run_check(benchmark::State& state, const std::string& name, const History& h, const char* model_name,
               Verdict expected = Verdict::Valid) {
  auto model = make_model(model_name);
  if (const char* dump = std::getenv("CHECKER_BENCH_DUMP")) std::ofstream(std::string(dump) + "/" + name + ".jsonl") << to_jsonl(h);
  LinResult r;
  for (auto _ : state) {
    r = check_linearizable(h, *model, Limits{60.0, size_t{4} << 30});
    benchmark::DoNotOptimize(r.verdict);
  }
  if (r.verdict != expected) state.SkipWithError(("verdict " + std::string(to_string(r.verdict))).c_str());
  state.counters["ops"] = static_cast<double>(r.ops);
  state.counters["peak_bytes"] = static_cast<double>(r.stats.peak_bytes);
  state.counters["states"] = static_cast<double>(r.stats.states_visited);
  state.counters["cache_entries"] = static_cast<double>(r.stats.cache_entries);
  state.counters["max_rss_bytes"] = static_cast<double>(max_rss_bytes());
}

void BM_CasRegisterCrashed(benchmark::State& state) {
  CasWorkload w(42);
  SimOptions o;
  o.slots = static_cast<int>(state.range(0));
  o.ops = 100;
  o.crashes = 20;
  o.seed = 7;
  run_check(state, "cas-crashed-" + std::to_string(o.slots), simulate(w, o), "cas-register");
}
BENCHMARK(BM_CasRegisterCrashed)->Arg(5)->Arg(10)->Arg(15)->Arg(20)->Unit(benchmark::kMillisecond)->UseRealTime();

// The 20-process case over other fixed seeds: how much the cost varies between histories.
void BM_CasRegisterCrashed20BySeed(benchmark::State& state) {
  CasWorkload w(static_cast<uint64_t>(state.range(0)) * 1000 + 42);
  SimOptions o;
  o.slots = 20;
  o.ops = 100;
  o.crashes = 20;
  o.seed = static_cast<uint64_t>(state.range(0));
  run_check(state, "cas-crashed-20-seed-" + std::to_string(o.seed), simulate(w, o), "cas-register");
}
BENCHMARK(BM_CasRegisterCrashed20BySeed)->DenseRange(1, 6)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Mutex100k(benchmark::State& state) {
  SimOptions o;
  o.slots = 10;
  o.ops = 100000;
  o.seed = 11;
  MutexWorkload w(o.slots);
  run_check(state, "mutex-100k", simulate(w, o), "mutex");
}
BENCHMARK(BM_Mutex100k)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Kv10kOver100Keys(benchmark::State& state) {
  KvWorkload w(5, 100);
  SimOptions o;
  o.slots = 10;
  o.ops = 10000;
  o.seed = 13;
  run_check(state, "kv-10k-100-keys", simulate(w, o), "kv");
}
BENCHMARK(BM_Kv10kOver100Keys)->Unit(benchmark::kMillisecond)->UseRealTime();

// The shape of Porcupine's c50 kv tests: 50 clients, 2,000 operations over 10 keys.
History kv_50_clients() {
  KvWorkload w(21, 10);
  SimOptions o;
  o.slots = 50;
  o.ops = 2000;
  o.seed = 17;
  return simulate(w, o);
}

// The headline goal: decided invalid in <= 100 ms and <= 100 MB beside nine valid keys.
void BM_Kv50ClientsOneBadKey(benchmark::State& state) {
  run_check(state, "kv-50-clients-bad-key", with_bad_read(kv_50_clients(), "k7"), "kv", Verdict::Invalid);
}
BENCHMARK(BM_Kv50ClientsOneBadKey)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Kv50ClientsValid(benchmark::State& state) { run_check(state, "kv-50-clients-valid", kv_50_clients(), "kv"); }
BENCHMARK(BM_Kv50ClientsValid)->Unit(benchmark::kMillisecond)->UseRealTime();

// Knossos' shape: a CAS register, 5 clients, about 150 operations, writes that crashed
// (pending to the end: they may have taken effect at any later point, or never).
void BM_CasRegister5ClientsCrashedWrites(benchmark::State& state) {
  CasWorkload w(77);
  SimOptions o;
  o.slots = 5;
  o.ops = 150;
  o.crashes = 45;  // of 150 ops, of which the writes crash: about 15
  o.crash_f = "write";
  o.seed = 19;
  run_check(state, "cas-5-clients-crashed-writes", simulate(w, o), "cas-register");
}
BENCHMARK(BM_CasRegister5ClientsCrashedWrites)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace lockstep::checker
