// The EDN reader: every form Jepsen and Knossos histories use, and errors that say line,
// column and why.
#include <string>

#include <gtest/gtest.h>

#include "lockstep/checker/edn.h"

namespace lockstep::checker {
namespace {

using nlohmann::json;

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

TEST(CheckerEdn, ReadsScalars) {
  EXPECT_EQ(edn("nil"), json());
  EXPECT_EQ(edn(" true "), json(true));
  EXPECT_EQ(edn("false"), json(false));
  EXPECT_EQ(edn("-42"), json(-42));
  EXPECT_EQ(edn("+7"), json(7));
  EXPECT_EQ(edn("42N"), json(42));
  EXPECT_EQ(edn("1.5"), json(1.5));
  EXPECT_EQ(edn("2.5M"), json(2.5));
  EXPECT_EQ(edn("1e-3"), json(0.001));
  EXPECT_EQ(edn("99999999999999999999"), json(1e20));
  EXPECT_EQ(edn("1/3"), json("1/3"));
  EXPECT_EQ(edn(":timed-out"), json("timed-out"));
  EXPECT_EQ(edn(":jepsen.history/op"), json("jepsen.history/op"));
  EXPECT_EQ(edn("jepsen.core/run!"), json("jepsen.core/run!"));
  EXPECT_EQ(edn("##Inf"), json("##Inf"));
}

TEST(CheckerEdn, ReadsStringsAndCharacters) {
  EXPECT_EQ(edn(R"("a \"b\"\n\t\\")"), json("a \"b\"\n\t\\"));
  EXPECT_EQ(edn(R"("\u00e9\ud83d\ude00")"), json("\xc3\xa9\xf0\x9f\x98\x80"));
  EXPECT_EQ(edn("\"caf\xc3\xa9\""), json("caf\xc3\xa9"));
  EXPECT_EQ(edn("\"two\nlines\""), json("two\nlines"));
  EXPECT_EQ(edn(R"(\a)"), json("a"));
  EXPECT_EQ(edn(R"(\newline)"), json("\n"));
  EXPECT_EQ(edn(R"(\space)"), json(" "));
  EXPECT_EQ(edn(R"(\u0041)"), json("A"));
  EXPECT_EQ(edn(R"([\( \] \,])"), json::array({"(", "]", ","}));
}

TEST(CheckerEdn, ReadsCollections) {
  EXPECT_EQ(edn("[3 0]"), json::array({3, 0}));
  EXPECT_EQ(edn("(1, nil, :x)"), json::array({1, nullptr, "x"}));
  EXPECT_EQ(edn("#{2 1}"), json::array({2, 1}));
  EXPECT_EQ(edn("{:a [1 [2]], \"b\" {:c false}} ; comment"), json::parse(R"({"a":[1,[2]],"b":{"c":false}})"));
  EXPECT_EQ(edn("{1 :one, [2] :two}"), json::parse(R"({"1":"one","[2]":"two"})"));
  EXPECT_EQ(edn("{\n :a 1 ; why\n\n :b\n 2}"), json::parse(R"({"a":1,"b":2})"));
}

TEST(CheckerEdn, TagsAreDroppedAndDiscardsSkipped) {
  EXPECT_EQ(edn("#inst \"2024-05-01T10:00:00.000-00:00\""), json("2024-05-01T10:00:00.000-00:00"));
  EXPECT_EQ(edn("#uuid \"f81d4fae-7dec-11d0-a765-00a0c91e6bf6\""), json("f81d4fae-7dec-11d0-a765-00a0c91e6bf6"));
  EXPECT_EQ(edn("#jepsen.history.Op{:index 0, :f :read}"), json::parse(R"({"index":0,"f":"read"})"));
  EXPECT_EQ(edn("[1 #_2 3 #_ #_ 4 5 6]"), json::array({1, 3, 6}));
  EXPECT_EQ(edn("{:a 1 #_:b #_2}"), json::parse(R"({"a":1})"));
  EXPECT_EQ(edn("#_ [unfinished business] 7"), json(7));
}

TEST(CheckerEdn, ErrorsSayLineColumnAndWhy) {
  EXPECT_EQ(edn_error("[1 2"), "1:5: unterminated vector (opened at 1:1), expected ']'");
  EXPECT_EQ(edn_error("{:a}"), "1:2: map key \"a\" has no value");
  EXPECT_EQ(edn_error("\"abc"), "1:5: unterminated string (opened at 1:1)");
  EXPECT_EQ(edn_error("1 2"), "1:3: unexpected text after the value");
  EXPECT_EQ(edn_error("[1\n  (2}]"), "2:5: unexpected '}', expected ')' to close the list opened at 2:3");
  EXPECT_EQ(edn_error("\n\n   ]"), "3:4: unexpected ']' with nothing open to close");
  EXPECT_EQ(edn_error("\"\\q\""), "1:2: unknown string escape '\\q'");
  EXPECT_EQ(edn_error("\"\\u12\""), "1:2: \\u must be followed by four hex digits");
  EXPECT_EQ(edn_error("\"\\ud800\""), "1:2: \\u escape is a lone surrogate");
  EXPECT_EQ(edn_error("\"\xff\""), "1:1: string is not valid UTF-8");
  EXPECT_EQ(edn_error("#"), "1:1: unexpected character after '#'");
  EXPECT_EQ(edn_error("#inst"), "1:1: tag #inst has no value");
  EXPECT_EQ(edn_error("[#_]"), "1:4: unexpected ']' with nothing open to close");
  EXPECT_EQ(edn_error("#_"), "1:3: #_ has no form to discard");
  EXPECT_EQ(edn_error("@x"), "1:1: unexpected character '@'");
  EXPECT_EQ(edn_error("1.2.3"), "1:1: malformed number '1.2.3'");
  EXPECT_EQ(edn_error(""), "1:1: unexpected end of input, expected a value");
}

// Hostile nesting ends in an error, never in a stack overflow: collections, tags and
// discards all count.
TEST(CheckerEdn, NestingIsBounded) {
  EXPECT_EQ(edn_error(std::string(100000, '[')), "1:66: nesting deeper than 64");
  std::string tags;
  for (int i = 0; i < 100000; ++i) tags += "#t ";
  EXPECT_NE(edn_error(tags + "1").find("nesting deeper than 64"), std::string::npos);
  std::string discards;
  for (int i = 0; i < 100000; ++i) discards += "[#_";
  EXPECT_NE(edn_error(discards).find("nesting deeper than 64"), std::string::npos);
  std::string flat;
  for (int i = 0; i < 100000; ++i) flat += "#_ ";
  EXPECT_EQ(edn_error(flat + "1"), "1:300002: #_ has no form to discard");
}

TEST(CheckerEdn, ReaderWalksTopLevelForms) {
  EdnReader r(" ; a comment\n{:a 1}\n,\n{:b 2} ");
  std::string error;
  json a, b;
  ASSERT_TRUE(r.read(a, error)) << error;
  ASSERT_TRUE(r.read(b, error)) << error;
  ASSERT_TRUE(r.skip(error));
  EXPECT_TRUE(r.at_end());
  EXPECT_EQ(b, json::parse(R"({"b":2})"));
  EXPECT_EQ(r.where(13), "2:1");
}

}  // namespace
}  // namespace lockstep::checker
