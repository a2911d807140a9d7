"""Plots of amgsolve runs: JSON reports of the program (--report, output.report) and spgemm-bench CSVs (--csv)
turned into PNG files with matplotlib. Several inputs given together are overlaid (double against mixed,
two thread counts, ...), each labelled by its file name.

    python -m amgsolve.plot run.json [other.json ...] [bench.csv ...] [-o plots/]
    scripts/plot run.json                       # the same, in the project's virtual environment
    amgsolve.plot.plot(solver.report(info))     # from Python: a Solver's solve, as the program's report

Writes, for the reports: convergence.png (relative residual per iteration: the solve, every source of a
mouse run, every step of problem.steps and every load case), levels.png (rows and nonzeros per level), setup_phases.png (setup seconds per phase and level);
for --compare-spgemm reports: spgemm_comparison.png; for spgemm-bench CSVs: spgemm_bench.png (seconds per
backend and product, external baselines hatched and marked *). Prints the files it wrote.
"""
from __future__ import annotations

import argparse
import csv
import io
import json
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the file-only backend)
from matplotlib.ticker import MaxNLocator  # noqa: E402

# Written into every PNG's metadata ("Software"): a file without it is not replaced (see check_replaceable).
SIGNATURE = "amgsolve.plot"
HATCHES = ["", "//", "..", "xx", "\\\\", "++", "oo", "--", "||", "**", "OO", "//..", "xx..", "\\\\.."]
PHASES = ["strength", "aggregation", "eigenvalues", "prolongator", "transpose", "galerkin", "smoother"]
COARSE_FACTOR = "coarsest level"  # its only phase: the factorisation, or the smoother of a level too large for it
MOST_LEVELS = 1000  # a level number beyond this is no hierarchy's
WIDEST_FIGURE = 60  # inches (7,200 pixels): past it the bars of many products grow thinner, not the image wider


class PlotError(ValueError):
    """An input the plots cannot read, or an output they cannot write: the message names the file or field."""


def labels_of(paths: list[str]) -> list[str]:
    """A label per input, in order: its file name, with its folder where two inputs share a file name, and
    numbered where that is not enough either (the same file given twice)."""
    names = [os.path.splitext(os.path.basename(p))[0] for p in paths]
    labels = [os.path.join(os.path.basename(os.path.dirname(os.path.abspath(p))), n) if names.count(n) > 1 else n
              for p, n in zip(paths, names)]
    if len(set(labels)) < len(labels):
        labels = [f"{label} ({i + 1})" for i, label in enumerate(labels)]
    return [shown(label) for label in labels]


def shown(label: str) -> str:
    """A label shown as it is: a '$' escaped (matplotlib would read 'a$x$' as a formula), and a leading '_'
    (its legends' mark for "no entry") after a space."""
    label = label.replace("$", r"\$")
    return " " + label if label.startswith("_") else label


