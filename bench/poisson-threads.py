#!/usr/bin/env python3
"""End-to-end benchmark of configs/poisson.yaml (or another config) at several thread counts.

Runs `amgsolve CONFIG --report` N times per thread count, reports the median setup, solve and total
seconds with iterations, levels, operator complexity and peak memory, as a Markdown table for
docs/BENCHMARKS.md. Usage: bench/poisson-threads.py [--config C] [--threads 1 2] [--runs 3]
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile

from bench_common import executable, positive_int, run_main

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_once(binary, config, threads, extra):
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "r.json")
        cmd = [binary, config, "--threads", str(threads), "--quiet", "--report", report] + extra
        subprocess.run(cmd, check=True, stderr=subprocess.PIPE, text=True)
        with open(report) as f:
            return json.load(f)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--config", default=os.path.join(ROOT, "configs", "poisson.yaml"))
    ap.add_argument("--threads", type=positive_int, nargs="+", default=[1, 2])
    ap.add_argument("--runs", type=positive_int, default=3)
    ap.add_argument("--binary", type=executable, default=os.path.join(ROOT, "build", "app", "amgsolve"))
    ap.add_argument("--set", action="append", default=[], help="extra --set key=value")
    args = ap.parse_args()
    extra = [x for s in args.set for x in ("--set", s)]
    print("| threads | levels | operator complexity | iterations | setup s | solve s | total s | peak memory MiB |")
    print("|---|---|---|---|---|---|---|---|")
    for t in args.threads:
        runs = [run_once(args.binary, args.config, t, extra) for _ in range(args.runs)]
        med = lambda f: statistics.median(f(r) for r in runs)
        r0 = runs[0]
        print(f"| {t} | {len(r0['setup']['levels'])} | {r0['setup']['operator_complexity']:.3f} | "
              f"{r0['solve']['iterations']} | {med(lambda r: r['setup']['seconds']):.2f} | "
              f"{med(lambda r: r['solve']['seconds']):.2f} | "
              f"{med(lambda r: r['setup']['seconds'] + r['solve']['seconds']):.2f} | "
              f"{med(lambda r: r['peak_memory_bytes']) / 2**20:.0f} |")


if __name__ == "__main__":
    run_main(main)
