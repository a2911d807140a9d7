#!/usr/bin/env python3
"""amgsolve against AMGCL in the same run, and the solve against its memory-bandwidth bound (issue #32).

AMGCL (the driver of ../shared/anchors: smoothed aggregation with SPAI0 inside CG, the same 3D Poisson
problems, b = 1, tolerance 1e-8) and amgsolve run alternately (the 2D Poisson and the mouse, which the
driver does not have, by amgsolve alone), `--runs` rounds per thread count; the table
gives the medians, the ratios to AMGCL of the same round set, and how far amgsolve's solve is from the
bandwidth bound: the measured seconds per iteration over the model's least traffic per iteration
(`setup.model_bytes_per_iteration` in the report, amgsolve/iteration_traffic.hpp) divided by the STREAM
triad bandwidth measured in the same run (bench/stream-triad).

  bench/amgcl-compare.py [--build build] [--runs 3] [--threads 2,1] [--anchors ../shared/anchors]

The AMGCL driver is built into BUILD/baselines (never into the repository); it needs the Boost headers
(Debian libboost-dev, installed by scripts/bootstrap). Without the anchors folder the script says so and
exits 0 (nothing to compare against).
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# (problem, amgsolve variant, its config and overrides, the AMGCL driver's arguments for the same problem)
CASES = [
    ("7-point 128^3", "mixed (poisson.yaml as shipped)", ["configs/poisson.yaml"], ["128", "7"]),
    ("7-point 128^3", "double", ["configs/poisson.yaml", "--set", "solver.precision=double"], ["128", "7"]),
    ("27-point 100^3", "double (poisson27.yaml as shipped)", ["configs/poisson27.yaml"], ["100", "27"]),
    # AMGCL's driver has no 2D or mouse problem: amgsolve alone, against its bandwidth bound.
    ("5-point 1024^2", "double (poisson2d.yaml as shipped)", ["configs/poisson2d.yaml"], None),
    ("mouse 0.28 mm, first source", "double (mouse.yaml as shipped)", ["configs/mouse.yaml"], None),
]


def run(command, threads, allowed=(0,)):
    """The command's output; an exit status outside `allowed` or a run past 15 minutes ends the script."""
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    try:
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=900)
    except subprocess.TimeoutExpired:
        sys.exit(f"amgcl-compare: {' '.join(command)} ran past 15 minutes")
    if done.returncode not in allowed:
        sys.exit(f"amgcl-compare: {' '.join(command)} failed ({done.returncode}): {done.stderr.strip()[-400:]}")
    return done.stdout


def build_driver(build, anchors):
    source = os.path.join(anchors, "amgcl_poisson.cpp")
    driver = os.path.join(build, "baselines", "amgcl_poisson")
    if os.path.exists(driver) and os.path.getmtime(driver) >= os.path.getmtime(source):
        return driver
    if not os.path.exists("/usr/include/boost/version.hpp"):
        sys.exit("amgcl-compare: AMGCL needs the Boost headers: apt-get install libboost-dev (scripts/bootstrap does)")
    os.makedirs(os.path.dirname(driver), exist_ok=True)
    print(f"building the AMGCL driver into {driver}", file=sys.stderr)
    subprocess.run(["g++", "-std=c++17", "-O3", "-fopenmp", "-DNDEBUG", "-w", "-I" + anchors, source, "-o", driver],
                   check=True)
    return driver


def amgcl_result(output):
    line = next((l for l in output.splitlines() if l.startswith("RESULT")), None)
    if line is None:
        sys.exit("amgcl-compare: the AMGCL driver printed no RESULT line")
    fields = dict(item.split("=") for item in line.split()[1:])
    return {"setup": float(fields["setup"]), "solve": float(fields["solve"]), "iterations": int(fields["iters"])}


