#!/usr/bin/env python3
"""Systems (amg.block_size, near-nullspace vectors) against scalar aggregation and against PyAMG in the same run.

For each structural matrix of ../shared and each block size that divides its rows: amgsolve.Solver(A,
amg={"block_size": b}) (the b unit vectors of the components as near-nullspace; b = 1 is the scalar setup)
and PyAMG's smoothed_aggregation_solver on A.tobsr(blocksize=(b, b)) (its default B for blocks is the same
unit vectors). Then a 2D plane-strain elasticity beam (linear triangles, clamped on one end, the generator of
python/tests/test_amgsolve.py) with its rigid-body modes as near-nullspace for both, and the same beam held
nowhere (singular: amgsolve finds the modes to be its nullspace; b random, less its part along them); then
the program's 3D cantilever (amgsolve.elasticity, problem.type elasticity: linear tetrahedra, clamped at one
end). b = 1, tolerance 1e-8 on
the true relative residual (PyAMG's tol tightened until it holds, as bench/pyamg-compare.py does); iterations
(deterministic) and the medians of --runs setup + solve seconds, alternating the two.
  .venv/bin/python bench/systems-compare.py [--matrices ../shared/matrices] [--runs 3]
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

import amgsolve
import pyamg

from bench_common import BenchError, positive_int, read_matrix, run_main
from scipy_common import pyamg_solve, true_residual

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python", "tests"))
from test_amgsolve import elasticity_2d  # noqa: E402  (the tests' generator, one copy)

TOLERANCE = 1e-8
MATRICES = ["bcsstk08", "bcsstk10", "bcsstk14", "bcsstk15", "bcsstk16", "bcsstk17", "bcsstk21"]


def run_amgsolve(A, b, block_size, B=None):
    start = time.perf_counter()
    solver = amgsolve.Solver(A, near_nullspace=B, amg={"block_size": block_size},
                             solver={"tolerance": TOLERANCE, "max_iterations": 3000})
    x, info = solver.solve(b)
    assert true_residual(A, b, x) <= TOLERANCE * 1.01, "amgsolve missed the tolerance"
    return time.perf_counter() - start, info["iterations"]


def run_pyamg(A, b, block_size, B=None):
    """Seconds and iterations, the latter with the residual PyAMG stopped at where it missed the tolerance."""
    start = time.perf_counter()
    ml = pyamg.smoothed_aggregation_solver(A.tobsr(blocksize=(block_size, block_size)) if block_size > 1 else A, B=B)
    x, iterations, _ = pyamg_solve(ml, A, b, TOLERANCE, 3000)
    reached = true_residual(A, b, x)
    iterations = str(iterations)
    return time.perf_counter() - start, iterations if reached <= TOLERANCE else f"{iterations}, stopped at {reached:.1e}"


def compare(name, A, block_size, runs, B=None, floating=False):
    b = np.ones(A.shape[0])
    if floating:  # a body held nowhere: random loads less their part along the rigid-body modes (in equilibrium)
        b = np.random.default_rng(1).standard_normal(A.shape[0])
        Q, _ = np.linalg.qr(B)
        b -= Q @ (Q.T @ b)
    ours, theirs = [], []
    for _ in range(runs):
        ours.append(run_amgsolve(A, b, block_size, B))
        theirs.append(run_pyamg(A, b, block_size, B))
    t_ours, t_theirs = statistics.median(t for t, _ in ours), statistics.median(t for t, _ in theirs)
    # PyAMG's spectral radius estimates start from random vectors: its runs may differ, each is listed.
    their_iterations = " / ".join(dict.fromkeys(str(i) for _, i in theirs))
    print(f"| {name} | {A.shape[0]:,} | {block_size} | {'rigid-body modes' if B is not None else 'unit vectors' if block_size > 1 else 'constant'} "
          f"| {ours[0][1]} | {their_iterations} | {t_ours:.3f} | {t_theirs:.3f} | {t_ours / t_theirs:.2f} |", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--matrices", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                                           "shared", "matrices"))
    parser.add_argument("--runs", type=positive_int, default=3)
    args = parser.parse_args()
    print("| matrix | rows | block size | near-nullspace | amgsolve iterations | PyAMG iterations | amgsolve s | "
          "PyAMG s | ratio |\n|---|---|---|---|---|---|---|---|---|")
    for name in MATRICES:
        path = os.path.join(args.matrices, name + ".mtx")
        if not os.path.exists(path):
            print(f"| {name} | skipped: {path} is missing | | | | | | | |")
            continue
        A = read_matrix(path)
        for block_size in (1, 2, 3, 6):
            if A.shape[0] % block_size == 0:
                try:
                    compare(name, A, block_size, args.runs)
                except (ValueError, amgsolve.Error) as e:
                    raise BenchError(f"{path}: {e}") from None
    A, points = elasticity_2d(192, 48)
    compare("beam 192x48", A, 1, args.runs)
    compare("beam 192x48", A, 2, args.runs)
    compare("beam 192x48", A, 2, args.runs, amgsolve.rigid_body_modes(points))
    A, points = elasticity_2d(192, 48, clamped=False)
    compare("beam 192x48 floating", A, 2, args.runs, amgsolve.rigid_body_modes(points), floating=True)
    # The program's 3D cantilever (problem.type elasticity), smaller than configs/elasticity.yaml's.
    A, _, points = amgsolve.elasticity((48, 12, 12))
    compare("cantilever 48x12x12 (3D)", A, 3, args.runs)
    compare("cantilever 48x12x12 (3D)", A, 3, args.runs, amgsolve.rigid_body_modes(points))


if __name__ == "__main__":
    run_main(main)
