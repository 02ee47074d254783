// Reading histories: Jepsen EDN in every layout, Jepsen log lines, lockstep JSON lines,
// format detection, and errors that name the file, line and column.
#include <string>

#include <gtest/gtest.h>

#include "lockstep/checker/history_io.h"
#include "lockstep/checker/linearizability.h"

namespace lockstep::checker {
namespace {

using nlohmann::json;

const std::string kData = std::string(LOCKSTEP_SOURCE_DIR) + "/tests/data/histories/";

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

// The shape of Knossos' own test histories: one list, comments between operations.
TEST(CheckerFormat, EdnHistoryAsOneListWithComments) {
  History h = parse("({:type :invoke, :f :write, :value 0, :process 0}\n"
                    " {:type :ok, :f :write, :value 0, :process 0}\n"
                    " ; Value is 0, then we concurrently write 4, read 3.\n"
                    " {:type :invoke, :f :read, :value nil, :process 1}\n"
                    " #_{:type :invoke, :f :write, :value 9, :process 9}\n"
                    " {:type :ok, :f :read, :value 3, :process 1}\n"
                    ")\n");
  ASSERT_EQ(h.events.size(), 4u);
  EXPECT_EQ(h.events[3].type, EventType::Ok);
  EXPECT_EQ(h.events[3].value, json(3));
  EXPECT_EQ(detect_format("; a history\n(\n{:type :invoke"), Format::Edn);
}

// Hand-trimmed Jepsen histories: maps broken over lines, commas optional, records tagged.
TEST(CheckerFormat, EdnMapsOverSeveralLines) {
  History h = parse("{:process 0,\n :type :invoke,\n :f :append,\n :key \"k\",\n :value \"x 0 0 y\"}\n"
                    "{:process 0 :type :ok\n :f :append :key \"k\" :value \"x 0 0 y\" :time 5}\n"
                    "#jepsen.history.Op{:index 2, :time 7, :type :invoke, :process 1, :f :get, :key \"k\", :value nil}\n");
  ASSERT_EQ(h.events.size(), 3u);
  EXPECT_EQ(h.events[0].f, "append");
  EXPECT_EQ(h.events[0].key, "k");
  EXPECT_EQ(h.events[1].time_ns, 5);
  EXPECT_EQ(h.events[2].process, 1);
  EXPECT_EQ(h.events[2].extra["index"], json(2));
  EXPECT_EQ(detect_format("{\n  :process 0"), Format::Edn);
  EXPECT_EQ(detect_format("#jepsen.history.Op{:index 0}"), Format::Edn);
}

TEST(CheckerFormat, JepsenLogLinesSeparatedBySpaces) {
  History h = parse(
      "INFO  jepsen.util - 1   :invoke :write  3\n"
      "INFO  jepsen.util - 1   :ok     :write  3\n"
      "INFO [jepsen worker 2] jepsen.util - 2 :invoke :cas [1 2]\n"
      "INFO  jepsen.util - 2 \t :info :cas   [1 2]   :timed-out\n"
      "INFO  jepsen.util - 3 :fail :cas [4 5] indeterminate: Connection refused\n"
      "INFO  jepsen.util - 4 :invoke :read\n"
      "INFO  jepsen.util - Relative time begins now\n");
  ASSERT_EQ(h.events.size(), 6u);
  EXPECT_EQ(h.events[0].process, 1);
  EXPECT_EQ(h.events[0].f, "write");
  EXPECT_EQ(h.events[0].value, json(3));
  EXPECT_EQ(h.events[1].type, EventType::Ok);
  EXPECT_EQ(h.events[2].value, json::array({1, 2}));
  EXPECT_EQ(h.events[3].type, EventType::Info);
  EXPECT_EQ(h.events[3].value, json::array({1, 2}));
  EXPECT_EQ(h.events[3].extra["error"], json("timed-out"));
  EXPECT_EQ(h.events[4].extra["error"], json("indeterminate: Connection refused"));
  EXPECT_TRUE(h.events[5].value.is_null());
  EXPECT_EQ(detect_format("[main] INFO jepsen.util - 1 :invoke :read nil"), Format::JepsenLog);
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

TEST(CheckerFormat, MalformedInputNamesFileLineAndColumn) {
  EXPECT_EQ(parse_error("{:process 0, :type :invoke, :f :read}\n\n{:process 0, :type :ok, :f :read, :value [3}\n"),
            "h.txt:3:44: unexpected '}', expected ']' to close the vector opened at 3:42");
  EXPECT_EQ(parse_error("{:process 0, :type :begin, :f :read}"),
            "h.txt:1:1: :type must be one of :invoke, :ok, :fail, :info (got \"begin\")");
  EXPECT_EQ(parse_error("{:process 0 :type :ok :f :read}\n  {:process \"a\", :type :ok, :f :read}"),
            "h.txt:2:3: :process must be an integer or :nemesis (got \"a\")");
  EXPECT_EQ(parse_error("{:process 0,\n :type :invoke}"), "h.txt:1:1: :f must be a keyword or string");
  EXPECT_EQ(parse_error("[{:process 0, :type :invoke, :f :read}\n"), "h.txt:2:1: the history's '[' (at 1:1) is never closed");
  EXPECT_EQ(parse_error("[{:process 0, :type :invoke, :f :read}] {:process 1}"),
            "h.txt:1:41: text after the history's closing ']'");
  EXPECT_EQ(parse_error("({:process 0, :type :invoke, :f :read} [1 2])"),
            "h.txt:1:40: expected an operation map {:process …, :type …, :f …}, got array");
  EXPECT_EQ(parse_error("{\"type\":\"invoke\",\"process\":1,\"f\":\"acquire\"}\n{\"type\":\"ok\",\"f\":"),
            "h.txt:2:18: not valid JSON: syntax error while parsing value - unexpected end of input; expected '[', "
            "'{', or a literal");
  EXPECT_EQ(parse_error("{\"type\":\"done\"}"), "h.txt:1:1: \"type\" must be one of invoke, ok, fail, info, truth");
  // Nested past the bound: an error, not a stack overflow when the value is written out.
  std::string deep = "{\"type\":\"invoke\",\"f\":\"w\",\"value\":\"[\",\"x\":";
  EXPECT_EQ(parse_error(deep + std::string(200000, '[') + std::string(200000, ']') + "}"),
            "h.txt:1:" + std::to_string(deep.size() + 64) + ": nesting deeper than 64");
  EXPECT_EQ(parse_error("INFO  jepsen.util - 1 :go :read"),
            "h.txt:1:23: :type must be one of :invoke, :ok, :fail, :info (got \"go\")");
  EXPECT_EQ(parse_error("x\nINFO  jepsen.util - 1  :invoke  :read  [1 2"),
            "h.txt:2:44: unterminated vector (opened at 2:40), expected ']'");
  EXPECT_EQ(parse_error("INFO  jepsen.util - 1 :invoke"), "h.txt:1:30: the line ends before its f (the operation, e.g. :read)");
  EXPECT_EQ(parse_error("INFO  jepsen.util - 1 :invoke [1]"), "h.txt:1:31: f must be a keyword, got [1]");
  EXPECT_EQ(parse_error("hello\nworld\n"),
            "h.txt:1:1: no Jepsen operation lines (\"jepsen.util - <process> :<type> :<f> <value>\") found");
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
  EXPECT_EQ(error, kData + "malformed.edn:3:47: unexpected '}', expected ']' to close the vector opened at 3:43");
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
  // The kinds written in one piece: plain strings, integers at both ends, booleans, null.
  add(EventType::Ok, "acquire", "lock:stock", "3f2c9a1e-0000-4000-8000-123456789abc", 0, nullptr);
  add(EventType::Ok, "", "", INT64_MIN, INT64_MAX, json{{"owner", "plain"}});
  add(EventType::Ok, "extend", "k", INT64_MAX, -1, nullptr);
  add(EventType::Info, "a", "b", true, -1, nullptr);
  add(EventType::Fail, "a", "b", false, 3, nullptr);
  add(EventType::Truth, "finish", "", nullptr, -1, json::object());
  add(EventType::Ok, "read", "k", json(uint64_t{18446744073709551615ULL}), -1, nullptr);
  add(EventType::Ok, "read", "\x7f", "x", -1, nullptr);
  h.events.back().process = INT64_MIN;
  h.events.back().thread = INT64_MAX;
  h.events.back().time_ns = INT64_MIN;
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
      {"kv-append.edn", "kv", Verdict::Valid},
      {"kv-multiline.edn", "kv", Verdict::Valid},
      {"kv-two-bad-keys.edn", "kv", Verdict::Invalid},
      {"cas-register-spaces.log", "cas-register", Verdict::Invalid},
      {"knossos-list.edn", "cas-register", Verdict::Invalid},
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