def amgsolve_result(binary, args, threads, report):
    # Exit 3 (not converged) still writes the report: its row shows the iterations it took.
    run([binary, *args, "--threads", str(threads), "--quiet", "--report", report], threads, allowed=(0, 3))
    with open(report) as f:
        j = json.load(f)
    return {"setup": j["setup"]["seconds"], "solve": j["solve"]["seconds"], "iterations": j["solve"]["iterations"],
            "bytes": j["setup"]["model_bytes_per_iteration"], "peak": j["peak_memory_bytes"]}


def triad(binary, threads):
    line = run([binary], threads).split()
    return float(line[1].split("=")[1])


def median(rows, key):
    return statistics.median(r[key] for r in rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--threads", default="2,1")
    parser.add_argument("--anchors", default=os.path.join(ROOT, "..", "shared", "anchors"))
    args = parser.parse_args()
    args.build, args.anchors = os.path.abspath(args.build), os.path.abspath(args.anchors)
    have_anchors = os.path.exists(os.path.join(args.anchors, "amgcl_poisson.cpp"))
    if not have_anchors:
        print(f"amgcl-compare: no AMGCL driver in {args.anchors}: amgsolve against its bandwidth bound only",
              file=sys.stderr)
    binary = os.path.join(args.build, "app", "amgsolve")
    triad_binary = os.path.join(args.build, "bench", "stream-triad")
    for needed in (binary, triad_binary):
        if not os.path.exists(needed):
            sys.exit(f"amgcl-compare: {needed} is missing: cmake --build {args.build} --target amgsolve stream-triad")
    driver = build_driver(args.build, args.anchors) if have_anchors else None
    os.chdir(ROOT)
    scratch = tempfile.mkdtemp(prefix="amgcl-compare-")
    try:
        for threads in (int(t) for t in args.threads.split(",")):
            bandwidths, amgcl, ours = [], {}, {}
            for round_ in range(args.runs):
                bandwidths.append(triad(triad_binary, threads))
                for problem, variant, config, driver_args in CASES:
                    key = tuple(driver_args or ())
                    if driver_args and driver and len(amgcl.setdefault(key, [])) <= round_:  # one AMGCL run per problem and round
                        amgcl[key].append(amgcl_result(run([driver, *driver_args], threads)))
                    ours.setdefault(variant, []).append(
                        amgsolve_result(binary, config, threads, os.path.join(scratch, "report.json")))
                print(f"  {threads} thread(s), round {round_ + 1} of {args.runs} done", file=sys.stderr)
            bandwidth = statistics.median(bandwidths)
            print(f"\n{threads} thread(s), medians of {args.runs} alternated runs; STREAM triad "
                  f"{bandwidth / 1e9:.1f} GB/s\n")
            print("| problem | solver | iterations | setup s | solve s | total s | setup / AMGCL | total / AMGCL "
                  "| solve / bandwidth bound | peak MiB |")
            print("|---|---|---|---|---|---|---|---|---|---|")
            shown = set()
            for problem, variant, config, driver_args in CASES:
                key = tuple(driver_args or ())
                base = amgcl.get(key)
                if base:
                    base_setup = median(base, "setup")
                    base_total = median([{"t": r["setup"] + r["solve"]} for r in base], "t")
                if base and key not in shown:
                    shown.add(key)
                    print(f"| {problem} | AMGCL | {median(base, 'iterations'):.0f} | {base_setup:.3f} | "
                          f"{median(base, 'solve'):.3f} | {base_total:.3f} | 1.00 | 1.00 | | |")
                rows = ours[variant]
                setup, solve = median(rows, "setup"), median(rows, "solve")
                total = median([{"t": r["setup"] + r["solve"]} for r in rows], "t")
                per_iteration = median([{"t": r["solve"] / r["iterations"]} for r in rows], "t")
                bound = median(rows, "bytes") / bandwidth
                ratios = f"{setup / base_setup:.2f} | {total / base_total:.2f}" if base else "— | —"
                print(f"| {problem} | amgsolve {variant} | {median(rows, 'iterations'):.0f} | {setup:.3f} | "
                      f"{solve:.3f} | {total:.3f} | {ratios} | {per_iteration / bound:.2f} | "
                      f"{median(rows, 'peak') / 2**20:.0f} |")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
