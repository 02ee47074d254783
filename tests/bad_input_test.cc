// The readers under bad input: scenario files, histories (JSON lines, EDN, Jepsen log),
// external-client protocol lines and sim-shell lines, each fed tens of thousands of
// generated and mutated inputs (bad_input.h). Every input must come back as a result
// or as a one-line rejection that says where and why — never a crash, an exception, a
// sanitizer report or a hang — and what a reader accepts must survive what lockstep does
// next with it (a scenario reads back from its own JSON; a history's events can be
// written). A few hundred of the inputs also go through the `lockstep` binary, which
// must exit with a documented code.
//
// CI runs the default share (BadInput.*: 24,000 inputs). scripts/fuzz-inputs runs the
// same tests for a long campaign through the environment:
//   LOCKSTEP_BAD_INPUTS      inputs over all readers (default 24000)
//   LOCKSTEP_BAD_INPUT_SEED  the campaign's seed (default 1)
//   LOCKSTEP_BAD_INPUT_FIRST where in the campaign to start (default 0), so that a long
//                            run goes in chunks and a crash loses only its own chunk
//   LOCKSTEP_BAD_INPUT_DIR   where each failing input is written as a file, and where
//                            the input under way is kept (last-*), so a crash leaves it
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "bad_input.h"
#include "lockstep/checker/history_io.h"
#include "lockstep/runner/external_report.h"
#include "lockstep/runner/scenario.h"
#include "lockstep/sim/shell.h"

