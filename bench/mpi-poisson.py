#!/usr/bin/env python3
"""End to end on R MPI ranks: amgsolve CONFIG (configs/poisson.yaml) against hypre's BoomerAMG + PCG on the
same problem (build/bench/hypre-poisson), in the same run.

For every size and layout R ranks x T threads, the two programs alternate N times; the table gives the
medians (setup, solve, total), amgsolve's total as a ratio of hypre's, and each program's parallel
efficiency against its own run on the fewest ranks that finished (strong scaling: T_min * R_min / (T_R * R),
for the setup and the solve), for docs/BENCHMARKS.md. hypre-poisson is built when libhypre-dev is installed
(Debian); without it only amgsolve runs. Each run has a time limit (--timeout); one that exceeds it is
reported and the table goes on.
Usage: bench/mpi-poisson.py [--ranks 1 2 4] [--threads 1] [--size 128 256] [--runs 3] [--oversubscribe]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import tempfile

from bench_common import executable, positive_int, positive_seconds, run_main

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}


def mpirun(ranks, threads, oversubscribe):
    cmd = ["mpirun", "-np", str(ranks), "--bind-to", "none"]
    if oversubscribe:
        cmd.append("--oversubscribe")
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), **ROOT_ENV)
    return cmd, env


def run_amgsolve(binary, config, size, ranks, threads, oversubscribe, timeout):
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "r.json")
        cmd, env = mpirun(ranks, threads, oversubscribe)
        cmd += [binary, config, "--quiet", "--report", report, "--set", f"problem.size=[{size},{size},{size}]"]
        subprocess.run(cmd, check=True, env=env, timeout=timeout)
        with open(report) as f:
            r = json.load(f)
    return {"setup": r["setup"]["seconds"], "solve": r["solve"]["seconds"], "iters": r["solve"]["iterations"]}


def run_hypre(binary, size, ranks, threads, oversubscribe, timeout):
    cmd, env = mpirun(ranks, threads, oversubscribe)
    out = subprocess.run(cmd + [binary, str(size)], check=True, env=env, capture_output=True, text=True,
                         timeout=timeout).stdout
    fields = dict(re.findall(r"(\w+)=(\S+)", out.split("RESULT", 1)[1]))
    return {"setup": float(fields["setup"]), "solve": float(fields["solve"]), "iters": int(fields["iters"])}


def timed_out(run, *args):
    try:
        return run(*args)
    except subprocess.TimeoutExpired:
        return None


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--config", default=os.path.join(ROOT, "configs", "poisson.yaml"))
    ap.add_argument("--ranks", type=positive_int, nargs="+", default=[1, 2])
    ap.add_argument("--threads", type=positive_int, default=1, help="OpenMP threads per rank (amgsolve)")
    ap.add_argument("--size", type=positive_int, nargs="+", default=[128])
    ap.add_argument("--runs", type=positive_int, default=3)
    ap.add_argument("--timeout", type=positive_seconds, default=600, help="seconds one run may take")
    ap.add_argument("--oversubscribe", action="store_true")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    args = ap.parse_args()
    try:
        amgsolve = executable(os.path.join(args.build, "app", "amgsolve"))
    except argparse.ArgumentTypeError as e:
        ap.error(f"--build: {e}")
    hypre = os.path.join(args.build, "bench", "hypre-poisson")
    has_hypre = os.path.exists(hypre)
    print("| size | ranks x threads | program | iterations | setup s | solve s | total s | total / hypre "
          "| setup efficiency | solve efficiency |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for size in args.size:
        first = {}  # each program's medians on the fewest ranks, the efficiencies' reference
        for ranks in args.ranks:
            ours, theirs = [], []
            for _ in range(args.runs):  # alternated, so both see the same hour of a shared machine
                ours.append(timed_out(run_amgsolve, amgsolve, args.config, size, ranks, args.threads,
                                      args.oversubscribe, args.timeout))
                if has_hypre:
                    theirs.append(timed_out(run_hypre, hypre, size, ranks, args.threads, args.oversubscribe,
                                            args.timeout))
            rows = [("amgsolve", ours)] + ([("hypre BoomerAMG", theirs)] if has_hypre else [])
            medians = {}
            for name, runs in rows:
                done = [r for r in runs if r is not None]
                if len(done) < len(runs):
                    print(f"| {size}^3 | {ranks} x {args.threads} | {name} | {len(runs) - len(done)} of "
                          f"{len(runs)} runs over {args.timeout:.0f} s | | | | | | |")
                if done:
                    medians[name] = {key: statistics.median(r[key] for r in done) for key in ("setup", "solve")}
                    medians[name]["iters"] = done[0]["iters"]
            for name, m in medians.items():
                total = m["setup"] + m["solve"]
                hypre_total = medians.get("hypre BoomerAMG")
                ratio = f"{total / (hypre_total['setup'] + hypre_total['solve']):.2f}" if hypre_total else "-"
                reference = first.setdefault(name, (ranks, m))
                efficiency = lambda key: f"{reference[1][key] * reference[0] / (m[key] * ranks):.2f}"
                print(f"| {size}^3 | {ranks} x {args.threads} | {name} | {m['iters']} | {m['setup']:.3f} | "
                      f"{m['solve']:.3f} | {total:.3f} | {ratio} | {efficiency('setup')} | {efficiency('solve')} |",
                      flush=True)


if __name__ == "__main__":
    run_main(main)
