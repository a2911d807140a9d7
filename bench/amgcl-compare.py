#!/usr/bin/env python3
"""amgsolve against AMGCL in the same run, and the solve against its memory-bandwidth bound (issue #32).

AMGCL (the driver of ../shared/anchors: smoothed aggregation with SPAI0 inside CG, the same 3D Poisson
problems, b = 1, tolerance 1e-8) and amgsolve run alternately (the 2D Poisson and the mouse, which the
driver does not have, by amgsolve alone), `--runs` rounds per thread count. AMGCL runs twice per problem:
with its default strength threshold (eps_strong 0.08) and with amgsolve's (amg.strength_threshold 0.02).
On the 27-point stencil every coupling is weak at 0.08 (1/26 of the diagonal), so AMGCL's default builds a
cheap hierarchy that needs many iterations; on the 7-point one 0.02 costs AMGCL iterations. The ratios are
taken against whichever of the two is faster end to end (its row says "reference"), so amgsolve is compared
with AMGCL at its best on each problem. The table gives the medians, the ratios to that AMGCL run of the
same round set, and how far amgsolve's solve is from the bandwidth bound: the measured seconds per iteration over the model's least traffic per iteration
(`setup.model_bytes_per_iteration` in the report, amgsolve/iteration_traffic.hpp) divided by the STREAM
triad bandwidth measured in the same run (build/bench/stream-triad). Each run's peak memory, fresh pages (minor
page faults) and system time are the kernel's count of that process (os.wait4), for AMGCL too: fresh pages cost
2-5 us each on a VM, by the hour, and so move both setups by how many each takes.

  bench/amgcl-compare.py [--build build] [--runs 3] [--threads 2,1] [--anchors ../shared/anchors]

The AMGCL driver is built into BUILD/baselines (never into the repository), from a copy that reads
AMGCL_EPS_STRONG from the environment (one line added after the driver's parameters); it needs the Boost headers
(Debian libboost-dev, installed by scripts/bootstrap). Without the anchors folder the script says so and
measures amgsolve alone (its times and its solve against the bandwidth bound).
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from bench_common import positive_int, positive_ints, run_main

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
# AMGCL's strength thresholds: (label, value for AMGCL_EPS_STRONG or None for the driver's default).
AMGCL_THRESHOLDS = [("eps_strong 0.08 (its default)", None), ("eps_strong 0.02 (amgsolve's)", "0.02")]
# The line of the driver after which the threshold is read, and what is added there.
DRIVER_PARAMETERS = "prm.solver.maxiter = 500;"
DRIVER_THRESHOLD = (' if (const char* e = std::getenv("AMGCL_EPS_STRONG")) '
                    'prm.precond.coarsening.aggr.eps_strong = std::atof(e);')


def run(command, threads, allowed=(0,), extra_env=None):
    """The command's output; an exit status outside `allowed` or a run past 15 minutes ends the script."""
    return run_measured(command, threads, allowed, extra_env)[0]


def run_measured(command, threads, allowed=(0,), extra_env=None):
    """The command's output and what the kernel counted of it alone (os.wait4): its fresh pages (minor page
    faults), the system time they cost, and its peak resident memory. A fresh page costs 2-5 us on this VM,
    by the hour, so AMGCL's setup and amgsolve's move with it by how many each takes."""
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), **(extra_env or {}))
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        child = subprocess.Popen(command, env=env, stdout=out, stderr=err, text=True)
        try:
            status, usage = wait_for(child, timeout=900)
        except subprocess.TimeoutExpired:
            sys.exit(f"amgcl-compare: {' '.join(command)} ran past 15 minutes")
        finally:  # a timeout, Ctrl-C or any other exit leaves no run behind to skew the next measurement
            if child.returncode is None:
                child.kill()
                child.wait()
        out.seek(0)
        err.seek(0)
        if status not in allowed:
            sys.exit(f"amgcl-compare: {' '.join(command)} failed ({status}): {err.read().strip()[-400:]}")
        return out.read(), {"faults": usage.ru_minflt, "system": usage.ru_stime, "peak": usage.ru_maxrss * 1024}


def wait_for(child, timeout):
    """The child's exit status and resource usage, reaped by os.wait4 (Popen.wait would take the usage)."""
    deadline = time.monotonic() + timeout
    while True:
        pid, status, usage = os.wait4(child.pid, os.WNOHANG)
        if pid == child.pid:
            child.returncode = os.waitstatus_to_exitcode(status)
            return child.returncode, usage
        if time.monotonic() > deadline:
            raise subprocess.TimeoutExpired(child.args, timeout)
        time.sleep(0.01)


def build_driver(build, anchors):
    source = os.path.join(anchors, "amgcl_poisson.cpp")
    driver = os.path.join(build, "baselines", "amgcl_poisson")
    if (os.path.exists(driver) and os.path.getmtime(driver) >= os.path.getmtime(source)
            and os.path.getmtime(driver) >= os.path.getmtime(__file__)):
        return driver
    if not os.path.exists("/usr/include/boost/version.hpp"):
        sys.exit("amgcl-compare: AMGCL needs the Boost headers: apt-get install libboost-dev (scripts/bootstrap does)")
    with open(source) as f:
        text = f.read()
    if DRIVER_PARAMETERS not in text:
        sys.exit(f"amgcl-compare: {source} has no line '{DRIVER_PARAMETERS}' to read AMGCL_EPS_STRONG after")
    os.makedirs(os.path.dirname(driver), exist_ok=True)
    copy = driver + ".cpp"  # the driver's own folder holds poisson.h: it stays on the include path
    with open(copy, "w") as f:
        f.write(text.replace(DRIVER_PARAMETERS, DRIVER_PARAMETERS + DRIVER_THRESHOLD, 1))
    print(f"building the AMGCL driver into {driver}", file=sys.stderr)
    subprocess.run(["g++", "-std=c++17", "-O3", "-fopenmp", "-DNDEBUG", "-w", "-I" + anchors, copy, "-o", driver],
                   check=True)
    return driver