namespace {

namespace fs = std::filesystem;
using lockstep::bad_input::input_seed;
using lockstep::bad_input::Rng;
using nlohmann::json;

// An input slower than this is a hang in the making (the slowest take milliseconds).
constexpr double kInputSecondsMax = 5.0;
constexpr size_t kTextBytesMax = 256 * 1024;
// The live reader cuts a client's lines here (ClientProcess::kLineBytesMax).
constexpr size_t kClientLineBytesMax = 64 * 1024;

struct Config {
  uint64_t inputs = 24'000;
  uint64_t seed = 1;
  uint64_t first = 0;
  std::string dir;  // "" keeps failing inputs in the test output only
};

uint64_t env_number(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtoull(v, nullptr, 10) : fallback;
}

const Config& config() {
  static const Config c = [] {
    Config c;
    c.inputs = env_number("LOCKSTEP_BAD_INPUTS", c.inputs);
    c.seed = env_number("LOCKSTEP_BAD_INPUT_SEED", c.seed);
    c.first = env_number("LOCKSTEP_BAD_INPUT_FIRST", c.first);
    if (const char* d = std::getenv("LOCKSTEP_BAD_INPUT_DIR")) c.dir = d;
    if (!c.dir.empty()) fs::create_directories(c.dir);
    return c;
  }();
  return c;
}

// The indices of one reader's inputs, its `percent` of the campaign's.
struct Share {
  uint64_t begin, end;
};
Share share(int percent) {
  const auto at = [&](uint64_t n) { return n * static_cast<uint64_t>(percent) / 100; };
  return {at(config().first), at(config().first + config().inputs)};
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> files_in(const std::vector<std::string>& dirs, const std::vector<std::string>& extensions) {
  std::vector<fs::path> paths;
  for (const auto& d : dirs) {
    for (const auto& e : fs::directory_iterator(fs::path(LOCKSTEP_SOURCE_DIR) / d)) {
      if (!e.is_regular_file()) continue;
      for (const auto& ext : extensions) {
        if (e.path().extension() == ext) paths.push_back(e.path());
      }
    }
  }
  std::sort(paths.begin(), paths.end());  // directory order is the file system's
  std::vector<std::string> texts;
  for (const auto& p : paths) texts.push_back(read_file(p));
  return texts;
}

bool valid_utf8(std::string_view s) {
  try {
    (void)json(std::string(s)).dump();
    return true;
  } catch (const json::type_error&) {
    return false;
  }
}

// A rejection a person can act on: one line, printable in a JSON or XML report.
std::string bad_message(const std::string& m) {
  if (m.empty()) return "an empty message";
  if (m.find('\n') != std::string::npos) return "a message of more than one line: " + m;
  if (!valid_utf8(m)) return "a message that is not UTF-8";
  return "";
}

// Whether `m` is "PREFIX<digits>[:<digits>]: why" (not std::regex: it recurses per
// character and overflows the stack on the long messages this test provokes).
bool names_where_and_why(std::string_view m, std::string_view prefix, bool column) {
  if (!m.starts_with(prefix)) return false;
  size_t i = prefix.size();
  auto digits = [&] {
    const size_t start = i;
    while (i < m.size() && m[i] >= '0' && m[i] <= '9') ++i;
    return i > start;
  };
  if (!digits()) return false;
  if (column && !(i < m.size() && m[i++] == ':' && digits())) return false;
  return m.substr(i).starts_with(": ") && m.size() > i + 2;
}

std::string shown(std::string_view s) {
  std::string out = json(std::string(s.substr(0, 300))).dump(-1, ' ', true, json::error_handler_t::replace);
  return s.size() > 300 ? out + "… (" + std::to_string(s.size()) + " bytes)" : out;
}

// What one reader's campaign found: failing inputs by index, each written to the
// campaign's folder when it has one.
class Findings {
 public:
  Findings(std::string reader, std::string ext) : reader_(std::move(reader)), ext_(std::move(ext)) {}

  // Keeps the input under way on disk: if it kills the process, the file is the reproducer.
  void before(const std::string& input) const {
    if (!config().dir.empty()) std::ofstream(fs::path(config().dir) / ("last-" + reader_ + ext_), std::ios::binary) << input;
  }

  void check(uint64_t index, const std::string& input, const std::function<std::string()>& read) {
    before(input);
    const auto start = std::chrono::steady_clock::now();
    std::string why;
    try {
      why = read();
    } catch (const std::exception& e) {
      why = std::string("an exception escaped: ") + e.what();
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    slowest_s_ = std::max(slowest_s_, seconds);
    if (why.empty() && seconds > kInputSecondsMax) why = "took " + std::to_string(seconds) + " s";
    ++inputs_;
    if (why.empty()) return;
    const std::string name = reader_ + "-seed" + std::to_string(config().seed) + "-" + std::to_string(index) + ext_;
    if (!config().dir.empty()) std::ofstream(fs::path(config().dir) / name, std::ios::binary) << input;
    if (failures_.size() < 5) failures_.push_back(name + ": " + why + "\n  input: " + shown(input));
    ++failed_;
  }

  void accepted() { ++accepted_; }

  ~Findings() {
    std::printf("bad-input: %s seed=%llu inputs=%llu accepted=%llu rejected=%llu failed=%llu slowest=%.1fms\n",
                reader_.c_str(), static_cast<unsigned long long>(config().seed),
                static_cast<unsigned long long>(inputs_), static_cast<unsigned long long>(accepted_),
                static_cast<unsigned long long>(inputs_ - accepted_ - failed_),
                static_cast<unsigned long long>(failed_), slowest_s_ * 1000);
    std::string all;
    for (const auto& f : failures_) all += f + "\n";
    EXPECT_EQ(failed_, 0u) << all;
  }

 private:
  std::string reader_, ext_;
  uint64_t inputs_ = 0, accepted_ = 0, failed_ = 0;
  double slowest_s_ = 0;
  std::vector<std::string> failures_;
};

// ---- scenario files ----

const std::vector<std::string>& scenario_corpus() {
  static const auto v = files_in({"scenarios", "scenarios/live", "tests/data/good_scenarios", "tests/data/bad_scenarios"},
                                 {".json"});
  return v;
}

std::string scenario_input(Rng& r) {
  const auto& corpus = scenario_corpus();
  std::string text = r.pick(corpus);
  if (r.chance(60)) {
    auto doc = nlohmann::ordered_json::parse(text, nullptr, false);
    if (!doc.is_discarded()) {
      for (size_t i = 0, n = 1 + r.below(3); i < n; ++i) lockstep::bad_input::mutate_json(doc, r);
      text = doc.dump(r.chance(50) ? 2 : -1);
      if (r.chance(70)) return text;
    }
  }
  return lockstep::bad_input::mutate(text, corpus, r, kTextBytesMax);
}

// "" when the reader did right by the input.
std::string read_scenario(const std::string& text, bool& accepted) {
  using namespace lockstep::runner;
  auto result = parse_scenario(text, "fuzz.json");
  if (auto* e = std::get_if<ScenarioError>(&result)) {
    const std::string m = e->message();
    if (!e->path.starts_with("$")) return "the error's JSON path is \"" + e->path + "\": " + m;
    if (e->expected.empty() || e->found.empty()) return "the error does not say what was expected and found: " + m;
    if (!m.starts_with("fuzz.json: " + e->path + ": ")) return "the message does not begin with file and path: " + m;
    if (auto bad = bad_message(m); !bad.empty()) return "rejected with " + bad;
    return "";
  }
  accepted = true;
  const Scenario& s = std::get<Scenario>(result);
  auto again = parse_scenario(to_json(s).dump(), s.file);
  if (auto* e = std::get_if<ScenarioError>(&again)) return "accepted, but its own JSON is rejected: " + e->message();
  if (!(std::get<Scenario>(again) == s)) return "accepted, but its own JSON reads back different";
  return "";
}

TEST(BadInput, ScenarioFilesAreRejectedWithPathAndReason) {
  Findings found("scenario", ".json");
  for (uint64_t i = share(30).begin, n = share(30).end; i < n; ++i) {
    Rng r(input_seed(config().seed, i));
    const std::string text = scenario_input(r);
    bool accepted = false;
    found.check(i, text, [&] { return read_scenario(text, accepted); });
    if (accepted) found.accepted();
  }
}

// ---- histories ----

using lockstep::checker::Format;

const std::vector<std::string>& history_corpus() {
  static const auto v = files_in({"tests/data/histories"}, {".jsonl", ".edn", ".log"});
  return v;
}

// One operation as a history in `f` would write it, from pieces right and wrong.
std::string history_event(Rng& r, Format f) {
  static const std::vector<std::string> types = {"invoke", "ok", "fail", "info", "nemesis", "", "OK"};
  static const std::vector<std::string> fs = {"acquire", "release", "read", "write", "cas", "append", "get", "put", "start"};
  static const std::vector<std::string> edn_values = {"nil", "1", "[1 2]", "[3 0]", "\"x\"", ":timed-out", "#{1}",
                                                       "{:a 1}", "[[:append 1 2] [:r 1 nil]]", "(1 2)", "##NaN",
                                                       "#inst \"2024-01-01\"", "\\a", "1.5M", "42N"};
  const std::string type = r.pick(types), fn = r.pick(fs);
  const std::string process = r.chance(10) ? ":nemesis" : std::to_string(r.below(4));
  if (f == Format::Json) {
    json e = {{"process", r.chance(90) ? json(r.below(4)) : lockstep::bad_input::random_json(r)},
              {"type", type},
              {"f", fn},
              {"key", r.chance(80) ? json("k" + std::to_string(r.below(3))) : lockstep::bad_input::random_json(r)},
              {"value", lockstep::bad_input::random_json(r)},
              {"time", r.chance(90) ? json(r.below(1'000'000)) : lockstep::bad_input::random_json(r)}};
    if (r.chance(20)) e["thread"] = r.below(3);
    if (r.chance(10)) e.erase(e.begin());
    return e.dump();
  }
  if (f == Format::Edn) {
    std::string m = "{:process " + process + ", :type :" + type + ", :f :" + fn;
    if (r.chance(80)) m += ", :value " + r.pick(edn_values);
    if (r.chance(50)) m += ", :time " + std::to_string(r.below(1'000'000));
    if (r.chance(30)) m += ", :key \"k" + std::to_string(r.below(3)) + "\"";
    if (r.chance(10)) m += ", :index " + std::to_string(r.below(100));
    return m + "}";
  }
  std::string line = "INFO  jepsen.util - " + process + " :" + type + " :" + fn;
  if (r.chance(80)) line += " " + r.pick(edn_values);
  if (r.chance(20)) line += " :timed-out";
  return line;
}

std::string history_input(Rng& r, Format& format) {
  static const std::vector<Format> formats = {Format::Json, Format::Edn, Format::JepsenLog};
  const Format made = r.pick(formats);
  std::string text;
  if (r.chance(40)) {
    text = r.pick(history_corpus());
  } else {
    const bool vector = made == Format::Edn && r.chance(30);
    if (vector) text = "[";
    for (size_t i = 0, n = 1 + r.below(12); i < n; ++i) text += history_event(r, made) + "\n";
    if (vector) text += "]\n";
  }
  if (r.chance(85)) text = lockstep::bad_input::mutate(text, history_corpus(), r, kTextBytesMax);
  // Half the time the reader is told the format; otherwise it guesses (auto).
  format = r.chance(50) ? Format::Auto : r.chance(80) ? made : r.pick(formats);
  return text;
}

std::string read_history(const std::string& text, Format format, bool& accepted) {
  lockstep::checker::History h;
  std::string error;
  if (!lockstep::checker::parse_history_text(text, "fuzz.history", format, h, error)) {
    if (!names_where_and_why(error, "fuzz.history:", true)) return "the error does not say file:line:column: why: " + shown(error);
    if (auto bad = bad_message(error); !bad.empty()) return "rejected with " + bad;
    return "";
  }
  accepted = true;
  // `lockstep check` prints events and writes them as JSON: every event must be writable.
  for (const auto& e : h.events) {
    try {
      (void)lockstep::checker::to_json(e).dump();
    } catch (const std::exception& x) {
      return "accepted, but an event cannot be written as JSON: " + std::string(x.what());
    }
  }
  return "";
}

TEST(BadInput, HistoriesAreRejectedWithLineColumnAndReason) {
  Findings found("history", ".txt");
  for (uint64_t i = share(35).begin, n = share(35).end; i < n; ++i) {
    Rng r(input_seed(config().seed, i));
    Format format = Format::Auto;
    const std::string text = history_input(r, format);
    bool accepted = false;
    found.check(i, text, [&] { return read_history(text, format, accepted); });
    if (accepted) found.accepted();
  }
}

// ---- external-client protocol lines ----

std::string client_line(Rng& r) {
  static const std::vector<std::string> types = {"invoke", "ok", "fail", "info", "cs-enter", "cs-exit", "Invoke", ""};
  static const std::vector<std::string> fs = {"acquire", "release", "extend", "read", "write", "cas", ""};
  static const std::vector<std::string> keys = {"value", "token", "error", "f", "type", "time", "Value"};
  json line = json::object();
  if (r.chance(95)) line["type"] = r.chance(85) ? json(r.pick(types)) : lockstep::bad_input::random_json(r);
  if (r.chance(80)) line["f"] = r.chance(85) ? json(r.pick(fs)) : lockstep::bad_input::random_json(r);
  for (size_t i = 0, n = r.below(3); i < n; ++i) {
    const std::string& k = r.pick(keys);
    line[k] = r.chance(60) && k != "error" ? json(static_cast<int64_t>(r.below(100)) - 10) : lockstep::bad_input::random_json(r);
  }
  std::string text = line.dump();
  if (r.chance(40)) {
    static const std::vector<std::string> corpus = {
        R"({"type": "invoke", "f": "write", "value": 6, "token": 3})", R"({"type": "ok", "f": "read", "value": 7})",
        R"({"type": "fail", "f": "release", "error": "the lock had expired"})", R"({"type": "cs-enter"})"};
    text = lockstep::bad_input::mutate(text, corpus, r, kClientLineBytesMax);
  }
  return text;
}

TEST(BadInput, ClientLinesAreRejectedWithLineAndReason) {
  using namespace lockstep::runner;
  Findings found("client-line", ".jsonl");
  Findings runs("client-run", ".jsonl");  // a few lines as one client's run
  std::vector<std::string> session;
  for (uint64_t i = share(20).begin, n = share(20).end; i < n; ++i) {
    Rng r(input_seed(config().seed, i));
    const std::string text = client_line(r);
    bool accepted = false;
    found.check(i, text, [&]() -> std::string {
      std::string why;
      if (parse_client_line(text, why)) {
        accepted = true;
        return why.empty() ? "" : "accepted, yet said why not: " + why;
      }
      if (auto bad = bad_message(why); !bad.empty()) return "rejected with " + bad;
      return "";
    });
    if (accepted) found.accepted();
    // Every few lines make one client's run: the report must name each broken line.
    session.push_back(text);
    if (session.size() < 1 + r.below(12) && i + 1 < n) continue;
    std::string joined;
    for (const auto& l : session) joined += l + "\n";
    bool clean = false;
    runs.check(i, joined, [&]() -> std::string {
      Recorder rec([] { return int64_t{0}; });
      ClientReport report(rec, 1, "lock", "stock");
      for (const auto& l : session) report.line(1, l, false);
      report.exited(1, 0, "");
      clean = report.problems().empty();
      for (const auto& p : report.problems()) {
        if (p.starts_with("client-1 line ") && !names_where_and_why(p, "client-1 line ", false)) return "a problem without line and reason: " + shown(p);
        if (auto bad = bad_message(p); !bad.empty()) return "a problem with " + bad;
      }
      return "";
    });
    if (clean) runs.accepted();
    session.clear();
  }
}

// ---- sim-shell lines ----

// No loops and no string.rep in these scripts: a mutated bound (1e309) makes a script
// that runs until the simulator's budget of 10^8 Lua instructions stops it — seconds,
// by design, as a real server would run it until SCRIPT KILL — and string.rep works in
// C, outside that budget, so it would take all the memory it is asked for.
std::string shell_session(Rng& r) {
  static const std::vector<std::string> commands = {
      "SET k v", "SET k v PX 100", "SET k v NX EX 10", "SET k v XX GET", "SET k v PX 0", "SET k v EX -1",
      "SET k v PX 9223372036854775807", "SET k v EX 9223372036854", "GET k", "DEL k a b", "EXISTS k",
      "EXPIRE k 100", "PEXPIRE k 9223372036854775807", "TTL k", "PTTL k", "INCR n", "INCR k", "SETNX k v",
      "HSET h f v", "HINCRBY h f 9223372036854775807", "HINCRBY h f 1", "HGET h f", "HDEL h f", "HLEN h",
      "HEXISTS h f", "ZADD z 1 a", "ZADD z nan a", "ZADD z inf a", "ZRANGE z 0 -1", "ZRANGE z -9223372036854775808 9223372036854775807",
      "ZREM z a", "LPUSH l a b", "RPUSH l c", "LPOP l", "LRANGE l 0 -1", "LRANGE l -9223372036854775808 9223372036854775807",
      "LREM l 0 a", "LREM l -9223372036854775808 a", "PUBLISH c m", "WATCH k", "MULTI", "EXEC", "DISCARD",
      "EVAL \"return redis.call('SET', KEYS[1], ARGV[1])\" 1 k v", "EVAL \"return 1\" -1",
      "EVAL \"return 1\" 9223372036854775807", "EVAL \"return {1, 'a', {2}}\" 0", "EVAL \"error('x')\" 0",
      "EVAL \"return redis.pcall('INCR', 'k')\" 0", "EVAL \"return redis.call()\" 0",
      "EVAL \"return tonumber('x')\" 0", "EVAL \"return 0.5\" 0", "EVAL \"return {err='E'}\" 0",
      "EVALSHA 0000000000000000000000000000000000000000 0", "SCRIPT LOAD \"return 1\"", "SCRIPT FLUSH",
      "SCRIPT EXISTS a", "INFO replication", "ROLE", "REPLICAOF NO ONE", "DEBUG SLEEP 0", "FOO",
      ".sleep 100", ".sleep -1", ".sleep 86400001", ".sleep 9223372036854775807", ".jump 20000", ".jump -20000",
      ".jump 9223372036854775807", ".jump -9223372036854775808", ".sleep", ".jump x", "\"unterminated",
      "'it\\'s'", "SET \"a\\x41\" 'b'", "\"\\x\"", ""};
  std::string text;
  for (size_t i = 0, n = 1 + r.below(8); i < n; ++i) text += r.pick(commands) + "\n";
  if (r.chance(60)) text = lockstep::bad_input::mutate(text, commands, r, 16 * 1024);
  return text;
}

TEST(BadInput, SimShellAnswersEveryLine) {
  Findings found("sim-shell", ".txt");
  for (uint64_t i = share(15).begin, n = share(15).end; i < n; ++i) {
    Rng r(input_seed(config().seed, i));
    const std::string text = shell_session(r);
    const bool resp = r.chance(30);
    found.check(i, text, [&]() -> std::string {
      lockstep::sim::Shell shell(1, resp);
      std::istringstream in(text);
      std::string line;
      while (std::getline(in, line)) {
        const std::string out = shell.line(line);
        if (!out.empty() && out.back() != '\n') return "an answer without its newline: " + shown(out);
      }
      return "";
    });
    found.accepted();  // a shell answers every line; only a failure above counts against it
  }
}

// ---- the lockstep binary ----

struct Ran {
  int status = -1;
  std::string out, err;
};

Ran run(const std::string& args, const std::string& stdin_file = "/dev/null") {
  const std::string dir = ::testing::TempDir();
  const std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  const std::string out = dir + "bad_input_" + name + ".out", err = dir + "bad_input_" + name + ".err";
  // timeout(1): a hang fails this test with status 124 instead of stalling CI.
  const std::string cmd = "timeout 120 " + std::string(LOCKSTEP_BINARY) + " " + args + " < " + stdin_file + " > " +
                          out + " 2> " + err;
  Ran r;
  r.status = std::system(cmd.c_str());
  r.out = read_file(out);
  r.err = read_file(err);
  return r;
}

int exit_code(const Ran& r) { return WIFEXITED(r.status) ? WEXITSTATUS(r.status) : -1; }

fs::path fresh_dir(const std::string& name) {
  const fs::path d = fs::path(::testing::TempDir()) / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

TEST(BadInput, LockstepRunNamesEveryBadScenarioAndExits65) {
  const fs::path dir = fresh_dir("bad_input_run");
  std::vector<std::string> files;
  for (uint64_t i = 0; files.size() < 150 && i < 2000; ++i) {
    Rng r(input_seed(config().seed, i));
    const std::string text = scenario_input(r);
    bool accepted = false;
    (void)read_scenario(text, accepted);
    if (accepted) continue;  // only inputs it must reject: an accepted one would run
    const fs::path p = dir / ("bad-" + std::to_string(i) + ".json");
    std::ofstream(p, std::ios::binary) << text;
    files.push_back(p.string());
  }
  ASSERT_GE(files.size(), 100u);
  const Ran r = run("run " + dir.string());
  EXPECT_EQ(exit_code(r), 65) << r.err.substr(0, 2000);
  for (const auto& f : files) {
    EXPECT_NE(r.err.find(f + ": $"), std::string::npos) << f << " is not named with its JSON path";
  }
}

TEST(BadInput, LockstepCheckExitsWithDocumentedCodes) {
  const fs::path dir = fresh_dir("bad_input_check");
  std::vector<std::string> files;
  int rejected = 0;
  for (uint64_t i = 0; files.size() < 200; ++i) {
    Rng r(input_seed(config().seed, i));
    Format format = Format::Auto;
    const std::string text = history_input(r, format);
    if (text.size() > 4096) continue;  // small, so the checker's search stays short
    bool accepted = false;
    (void)read_history(text, Format::Auto, accepted);
    rejected += accepted ? 0 : 1;
    const fs::path p = dir / ("h-" + std::to_string(i) + ".txt");
    std::ofstream(p, std::ios::binary) << text;
    files.push_back(p.string());
  }
  std::string args = "check --json --time-limit 1 --threads 1";
  for (const auto& f : files) args += " " + f;
  const Ran r = run(args);
  EXPECT_TRUE(exit_code(r) == 65 || (rejected == 0 && exit_code(r) <= 2)) << exit_code(r) << r.err.substr(0, 2000);
  // One JSON object per file; the rejected ones name where and why.
  std::istringstream out(r.out);
  std::string line;
  size_t objects = 0;
  while (std::getline(out, line)) {
    const json j = json::parse(line, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << "not JSON: " << shown(line);
    ASSERT_LT(objects, files.size()) << line;
    ASSERT_TRUE(j.contains("file") && j.contains("verdict")) << line;
    EXPECT_EQ(j["file"], files[objects]) << "files are answered in order";
    if (j["verdict"] == "error") {
      EXPECT_TRUE(j["error"].get<std::string>().starts_with(files[objects] + ":")) << line;
    } else {
      EXPECT_TRUE(j["verdict"] == "valid" || j["verdict"] == "invalid" || j["verdict"] == "unknown") << line;
    }
    ++objects;
  }
  EXPECT_EQ(objects, files.size()) << r.out.substr(0, 2000);
}

TEST(BadInput, LockstepSimShellAnswersEverySession) {
  const fs::path dir = fresh_dir("bad_input_shell");
  std::string all;
  for (uint64_t i = 0; i < 200; ++i) {
    Rng r(input_seed(config().seed, i));
    all += shell_session(r) + "\n";
  }
  const fs::path input = dir / "sessions.txt";
  std::ofstream(input, std::ios::binary) << all;
  for (const char* flags : {"", " --resp"}) {
    const Ran r = run(std::string("sim-shell") + flags, input.string());
    EXPECT_EQ(exit_code(r), 0) << flags << " " << r.err.substr(0, 2000);
    EXPECT_EQ(r.err, "") << flags;
  }
}

// ---- what the campaigns found ----

// tests/data/bad_inputs/ holds one minimised input per bug the campaigns found, named
// after its reader. Each must be rejected cleanly, in-process and by the binary.
TEST(BadInput, FoundReproducersAreRejectedCleanly) {
  const fs::path dir = fs::path(LOCKSTEP_SOURCE_DIR) / "tests/data/bad_inputs";
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir)) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  ASSERT_FALSE(files.empty());
  std::string histories;
  for (const auto& f : files) {
    const std::string name = f.filename().string(), text = read_file(f);
    SCOPED_TRACE(name);
    bool accepted = false;
    if (name.starts_with("scenario-")) {
      EXPECT_EQ(read_scenario(text, accepted), "");
    } else if (name.starts_with("history-")) {
      EXPECT_EQ(read_history(text, Format::Auto, accepted), "");
      histories += " " + f.string();
    } else if (name.starts_with("client-line-")) {
      std::string why;
      EXPECT_FALSE(lockstep::runner::parse_client_line(std::string_view(text).substr(0, text.find('\n')), why).has_value());
      EXPECT_EQ(bad_message(why), "") << why;
    } else {
      ASSERT_TRUE(name.starts_with("sim-shell-")) << "a reproducer is named after its reader";
      lockstep::sim::Shell shell(1, false);
      std::istringstream in(text);
      std::string line, out;
      while (std::getline(in, line)) out += shell.line(line);
      // Times past the bounds are refused, and the node works on within them.
      EXPECT_EQ(out,
                "(error) .sleep takes 0 to 86400000 ms at a time, within a century of simulated time\n"
                "(error) .jump keeps the wall clock between 1970 and a century after the start\n"
                "(error) .jump keeps the wall clock between 1970 and a century after the start\n"
                "(error) .sleep takes 0 to 86400000 ms at a time, within a century of simulated time\n"
                "OK\n\"v\"\n");
      continue;
    }
    EXPECT_FALSE(accepted);
  }
  // `lockstep check --json` aborted on each of these (nlohmann refused to print the error).
  const Ran r = run("check --json" + histories);
  EXPECT_EQ(exit_code(r), 65) << r.err;
  std::istringstream out(r.out);
  std::string line;
  while (std::getline(out, line)) {
    const json j = json::parse(line, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << shown(line);
    EXPECT_EQ(j.value("verdict", ""), "error") << line;
  }
}

}  // namespace
