// How the keys of a history share the search: an easy invalid key is found while a hard
// one is still undecided, the key reported and its explanation do not depend on the
// number of threads, limits hold for all keys together, and a one-key history is searched
// on the calling thread.
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "checker_builder.h"
#include "lockstep/checker/linearizability.h"

namespace lockstep::checker {
namespace {

using nlohmann::json;

// A key no search can decide in reasonable time: many concurrent writes of unknown
// outcome, then a read no subset explains, so every subset and order is tried.
void hard_key(Builder& b, const std::string& key, int writes, int first_process) {
  for (int p = 0; p < writes; ++p) b.invoke(first_process + p, "write", p + 1, key);
  for (int p = 0; p < writes; ++p) b.info(first_process + p, "write", key);
  int reader = first_process + writes;
  b.op(reader, "read", nullptr, 1, key).op(reader, "read", nullptr, 2, key).op(reader, "read", nullptr, 999, key);
}

// A key shown invalid in a few steps: a read of a value that was never there. Its
// history grows with `size` so that keys differ in how long they take.
void easy_invalid_key(Builder& b, const std::string& key, int size, int process) {
  for (int i = 0; i < size; ++i) b.op(process, "write", i, nullptr, key).op(process, "read", nullptr, i, key);
  b.op(process, "read", nullptr, -1, key);
}

LinResult check(const Builder& b, unsigned threads, double time_limit_s = 60.0,
                size_t memory_bytes = size_t{512} << 20) {
  Limits limits{time_limit_s, memory_bytes, threads};
  return check_linearizable(b.history(), *make_model("cas-register"), limits);
}

TEST(CheckerPartitions, EasyInvalidKeyIsFoundBehindAHardOne) {
  Builder b;
  hard_key(b, "a", 40, 0);
  easy_invalid_key(b, "b", 3, 100);
  for (unsigned threads : {1u, 2u}) {
    LinResult r = check(b, threads);
    ASSERT_EQ(r.verdict, Verdict::Invalid) << threads << " " << r.unknown_reason;
    EXPECT_EQ(r.key, "b");
    EXPECT_EQ(r.explanation_sentence.find("process 100 read -1"), 0u) << r.explanation_sentence;
  }
}

// Every key here is invalid; the one reported is the one that fails first in the history
// (not the first a thread happened to finish, nor the first in key order), and everything
// said about it is the same for any count.
TEST(CheckerPartitions, EarliestFailureIsReportedWhateverTheThreads) {
  Builder b;
  for (int k = 7; k >= 0; --k) easy_invalid_key(b, "k" + std::to_string(k), 20 - 2 * k, k);
  LinResult one = check(b, 1);
  ASSERT_EQ(one.verdict, Verdict::Invalid);
  EXPECT_EQ(one.key, "k7");
  for (unsigned threads : {2u, 3u, 4u, 8u, 16u}) {
    LinResult r = check(b, threads);
    EXPECT_EQ(r.verdict, one.verdict) << threads;
    EXPECT_EQ(r.key, one.key) << threads;
    EXPECT_EQ(r.explanation_sentence, one.explanation_sentence) << threads;
    EXPECT_EQ(r.failed_event_index, one.failed_event_index) << threads;
    EXPECT_EQ(r.involved_indices, one.involved_indices) << threads;
    EXPECT_EQ(to_jsonl(History{r.partial_linearization}), to_jsonl(History{one.partial_linearization})) << threads;
    EXPECT_EQ(r.final_state, one.final_state) << threads;
  }
}

// Valid keys of different cost beside invalid ones that need more than one round: the
// reported key is the same whatever the threads.
TEST(CheckerPartitions, MixedKeysGiveTheSameAnswerForAnyThreadCount) {
  Builder b;
  for (int k = 0; k < 6; ++k) {
    std::string key = "v" + std::to_string(k);
    for (int i = 0; i < 300 * (k + 1); ++i) b.op(k, "write", i % 5, nullptr, key).op(k, "read", nullptr, i % 5, key);
  }
  hard_key(b, "a-hard", 40, 50);
  easy_invalid_key(b, "x-late", 2000, 200);
  easy_invalid_key(b, "y-late", 3000, 201);
  LinResult one = check(b, 1);
  ASSERT_EQ(one.verdict, Verdict::Invalid);
  for (unsigned threads : {2u, 4u, 7u}) {
    LinResult r = check(b, threads);
    EXPECT_EQ(r.key, one.key) << threads;
    EXPECT_EQ(r.explanation_sentence, one.explanation_sentence) << threads;
    EXPECT_EQ(r.involved_indices, one.involved_indices) << threads;
  }
}

TEST(CheckerPartitions, ValidKeysAreAllDecided) {
  Builder b;
  for (int k = 0; k < 5; ++k) {
    std::string key = "k" + std::to_string(k);
    for (int i = 0; i < 50; ++i) b.op(k, "write", i, nullptr, key).op(k, "read", nullptr, i, key);
  }
  for (unsigned threads : {1u, 3u}) {
    LinResult r = check(b, threads);
    EXPECT_EQ(r.verdict, Verdict::Valid);
    EXPECT_EQ(r.stats.keys, 5u);
  }
}

TEST(CheckerPartitions, MemoryLimitHoldsForAllKeysTogether) {
  Builder b;
  for (int k = 0; k < 4; ++k) hard_key(b, "h" + std::to_string(k), 40, 100 * k);
  size_t limit = size_t{2} << 20;
  LinResult r = check(b, 4, 60.0, limit);
  EXPECT_EQ(r.verdict, Verdict::Unknown);
  EXPECT_EQ(r.unknown_reason, "memory limit");
  EXPECT_LE(r.stats.peak_bytes, limit);
}

TEST(CheckerPartitions, TimeLimitEndsEveryKey) {
  Builder b;
  for (int k = 0; k < 3; ++k) hard_key(b, "h" + std::to_string(k), 40, 100 * k);
  LinResult r = check(b, 2, 0.2);
  EXPECT_EQ(r.verdict, Verdict::Unknown);
  EXPECT_EQ(r.unknown_reason, "time limit");
}

// A model that notes which threads step it, to see where the search ran.
class ThreadNotingModel final : public Model {
 public:
  ThreadNotingModel() : inner_(make_model("register")) {}
  const char* name() const override { return "register"; }
  State initial() const override { return inner_->initial(); }
  bool prepare(const Operation& op, Interner& values, Step& out, bool& drop, std::string& error) const override {
    return inner_->prepare(op, values, out, drop, error);
  }
  bool step(const State& s, const Step& op, State& next) const override {
    std::lock_guard<std::mutex> lock(mu_);
    threads_.insert(std::this_thread::get_id());
    return inner_->step(s, op, next);
  }
  std::string show(const State& s, const Interner& values) const override { return inner_->show(s, values); }
  std::set<std::thread::id> threads() const {
    std::lock_guard<std::mutex> lock(mu_);
    return threads_;
  }

 private:
  std::unique_ptr<Model> inner_;
  mutable std::mutex mu_;
  mutable std::set<std::thread::id> threads_;
};

// What the simulator's runner does after every run: one key, checked where it is asked.
TEST(CheckerPartitions, OneKeyIsSearchedOnTheCallingThread) {
  Builder b;
  for (int i = 0; i < 200; ++i) b.op(i % 3, "write", i, nullptr, "lock").op(3, "read", nullptr, i, "lock");
  ThreadNotingModel m;
  LinResult r = check_linearizable(b.history(), m, Limits{60.0, size_t{64} << 20, 8});
  EXPECT_EQ(r.verdict, Verdict::Valid);
  EXPECT_EQ(m.threads(), std::set<std::thread::id>{std::this_thread::get_id()});
}

}  // namespace
}  // namespace lockstep::checker
