#include "lockstep/runner/shard.h"

#include <charconv>
#include <cstring>

namespace lockstep::runner {
namespace {

// A decimal without sign or junk, small enough to be a shard number.
std::optional<int> number(const char* text) {
  if (!text || !*text) return std::nullopt;
  int v = 0;
  const char* end = text + std::strlen(text);
  auto [p, ec] = std::from_chars(text, end, v);
  if (ec != std::errc() || p != end || v < 0) return std::nullopt;
  return v;
}

std::string checked(int index, int count, const std::string& source, Shard& out) {
  if (count < 1) return source + ": the shard count must be at least 1";
  if (index >= count)
    return source + ": shard index " + std::to_string(index) + " is not below the count " + std::to_string(count);
  out = {index, count};
  return "";
}

std::string from_env(const char* name, const EnvLookup& env, int& value) {
  const char* text = env(name);
  auto v = number(text);
  if (!v) return std::string(name) + (text ? " is \"" + std::string(text) + "\", not a non-negative integer" : " is not set");
  value = *v;
  return "";
}

}  // namespace

std::string resolve_shard(const std::string& spec, std::optional<int> count_flag, const EnvLookup& env, Shard& out) {
  if (spec != "auto") {
    if (count_flag) return "--shard-count goes with --shard auto; --shard I/N already gives the count";
    const auto slash = spec.find('/');
    auto index = number(spec.substr(0, slash).c_str());
    auto count = slash == std::string::npos ? std::nullopt : number(spec.substr(slash + 1).c_str());
    if (!index || !count) return "--shard must be I/N (shard I of N, from 0) or auto, found \"" + spec + "\"";
    return checked(*index, *count, "--shard " + spec, out);
  }
  int index = 0, count = 0;
  std::string why;
  if (env("JOB_COMPLETION_INDEX")) {
    // A Kubernetes Indexed Job tells each pod its index, not the completion count.
    if (!(why = from_env("JOB_COMPLETION_INDEX", env, index)).empty()) return "--shard auto: " + why;
    if (count_flag) {
      count = *count_flag;
    } else if (env("LOCKSTEP_SHARD_COUNT")) {
      if (!(why = from_env("LOCKSTEP_SHARD_COUNT", env, count)).empty()) return "--shard auto: " + why;
    } else {
      return "--shard auto: JOB_COMPLETION_INDEX is set but not the count: give --shard-count or LOCKSTEP_SHARD_COUNT "
             "(the Job's completions)";
    }
    return checked(index, count, "--shard auto (JOB_COMPLETION_INDEX)", out);
  }
  if (env("SLURM_ARRAY_TASK_ID")) {
    if (!(why = from_env("SLURM_ARRAY_TASK_ID", env, index)).empty()) return "--shard auto: " + why;
    // An array may be numbered from 1 (--array=1-8): shards count from its first task.
    int first = 0;
    if (env("SLURM_ARRAY_TASK_MIN") && !(why = from_env("SLURM_ARRAY_TASK_MIN", env, first)).empty())
      return "--shard auto: " + why;
    if (count_flag) {
      count = *count_flag;
    } else if (!(why = from_env("SLURM_ARRAY_TASK_COUNT", env, count)).empty()) {
      return "--shard auto: " + why;
    }
    if (index < first) return "--shard auto: SLURM_ARRAY_TASK_ID is below SLURM_ARRAY_TASK_MIN";
    return checked(index - first, count, "--shard auto (SLURM_ARRAY_TASK_ID)", out);
  }
  return "--shard auto: neither JOB_COMPLETION_INDEX (a Kubernetes Indexed Job) nor SLURM_ARRAY_TASK_ID (a Slurm job "
         "array) is set; give --shard I/N";
}

}  // namespace lockstep::runner
