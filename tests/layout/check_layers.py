#!/usr/bin/env python3
"""The arrows of lockstep's layout, checked from the sources' own #include lines.

Folders (docs/architecture.md): core <- locks, sim, live; checker alone; reports <- checker,
core; runner <- all of them; cli <- runner. The build's switches (lockstep/fast_paths.h,
header-only) are for every folder, the checker's too. No world includes a lock, no lock a world.
Inside runner/ (runner/README.md): scenario <- record <- workload <- world <- campaign, a
part including only the parts before it.

  check_layers.py SOURCE    prints every include that points the wrong way; exit 1 if any
"""
import os
import re
import sys

# The headers each folder publishes, by the path an #include names them with.
FOLDER_OF_HEADER = [
    (r"^lockstep/(fast_paths|build_config)\.h$", "build"),
    (r"^lockstep/checker/", "checker"),
    (r"^lockstep/sim/", "sim"),
    (r"^lockstep/live/", "live"),
    (r"^lockstep/reports/", "reports"),
    (r"^lockstep/runner/", "runner"),
    (r"^lockstep/cli\.h$", "cli"),
    (r"^lockstep/(lock|locks|algorithms|profiles|option_table|scripts)\.h$", "locks"),
    (r"^lockstep/[a-z_]+\.h$", "core"),
]
ALLOWED = {
    "core": {"core"},
    "locks": {"core", "locks"},
    "sim": {"core", "sim"},
    "live": {"core", "live"},
    "checker": {"checker"},
    "reports": {"reports", "checker", "core"},
    "runner": {"runner", "core", "locks", "sim", "live", "checker", "reports"},
    "cli": {"cli", "runner", "core", "locks", "sim", "live", "checker", "reports"},
}
RUNNER_PARTS = ["scenario", "record", "workload", "world", "campaign"]
# The runner's public headers, by the part they belong to.
RUNNER_HEADER_PART = {
    "scenario.h": "scenario",
    "recorder.h": "record", "history_stream.h": "record", "lock_checks.h": "record",
    "external_report.h": "record", "run.h": "record",
    "workload.h": "workload",
    "sim_runner.h": "world", "live_runner.h": "world",
    "fuzz.h": "campaign", "matrix.h": "campaign", "claims.h": "campaign", "claims_gtest.h": "campaign",
    "shard.h": "campaign", "progress.h": "campaign", "memory.h": "campaign", "live_campaign.h": "campaign",
}


def folder_of(include):
    for pattern, folder in FOLDER_OF_HEADER:
        if re.match(pattern, include):
            return folder
    return None


def includes(path):
    with open(path, encoding="utf-8") as f:
        return re.findall(r'^#include "([^"]+)"', f.read(), re.M)


def main(source):
    problems = []
    for folder in ALLOWED:
        root = os.path.join(source, folder)
        for dirpath, _, files in os.walk(root):
            for name in files:
                if not name.endswith((".cc", ".h")):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, source)
                part = None
                if folder == "runner":
                    sub = os.path.relpath(path, os.path.join(root, "src")).split(os.sep)
                    if sub[0] in RUNNER_PARTS:
                        part = sub[0]
                    elif name in RUNNER_HEADER_PART:
                        part = RUNNER_HEADER_PART[name]
                for inc in includes(path):
                    target = folder_of(inc)
                    if target and target != "build" and target not in ALLOWED[folder]:
                        problems.append(f"{rel}: includes {inc} ({target}), which {folder}/ may not")
                    if part is None:
                        continue
                    other = None
                    if inc.startswith("lockstep/runner/"):
                        other = RUNNER_HEADER_PART.get(inc[len("lockstep/runner/"):])
                        if other is None:
                            problems.append(f"{rel}: includes {inc}, a runner header the layout does not place")
                            continue
                    elif inc.split("/")[0] in RUNNER_PARTS:
                        other = inc.split("/")[0]
                    if other and RUNNER_PARTS.index(other) > RUNNER_PARTS.index(part):
                        problems.append(f"{rel} ({part}) includes {inc} ({other}): the arrow points back up")
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} include(s) against the layout")
        return 1
    print("layout: every include points the way the layout says")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__)
        sys.exit(64)
    sys.exit(main(sys.argv[1]))
