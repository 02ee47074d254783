// The external-client protocol as lockstep reads it (docs/external-clients.md): good
// lines become the history lockstep's own clients would record; every kind of bad line
// is named with the client, the line and the reason, leaves the history well formed
// (the open operation unknown, the critical section ended, a held lock to its lease) and
// silences the client until it restarts; arbitrary bytes never crash the reader.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <fstream>

#include "lockstep/runner/external_report.h"

namespace lockstep::runner {
namespace {

using checker::EventType;

struct Fixture {
  int64_t clock = 0;
  Recorder rec{[this] { return clock += 1000; }};
  ClientReport report{rec, 3, "lock", "stock"};

  void lines(std::initializer_list<const char*> text, int incarnation = 1) {
    for (const char* l : text) report.line(incarnation, l, false);
  }
  const std::vector<checker::Event>& events() const { return rec.history().events; }
};

int exit_status(int code) { return code << 8; }  // as waitpid reports an exit

TEST(ExternalReport, AGoodRunIsRecordedAsLockstepsOwnClientsRecordIt) {
  Fixture f;
  f.lines({R"({"type":"invoke","f":"acquire"})", R"({"type":"ok","f":"acquire","token":7})", R"({"type":"cs-enter"})",
           R"({"type":"invoke","f":"read"})", R"({"type":"ok","f":"read","value":5})",
           R"({"type":"invoke","f":"write","value":4,"token":7})", R"({"type":"ok","f":"write","value":4})",
           R"({"type":"cs-exit"})", R"({"type":"invoke","f":"release"})",
           R"({"type":"fail","f":"release","error":"expired"})"});
  f.report.exited(1, exit_status(0), "");
  EXPECT_TRUE(f.report.problems().empty()) << f.report.problems()[0];
  const auto& e = f.events();
  ASSERT_EQ(e.size(), 11u);
  EXPECT_EQ(e[0].f, "acquire");
  EXPECT_EQ(e[0].key, "lock");
  EXPECT_EQ(e[0].process, 3);
  EXPECT_EQ(e[1].value, nlohmann::json({{"token", 7}}));
  EXPECT_EQ(e[2].f, checker::truth::kCsEnter);
  EXPECT_EQ(e[3].key, "stock");
  EXPECT_EQ(e[4].value, 5);
  // The fencing check reads a write's token where lockstep's own clients put it.
  EXPECT_EQ(e[5].value, nlohmann::json({{"value", 4}, {"token", 7}}));
  EXPECT_EQ(e[9].type, EventType::Fail);
  EXPECT_EQ(e[9].value, "expired");
  EXPECT_EQ(e[10].f, checker::truth::kFinish);
  for (size_t i = 1; i < e.size(); ++i) EXPECT_GT(e[i].time_ns, e[i - 1].time_ns) << "stamped on receipt";
}

struct BadLine {
  const char* line;
  const char* why;
};

// The reason is the interface a client author sees: asserted word for word.
TEST(ExternalReport, EachBadLineIsNamedWithClientLineAndReason) {
  const std::vector<BadLine> table = {
      {"hello", "not JSON (at byte 1)"},
      {R"([1,2])", "expected a JSON object, found [1,2]"},
      {R"({"f":"acquire"})", R"(expected a "type" (invoke, ok, fail, info, cs-enter or cs-exit), found none)"},
      {R"({"type":"invok","f":"acquire"})",
       R"(expected "type" to be invoke, ok, fail, info, cs-enter or cs-exit, found "invok")"},
      {R"({"type":"invoke","f":"lock"})", R"(expected "f" to be acquire, release, extend, read or write, found "lock")"},
      {R"({"type":"invoke"})", R"(expected "f" to be acquire, release, extend, read or write, found none)"},
      {R"({"type":"invoke","f":"acquire","vaule":1})", R"(unexpected key "vaule" in invoke acquire)"},
      {R"({"type":"cs-enter","f":"acquire"})", R"(unexpected key "f" in cs-enter)"},
      {R"({"type":"invoke","f":"write"})", R"(expected a "value" (an integer) in invoke write, found none)"},
      {R"({"type":"invoke","f":"write","value":"4"})", R"(expected "value" to be an integer, found "4")"},
      {R"({"type":"invoke","f":"write","value":1.5})", R"(expected "value" to be an integer, found 1.5)"},
      {R"({"type":"invoke","f":"read","value":1})", R"(unexpected key "value" in invoke read)"},
      {R"({"type":"ok","f":"acquire","error":"x"})", R"(unexpected key "error" in ok acquire)"},
      {R"({"type":"fail","f":"read","error":5})", R"(expected "error" to be a string, found 5)"},
      {R"({"type":"ok","f":"acquire"})", "ok of acquire with no operation invoked"},
      {R"({"type":"cs-exit"})", "cs-exit outside a critical section"},
  };
  for (const auto& b : table) {
    Fixture f;
    f.report.line(1, b.line, false);
    ASSERT_EQ(f.report.problems().size(), 1u) << b.line;
    EXPECT_EQ(f.report.problems()[0], std::string("client-3 line 1: ") + b.why) << b.line;
  }
}

TEST(ExternalReport, OperationsAndSectionsMustPairUp) {
  Fixture f;
  f.lines({R"({"type":"invoke","f":"acquire"})", R"({"type":"invoke","f":"read"})"});
  ASSERT_EQ(f.report.problems().size(), 1u);
  EXPECT_EQ(f.report.problems()[0], "client-3 line 2: invoke of read while acquire (line 1) has no outcome yet");

  Fixture g;
  g.lines({R"({"type":"invoke","f":"acquire"})", R"({"type":"ok","f":"release"})"});
  EXPECT_EQ(g.report.problems().at(0),
            "client-3 line 2: ok of release while the open operation is acquire (line 1)");

  Fixture h;
  h.lines({R"({"type":"cs-enter"})", R"({"type":"cs-enter"})"});
  EXPECT_EQ(h.report.problems().at(0), "client-3 line 2: cs-enter inside the critical section entered at line 1");
}

// After a bad line the history is what a crash would leave, and nothing the client says
// afterwards gets in: its open operation unknown, its critical section over, the lock it
// held released at some unknown later point (its lease).
TEST(ExternalReport, ABrokenReportLeavesAWellFormedHistory) {
  Fixture f;
  f.lines({R"({"type":"invoke","f":"acquire"})", R"({"type":"ok","f":"acquire"})", R"({"type":"cs-enter"})",
           R"({"type":"invoke","f":"read"})", "{oops", R"({"type":"ok","f":"read","value":5})", R"({"type":"cs-exit"})"});
  ASSERT_EQ(f.report.problems().size(), 1u);
  EXPECT_EQ(f.report.problems()[0], "client-3 line 5: not JSON (at byte 2)");
  EXPECT_EQ(f.report.ignored_lines(), 2);
  const auto& e = f.events();
  ASSERT_EQ(e.size(), 7u);
  EXPECT_EQ(e[4].type, EventType::Info);
  EXPECT_EQ(e[4].f, "read");
  EXPECT_EQ(e[5].f, checker::truth::kCsExit);
  EXPECT_EQ(e[6].type, EventType::Invoke);
  EXPECT_EQ(e[6].f, "release");
  // The client exits cleanly afterwards: nothing more to report, nothing more recorded
  // than its finish.
  f.report.exited(1, exit_status(0), "");
  EXPECT_EQ(f.report.problems().size(), 1u);
  EXPECT_EQ(f.events().back().f, checker::truth::kFinish);
}

TEST(ExternalReport, ARestartedClientReportsAfresh) {
  Fixture f;
  f.lines({R"({"type":"invoke","f":"acquire"})", "garbage"});
  f.lines({R"({"type":"invoke","f":"acquire"})", R"({"type":"ok","f":"acquire"})"}, 2);
  ASSERT_EQ(f.report.problems().size(), 1u);
  EXPECT_EQ(f.events().back().type, EventType::Ok);
  // Threads of its own: the first incarnation's acquire stays pending, not overlapping.
  EXPECT_EQ(f.events().back().thread, ClientReport::kThreadsMax);
  EXPECT_EQ(f.events().front().thread, 0);
  f.lines({"{}"}, 2);
  EXPECT_EQ(f.report.problems().back(),
            R"(client-3 (incarnation 2) line 3: expected a "type" (invoke, ok, fail, info, cs-enter or cs-exit), found none)");
}

TEST(ExternalReport, ExitsThatLeaveTheRunUntestedAreProblems) {
  Fixture silent;
  silent.report.exited(1, exit_status(0), "");
  EXPECT_EQ(silent.report.problems().at(0), "client-3 exited without reporting anything");

  Fixture failing;
  failing.lines({R"({"type":"invoke","f":"acquire"})"});
  failing.report.exited(1, exit_status(3), "Error: Cannot find module 'redlock'");
  EXPECT_EQ(failing.report.problems().at(0),
            "client-3 exited with status 3; its stderr ends: Error: Cannot find module 'redlock'");
  EXPECT_EQ(failing.events().back().f, checker::truth::kCrash);
  EXPECT_EQ(failing.events()[1].type, EventType::Info);

  Fixture killed;
  killed.lines({R"({"type":"invoke","f":"acquire"})"});
  killed.report.exited(1, SIGSEGV, "");
  EXPECT_EQ(killed.report.problems().at(0), "client-3 was killed by SIGSEGV");

  Fixture open;
  open.lines({R"({"type":"invoke","f":"acquire"})", R"({"type":"ok","f":"acquire"})", R"({"type":"cs-enter"})"});
  open.report.exited(1, exit_status(0), "");
  EXPECT_EQ(open.report.problems().at(0), "client-3 exited inside its critical section (entered at line 3)");

  Fixture unstarted;
  unstarted.report.start_failed(1, "cannot find nodee on PATH");
  EXPECT_EQ(unstarted.report.problems().at(0), "client-3 could not start: cannot find nodee on PATH");
}

TEST(ExternalReport, AClientStillRunningAtTheEndIsNamedButTestedAllTheSame) {
  Fixture f;
  f.lines({R"({"type":"invoke","f":"acquire"})"});
  f.report.killed_at_end();
  EXPECT_TRUE(f.report.problems().empty());
  EXPECT_EQ(f.report.still_running(), "client-3 was still running when the run ended: killed");
  Fixture silent;
  silent.report.killed_at_end();
  EXPECT_EQ(silent.report.problems().at(0), "client-3 reported nothing before the run ended");
}

TEST(ExternalReport, OverlongAndEndlessOutputIsCutOff) {
  Fixture f;
  f.report.line(1, std::string(100, 'x'), true);
  EXPECT_EQ(f.report.problems().at(0), "client-3 line 1: a line longer than 65536 bytes");

  Fixture g;
  for (int64_t i = 0; i < ClientReport::kLinesMax + 10; ++i) {
    g.report.line(1, i % 2 == 0 ? R"({"type":"cs-enter"})" : R"({"type":"cs-exit"})", false);
  }
  ASSERT_EQ(g.report.problems().size(), 1u);
  EXPECT_EQ(g.report.problems()[0], "client-3 line 100001: more than 100000 lines");
  EXPECT_LE(g.events().size(), static_cast<size_t>(ClientReport::kLinesMax) + 1);
}

// The limit is the run's: two clients sharing a count share the 100,000 lines, and the one
// whose line goes over is named.
TEST(ExternalReport, TheLineLimitIsPerRun) {
  Fixture f;
  ClientReport other(f.rec, 4, "lock", "stock");
  int64_t run_lines = 0;
  f.report.count_lines_in(&run_lines);
  other.count_lines_in(&run_lines);
  const int64_t half = ClientReport::kLinesMax / 2 + 10;
  for (ClientReport* r : {&f.report, &other}) {
    for (int64_t i = 0; i < half; ++i) r->line(1, i % 2 == 0 ? R"({"type":"cs-enter"})" : R"({"type":"cs-exit"})", false);
  }
  EXPECT_TRUE(f.report.problems().empty());
  ASSERT_EQ(other.problems().size(), 1u);
  EXPECT_EQ(other.problems()[0], "client-4 line " + std::to_string(ClientReport::kLinesMax - half + 1) +
                                     ": the run's clients wrote more than 100000 lines");
}

// A watchdog thread reports its extends while the main thread holds the lock and works:
// each thread pairs its own invoke and outcome, the history tells the threads apart by
// number and by name, and the lock and the critical section stay the client's.
TEST(ExternalReport, ThreadsInterleaveEachWithOneOpenOperation) {
  Fixture f;
  f.lines({R"({"type":"invoke","f":"acquire"})", R"({"type":"ok","f":"acquire"})", R"({"type":"cs-enter"})",
           R"({"type":"invoke","f":"read"})", R"({"type":"invoke","f":"extend","thread":"watchdog"})",
           R"({"type":"ok","f":"read","value":5})", R"({"type":"invoke","f":"write","value":4})",
           R"({"type":"ok","f":"extend","thread":"watchdog"})", R"({"type":"invoke","f":"extend","thread":"watchdog"})",
           R"({"type":"ok","f":"write"})", R"({"type":"fail","f":"extend","thread":"watchdog","error":"gone"})",
           R"({"type":"invoke","f":"extend","thread":7})", R"({"type":"info","f":"extend","thread":"7"})",
           R"({"type":"cs-exit","thread":"watchdog"})", R"({"type":"invoke","f":"release"})", R"({"type":"ok","f":"release"})"});
  f.report.exited(1, exit_status(0), "");
  ASSERT_TRUE(f.report.problems().empty()) << f.report.problems()[0];
  std::vector<std::pair<int64_t, std::string>> extends;  // (history thread, client_thread)
  for (const auto& e : f.events()) {
    if (e.type == EventType::Truth) continue;
    if (e.f != "extend") {
      EXPECT_EQ(e.thread, 0) << e.f;
      EXPECT_TRUE(e.extra.is_null()) << e.extra.dump();
      continue;
    }
    extends.emplace_back(e.thread, e.extra.value("client_thread", ""));
  }
  const std::vector<std::pair<int64_t, std::string>> expected = {
      {1, "watchdog"}, {1, "watchdog"}, {1, "watchdog"}, {1, "watchdog"}, {2, "7"}, {2, "7"}};
  EXPECT_EQ(extends, expected);
  EXPECT_EQ(f.events().back().f, checker::truth::kFinish);
}

TEST(ExternalReport, AnInvokeOnABusyThreadIsNamedWithClientLineAndReason) {
  Fixture f;
  f.lines({R"({"type":"invoke","f":"acquire"})", R"({"type":"invoke","f":"extend","thread":"watchdog"})",
           R"({"type":"invoke","f":"extend","thread":"watchdog"})"});
  ASSERT_EQ(f.report.problems().size(), 1u);
  EXPECT_EQ(f.report.problems()[0],
            R"(client-3 line 3: invoke of extend on thread "watchdog" while extend (line 2) has no outcome yet)");
  // Both open operations end unknown, each on its own thread.
  const auto& e = f.events();
  ASSERT_EQ(e.size(), 4u);
  EXPECT_EQ(e[2].type, EventType::Info);
  EXPECT_EQ(e[3].type, EventType::Info);
  EXPECT_NE(e[2].thread, e[3].thread);

  Fixture g;
  g.lines({R"({"type":"invoke","f":"extend","thread":"watchdog"})", R"({"type":"ok","f":"extend"})"});
  EXPECT_EQ(g.report.problems().at(0), "client-3 line 2: ok of extend with no operation invoked");

  Fixture h;
  h.lines({R"({"type":"invoke","f":"read"})", R"({"type":"ok","f":"release","thread":2})"});
  EXPECT_EQ(h.report.problems().at(0), R"(client-3 line 2: ok of release on thread "2" with no operation invoked)");

  Fixture open;
  open.lines({R"({"type":"invoke","f":"extend","thread":"watchdog"})"});
  open.report.exited(1, exit_status(0), "");
  EXPECT_EQ(open.report.problems().at(0), R"(client-3 exited with extend on thread "watchdog" (line 1) still open)");
}

TEST(ExternalReport, AThreadOfTheWrongTypeOrOneTooManyIsNamed) {
  for (const auto& [line, why] : std::vector<std::pair<const char*, const char*>>{
           {R"({"type":"invoke","f":"extend","thread":-1})", R"(expected "thread" to be a non-empty string or a non-negative integer, found -1)"},
           {R"({"type":"invoke","f":"extend","thread":1.5})", R"(expected "thread" to be a non-empty string or a non-negative integer, found 1.5)"},
           {R"({"type":"invoke","f":"extend","thread":""})", R"(expected "thread" to be a non-empty string or a non-negative integer, found "")"},
           {R"({"type":"cs-enter","thread":["a"]})", R"(expected "thread" to be a non-empty string or a non-negative integer, found ["a"])"},
           {R"({"type":"invoke","f":"extend","thread":null})", R"(expected "thread" to be a non-empty string or a non-negative integer, found null)"}}) {
    Fixture f;
    f.report.line(1, line, false);
    ASSERT_EQ(f.report.problems().size(), 1u) << line;
    EXPECT_EQ(f.report.problems()[0], std::string("client-3 line 1: ") + why);
  }
  Fixture f;
  for (int i = 1; i < ClientReport::kThreadsMax; ++i) {
    const std::string t = std::to_string(i);
    f.report.line(1, R"({"type":"invoke","f":"extend","thread":)" + t + "}", false);
    f.report.line(1, R"({"type":"ok","f":"extend","thread":)" + t + "}", false);
  }
  EXPECT_TRUE(f.report.problems().empty()) << f.report.problems()[0];
  f.report.line(1, R"({"type":"invoke","f":"extend","thread":"one-more"})", false);
  EXPECT_EQ(f.report.problems().at(0), "client-3 line " + std::to_string(2 * ClientReport::kThreadsMax - 1) +
                                           R"(: a line on thread "one-more", one more than the 16 threads a client may name)");
}

// The subset of JSON Schema docs/external-client-line.schema.json uses: oneOf branches of
// objects with const / enum / type (one or a list) / minLength / minimum per property, or
// a $ref to one of its $defs, required and no other properties.
bool value_fits(const nlohmann::json& schema, const nlohmann::json& p, const nlohmann::json& v) {
  if (p.contains("$ref")) {
    const std::string ref = p["$ref"];
    return value_fits(schema, schema["$defs"][ref.substr(ref.rfind('/') + 1)], v);
  }
  if (p.contains("const") && v != p["const"]) return false;
  if (p.contains("enum") && std::find(p["enum"].begin(), p["enum"].end(), v) == p["enum"].end()) return false;
  if (p.contains("type")) {
    const auto types = p["type"].is_array() ? p["type"] : nlohmann::json::array({p["type"]});
    bool any = false;
    for (const auto& t : types) any = any || (t == "integer" && v.is_number_integer()) || (t == "string" && v.is_string());
    if (!any) return false;
  }
  if (p.contains("minLength") && v.is_string() && v.get<std::string>().size() < p["minLength"].get<size_t>()) return false;
  if (p.contains("minimum") && v.is_number() && v.get<double>() < p["minimum"].get<double>()) return false;
  return true;
}

bool schema_accepts(const nlohmann::json& schema, const nlohmann::json& branch, const nlohmann::json& line) {
  if (!line.is_object()) return false;
  const auto& props = branch["properties"];
  for (const auto& [key, v] : line.items()) {
    if (!props.contains(key)) return false;
    if (!value_fits(schema, props[key], v)) return false;
  }
  for (const auto& r : branch["required"]) {
    if (!line.contains(r.get<std::string>())) return false;
  }
  return true;
}

// The published schema and the reader agree on every shape of line: each kind of line,
// with each combination of the optional keys, well or badly typed.
TEST(ExternalReport, TheReaderAcceptsExactlyWhatTheSchemaDescribes) {
  std::ifstream in(std::string(LOCKSTEP_SOURCE_DIR) + "/docs/external-client-line.schema.json");
  const auto schema = nlohmann::json::parse(in);
  ASSERT_TRUE(schema.contains("oneOf"));
  int accepted = 0, lines = 0;
  for (const char* type : {"invoke", "ok", "fail", "info", "cs-enter", "cs-exit"}) {
    for (const char* f : {"", "acquire", "release", "extend", "read", "write", "lock"}) {
      // value, token, error: absent, right, wrong type; thread: absent, a name, a number,
      // an empty name, a negative number, a fraction.
      for (int extras = 0; extras < 27 * 6; ++extras) {
        nlohmann::json line = {{"type", type}};
        if (*f) line["f"] = f;
        const int value = extras % 3, token = extras / 3 % 3, error = extras / 9 % 3, thread = extras / 27;
        if (value) line["value"] = value == 1 ? nlohmann::json(4) : nlohmann::json("4");
        if (token) line["token"] = token == 1 ? nlohmann::json(7) : nlohmann::json(7.5);
        if (error) line["error"] = error == 1 ? nlohmann::json("timeout") : nlohmann::json(5);
        const nlohmann::json threads[] = {nullptr, "watchdog", 2, "", -1, 1.5};
        if (thread) line["thread"] = threads[thread];
        int matches = 0;
        for (const auto& branch : schema["oneOf"]) matches += schema_accepts(schema, branch, line);
        ASSERT_LE(matches, 1) << line.dump() << " fits two shapes of the schema";
        std::string why;
        const bool parsed = parse_client_line(line.dump(), why).has_value();
        EXPECT_EQ(parsed, matches == 1) << line.dump() << (parsed ? "" : ": " + why);
        accepted += parsed;
        ++lines;
      }
    }
  }
  EXPECT_GT(accepted, 20) << "of " << lines;
}

// Whatever a program writes, the reader answers with history or one problem, and the
// history never holds two open operations of the client.
RC_GTEST_PROP(ExternalReportProperty, ArbitraryLinesNeverCrashOrCorruptTheHistory, (const std::vector<std::string>& lines)) {
  Fixture f;
  for (const auto& l : lines) f.report.line(1, l, false);
  f.report.exited(1, exit_status(0), "");
  int open = 0;
  for (const auto& e : f.events()) {
    if (e.type == EventType::Truth) continue;
    open += e.type == EventType::Invoke ? 1 : -1;
    RC_ASSERT(open >= 0);
    RC_ASSERT(open <= 2);  // an operation, and a release left to the lease
  }
  for (const auto& p : f.report.problems()) RC_ASSERT(p.find('\n') == std::string::npos);
}

}  // namespace
}  // namespace lockstep::runner