def is_number(value) -> bool:
    """A finite number (json.load reads NaN and Infinity, which no field of a report holds)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an integer beyond any float
        return False


def history_problem(name: str, history) -> str | None:
    if not isinstance(history, list) or not all(is_number(v) for v in history):
        return f"{name} is not a list of numbers"
    return None


def levels_problem(levels) -> str | None:
    if not isinstance(levels, list):
        return "setup.levels is not a list"
    for i, level in enumerate(levels):
        if not isinstance(level, dict) or not all(is_number(level.get(k)) for k in ("level", "rows", "nnz")):
            return f"setup.levels[{i}] lacks a number 'level', 'rows' or 'nnz'"
        if level["level"] != int(level["level"]) or not 0 <= level["level"] < MOST_LEVELS or \
                level["rows"] < 0 or level["nnz"] < 0:
            return f"setup.levels[{i}] has a level that is no level number, or a negative count"
        phases = level.get("phases", {})
        if phases is not None and (not isinstance(phases, dict) or not all(is_number(v) for v in phases.values())):
            return f"setup.levels[{i}].phases is not a map of numbers"
        if level.get("coarsest") and not is_number(level.get("seconds", 0.0)):
            return f"setup.levels[{i}].seconds is not a number"
    return None


def solves_problem(report: dict) -> str | None:
    """The histories of every solve: the one solve's, the mouse's sources', the steps', the load cases'."""
    if not is_number(report["solve"].get("tolerance", 0.0)):
        return "solve.tolerance is not a number"
    problems = [history_problem("solve.history", report["solve"].get("history", []))]
    for key, number in (("sources", "index"), ("steps", "step"), ("load_cases", "column")):
        entries = report.get(key, [])
        if not isinstance(entries, list) or not all(isinstance(e, dict) and is_number(e.get(number)) for e in entries):
            return f"{key} is not a list of maps with a number '{number}'"
        for entry in entries:
            name = f"{key}[{entry[number]}]"  # by its own number, from 1
            if key == "sources":
                for band in ("excitation", "emission"):
                    if not isinstance(entry.get(band, {}), dict):
                        return f"{name}.{band} is not a map"
                    problems.append(history_problem(f"{name}.{band}.history", entry.get(band, {}).get("history", [])))
            else:
                problems.append(history_problem(f"{name}.history", entry.get("history", [])))
    return next((p for p in problems if p), None)


def comparison_problem(report: dict) -> str | None:
    rows = report.get("spgemm_comparison", [])
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        return "spgemm_comparison is not a list of maps"
    for i, row in enumerate(rows):
        if row.get("error"):
            continue
        if not is_number(row.get("runs", 1)):
            return f"spgemm_comparison[{i}].runs is not a number"
        numbers = ["level", "seconds"] + (["min_seconds", "max_seconds"] if row.get("runs", 1) > 1 else [])
        missing = [k for k in numbers if not is_number(row.get(k))]
        missing += [k for k in ("product", "backend") if not isinstance(row.get(k), str)]
        if missing:
            return f"spgemm_comparison[{i}].{missing[0]} is not a {'number' if missing[0] in numbers else 'text'}"
    return None


def report_problem(report) -> str | None:
    """What keeps `report` from being plotted (the field at fault), or None: every field a plot reads is
    checked here, before any plot is drawn."""
    if not isinstance(report, dict) or not str(report.get("amgsolve", "")).startswith("amgsolve") or \
            not isinstance(report.get("setup"), dict) or not isinstance(report.get("solve"), dict):
        return "not an amgsolve report (no 'amgsolve', 'setup' and 'solve')"
    return levels_problem(report["setup"].get("levels")) or solves_problem(report) or comparison_problem(report)


