#include "lockstep/reports/example.h"

namespace lockstep::reports {
namespace {

using checker::Event;
using checker::EventType;
constexpr int64_t kMs = 1'000'000;

struct Script {
  checker::History h;
  void op(EventType t, int64_t p, const char* f, const char* key, int64_t ms, nlohmann::json v = nullptr) {
    Event e;
    e.type = t;
    e.process = p;
    e.f = f;
    e.key = key;
    e.value = std::move(v);
    e.time_ns = ms * kMs;
    h.events.push_back(std::move(e));
  }
  void truth(const char* f, int64_t p, int64_t ms, int64_t node = -1, nlohmann::json v = nullptr,
             nlohmann::json extra = nullptr) {
    Event e;
    e.type = EventType::Truth;
    e.process = p;
    e.f = f;
    e.key = node >= 0 ? "lock" : (std::string(f).rfind("cs-", 0) == 0 ? "lock" : "");
    e.value = std::move(v);
    e.time_ns = ms * kMs;
    e.node = node;
    e.extra = std::move(extra);
    h.events.push_back(std::move(e));
  }
};

}  // namespace

std::pair<RunReport, checker::History> example_run() {
  const nlohmann::json pause = {{"kind", "pause"}, {"target", "client-1"}, {"at_ms", 50}, {"duration_ms", 1500}};
  Script s;
  s.op(EventType::Invoke, 1, "acquire", "lock", 0);
  s.truth("key-set", 1, 1, 0, "tok-1");
  s.op(EventType::Ok, 1, "acquire", "lock", 2, "acquired");
  s.truth("cs-enter", 1, 2);
  s.op(EventType::Invoke, 1, "read", "stock", 2);
  s.op(EventType::Ok, 1, "read", "stock", 4, 10);
  s.op(EventType::Invoke, 2, "acquire", "lock", 5);
  s.truth("fault-start", 1, 50, -1, pause);
  s.truth("key-expire", -1, 1001, 0, "tok-1", {{"owner", 1}});
  s.truth("key-set", 2, 1012, 0, "tok-2");
  s.op(EventType::Ok, 2, "acquire", "lock", 1013, "acquired");
  s.truth("cs-enter", 2, 1013);
  s.op(EventType::Invoke, 2, "read", "stock", 1013);
  s.op(EventType::Ok, 2, "read", "stock", 1015, 10);
  s.op(EventType::Invoke, 2, "write", "stock", 1115, 9);
  s.op(EventType::Ok, 2, "write", "stock", 1116, 9);
  s.truth("cs-exit", 2, 1116);
  s.op(EventType::Invoke, 2, "release", "lock", 1116);
  s.truth("key-del", 2, 1117, 0, "tok-2", {{"owner", 2}});
  s.op(EventType::Ok, 2, "release", "lock", 1118, "released");
  s.truth("finish", 2, 1118);
  s.truth("fault-end", 1, 1550, -1, pause);
  s.op(EventType::Invoke, 1, "write", "stock", 1550, 9);
  s.op(EventType::Ok, 1, "write", "stock", 1552, 9);
  s.truth("cs-exit", 1, 1552);
  s.op(EventType::Invoke, 1, "release", "lock", 1552);
  s.op(EventType::Fail, 1, "release", "lock", 1554, "not-owner");
  s.truth("finish", 1, 1554);
  s.truth("resource", -1, 10000, 0, {{"initial", 10}, {"final", 9}});
  s.h.events.back().key = "stock";

  RunReport r;
  r.scenario = "example-gc-pause";
  r.description = "A GC pause (1.5 s) outlives the lease (1 s): client-2 takes the expired lock.";
  r.algorithm = "set-px-lua";
  r.seed = 1005;
  r.faults = nlohmann::json::array({pause});
  r.expected = Expectation::at_least({"lost-update", "mutual-exclusion"});
  r.violations = {
      {checker::Property::MutualExclusion,
       "client-2's critical section [1.013s, 1.116s] began while client-1's critical section [0.002s, 1.552s] was "
       "still running: both held the lock for 0.103s.",
       {1, 2},
       1013 * kMs,
       1,
       checker::Severity::TwoHolders},
      {checker::Property::LostUpdate,
       "the resource \"stock\" started at 10 and 2 decrements succeeded, so it should be 8, but it ended at 9: 1 "
       "update was lost.",
       {},
       10000 * kMs,
       1}};
  r.verdict = verdict::kViolation;
  r.history_sha256 = sha256_hex(checker::to_jsonl(s.h));
  r.replay = "lockstep run --seed 1005 scenarios/example-gc-pause.json";
  r.stats = {{"events", s.h.events.size()}, {"acquisitions", 2}, {"sales", 2}};
  r.scenario_json = {
      {"name", r.scenario},
      {"duration_ms", 10000},
      {"topology", {{"nodes", 1}}},
      {"network", {{"latency", {{"dist", "constant"}, {"ms", 1}}}, {"loss", 0}}},
      {"lock", {{"algorithm", "set-px-lua"}, {"key", "lock"}, {"lease_ms", 1000},
                {"retry", {{"count_max", 2000}, {"delay_ms", 10}, {"jitter_ms", 10}}}, {"command_timeout_ms", 1000}}},
      {"workload", {{"kind", "stock"}, {"clients", 2}, {"initial_stock", 10}, {"attempts_per_client", 1},
                    {"hold_ms", 100}, {"wait_ms", 5000}, {"start_stagger_ms", 5}}}};
  return {std::move(r), std::move(s.h)};
}

}  // namespace lockstep::reports