def amgcl_result(output, usage):
    line = next((l for l in output.splitlines() if l.startswith("RESULT")), None)
    if line is None:
        sys.exit("amgcl-compare: the AMGCL driver printed no RESULT line")
    fields = dict(item.split("=") for item in line.split()[1:])
    return {"setup": float(fields["setup"]), "solve": float(fields["solve"]), "iterations": int(fields["iters"]),
            **usage}


def amgsolve_result(binary, args, threads, report):
    # Exit 3 (not converged) still writes the report: its row shows the iterations it took.
    _, usage = run_measured([binary, *args, "--threads", str(threads), "--quiet", "--report", report], threads,
                            allowed=(0, 3))
    with open(report) as f:
        j = json.load(f)
    return {"setup": j["setup"]["seconds"], "solve": j["solve"]["seconds"], "iterations": j["solve"]["iterations"],
            "bytes": j["setup"]["model_bytes_per_iteration"], **usage}


def triad(binary, threads):
    line = run([binary], threads).split()
    return float(line[1].split("=")[1])


def median(rows, key):
    return statistics.median(r[key] for r in rows)


def median_total(rows):
    return statistics.median(r["setup"] + r["solve"] for r in rows)


def run_amgcl_once(amgcl, driver, driver_args, threads, round_):
    """AMGCL on the problem at each strength threshold, once per round (two variants may share a problem)."""
    for label, eps in AMGCL_THRESHOLDS:
        runs = amgcl.setdefault((tuple(driver_args), label), [])
        if len(runs) <= round_:
            extra_env = {"AMGCL_EPS_STRONG": eps} if eps else None
            runs.append(amgcl_result(*run_measured([driver, *driver_args], threads, extra_env=extra_env)))


def memory_columns(rows):
    """Peak MiB, fresh pages in thousands and system seconds: medians over the rows (whole runs: the problem's
    assembly too)."""
    return f"{median(rows, 'peak') / 2**20:.0f} | {median(rows, 'faults') / 1e3:.0f} | {median(rows, 'system'):.2f}"


def print_table(threads, runs, bandwidth, amgcl, ours):
    print(f"\n{threads} thread(s), medians of {runs} alternated runs; STREAM triad {bandwidth / 1e9:.1f} GB/s\n")
    print("| problem | solver | iterations | setup s | solve s | total s | setup / AMGCL | total / AMGCL "
          "| solve / bandwidth bound | peak MiB | fresh pages (k) | system s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    shown = set()
    for problem, variant, config, driver_args in CASES:
        variants = {label: amgcl[(tuple(driver_args), label)] for label, _ in AMGCL_THRESHOLDS
                    if driver_args and (tuple(driver_args), label) in amgcl}
        base = min(variants.values(), key=median_total) if variants else None
        if base:
            base_setup, base_total = median(base, "setup"), median_total(base)
        if base and problem not in shown:
            shown.add(problem)
            for label, rows in variants.items():
                total = median_total(rows)
                ratios = "1.00 | 1.00 (reference)" if rows is base else \
                    f"{median(rows, 'setup') / base_setup:.2f} | {total / base_total:.2f}"
                print(f"| {problem} | AMGCL, {label} | {median(rows, 'iterations'):.0f} | {median(rows, 'setup'):.3f} | "
                      f"{median(rows, 'solve'):.3f} | {total:.3f} | {ratios} | | {memory_columns(rows)} |")
        rows = ours[variant]
        setup, solve, total = median(rows, "setup"), median(rows, "solve"), median_total(rows)
        per_iteration = statistics.median(r["solve"] / r["iterations"] for r in rows)
        bound = median(rows, "bytes") / bandwidth
        ratios = f"{setup / base_setup:.2f} | {total / base_total:.2f}" if base else "— | —"
        print(f"| {problem} | amgsolve {variant} | {median(rows, 'iterations'):.0f} | {setup:.3f} | "
              f"{solve:.3f} | {total:.3f} | {ratios} | {per_iteration / bound:.2f} | {memory_columns(rows)} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--runs", type=positive_int, default=3)
    parser.add_argument("--threads", type=positive_ints, default=[2, 1], help="thread counts, e.g. 2,1")
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
        for threads in args.threads:
            bandwidths, amgcl, ours = [], {}, {}
            for round_ in range(args.runs):
                bandwidths.append(triad(triad_binary, threads))
                for problem, variant, config, driver_args in CASES:
                    if driver_args and driver:
                        run_amgcl_once(amgcl, driver, driver_args, threads, round_)
                    ours.setdefault(variant, []).append(
                        amgsolve_result(binary, config, threads, os.path.join(scratch, "report.json")))
                print(f"  {threads} thread(s), round {round_ + 1} of {args.runs} done", file=sys.stderr)
            print_table(threads, args.runs, statistics.median(bandwidths), amgcl, ours)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    run_main(main)