def read_report(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as f:
            report = json.load(f)
    except (OSError, ValueError) as e:  # ValueError: malformed JSON or not UTF-8
        raise PlotError(f"{path}: cannot read a JSON report ({e})")
    except RecursionError:
        raise PlotError(f"{path}: cannot read a JSON report (nested too deeply)")
    problem = report_problem(report)
    if problem:
        raise PlotError(f"{path}: {problem}")
    return report


def read_bench_csv(path: str) -> list[dict]:
    try:
        with open(path, newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
    except (OSError, ValueError, csv.Error) as e:
        raise PlotError(f"{path}: cannot read ({e})")
    if rows and {"level", "product", "backend", "seconds"} <= set(rows[0]):
        raise PlotError(f"{path}: the program's SpGEMM comparison table (output.spgemm_csv): plot the "
                        f"run's JSON report (--report), which holds the same rows")
    if not rows or not {"matrix", "backend", "median_seconds"} <= set(rows[0]):
        raise PlotError(f"{path}: not a spgemm-bench CSV (needs matrix, backend, median_seconds)")
    for line, row in enumerate(rows, start=2):
        try:
            seconds = float(row["median_seconds"])
        except (TypeError, ValueError):
            seconds = math.nan
        if not (seconds >= 0 and math.isfinite(seconds)):
            raise PlotError(f"{path}:{line}: median_seconds {row['median_seconds']!r} is not a number of "
                            f"seconds")
    return rows


def convergence_curves(report: dict) -> list[tuple[str, list[float]]]:
    """(name, history) of every solve in the report: the sources of a mouse run, the time steps of a run
    with problem.steps, the load cases (columns of problem.rhs), or the one solve."""
    curves = []
    for source in report.get("sources", []):
        for band in ("excitation", "emission"):
            history = source.get(band, {}).get("history")
            if history:
                curves.append((f"source {source['index']} {band}", history))
    for step in report.get("steps", []):
        if step.get("history"):
            curves.append((f"step {step['step']}", step["history"]))
    for case in report.get("load_cases", []):
        if case.get("history"):
            curves.append((f"load case {case['column']}", case["history"]))
    if not curves and report["solve"].get("history"):
        curves.append((f"{report['solve'].get('type', 'solve')} ({report['solve'].get('precision', '')})",
                       report["solve"]["history"]))
    return curves


# More curves than this get one legend entry per input (each input's curves in one colour) instead of one each.
MOST_LEGEND_ENTRIES = 16


def legend_labels(all_curves: dict[str, list]) -> dict[str, list[str | None]]:
    """Each curve's legend entry (None: none): one per curve, named by its input where there are several; past
    MOST_LEGEND_ENTRIES curves, one per input, its curves drawn in its colour."""
    by_input = sum(len(curves) for curves in all_curves.values()) > MOST_LEGEND_ENTRIES
    labels = {}
    for label, curves in all_curves.items():
        many = len(curves) > 1
        if by_input:
            labels[label] = [f"{label} ({len(curves)} solves)" if many else label] + [None] * (len(curves) - 1)
        else:
            labels[label] = [f"{label}: {name}" if not many or len(all_curves) > 1 else name for name, _ in curves]
    return labels


def plot_convergence(reports: dict[str, dict]) -> tuple[str, bytes] | None:
    all_curves = {label: convergence_curves(report) for label, report in reports.items()}
    if not any(all_curves.values()):
        print("plot: no residual history in the reports: convergence.png not drawn", file=sys.stderr)
        return None
    fig, ax = plt.subplots(figsize=(7, 4.5))
    labels = legend_labels(all_curves)
    total = sum(len(curves) for curves in all_curves.values())
    by_input = total > MOST_LEGEND_ENTRIES
    # Ten colours cycle: past ten legend entries, 20 (tab20's), so that no two entries share one.
    palette = plt.get_cmap("tab20").colors if (len(reports) if by_input else total) > 10 else None
    curve = 0
    for index, (label, report) in enumerate(reports.items()):
        curves = all_curves[label]
        many = len(curves) > 1
        for (name, history), entry in zip(curves, labels[label]):
            slot = index if by_input else curve
            colour = palette[slot % len(palette)] if palette else f"C{slot % 10}"
            ax.semilogy(range(len(history)), history, marker="" if many else "o", markersize=3,
                        linewidth=0.8 if many else 1.5, alpha=0.6 if many else 1.0, label=entry, color=colour)
            curve += 1
        tolerance = report["solve"].get("tolerance")
        if tolerance:
            ax.axhline(tolerance, color="grey", linestyle=":", linewidth=1)
    ax.set_xlabel("iteration")
    ax.set_ylabel("relative residual ||b - A x|| / ||b||")
    ax.set_title("Convergence")
    ax.grid(True, which="both", alpha=0.3)
    handles, _ = ax.get_legend_handles_labels()
    if handles:
        ax.legend(fontsize=7)
    return save(fig, "convergence.png")


def plot_levels(reports: dict[str, dict]) -> tuple[str, bytes]:
    fig, (rows_ax, nnz_ax) = plt.subplots(1, 2, figsize=(9, 4))
    width = 0.8 / len(reports)
    for i, (label, report) in enumerate(reports.items()):
        levels = report["setup"]["levels"]
        x = [l["level"] + (i - (len(reports) - 1) / 2) * width for l in levels]
        rows_ax.bar(x, [l["rows"] for l in levels], width, label=label)
        nnz_ax.bar(x, [l["nnz"] for l in levels], width, label=label)
    for ax, what in ((rows_ax, "rows"), (nnz_ax, "nonzeros")):
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_yscale("log")
        ax.set_xlabel("level")
        ax.set_ylabel(what)
        ax.set_title(f"{what.capitalize()} per level")
        ax.grid(True, axis="y", which="both", alpha=0.3)
    rows_ax.legend(fontsize=7)
    fig.tight_layout()
    return save(fig, "levels.png")


def phase_seconds(level: dict, phase: str) -> float:
    """A level's seconds in a phase; the coarsest level has no phases, only its factorisation's seconds."""
    if level.get("coarsest"):
        return level.get("seconds", 0.0) if phase == COARSE_FACTOR else 0.0
    return (level.get("phases") or {}).get(phase, 0.0)


def plot_setup_phases(reports: dict[str, dict]) -> tuple[str, bytes]:
    fig, ax = plt.subplots(figsize=(8, 4.5))
    width = 0.8 / len(reports)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, (label, report) in enumerate(reports.items()):
        levels = report["setup"]["levels"]
        x = [l["level"] + (i - (len(reports) - 1) / 2) * width for l in levels]
        bottom = [0.0] * len(levels)
        for p, phase in enumerate(PHASES + [COARSE_FACTOR]):
            seconds = [phase_seconds(l, phase) for l in levels]
            ax.bar(x, seconds, width, bottom=bottom, color=colours[p % len(colours)],
                   label=phase if i == 0 else None, edgecolor="white", linewidth=0.5,
                   hatch=HATCHES[i % len(HATCHES)])
            bottom = [b + s for b, s in zip(bottom, seconds)]
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("level" + ("  (groups: " + ", ".join(reports) + ")" if len(reports) > 1 else ""))
    ax.set_ylabel("seconds")
    ax.set_title("Setup time per phase and level")
    ax.legend(fontsize=7)
    ax.grid(True, axis="y", alpha=0.3)
    return save(fig, "setup_phases.png")


def plot_backend_bars(groups: list[str], backends: list[str], seconds: dict, baselines: set, title: str,
                      name: str, spread: dict | None = None) -> tuple[str, bytes]:
    """Grouped bars: one group per product, one bar per backend; external baselines hatched, '*' in the legend;
    `spread` ((group, backend) -> (fastest, slowest)) drawn as error bars around the median."""
    fig, ax = plt.subplots(figsize=(min(WIDEST_FIGURE, max(7, 0.6 * len(groups) * len(backends) / 2)), 4.5))
    width = 0.8 / len(backends)
    for b, backend in enumerate(backends):
        x = [g + (b - (len(backends) - 1) / 2) * width for g in range(len(groups))]
        values = [seconds.get((group, backend), 0.0) for group in groups]
        errors = None
        if spread:
            ranges = [spread.get((group, backend), (v, v)) for group, v in zip(groups, values)]
            errors = [[max(0.0, v - lo) for v, (lo, _) in zip(values, ranges)],
                      [max(0.0, hi - v) for v, (_, hi) in zip(values, ranges)]]
        external = backend in baselines
        ax.bar(x, values, width, label=backend + (" *" if external else ""), hatch="//" if external else "",
               edgecolor="black" if external else None, linewidth=0.5, yerr=errors, capsize=1.5,
               error_kw={"linewidth": 0.6})
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(groups, rotation=30, ha="right", fontsize=7)
    ax.set_yscale("log")
    ax.set_ylabel("seconds")
    ax.set_title(title + " (* external baseline)")
    ax.legend(fontsize=7, ncol=2)
    ax.grid(True, axis="y", which="both", alpha=0.3)
    fig.tight_layout()
    return save(fig, name)


def plot_spgemm_comparison(reports: dict[str, dict]) -> tuple[str, bytes] | None:
    seconds, spread, baselines, groups, backends = {}, {}, set(), [], []
    for label, report in reports.items():
        for row in report.get("spgemm_comparison", []):
            if row.get("error"):
                continue
            group = f"L{row['level']} {row['product']}" + (f" [{label}]" if len(reports) > 1 else "")
            if group not in groups:
                groups.append(group)
            if row["backend"] not in backends:
                backends.append(row["backend"])
            seconds[(group, row["backend"])] = row["seconds"]
            if row.get("runs", 0) > 1:
                spread[(group, row["backend"])] = (row["min_seconds"], row["max_seconds"])
            if row.get("external_baseline"):
                baselines.add(row["backend"])
    if not groups:
        return None
    return plot_backend_bars(groups, backends, seconds, baselines,
                             "SpGEMM backends on the setup's products: median, bars from fastest to slowest run",
                             "spgemm_comparison.png", spread)


def plot_spgemm_bench(tables: dict[str, list[dict]]) -> tuple[str, bytes] | None:
    seconds, baselines, groups, backends = {}, set(), [], []
    for label, rows in tables.items():
        for row in rows:
            group = row["matrix"] + (f" [{label}]" if len(tables) > 1 else "")
            if group not in groups:
                groups.append(group)
            if row["backend"] not in backends:
                backends.append(row["backend"])
            seconds[(group, row["backend"])] = float(row["median_seconds"])
            if row.get("external_baseline") == "true":
                baselines.add(row["backend"])
    if not groups:
        return None
    return plot_backend_bars(groups, backends, seconds, baselines, "spgemm-bench: median seconds",
                             "spgemm_bench.png")


PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def is_our_png(head: bytes) -> bool:
    """Whether `head` (a file's first bytes) is a PNG with our Software text chunk before its image data:
    the chunks read one by one, not a search for the text (a note that mentions amgsolve.plot is not ours)."""
    if not head.startswith(PNG_MAGIC):
        return False
    at = len(PNG_MAGIC)
    while at + 8 <= len(head):
        length = int.from_bytes(head[at:at + 4], "big")
        kind, data = head[at + 4:at + 8], head[at + 8:at + 8 + length]
        if kind == b"tEXt" and data == b"Software\x00" + SIGNATURE.encode():
            return True
        if kind in (b"IDAT", b"IEND"):
            return False
        at += 12 + length  # length, type, data, CRC
    return False


def check_replaceable(path: str) -> None:
    """A PNG a plot would replace must be one of ours (SIGNATURE in its metadata) or empty."""
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except FileNotFoundError:
        return
    except OSError as e:
        raise PlotError(f"cannot check {path} ({e})")
    if head and not is_our_png(head):
        raise PlotError(f"{path} exists and is not a plot of amgsolve's: not replaced (remove it, or "
                        f"write elsewhere)")


# The PNGs drawn, by name, in memory: written only once every plot is drawn (write_all), so that no input
# fault leaves a folder with some new and some old plots.
Drawn = dict[str, bytes]


def save(fig, name: str) -> tuple[str, bytes]:
    png = io.BytesIO()
    try:
        fig.savefig(png, format="png", dpi=120, metadata={"Software": SIGNATURE})
    finally:
        plt.close(fig)
    return name, png.getvalue()


def write_all(out: str, drawn: Drawn) -> list[str]:
    """Every PNG to a temporary file first, then each renamed over its name: a write that fails (a full disk)
    leaves the folder as it was, not some plots new and some old."""
    temporaries = {}
    try:
        for name, png in drawn.items():
            temporary = os.path.join(out, f".{name}.tmp{os.getpid()}")
            temporaries[name] = temporary
            with open(temporary, "wb") as f:
                f.write(png)
    except OSError as e:
        for temporary in temporaries.values():
            try:
                os.remove(temporary)
            except OSError:
                pass
        raise PlotError(f"cannot write the plots into {out} ({e}); none replaced")
    written = []
    for name, temporary in temporaries.items():
        path = os.path.join(out, name)
        try:
            os.replace(temporary, path)
        except OSError as e:
            for left in list(temporaries.values())[len(written):]:
                try:
                    os.remove(left)
                except OSError:
                    pass
            raise PlotError(f"cannot write {path} ({e})" +
                            (f"; written before it: {', '.join(written)}" if written else ""))
        written.append(path)
    return written


def plot(runs, output: str = "plots") -> list[str]:
    """The plots of runs from Python, as the command draws them from files: `runs` is a report (a Solver's
    report(statistics), or a program's JSON report read by json.load), a list of reports, or a dict of them by
    label; several are overlaid, labelled by their keys (a list's by "run 1", "run 2", ...). Writes the PNGs
    into the folder `output` and returns their paths; PlotError (a ValueError) names what cannot be plotted
    or written, before anything is."""
    if isinstance(runs, dict) and "amgsolve" in runs:  # one report, not a dict of them
        runs = [runs]
    if isinstance(runs, (list, tuple)):
        runs = {f"run {i + 1}" if len(runs) > 1 else "run": report for i, report in enumerate(runs)}
    if not isinstance(runs, dict) or not runs:
        raise PlotError("plot(runs): give a report (Solver.report's, or a JSON report read), a list of them or a "
                        "dict of them by label")
    reports = {}
    for label, report in runs.items():
        problem = report_problem(report)
        if problem:
            raise PlotError(f"{label}: {problem}")
        reports[shown(str(label))] = report
    return draw(reports, {}, output)


def draw(reports: dict[str, dict], tables: dict[str, list[dict]], output: str) -> list[str]:
    """Every plot of the (checked) reports and bench tables into the folder `output`: the paths written."""
    try:
        os.makedirs(output, exist_ok=True)
    except OSError as e:
        raise PlotError(f"cannot create the folder {output} ({e})")
    plots = []
    try:  # (every field read is checked before: this is the net under those checks)
        if reports:
            plots += [plot_convergence(reports), plot_levels(reports), plot_setup_phases(reports),
                      plot_spgemm_comparison(reports)]
        if tables:
            plots.append(plot_spgemm_bench(tables))
    except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as e:
        raise PlotError(f"the inputs have a field the plots cannot read ({type(e).__name__}: {e}); "
                        f"nothing written")
    drawn = dict(plot for plot in plots if plot)
    for name in drawn:  # all before any is written
        check_replaceable(os.path.join(output, name))
    written = write_all(output, drawn)
    remove_stale_plots(output, written)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m amgsolve.plot", description=__doc__.splitlines()[0])
    parser.add_argument("inputs", nargs="+", help="JSON reports and spgemm-bench CSV files")
    parser.add_argument("-o", "--output", default="plots", help="folder for the PNG files (default: plots)")
    args = parser.parse_args(argv)
    try:
        reports, tables = {}, {}
        for path, label in zip(args.inputs, labels_of(args.inputs)):
            if path.lower().endswith(".csv"):
                tables[label] = read_bench_csv(path)
            else:
                reports[label] = read_report(path)
        for path in draw(reports, tables, args.output):
            print(path)
    except PlotError as e:
        raise SystemExit(f"plot: {e}")
    return 0


ALL_PLOTS = ("convergence.png", "levels.png", "setup_phases.png", "spgemm_comparison.png", "spgemm_bench.png")


def remove_stale_plots(out: str, written: list) -> None:
    """Our plots in the folder that this run did not write (no data for them: a report without a comparison,
    no CSV given) are an earlier run's: removed, so that the folder shows this run only. Others stay."""
    for name in ALL_PLOTS:
        path = os.path.join(out, name)
        if path in written or not os.path.isfile(path):  # (a folder of that name is not ours)
            continue
        try:
            with open(path, "rb") as f:
                ours = is_our_png(f.read(4096))
            if ours:
                os.remove(path)
                print(f"{path} removed: an earlier run's, this one has no data for it")
        except OSError as e:
            print(f"plot: {path} left as it is ({e})", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
