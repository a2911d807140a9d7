#!/usr/bin/env python3
"""End to end on R MPI ranks: amgsolve CONFIG (configs/poisson.yaml) against hypre's BoomerAMG + PCG on the
same problem (build/bench/hypre-poisson), in the same run.

For every layout R ranks x T threads, the two programs alternate N times; the table gives the medians
(setup, solve, total) and amgsolve's total as a ratio of hypre's, for docs/BENCHMARKS.md. hypre-poisson
is built when libhypre-dev is installed (Debian); without it only amgsolve runs.
Usage: bench/mpi-poisson.py [--ranks 1 2 4] [--threads 1] [--size 128] [--runs 3] [--oversubscribe]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}


def mpirun(ranks, threads, oversubscribe):
    cmd = ["mpirun", "-np", str(ranks), "--bind-to", "none"]
    if oversubscribe:
        cmd.append("--oversubscribe")
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), **ROOT_ENV)
    return cmd, env


def run_amgsolve(binary, config, size, ranks, threads, oversubscribe):
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "r.json")
        cmd, env = mpirun(ranks, threads, oversubscribe)
        cmd += [binary, config, "--quiet", "--report", report, "--set", f"problem.size=[{size},{size},{size}]"]
        subprocess.run(cmd, check=True, env=env)
        with open(report) as f:
            r = json.load(f)
    return {"setup": r["setup"]["seconds"], "solve": r["solve"]["seconds"], "iters": r["solve"]["iterations"]}


def run_hypre(binary, size, ranks, threads, oversubscribe):
    cmd, env = mpirun(ranks, threads, oversubscribe)
    out = subprocess.run(cmd + [binary, str(size)], check=True, env=env, capture_output=True, text=True).stdout
    fields = dict(re.findall(r"(\w+)=(\S+)", out.split("RESULT", 1)[1]))
    return {"setup": float(fields["setup"]), "solve": float(fields["solve"]), "iters": int(fields["iters"])}


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--config", default=os.path.join(ROOT, "configs", "poisson.yaml"))
    ap.add_argument("--ranks", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--threads", type=int, default=1, help="OpenMP threads per rank (amgsolve)")
    ap.add_argument("--size", type=int, default=128)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--oversubscribe", action="store_true")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    args = ap.parse_args()
    amgsolve = os.path.join(args.build, "app", "amgsolve")
    hypre = os.path.join(args.build, "bench", "hypre-poisson")
    has_hypre = os.path.exists(hypre)
    print(f"| ranks x threads | program | iterations | setup s | solve s | total s | total / hypre |")
    print("|---|---|---|---|---|---|---|")
    for ranks in args.ranks:
        ours, theirs = [], []
        for _ in range(args.runs):  # alternated, so both see the same hour of a shared machine
            ours.append(run_amgsolve(amgsolve, args.config, args.size, ranks, args.threads, args.oversubscribe))
            if has_hypre:
                theirs.append(run_hypre(hypre, args.size, ranks, args.threads, args.oversubscribe))
        rows = [("amgsolve", ours)] + ([("hypre BoomerAMG", theirs)] if has_hypre else [])
        total = {name: statistics.median(r["setup"] + r["solve"] for r in runs) for name, runs in rows}
        for name, runs in rows:
            med = lambda key: statistics.median(r[key] for r in runs)
            ratio = f"{total[name] / total['hypre BoomerAMG']:.2f}" if has_hypre else "-"
            print(f"| {ranks} x {args.threads} | {name} | {runs[0]['iters']} | {med('setup'):.3f} | "
                  f"{med('solve'):.3f} | {total[name]:.3f} | {ratio} |")


if __name__ == "__main__":
    main()
