#!/usr/bin/env python3
"""The scenario schema, checked by a real JSON Schema validator (Debian's python3-jsonschema).

Every catalogue scenario (scenarios/**/*.json) and every file in tests/data/good_scenarios
must validate. Every file in tests/data/bad_scenarios must be rejected by the validator --
unless CANNOT_EXPRESS below says why the schema cannot state that rule -- and by lockstep
itself (exit 65, the message naming the file). A file listed in CANNOT_EXPRESS that the
schema does reject is an error too, so the list never outlives a schema that grew.

usage: check_scenarios.py SOURCE_DIR LOCKSTEP_BINARY
"""
import glob
import json
import os
import subprocess
import sys
import tempfile

# JSON Schema compares a value with constants, never with another value of the same file.
COMPARES = "compares one value with another, which JSON Schema cannot"
CANNOT_EXPRESS = {
    "at_ms_beyond_duration.json": "a fault must start before duration_ms: " + COMPARES,
    "duplicate_clock.json": "one clock entry per process: " + COMPARES,
    "nonexistent_client.json": "client-N must be at most workload.clients: " + COMPARES,
    "nonexistent_node.json": "node-N must be at most topology.nodes: " + COMPARES,
    "nonexistent_replica.json": "node-N-replica-M must be at most topology.replicas: " + COMPARES,
    "partition_overlap.json": "a process in one partition group only: " + COMPARES,
    "readers_more_than_clients.json": "readers at most workload.clients: " + COMPARES,
    "stock_key_is_lock_key.json": "stock_key differs from lock.key: " + COMPARES,
    "uniform_min_gt_max.json": "uniform latency min_ms <= max_ms: " + COMPARES,
    "profile_options_conflict.json": "node-redlock's automaticExtensionThreshold below duration - 100: " + COMPARES,
}


def fail(problems, message):
    problems.append(message)


def first_error(validator, document):
    errors = sorted(validator.iter_errors(document), key=lambda e: list(e.absolute_path))
    if not errors:
        return None
    e = errors[0]
    return "%s: %s" % (e.json_path, e.message[:200])


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 64
    source, binary = sys.argv[1], sys.argv[2]
    try:
        import jsonschema
    except ImportError:
        print("check_scenarios: python3-jsonschema is missing (scripts/setup installs it)", file=sys.stderr)
        return 1
    with open(os.path.join(source, "scenarios/schema/scenario.schema.json")) as f:
        schema = json.load(f)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    validator = cls(schema)
    problems = []

    good = sorted(glob.glob(os.path.join(source, "scenarios/**/*.json"), recursive=True))
    good = [g for g in good if os.sep + "schema" + os.sep not in g]
    good += sorted(glob.glob(os.path.join(source, "tests/data/good_scenarios/*.json")))
    if len(good) < 50:
        fail(problems, "only %d good scenarios found under %s" % (len(good), source))
    for path in good:
        with open(path) as f:
            why = first_error(validator, json.load(f))
        if why:
            fail(problems, "%s: rejected by the schema at %s" % (os.path.relpath(path, source), why))

    bad_dir = os.path.join(source, "tests/data/bad_scenarios")
    bad = sorted(os.listdir(bad_dir))
    for name in CANNOT_EXPRESS:
        if name not in bad:
            fail(problems, "CANNOT_EXPRESS names %s, which tests/data/bad_scenarios does not hold" % name)
    with tempfile.TemporaryDirectory() as out:
        for name in bad:
            path = os.path.join(bad_dir, name)
            try:
                with open(path) as f:
                    document = json.load(f)
                rejected = first_error(validator, document) is not None
            except ValueError:
                rejected = True  # not JSON: no validator can accept it
            if not rejected and name not in CANNOT_EXPRESS:
                fail(problems, "bad_scenarios/%s: accepted by the schema (make the schema reject it, or say in "
                               "CANNOT_EXPRESS why it cannot)" % name)
            if rejected and name in CANNOT_EXPRESS:
                fail(problems, "bad_scenarios/%s: rejected by the schema, yet CANNOT_EXPRESS says it cannot be; "
                               "remove it from the list" % name)
            run = subprocess.run([binary, "run", "--out", out, path], capture_output=True, text=True, timeout=60)
            if run.returncode != 65 or path + ": $" not in run.stderr + run.stdout:
                fail(problems, "bad_scenarios/%s: lockstep exited %d, expected 65 with the file and JSON path; said: %s"
                     % (name, run.returncode, (run.stderr + run.stdout).strip()[:300]))

    for p in problems:
        print(p, file=sys.stderr)
    print("check_scenarios: %d good scenarios valid, %d bad ones rejected (%d by lockstep alone, each with its reason), "
          "%d problems" % (len(good), len(bad), len(CANNOT_EXPRESS), len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
