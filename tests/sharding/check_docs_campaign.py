#!/usr/bin/env python3
"""Runs the sharded campaigns of docs/sharding/ locally and checks each merges to the
unsharded result.

The Kubernetes Indexed Job's container command and the Slurm array script are run as
written, three times each, with the environment the batch system would give every shard
(JOB_COMPLETION_INDEX and the manifest's env; SLURM_ARRAY_TASK_ID, _MIN and _COUNT from
the script's --array); the merge commands are the ones docs/sharding.md gives. Then the
same campaign runs unsharded, and the results must agree in everything but timing.

usage: check_docs_campaign.py SOURCE_DIR LOCKSTEP_BINARY
"""
import json
import os
import re
import subprocess
import sys
import tempfile


def run(command, cwd, env, ok=(0,)):
    p = subprocess.run(["sh", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    if p.returncode not in ok:
        raise SystemExit("failed (exit %d): %s\n%s%s" % (p.returncode, command, p.stdout, p.stderr))
    return p


def line_starting(text, prefix, where):
    for line in text.splitlines():
        if line.strip().startswith(prefix):
            return line.strip()
    raise SystemExit("%s: no line starting with %r" % (where, prefix))


def load(path):
    with open(path) as f:
        return json.load(f)


def without_timing(matrix):
    cells = [{k: v for k, v in c.items() if k not in ("seconds", "replay")} for c in matrix["cells"]]
    top = {k: v for k, v in matrix.items() if k not in ("cells",)}
    return top, cells


def check_kubernetes(source, tmp, env, doc):
    path = os.path.join(source, "docs/sharding/matrix-indexed-job.yaml")
    text = open(path).read()
    completions = int(re.search(r"^\s*completions:\s*(\d+)", text, re.M).group(1))
    count = re.search(r'name: LOCKSTEP_SHARD_COUNT\s*\n\s*value: "(\d+)"', text).group(1)
    if int(count) != completions:
        raise SystemExit("%s: LOCKSTEP_SHARD_COUNT %s differs from completions %d" % (path, count, completions))
    command = line_starting(text.split("args:", 1)[1], "- lockstep matrix", path)[2:]
    results = os.path.join(tmp, "k8s")
    for index in range(completions):
        run(command, tmp, dict(env, JOB_COMPLETION_INDEX=str(index), LOCKSTEP_SHARD_COUNT=count, RESULTS=results))
    merge = line_starting(doc, "lockstep matrix --merge", "docs/sharding.md").replace("/results", results)
    run(merge, tmp, env, ok=(0, 1))
    whole = os.path.join(tmp, "k8s-whole")
    run(command.replace(" --shard auto", ""), tmp, dict(env, JOB_COMPLETION_INDEX="x", RESULTS=whole))
    merged = load(os.path.join(results, "matrix", "matrix.json"))
    single = load(os.path.join(whole, "shard-x", "matrix.json"))
    if without_timing(merged) != without_timing(single):
        raise SystemExit("merged matrix differs from the unsharded one:\n%s\n%s" %
                         (json.dumps(without_timing(merged)), json.dumps(without_timing(single))))
    for cell in merged["cells"]:
        if cell["counterexample"]:
            a = open(os.path.join(results, "matrix", cell["counterexample"])).read()
            b = open(os.path.join(whole, "shard-x", cell["counterexample"])).read()
            if a != b:
                raise SystemExit("counterexample %s differs between merged and unsharded" % cell["counterexample"])
    return len(merged["cells"]), sum(1 for c in merged["cells"] if c["counterexample"])


def check_slurm(source, tmp, env, doc):
    path = os.path.join(source, "docs/sharding/fuzz-array.sbatch")
    text = open(path).read()
    first, last = map(int, re.search(r"^#SBATCH --array=(\d+)-(\d+)$", text, re.M).groups())
    count = last - first + 1
    for task in range(first, last + 1):
        run("bash " + path, tmp, dict(env, SLURM_ARRAY_TASK_ID=str(task), SLURM_ARRAY_TASK_MIN=str(first),
                                      SLURM_ARRAY_TASK_COUNT=str(count)))
    run(line_starting(doc, "lockstep fuzz --merge", "docs/sharding.md"), tmp, env)
    command = line_starting(text, "lockstep fuzz", path)
    runs = int(re.search(r"--runs (\d+)", command).group(1))
    single = command.replace(" --shard auto", "").replace("--runs %d" % runs, "--runs %d" % (runs * count))
    single = single.replace('"$RESULTS/shard-$SLURM_ARRAY_TASK_ID"', "lockstep-fuzz/unsharded")
    run(single, tmp, env)
    merged = load(os.path.join(tmp, "lockstep-fuzz/merged/summary.json"))
    whole = load(os.path.join(tmp, "lockstep-fuzz/unsharded/summary.json"))
    for key in ("algorithm", "faults", "seed", "runs", "violations", "counterexamples"):
        if merged[key] != whole[key]:
            raise SystemExit("fuzz %s: merged %r, unsharded %r" % (key, merged[key], whole[key]))
    if merged["shards"] != count:
        raise SystemExit("merged summary counts %r shards, expected %d" % (merged["shards"], count))
    return merged["runs"]


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 64
    source, binary = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    doc = open(os.path.join(source, "docs/sharding.md")).read()
    with tempfile.TemporaryDirectory() as tmp:
        bindir = os.path.join(tmp, "bin")
        os.mkdir(bindir)
        os.symlink(binary, os.path.join(bindir, "lockstep"))
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("SLURM_", "JOB_COMPLETION_INDEX", "LOCKSTEP_SHARD_COUNT", "RESULTS"))}
        env["PATH"] = bindir + os.pathsep + env.get("PATH", "")
        cells, broken = check_kubernetes(source, tmp, env, doc)
        runs = check_slurm(source, tmp, env, doc)
    print("sharded campaigns: matrix of %d cells (%d broken) and fuzz of %d runs merge to the unsharded results"
          % (cells, broken, runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
