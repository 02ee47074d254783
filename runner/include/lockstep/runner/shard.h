// Which part of a long campaign this process runs: `--shard I/N`, or `--shard auto` from
// the batch system that started it — a Kubernetes Indexed Job (JOB_COMPLETION_INDEX; the
// count from --shard-count or LOCKSTEP_SHARD_COUNT, since the pod is not told it) or a
// Slurm job array (SLURM_ARRAY_TASK_ID from SLURM_ARRAY_TASK_MIN, SLURM_ARRAY_TASK_COUNT).
// Every shard of a campaign runs the same command, so a manifest names it once.
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace lockstep::runner {

struct Shard {
  int index = 0;
  int count = 1;
};

// Reads the environment through `env` (getenv in the CLI, a map in tests).
using EnvLookup = std::function<const char*(const char* name)>;

// "" with `out` filled, or one sentence saying what is missing or wrong.
std::string resolve_shard(const std::string& spec, std::optional<int> count_flag, const EnvLookup& env, Shard& out);

}  // namespace lockstep::runner
