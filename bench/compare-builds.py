#!/usr/bin/env python3
"""Two builds of amgsolve on the same configs: the same hierarchy and iterations bit for bit, and the time.

    bench/compare-builds.py OLD/amgsolve NEW/amgsolve [--configs a.yaml ...] [--threads 1 2] [--runs 3]

For every config and thread count both programs run alternately (--runs times each), each writing a JSON
report. The hierarchy (rows and nnz of every level), the iteration counts and the residual histories (as
floating-point numbers, so bit for bit) of the first run of each must be equal; any difference is printed
and the exit status is 1. Then it prints the median setup, solve and total seconds of each build and the
ratio new / old, so a refactoring can be checked for "no change in results, no change in speed" in one run
on one machine (docs/BENCHMARKS.md, "Build against build").
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

from bench_common import positive_int

SHIPPED = [
    "configs/poisson-small.yaml",
    "configs/poisson-jump.yaml",
    "configs/poisson-jump2d.yaml",
    "configs/poisson-aniso.yaml",
    "configs/poisson-aniso2d.yaml",
    "configs/poisson2d.yaml",
    "configs/poisson27.yaml",
    "configs/poisson.yaml",
    "configs/mouse-quick.yaml",
    "configs/mouse.yaml",
]


def run(binary, config, threads, report):
    command = [binary, config, "--quiet", "--threads", str(threads), "--report", report]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode not in (0, 3):
        sys.exit(f"{' '.join(command)} failed ({done.returncode}): {done.stderr.strip()}")
    with open(report) as f:
        return json.load(f)


def fingerprint(report):
    """What must not change: the levels, and every solve's iterations and history."""
    setups = [report["setup"]] + ([report["emission_setup"]] if "emission_setup" in report else [])
    levels = [[(level["rows"], level["nnz"]) for level in setup["levels"]] for setup in setups]
    solves = [(report["solve"]["iterations"], report["solve"]["history"])]
    for source in report.get("sources", []):
        for band in ("excitation", "emission"):
            if band in source:
                solves.append((source[band]["iterations"], source[band]["relative_residual"]))
    return {"levels": levels, "solves": solves}


def times(report):
    setup = report["setup"]["seconds"] + report.get("emission_setup", {}).get("seconds", 0.0)
    solve = report["solve"]["seconds"]
    if report.get("sources"):
        solve = sum(s[band]["seconds"] for s in report["sources"] for band in ("excitation", "emission") if band in s)
    return setup, solve


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("--configs", nargs="+", default=SHIPPED)
    parser.add_argument("--threads", nargs="+", type=positive_int, default=[1, 2])
    parser.add_argument("--runs", type=positive_int, default=3)
    args = parser.parse_args()

    differences = 0
    print(f"{'config':32s} {'thr':>3s} {'setup old':>9s} {'new':>7s} {'solve old':>9s} {'new':>7s} "
          f"{'total new/old':>13s}  results")
    with tempfile.TemporaryDirectory() as scratch:
        for config in args.configs:
            for threads in args.threads:
                measured = {"old": [], "new": []}
                prints = {}
                for r in range(args.runs):
                    for name in ("old", "new"):
                        report = run(getattr(args, name), config, threads, os.path.join(scratch, f"{name}.json"))
                        measured[name].append(times(report))
                        if r == 0:
                            prints[name] = fingerprint(report)
                same = prints["old"] == prints["new"]
                differences += not same
                med = {name: [statistics.median(t[i] for t in measured[name]) for i in (0, 1)] for name in measured}
                ratio = sum(med["new"]) / max(sum(med["old"]), 1e-12)
                print(f"{config:32s} {threads:3d} {med['old'][0]:9.3f} {med['new'][0]:7.3f} {med['old'][1]:9.3f} "
                      f"{med['new'][1]:7.3f} {ratio:13.3f}  {'identical' if same else 'DIFFERENT'}", flush=True)
                if not same:
                    print(f"  old: {json.dumps(prints['old'])[:400]}\n  new: {json.dumps(prints['new'])[:400]}")
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())
