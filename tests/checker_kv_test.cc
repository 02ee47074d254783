// The kv model as Redis and Jepsen's kv workloads behave: appends concatenate, a key never
// written reads as "" (or as nil when asked), vector reads compare element by element,
// and explanations say which reading of a missing key was used.
#include <string>

#include <gtest/gtest.h>

#include "checker_builder.h"
#include "lockstep/checker/linearizability.h"

namespace lockstep::checker {
namespace {

using nlohmann::json;

LinResult check_kv(const Builder& b, KvMissing missing = KvMissing::Empty) {
  ModelOptions o;
  o.kv_missing = missing;
  return check_linearizable(b.history(), *make_model("kv", o), Limits{5.0, size_t{256} << 20});
}

// Redis APPEND and Jepsen's kv append: no separator between appended values.
TEST(CheckerKv, AppendsConcatenate) {
  Builder b;
  b.op(0, "append", "x 0 0 y", nullptr, "k").op(1, "append", "x 0 1 y", nullptr, "k");
  b.op(2, "get", nullptr, "x 0 0 yx 0 1 y", "k");
  EXPECT_EQ(check_kv(b).verdict, Verdict::Valid);
  Builder spaced;
  spaced.op(0, "append", "x 0 0 y", nullptr, "k").op(1, "append", "x 0 1 y", nullptr, "k");
  spaced.op(2, "get", nullptr, "x 0 0 y x 0 1 y", "k");
  LinResult r = check_kv(spaced);
  ASSERT_EQ(r.verdict, Verdict::Invalid);
  EXPECT_EQ(r.explanation_sentence,
            "process 2's get of key \"k\" returned \"x 0 0 y x 0 1 y\" (completed at t=0.060s) but the key held "
            "\"x 0 0 yx 0 1 y\" (set by process 1's append \"x 0 1 y\", completed at t=0.040s); a key never "
            "written reads as \"\" (--kv-missing empty)");
}

TEST(CheckerKv, ConcurrentAppendsMayLandInEitherOrderButKeysAreIndependent) {
  Builder b;
  b.invoke(1, "append", "x", "k").invoke(2, "append", "y", "k").ok(2, "append", "y", "k").ok(1, "append", "x", "k");
  b.op(1, "put", "z", nullptr, "j");
  b.op(3, "get", nullptr, "yx", "k").op(3, "get", nullptr, "z", "j");
  EXPECT_EQ(check_kv(b).verdict, Verdict::Valid);
  b.op(3, "get", nullptr, "xy", "k");
  LinResult r = check_kv(b);
  ASSERT_EQ(r.verdict, Verdict::Invalid);
  EXPECT_EQ(r.key, "k");
  EXPECT_EQ(r.explanation_sentence.find("process 3's get of key \"k\" returned \"xy\""), 0u) << r.explanation_sentence;
}

// A vector read lists the appended elements, so its boundaries matter: ["x" "y"] and
// ["xy"] concatenate alike but only one of them is what two appends leave.
TEST(CheckerKv, VectorReadsCompareElementByElement) {
  Builder b;
  b.op(1, "append", "x", nullptr, "k").op(2, "append", "y", nullptr, "k");
  b.op(3, "get", nullptr, json::array({"x", "y"}), "k").op(3, "get", nullptr, "xy", "k");
  b.op(1, "put", 7, nullptr, "j").op(3, "get", nullptr, json::array({7}), "j");
  EXPECT_EQ(check_kv(b).verdict, Verdict::Valid);
  b.op(3, "get", nullptr, json::array({"xy"}), "k");
  LinResult r = check_kv(b);
  ASSERT_EQ(r.verdict, Verdict::Invalid);
  EXPECT_EQ(r.explanation_sentence.find("process 3's get of key \"k\" returned [\"xy\"]"), 0u) << r.explanation_sentence;
}

// Jepsen's and Porcupine's kv histories record "" for a key never written; that is the
// default, and nil then means "" as well.
TEST(CheckerKv, MissingKeyReadsAsEmptyByDefault) {
  Builder b;
  b.op(1, "get", nullptr, "", "k").op(1, "get", nullptr, nullptr, "k").op(2, "append", "a", nullptr, "k");
  b.op(1, "get", nullptr, "a", "k");
  EXPECT_EQ(check_kv(b).verdict, Verdict::Valid);
  Builder stale;
  stale.op(2, "append", "a", nullptr, "k").op(1, "get", nullptr, "", "k");
  EXPECT_EQ(check_kv(stale).verdict, Verdict::Invalid);
  Builder phantom;
  phantom.op(1, "get", nullptr, "a", "k");
  LinResult r = check_kv(phantom);
  ASSERT_EQ(r.verdict, Verdict::Invalid);
  EXPECT_EQ(r.explanation_sentence,
            "process 1's get of key \"k\" returned \"a\" (completed at t=0.020s) but the key held \"\" (never "
            "written); a key never written reads as \"\" (--kv-missing empty)");
}

TEST(CheckerKv, MissingKeyReadsAsNilWhenAsked) {
  Builder b;
  b.op(1, "get", nullptr, nullptr, "k").op(2, "put", "", nullptr, "k").op(1, "get", nullptr, "", "k");
  EXPECT_EQ(check_kv(b, KvMissing::Nil).verdict, Verdict::Valid);
  Builder empty;
  empty.op(1, "get", nullptr, "", "k");
  LinResult r = check_kv(empty, KvMissing::Nil);
  ASSERT_EQ(r.verdict, Verdict::Invalid);
  EXPECT_EQ(r.explanation_sentence,
            "process 1's get of key \"k\" returned \"\" (completed at t=0.020s) but the key held nil (never "
            "written); a key never written reads as nil (--kv-missing nil)");
  Builder written;
  written.op(2, "put", "", nullptr, "k").op(1, "get", nullptr, nullptr, "k");
  EXPECT_EQ(check_kv(written, KvMissing::Nil).verdict, Verdict::Invalid);
}

TEST(CheckerKv, MissingChoiceIsNamedAndParsed) {
  KvMissing m = KvMissing::Empty;
  EXPECT_TRUE(parse_kv_missing("nil", m));
  EXPECT_EQ(m, KvMissing::Nil);
  EXPECT_TRUE(parse_kv_missing("empty", m));
  EXPECT_EQ(m, KvMissing::Empty);
  EXPECT_FALSE(parse_kv_missing("none", m));
  EXPECT_STREQ(to_string(KvMissing::Nil), "nil");
}

TEST(CheckerKv, MalformedOperationsAreErrors) {
  Builder b;
  b.op(1, "append", json::array({1}), nullptr, "k");
  EXPECT_NE(check_kv(b).error.find("kv: append needs a string or integer value"), std::string::npos);
  Builder g;
  g.op(1, "get", nullptr, json::object({{"a", 1}}), "k");
  EXPECT_NE(check_kv(g).error.find("kv: get must return a string, integer, nil or a vector"), std::string::npos);
  Builder f;
  f.op(1, "cas", nullptr, nullptr, "k");
  EXPECT_NE(check_kv(f).error.find("kv: unknown f \"cas\""), std::string::npos);
}

}  // namespace
}  // namespace lockstep::checker
