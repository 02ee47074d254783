// Reading histories: the EDN subset, Jepsen EDN and log lines, lockstep JSON lines, format
// detection, and errors that name the file and line.
#include <string>

#include <gtest/gtest.h>

#include "lockstep/checker/edn.h"
#include "lockstep/checker/history_io.h"
#include "lockstep/checker/linearizability.h"

namespace lockstep::checker {
namespace {

using nlohmann::json;

const std::string kData = std::string(LOCKSTEP_SOURCE_DIR) + "/tests/data/histories/";

json edn(const std::string& text) {
  json out;
  std::string error;
  EXPECT_TRUE(parse_edn(text, out, error)) << text << ": " << error;
  return out;
}

std::string edn_error(const std::string& text) {
  json out;
  std::string error;
  EXPECT_FALSE(parse_edn(text, out, error)) << text;
  return error;
}

TEST(CheckerEdn, ReadsTheSubset) {
  EXPECT_EQ(edn("nil"), json());
  EXPECT_EQ(edn(" true "), json(true));
  EXPECT_EQ(edn("-42"), json(-42));
  EXPECT_EQ(edn(":timed-out"), json("timed-out"));
  EXPECT_EQ(edn("\"a \\\"b\\\"\\n\""), json("a \"b\"\n"));
  EXPECT_EQ(edn("[3 0]"), json::array({3, 0}));
  EXPECT_EQ(edn("(1, nil, :x)"), json::array({1, nullptr, "x"}));
  EXPECT_EQ(edn("{:a [1 [2]], \"b\" {:c false}} ; comment"), json::parse(R"({"a":[1,[2]],"b":{"c":false}})"));
}

TEST(CheckerEdn, ErrorsSayWhere) {
  EXPECT_EQ(edn_error("[1 2"), "column 5: unterminated sequence, expected ']'");
  EXPECT_EQ(edn_error("{:a}"), "column 4: map has a key without a value");
  EXPECT_EQ(edn_error("\"abc"), "column 5: unterminated string");
  EXPECT_EQ(edn_error("#{1}"), "column 1: sets and tagged values (#...) are not supported");
  EXPECT_EQ(edn_error("1 2"), "column 3: unexpected text after the value");
  EXPECT_EQ(edn_error("foo"), "column 1: unsupported symbol 'foo' (expected nil, true, false)");
  EXPECT_EQ(edn_error(std::string(100, '[')), "column 66: nesting deeper than 64");
}

History parse(const std::string& text, Format fmt = Format::Auto) {
  History h;
  std::string error;
  EXPECT_TRUE(parse_history_text(text, "h", fmt, h, error)) << error;
  return h;
}

std::string parse_error(const std::string& text, Format fmt = Format::Auto) {
  History h;
  std::string error;
  EXPECT_FALSE(parse_history_text(text, "h.txt", fmt, h, error)) << text;
  return error;
}

TEST(CheckerFormat, JepsenEdnLines) {
  History h = parse(
      "{:process 0, :type :invoke, :f :append, :key \"0\", :value \"x 0 0 y\", :time 12, :index 3}\n"
      "{:process :nemesis, :type :info, :f :start}\n"
      "\n"
      "{:process 0, :type :info, :f :append, :key 7, :value [3 0], :error :timed-out}\n");
  ASSERT_EQ(h.events.size(), 2u);
  EXPECT_EQ(h.events[0].type, EventType::Invoke);
  EXPECT_EQ(h.events[0].process, 0);
  EXPECT_EQ(h.events[0].f, "append");
  EXPECT_EQ(h.events[0].key, "0");
  EXPECT_EQ(h.events[0].value, json("x 0 0 y"));
  EXPECT_EQ(h.events[0].time_ns, 12);
  EXPECT_EQ(h.events[0].extra["index"], json(3));
  EXPECT_EQ(h.events[1].type, EventType::Info);
  EXPECT_EQ(h.events[1].key, "7");
  EXPECT_EQ(h.events[1].value, json::array({3, 0}));
  EXPECT_EQ(h.events[1].extra["error"], json("timed-out"));
}

TEST(CheckerFormat, EdnHistoryAsOneVector) {
  History h = parse("[{:process 0, :type :invoke, :f :read, :value nil}\n"
                    " {:process 0, :type :ok, :f :read, :value [1 2]}]\n");
  ASSERT_EQ(h.events.size(), 2u);
  EXPECT_EQ(h.events[1].value, json::array({1, 2}));
  EXPECT_EQ(detect_format("[{:process 0}"), Format::Edn);
}

TEST(CheckerFormat, JepsenLogLines) {
  History h = parse(
      "2017-03-23 13:54:33,079{GMT}\tINFO\t[main] jepsen.core - Running test\n"
      "INFO  jepsen.util - 1\t:invoke\t:cas\t[3 0]\n"
      "INFO  jepsen.util - :nemesis\t:info\t:start\tnil\n"
      "INFO  jepsen.util - 1\t:info\t:cas\t[3 0]\t:timed-out\n"
      "INFO  jepsen.util - 2\t:ok\t:read\tnil\n");
  ASSERT_EQ(h.events.size(), 3u);
  EXPECT_EQ(h.events[0].process, 1);
  EXPECT_EQ(h.events[0].f, "cas");
  EXPECT_EQ(h.events[0].value, json::array({3, 0}));
  EXPECT_EQ(h.events[1].type, EventType::Info);
  EXPECT_EQ(h.events[1].extra["error"], json("timed-out"));
  EXPECT_EQ(h.events[2].type, EventType::Ok);
  EXPECT_TRUE(h.events[2].value.is_null());
}

TEST(CheckerFormat, DetectsEachFormat) {
  EXPECT_EQ(detect_format("\n  {\"type\":\"invoke\"}"), Format::Json);
  EXPECT_EQ(detect_format("{:process 0}"), Format::Edn);
  EXPECT_EQ(detect_format("INFO  jepsen.util - 1\t:invoke\t:read\tnil"), Format::JepsenLog);
  Format f;
  EXPECT_TRUE(parse_format("jepsen-log", f));
  EXPECT_EQ(f, Format::JepsenLog);
  EXPECT_FALSE(parse_format("xml", f));
}

TEST(CheckerFormat, MalformedLinesNameFileAndLine) {
  EXPECT_EQ(parse_error("{:process 0, :type :invoke, :f :read}\n\n{:process 0, :type :ok, :f :read, :value [3}\n"),
            "h.txt:3: column 44: unexpected character '}'");
  EXPECT_EQ(parse_error("{:process 0, :type :begin, :f :read}"),
            "h.txt:1: :type must be one of :invoke, :ok, :fail, :info (got \"begin\")");
  EXPECT_EQ(parse_error("{:process \"a\", :type :ok, :f :read}"),
            "h.txt:1: :process must be an integer or :nemesis (got \"a\")");
  EXPECT_EQ(parse_error("{\"type\":\"invoke\",\"process\":1,\"f\":\"acquire\"}\n{\"type\":\"ok\",\"f\":"),
            "h.txt:2: not valid JSON");
  EXPECT_EQ(parse_error("INFO  jepsen.util - x y\t:invoke\t:read"),
            "h.txt:1: process: column 1: unsupported symbol 'x' (expected nil, true, false)");
  EXPECT_EQ(parse_error("INFO  jepsen.util - 1\t:go\t:read"),
            "h.txt:1: :type must be one of :invoke, :ok, :fail, :info (got \"go\")");
  EXPECT_EQ(parse_error("hello\nworld\n"),
            "h.txt:1: no Jepsen operation lines (\"jepsen.util - <process>\\t:<type>\\t...\") found");
}

TEST(CheckerFormat, ReadsFixtureFiles) {
  History h;
  std::string error;
  ASSERT_TRUE(read_history(kData + "cas-register-valid.edn", Format::Auto, h, error)) << error;
  EXPECT_EQ(h.events.size(), 10u);
  ASSERT_TRUE(read_history(kData + "cas-register-valid.log", Format::Auto, h, error)) << error;
  EXPECT_EQ(h.events.size(), 12u);
  ASSERT_TRUE(read_history(kData + "mutex-valid.jsonl", Format::Json, h, error)) << error;
  EXPECT_EQ(h.events.size(), 8u);
  EXPECT_FALSE(read_history(kData + "malformed.edn", Format::Auto, h, error));
  EXPECT_EQ(error, kData + "malformed.edn:3: column 47: unexpected character '}'");
  EXPECT_FALSE(read_history(kData + "does-not-exist", Format::Auto, h, error));
  EXPECT_EQ(error, kData + "does-not-exist: cannot open file");
}

TEST(CheckerFormat, JsonLinesRoundTrip) {
  History h;
  std::string error;
  ASSERT_TRUE(read_history(kData + "mutex-two-owners.jsonl", Format::Auto, h, error)) << error;
  History again = parse(to_jsonl(h), Format::Json);
  EXPECT_EQ(to_jsonl(again), to_jsonl(h));
}

// to_jsonl writes events directly; its bytes must stay those of to_json(e).dump().
TEST(CheckerFormat, JsonLinesAreExactlyTheEventObjects) {
  History h;
  auto add = [&](EventType t, std::string f, std::string key, json value, int64_t node, json extra) {
    Event e;
    e.type = t;
    e.process = static_cast<int64_t>(h.events.size()) - 2;
    e.thread = 3;
    e.f = std::move(f);
    e.key = std::move(key);
    e.value = std::move(value);
    e.time_ns = -12345678901234;
    e.node = node;
    e.extra = std::move(extra);
    h.events.push_back(std::move(e));
  };
  add(EventType::Invoke, "acquire", "lock", nullptr, -1, nullptr);
  add(EventType::Ok, "write", "stock", json{{"value", 9}, {"token", 4}}, -1, nullptr);
  add(EventType::Truth, "key-del", "lock", "a\"b\\c\n\x01\x7f é", 2, json{{"owner", 7}, {"zeta", {1.5, "x"}}});
  add(EventType::Info, "quo\"te", "tab\tkey", 0.1, 0, json::object());
  add(EventType::Truth, "fault-start", "", json{{"kind", "pause"}}, 1, json{{"node", 5}, {"type", "override"}});
  add(EventType::Fail, "read", "k", json::array(), -1, json{{"node", 9}});
  std::string want;
  for (const auto& e : h.events) want += to_json(e).dump() + "\n";
  EXPECT_EQ(to_jsonl(h), want);
}

TEST(CheckerFormat, FixtureVerdicts) {
  struct Case {
    const char* file;
    const char* model;
    Verdict verdict;
  };
  const Case cases[] = {
      {"cas-register-valid.edn", "cas-register", Verdict::Valid},
      {"cas-register-invalid.edn", "cas-register", Verdict::Invalid},
      {"cas-register-valid.log", "cas-register", Verdict::Valid},
      {"cas-register-invalid.log", "cas-register", Verdict::Invalid},
      {"list-append.edn", "kv", Verdict::Valid},
      {"mutex-valid.jsonl", "mutex", Verdict::Valid},
      {"mutex-two-owners.jsonl", "mutex", Verdict::Invalid},
  };
  for (const Case& c : cases) {
    History h;
    std::string error;
    ASSERT_TRUE(read_history(kData + c.file, Format::Auto, h, error)) << error;
    LinResult r = check_linearizable(h, *make_model(c.model), Limits{});
    EXPECT_EQ(r.verdict, c.verdict) << c.file << " " << r.error;
  }
}

}  // namespace
}  // namespace lockstep::checker
