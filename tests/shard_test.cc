// `--shard`: I/N as given, or auto from a Kubernetes Indexed Job or a Slurm job array, with
// every missing or contradictory piece named.
#include "lockstep/runner/shard.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace lockstep::runner {
namespace {

struct Resolved {
  std::string error;
  Shard shard;
};

Resolved resolve(const std::string& spec, std::map<std::string, std::string> env, std::optional<int> count = {}) {
  Resolved r;
  r.error = resolve_shard(spec, count, [&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  }, r.shard);
  return r;
}

TEST(Shard, GivenAsIndexOfCount) {
  auto r = resolve("2/3", {});
  EXPECT_EQ(r.error, "");
  EXPECT_EQ(r.shard.index, 2);
  EXPECT_EQ(r.shard.count, 3);
  EXPECT_EQ(resolve("3/3", {}).error, "--shard 3/3: shard index 3 is not below the count 3");
  EXPECT_EQ(resolve("0/0", {}).error, "--shard 0/0: the shard count must be at least 1");
  EXPECT_EQ(resolve("1-3", {}).error, "--shard must be I/N (shard I of N, from 0) or auto, found \"1-3\"");
  EXPECT_EQ(resolve("-1/3", {}).error, "--shard must be I/N (shard I of N, from 0) or auto, found \"-1/3\"");
  EXPECT_EQ(resolve("0/2", {}, 2).error, "--shard-count goes with --shard auto; --shard I/N already gives the count");
}

TEST(Shard, AutoFromAKubernetesIndexedJob) {
  auto r = resolve("auto", {{"JOB_COMPLETION_INDEX", "1"}, {"LOCKSTEP_SHARD_COUNT", "3"}});
  EXPECT_EQ(r.error, "");
  EXPECT_EQ(r.shard.index, 1);
  EXPECT_EQ(r.shard.count, 3);
  // The flag wins over the variable.
  EXPECT_EQ(resolve("auto", {{"JOB_COMPLETION_INDEX", "4"}, {"LOCKSTEP_SHARD_COUNT", "3"}}, 5).shard.count, 5);
  EXPECT_EQ(resolve("auto", {{"JOB_COMPLETION_INDEX", "1"}}).error,
            "--shard auto: JOB_COMPLETION_INDEX is set but not the count: give --shard-count or LOCKSTEP_SHARD_COUNT "
            "(the Job's completions)");
  EXPECT_EQ(resolve("auto", {{"JOB_COMPLETION_INDEX", "3"}, {"LOCKSTEP_SHARD_COUNT", "3"}}).error,
            "--shard auto (JOB_COMPLETION_INDEX): shard index 3 is not below the count 3");
  EXPECT_EQ(resolve("auto", {{"JOB_COMPLETION_INDEX", "x"}, {"LOCKSTEP_SHARD_COUNT", "3"}}).error,
            "--shard auto: JOB_COMPLETION_INDEX is \"x\", not a non-negative integer");
}

TEST(Shard, AutoFromASlurmArrayNumberedFromItsFirstTask) {
  auto r = resolve("auto", {{"SLURM_ARRAY_TASK_ID", "3"}, {"SLURM_ARRAY_TASK_MIN", "1"}, {"SLURM_ARRAY_TASK_COUNT", "3"}});
  EXPECT_EQ(r.error, "");
  EXPECT_EQ(r.shard.index, 2);
  EXPECT_EQ(r.shard.count, 3);
  EXPECT_EQ(resolve("auto", {{"SLURM_ARRAY_TASK_ID", "0"}, {"SLURM_ARRAY_TASK_COUNT", "2"}}).shard.count, 2);
  EXPECT_EQ(resolve("auto", {{"SLURM_ARRAY_TASK_ID", "0"}}).error, "--shard auto: SLURM_ARRAY_TASK_COUNT is not set");
  EXPECT_EQ(resolve("auto", {}).error,
            "--shard auto: neither JOB_COMPLETION_INDEX (a Kubernetes Indexed Job) nor SLURM_ARRAY_TASK_ID (a Slurm job "
            "array) is set; give --shard I/N");
}

}  // namespace
}  // namespace lockstep::runner
