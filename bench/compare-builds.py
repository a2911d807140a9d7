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

from bench_common import BenchError, executable, positive_int, run_main

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHIPPED = [os.path.join(ROOT, "configs", name) for name in (
    "poisson-small.yaml", "poisson-jump.yaml", "poisson-jump2d.yaml", "poisson-aniso.yaml", "poisson-aniso2d.yaml",
    "poisson2d.yaml", "poisson27.yaml", "poisson.yaml", "mouse-quick.yaml", "mouse.yaml")]


def run(binary, config, threads, report):
    command = [binary, config, "--quiet", "--threads", str(threads), "--report", report]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode not in (0, 3):
        raise BenchError(f"{' '.join(command)} failed ({done.returncode}): {done.stderr.strip()}")
    try:
        with open(report) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise BenchError(f"{binary} on {config} wrote no readable report {report} ({e})") from None


def field(report, binary, *keys):
    """report[keys[0]][keys[1]]..., or BenchError naming what an older build's report lacks."""
    value = report
    for key in keys:
        if not isinstance(value, dict) or key not in value:
            raise BenchError(f"the report of {binary} has no {'.'.join(keys)}: a build too old to compare this way")
        value = value[key]
    return value


def fingerprint(report, binary):
    """What must not change: the levels, and every solve's iterations and history."""
    setups = [field(report, binary, "setup")] + ([report["emission_setup"]] if "emission_setup" in report else [])
    levels = [[(level["rows"], level["nnz"]) for level in field(setup, binary, "levels")] for setup in setups]
    solves = [(field(report, binary, "solve", "iterations"), field(report, binary, "solve", "history"))]
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
    parser.add_argument("old", type=executable)
    parser.add_argument("new", type=executable)
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
                            prints[name] = fingerprint(report, getattr(args, name))
                same = prints["old"] == prints["new"]
                differences += not same
                med = {name: [statistics.median(t[i] for t in measured[name]) for i in (0, 1)] for name in measured}
                ratio = sum(med["new"]) / max(sum(med["old"]), 1e-12)
                print(f"{config:32s} {threads:3d} {med['old'][0]:9.3f} {med['new'][0]:7.3f} {med['old'][1]:9.3f} "
                      f"{med['new'][1]:7.3f} {ratio:13.3f}  {'identical' if same else 'DIFFERENT'}", flush=True)
                if not same:
                    print(f"  old: {json.dumps(prints['old'])[:400]}\n  new: {json.dumps(prints['new'])[:400]}")
    if differences:
        raise BenchError(f"{differences} config(s) gave different results")


if __name__ == "__main__":
    run_main(main)
