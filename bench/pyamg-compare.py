#!/usr/bin/env python3
"""amgsolve's Python package against PyAMG in the same run, on the same scipy matrices.

PyAMG: smoothed_aggregation_solver(A) with its defaults, solved with ml.solve(b, accel="cg") (its tol
tightened until the true residual meets ours, see run_pyamg). amgsolve:
amgsolve.Solver(A) with the defaults of docs/CONFIG.md (double precision) and, as shipped in
configs/poisson.yaml, solver.precision: mixed. The same b = 1 and tolerance (relative residual 1e-8,
checked here on the returned x). The two alternate --runs times; the table gives the medians of setup,
solve and total seconds, the iterations, and amgsolve's total as a ratio of PyAMG's.
--problem runs the problems hard for smoothed aggregation of bench/hard_problems.py (b random, seeded: a
constant b barely excites some of them), a system with its near-nullspace B given to both.
Run with the project's virtual environment (scripts/python installs both):
  .venv/bin/python bench/pyamg-compare.py [--poisson 64 128] [--matrix ../shared/matrices/bcsstk17.mtx] [--runs 3]
  .venv/bin/python bench/pyamg-compare.py --poisson --problem all
"""
import argparse
import os
import statistics
import time

import numpy as np

import amgsolve
import pyamg

from bench_common import BenchError, positive_int, read_matrix, run_main
from hard_problems import PROBLEMS
from scipy_common import poisson7, pyamg_solve, true_residual

TOLERANCE = 1e-8


def run_pyamg(A, b, B=None):
    """The solve timed is the one that met the true residual (scipy_common.pyamg_solve). A system (B given)
    as PyAMG takes one: BSR blocks of its block size."""
    start = time.perf_counter()
    ml = pyamg.smoothed_aggregation_solver(A) if B is None else \
        pyamg.smoothed_aggregation_solver(A.tobsr(blocksize=(block_size(B),) * 2), B=B)
    setup = time.perf_counter() - start
    x, iterations, solve = pyamg_solve(ml, A, b, TOLERANCE, 2000)
    return setup, solve, iterations, true_residual(A, b, x)


def block_size(B):
    """A system's unknowns per node: 2 for plane elasticity's 3 rigid-body modes, 3 for 6."""
    return {3: 2, 6: 3}[B.shape[1]]


def run_amgsolve(A, b, B=None, **params):
    start = time.perf_counter()
    system = {} if B is None else {"near_nullspace": B, "amg": {"block_size": block_size(B)}}
    solver = amgsolve.Solver(A, solver={"tolerance": TOLERANCE, "max_iterations": 2000, **params}, **system)
    setup = time.perf_counter() - start
    start = time.perf_counter()
    x, info = solver.solve(b)
    solve = time.perf_counter() - start
    return setup, solve, info["iterations"], true_residual(A, b, x)


def compare(name, A, runs, B=None, b=None):
    b = np.ones(A.shape[0]) if b is None else b
    contenders = {"PyAMG (SA, CG)": lambda: run_pyamg(A, b, B),
                  "amgsolve (double)": lambda: run_amgsolve(A, b, B),
                  "amgsolve (mixed)": lambda: run_amgsolve(A, b, B, precision="mixed")}
    times = {label: [] for label in contenders}
    failed = {}  # a contender's error (the float hierarchy of a jump of 1e6 may be indefinite): said, not fatal
    for _ in range(runs):
        for label, run in contenders.items():
            if label in failed:
                continue
            try:
                times[label].append(run())
            except amgsolve.NumericalError as e:
                failed[label] = str(e)
    baseline = statistics.median(r[0] + r[1] for r in times["PyAMG (SA, CG)"])
    print(f"\n{name}: {A.shape[0]} rows, {A.nnz} nonzeros, median of {runs}")
    print(f"  {'':<20} {'setup s':>9} {'solve s':>9} {'total s':>9} {'iters':>6} {'residual':>9} {'/ PyAMG':>8}")
    for label, message in failed.items():
        print(f"  {label:<20} failed: {message[:150]}")
    for label, rows in times.items():
        if label in failed:
            continue
        setup = statistics.median(r[0] for r in rows)
        solve = statistics.median(r[1] for r in rows)
        total = statistics.median(r[0] + r[1] for r in rows)
        iterations, residual = rows[0][2], max(r[3] for r in rows)
        missed = "  (tolerance not reached)" if residual > TOLERANCE else ""
        print(f"  {label:<20} {setup:9.3f} {solve:9.3f} {total:9.3f} {iterations:6d} {residual:9.1e} "
              f"{total / baseline:8.2f}{missed}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--poisson", type=positive_int, nargs="*", default=[64, 128], help="7-point Poisson N^3 sizes")
    parser.add_argument("--matrix", nargs="*", default=[], help="Matrix Market files (SPD)")
    parser.add_argument("--problem", nargs="*", default=[], choices=[*PROBLEMS, "all"],
                        help="problems hard for smoothed aggregation (bench/hard_problems.py)")
    parser.add_argument("--runs", type=positive_int, default=3)
    args = parser.parse_args()
    print(f"amgsolve {amgsolve.__version__}, PyAMG {pyamg.__version__}, OMP_NUM_THREADS="
          f"{os.environ.get('OMP_NUM_THREADS', 'all cores')}, tolerance {TOLERANCE}")
    for n in args.poisson:
        compare(f"7-point Poisson {n}^3", poisson7(n), args.runs)
    for name in PROBLEMS if "all" in args.problem else args.problem:
        A, B = PROBLEMS[name]()
        compare(name, A, args.runs, B, np.random.default_rng(12345).standard_normal(A.shape[0]))
    for path in args.matrix:
        A = read_matrix(path)
        try:
            compare(os.path.basename(path), A, args.runs)
        except (ValueError, amgsolve.Error) as e:  # PyAMG's refusals, amgsolve's: named with the file
            raise BenchError(f"{path}: {e}") from None


if __name__ == "__main__":
    run_main(main)
