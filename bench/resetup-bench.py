#!/usr/bin/env python3
"""Re-setup against full setup on a coefficient that changes from step to step (issue #31).

A_t = D_t A D_t, with A the 7-point Poisson matrix on N^3 and D_t = diag(1 + 0.4 sin(x_i + t)): a smooth
coefficient that moves with t, the pattern of A at every step. At each step the same solver is re-set-up
(Solver.rebuild, amg.keep_structure) and, alternating with it, a fresh solver is built for A_t; both then
solve A_t x = 1 to 1e-8. The table gives per step the two setups' seconds (the library's own, and the
wall time of the Python call, which adds copying and checking scipy's arrays), their ratio, and the
iterations of both solves.
Run with the project's virtual environment (scripts/python installs the package):
  .venv/bin/python bench/resetup-bench.py [--size 128] [--steps 5] [--phases] [--keep-freed-memory]
"""
import argparse
import statistics
import time

import numpy as np
import scipy.sparse as sp

import amgsolve

from bench_common import positive_int, run_main
from scipy_common import poisson7


def coefficient_step(A, n, t):
    x = (np.arange(A.shape[0]) % n) / n * 2 * np.pi
    d = sp.diags_array(1.0 + 0.4 * np.sin(x + t), format="csr")
    return (d @ A @ d).tocsr()


def timed(call):
    start = time.perf_counter()
    result = call()
    return result, time.perf_counter() - start


def print_phases(which, setup):
    """Levels 0 and 1's phases (the report's setup.levels[].phases), and the time outside them."""
    levels = setup["levels"]
    inside = sum(sum(level.get("phases", {}).values()) for level in levels)
    for level in levels[:2]:
        phases = " ".join(f"{name} {seconds:.3f}" for name, seconds in level.get("phases", {}).items())
        print(f"         {which:>8} level {level['level']}: {phases}")
    print(f"         {which:>8} outside the levels' phases: {setup['seconds'] - inside:.3f} s")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=positive_int, default=128)
    parser.add_argument("--steps", type=positive_int, default=5)
    parser.add_argument("--phases", action="store_true",
                        help="after each step, the re-setup's and the full setup's seconds per phase on levels 0 and 1")
    parser.add_argument("--keep-freed-memory", action="store_true",
                        help="amgsolve.keep_freed_memory() first: the setups reuse the pages freed before them")
    args = parser.parse_args()
    if args.keep_freed_memory and not amgsolve.keep_freed_memory():
        print("resetup-bench: this C library has no malloc policy to set; running with its default")
    n = args.size
    A = poisson7(n)
    b = np.ones(A.shape[0])
    params = {"amg": {"keep_structure": True}, "solver": {"tolerance": 1e-8}}
    solver = amgsolve.Solver(coefficient_step(A, n, 0.0), **params)
    print(f"7-point Poisson {n}^3 with a moving coefficient: {A.shape[0]} rows, {A.nnz} nonzeros; "
          f"setup hierarchy {solver.setup['hierarchy_bytes'] / 2**20:.0f} MiB with the kept structure")
    print(f"  {'step':>4} {'full s':>8} {'re-setup s':>10} {'ratio':>6} {'full wall':>9} {'re wall':>8} "
          f"{'it fresh':>8} {'it re':>6}")
    ratios, wall_ratios = [], []
    for step in range(1, args.steps + 1):
        A_t = coefficient_step(A, n, 0.7 * step)
        fresh, full_wall = timed(lambda: amgsolve.Solver(A_t, **params))
        _, re_wall = timed(lambda: solver.rebuild(A_t))
        reused = solver.setup["reused"]
        full, re = fresh.setup["seconds"], solver.setup["seconds"]
        _, fresh_info = fresh.solve(b)
        _, re_info = solver.solve(b)
        if reused:
            ratios.append(re / full)
            wall_ratios.append(re_wall / full_wall)
        # A full setup says why; a re-setup whose products left the kept patterns from some level says where.
        note = f"  ({solver.setup['rebuild_note']})" if not reused or "level" in solver.setup["rebuild_note"] else ""
        print(f"  {step:4d} {full:8.3f} {re:10.3f} {re / full:6.2f} {full_wall:9.3f} {re_wall:8.3f} "
              f"{fresh_info['iterations']:8d} {re_info['iterations']:6d}{note}")
        if args.phases:
            print_phases("re-setup", solver.setup)
            print_phases("full", fresh.setup)
        del fresh
    if ratios:
        print(f"  median re-setup / full setup over the {len(ratios)} re-setups: {statistics.median(ratios):.2f} "
              f"(library), {statistics.median(wall_ratios):.2f} (Python call)")


if __name__ == "__main__":
    run_main(main)
