"""The plotting command on reports and CSVs that the program and spgemm-bench write in this test. Needs the
built program (scripts/build; AMGSOLVE_BUILD_DIR to name another build folder than build/)."""
import json
import os
import subprocess

import pytest

from amgsolve import plot

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("AMGSOLVE_BUILD_DIR", os.path.join(ROOT, "build"))
PROGRAM = os.path.join(BUILD, "app", "amgsolve")
SPGEMM_BENCH = os.path.join(BUILD, "bench", "spgemm-bench")
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

needs_program = pytest.mark.skipif(not (os.access(PROGRAM, os.X_OK) and os.access(SPGEMM_BENCH, os.X_OK)),
                                   reason=f"the program is not built in {BUILD} (run scripts/build)")


def run_report(tmp_path, name, config, *settings):
    report = tmp_path / f"{name}.json"
    command = [PROGRAM, os.path.join(ROOT, "configs", config), "--quiet", "--report", str(report)]
    for s in settings:
        command += ["--set", s] if "=" in s else [s]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return report


@needs_program
def test_reports_and_bench_csvs_become_every_plot(tmp_path):
    double = run_report(tmp_path, "double", "poisson-small.yaml", "solver.precision=double", "--compare-spgemm")
    mixed = run_report(tmp_path, "mixed", "poisson-small.yaml", "solver.precision=mixed")
    mouse = run_report(tmp_path, "mouse", "mouse-quick.yaml")
    csv = tmp_path / "bench.csv"
    subprocess.run([SPGEMM_BENCH, "--generate", "poisson5:20", "--runs", "1", "--warmup", "0", "--csv", str(csv)],
                   check=True, stdout=subprocess.DEVNULL)
    out = tmp_path / "plots"
    assert plot.main([str(double), str(mixed), str(mouse), str(csv), "-o", str(out)]) == 0
    for name in ("convergence", "levels", "setup_phases", "spgemm_comparison", "spgemm_bench"):
        with open(out / f"{name}.png", "rb") as f:
            assert f.read(8) == PNG_SIGNATURE, name
    # Every source of the mouse has its curves (excitation, and emission where solved), each the history
    # of its solve.
    report = json.loads(mouse.read_text())
    curves = plot.convergence_curves(report)
    expected = sum(1 + ("emission" in s) for s in report["sources"])
    assert len(curves) == expected > 1
    first = report["sources"][0]["excitation"]
    assert curves[0][1] == first["history"] and len(first["history"]) == first["iterations"] + 1
    single = plot.convergence_curves(json.loads(double.read_text()))
    assert len(single) == 1 and single[0][1][-1] <= 1e-8
    # Past 16 curves (two mouse reports: 32) the legend names each input once, not no curve at all.
    labels = plot.legend_labels({"a": curves, "b": curves, "double": single})
    named = [entry for entries in labels.values() for entry in entries if entry]
    assert named == [f"a ({expected} solves)", f"b ({expected} solves)", "double"]
    assert len(plot.legend_labels({"mouse": curves})["mouse"]) == expected
    # The setup bars stack each level's phases (timed within the level's seconds), and the coarsest level's
    # factorisation, which has no phases, as a bar of its own.
    levels = json.loads(double.read_text())["setup"]["levels"]
    for level in levels:
        stacked = sum(plot.phase_seconds(level, phase) for phase in plot.PHASES + [plot.COARSE_FACTOR])
        assert 0 < stacked <= level["seconds"] * (1 + 1e-9), level["level"]
    assert levels[-1]["coarsest"] and plot.phase_seconds(levels[-1], plot.COARSE_FACTOR) == levels[-1]["seconds"]
    assert set(levels[0]["phases"]) == set(plot.PHASES)  # the report's keys are sorted, not in the setup's order
    # A CSV is one by its extension in any case.
    upper = tmp_path / "BENCH.CSV"
    upper.write_bytes(csv.read_bytes())
    assert plot.main([str(upper), "-o", str(tmp_path / "upper")]) == 0
    assert (tmp_path / "upper" / "spgemm_bench.png").exists()


def test_the_bars_stack_the_phases_in_the_setups_order_as_the_package_gives_them():
    import numpy as np
    import scipy.sparse as sp

    import amgsolve

    n = 400
    A = sp.diags_array([-np.ones(n - 1), 2 * np.ones(n), -np.ones(n - 1)], offsets=[-1, 0, 1], format="csr")
    _, info = amgsolve.Solver(A).solve(np.ones(n))
    assert list(info["levels"][0]["phases"]) == plot.PHASES


@needs_program
def test_every_time_step_is_a_curve(tmp_path):
    steps = run_report(tmp_path, "steps", "poisson-steps.yaml", "problem.size=[12,12,12]", "problem.steps=3")
    report = json.loads(steps.read_text())
    curves = plot.convergence_curves(report)
    assert [name for name, _ in curves] == ["step 1", "step 2", "step 3"]
    assert [history for _, history in curves] == [step["history"] for step in report["steps"]]
    assert curves[-1][1] == report["solve"]["history"]


@needs_program
def test_a_plot_this_run_has_no_data_for_is_removed_if_ours(tmp_path):
    compared = run_report(tmp_path, "compared", "poisson-small.yaml", "--compare-spgemm")
    plain = run_report(tmp_path, "plain", "poisson-small.yaml")
    out = tmp_path / "plots"
    assert plot.main([str(compared), "-o", str(out)]) == 0
    assert (out / "spgemm_comparison.png").exists()
    (out / "spgemm_bench.png").write_bytes(PNG_SIGNATURE + b"someone else's")
    assert plot.main([str(plain), "-o", str(out)]) == 0
    assert not (out / "spgemm_comparison.png").exists(), "an earlier run's plot shown as this one's"
    assert (out / "spgemm_bench.png").exists(), "a file that is not ours stays"


def test_a_file_that_is_not_a_report_is_named(tmp_path):
    bad = tmp_path / "notes.json"
    bad.write_text('{"hello": 1}')
    with pytest.raises(SystemExit, match="notes.json: not an amgsolve report"):
        plot.main([str(bad), "-o", str(tmp_path / "plots")])
    csv = tmp_path / "other.csv"
    csv.write_text("a,b\n1,2\n")
    with pytest.raises(SystemExit, match="other.csv: not a spgemm-bench CSV"):
        plot.main([str(csv), "-o", str(tmp_path / "plots")])
    # The program's own table (output.spgemm_csv) points at the report that holds its rows.
    table = tmp_path / "comparison.csv"
    table.write_text("level,product,backend,seconds\n0,ap,gustavson,0.001\n")
    with pytest.raises(SystemExit, match=r"comparison.csv: the program's SpGEMM comparison table .*--report"):
        plot.main([str(table), "-o", str(tmp_path / "plots")])


def test_inputs_of_the_same_name_in_other_folders_keep_their_own_labels():
    labels = plot.labels_of(["a/report.json", "b/report.json", "c/other.json"])
    assert labels == [os.path.join("a", "report"), os.path.join("b", "report"), "other"]
    assert len(set(plot.labels_of(["r.json", "r.json"]))) == 2


def minimal_report(**changes):
    report = {"amgsolve": "amgsolve (a test's report)",
              "setup": {"levels": [{"level": 0, "rows": 100, "nnz": 500, "seconds": 0.1, "phases": {"strength": 0.01}},
                                   {"level": 1, "rows": 10, "nnz": 50, "seconds": 0.01, "coarsest": True}]},
              "solve": {"history": [1.0, 0.1, 0.001], "tolerance": 0.01}}
    report.update(changes)
    return report


@pytest.mark.parametrize("content, message", [
    (b"\xff\xfe not text", "cannot read a JSON report"),
    (json.dumps(minimal_report(setup={"levels": 5})).encode(), "setup.levels is not a list"),
    (json.dumps(minimal_report(setup={"levels": [{"level": 0, "rows": "many", "nnz": 1}]})).encode(),
     r"setup.levels\[0\] lacks a number"),
    (json.dumps(minimal_report(solve={"history": [1.0, "x"]})).encode(), "solve.history is not a list of numbers"),
    (json.dumps(minimal_report(sources=[{"index": 3, "excitation": {"history": None}}])).encode(),
     r"sources\[3\].excitation.history"),
    (json.dumps(minimal_report(sources=[{"index": 1, "excitation": None}])).encode(),
     r"sources\[1\].excitation is not a map"),
    (json.dumps(minimal_report(sources=[{"excitation": {"history": [1.0]}}])).encode(),
     "sources is not a list of maps with a number 'index'"),
    (json.dumps(minimal_report(steps=[{"history": [1.0]}])).encode(), "steps is not a list of maps"),
    (json.dumps(minimal_report(load_cases=[{"column": 2, "history": "fast"}])).encode(),
     r"load_cases\[2\].history is not a list of numbers"),
    (json.dumps(minimal_report(setup={"levels": [{"level": 0, "rows": 9, "nnz": 9, "phases": {"strength": "x"}}]})
                ).encode(), r"setup.levels\[0\].phases is not a map of numbers"),
    (json.dumps(minimal_report(setup={"levels": [{"level": 0, "rows": 9, "nnz": 9, "coarsest": True,
                                                   "seconds": None}]})).encode(),
     r"setup.levels\[0\].seconds is not a number"),
    (json.dumps(minimal_report(solve={"history": [1.0], "tolerance": "small"})).encode(),
     "solve.tolerance is not a number"),
    (json.dumps(minimal_report(spgemm_comparison=[{"product": "ap", "backend": "hash", "seconds": 0.1}])).encode(),
     r"spgemm_comparison\[0\].level is not a number"),
    (json.dumps(minimal_report(spgemm_comparison=[{"level": 0, "product": "ap", "backend": "hash", "seconds": 0.1,
                                                   "runs": 3}])).encode(),
     r"spgemm_comparison\[0\].min_seconds is not a number"),
    (json.dumps(minimal_report(spgemm_comparison=[{"level": 0, "product": "ap", "backend": "hash", "seconds": 0.1,
                                                   "runs": "3"}])).encode(), r"spgemm_comparison\[0\].runs is not a number"),
    # json reads NaN and Infinity, which no report holds; a level number no hierarchy has; nesting past Python's
    # recursion limit; and JSON of the right shape that is not the program's.
    (json.dumps(minimal_report(solve={"history": [1.0, float("nan")]})).encode(), "solve.history is not a list of numbers"),
    (json.dumps(minimal_report(setup={"levels": [{"level": 0, "rows": 9, "nnz": 9,
                                                  "phases": {"galerkin": float("inf")}}]})).encode(),
     r"setup.levels\[0\].phases is not a map of numbers"),
    (json.dumps(minimal_report(setup={"levels": [{"level": 1e300, "rows": 9, "nnz": 9}]})).encode(),
     r"setup.levels\[0\] has a level that is no level number"),
    (b"[" * 200000 + b"]" * 200000, "nested too deeply"),
    (json.dumps({k: v for k, v in minimal_report().items() if k != "amgsolve"}).encode(), "not an amgsolve report"),
])
def test_a_malformed_report_is_one_line_naming_the_field(tmp_path, content, message):
    bad = tmp_path / "bad.json"
    bad.write_bytes(content)
    with pytest.raises(SystemExit, match=f"plot: .*bad.json: .*{message}"):
        plot.main([str(bad), "-o", str(tmp_path / "plots")])
    assert not (tmp_path / "plots" / "levels.png").exists()


def test_a_malformed_csv_is_one_line_naming_the_line(tmp_path):
    csv = tmp_path / "bench.csv"
    csv.write_text("matrix,backend,median_seconds\nA,gustavson,0.5\nA,hash,fast\n")
    with pytest.raises(SystemExit, match=r"plot: .*bench.csv:3: median_seconds 'fast' is not a number"):
        plot.main([str(csv), "-o", str(tmp_path / "plots")])
    csv.write_text("matrix,backend,median_seconds\nA,gustavson,nan\n")  # a number, but no time a bar can show
    with pytest.raises(SystemExit, match=r"bench.csv:2: median_seconds 'nan' is not a number of seconds"):
        plot.main([str(csv), "-o", str(tmp_path / "plots")])
    csv.write_bytes(b"matrix,backend,median_seconds\n\xff\xfe,x,1\n")
    with pytest.raises(SystemExit, match="bench.csv: cannot read"):
        plot.main([str(csv), "-o", str(tmp_path / "plots")])


def test_no_two_legend_entries_share_a_colour(monkeypatch):
    # 13 curves, one legend entry each: past matplotlib's ten colours, no colour is used twice.
    import matplotlib.colors
    cases = [{"column": c, "iterations": 2, "history": [1.0, 0.1 / c, 0.001 / c]} for c in range(1, 14)]
    monkeypatch.setattr(plot, "save", lambda fig, name: (name, fig))
    _, fig = plot.plot_convergence({"run": minimal_report(load_cases=cases)})
    curves = [line for line in fig.axes[0].get_lines() if not line.get_label().startswith("_")]
    assert len(curves) == 13
    assert len({matplotlib.colors.to_hex(line.get_color()) for line in curves}) == 13


def test_every_load_case_is_a_curve(tmp_path):
    cases = [{"column": c, "iterations": 2, "history": [1.0, 0.1 / c, 0.001 / c]} for c in (1, 2, 3)]
    report = minimal_report(load_cases=cases)
    curves = plot.convergence_curves(report)
    assert [name for name, _ in curves] == ["load case 1", "load case 2", "load case 3"]
    assert [history for _, history in curves] == [case["history"] for case in cases]


def test_what_is_in_the_place_of_a_plot_this_run_does_not_draw_is_left_alone(tmp_path):
    report = tmp_path / "run.json"
    report.write_text(json.dumps(minimal_report()))
    out = tmp_path / "plots"
    (out / "spgemm_bench.png").mkdir(parents=True)  # this run writes no bench plot: not ours to remove
    (out / "spgemm_comparison.png").write_bytes(b"someone else's")  # nor a comparison: not in the way
    assert plot.main([str(report), "-o", str(out)]) == 0
    assert (out / "spgemm_bench.png").is_dir() and (out / "levels.png").is_file()
    assert (out / "spgemm_comparison.png").read_bytes() == b"someone else's"
    assert not [p for p in os.listdir(out) if p.startswith(".")], "no temporary file left"


def test_a_file_that_only_mentions_the_plots_is_not_ours(tmp_path):
    report = tmp_path / "run.json"
    report.write_text(json.dumps(minimal_report()))
    out = tmp_path / "plots"
    out.mkdir()
    (out / "spgemm_bench.png").write_text("my notes about amgsolve.plot\n")  # it was taken for a stale plot, removed
    (out / "levels.png").write_text("my notes about amgsolve.plot\n")  # and replaced
    with pytest.raises(SystemExit, match="levels.png exists and is not a plot of amgsolve's"):
        plot.main([str(report), "-o", str(out)])
    (out / "levels.png").unlink()
    assert plot.main([str(report), "-o", str(out)]) == 0
    assert (out / "spgemm_bench.png").read_text() == "my notes about amgsolve.plot\n"
    assert plot.is_our_png((out / "levels.png").read_bytes())


def test_file_names_are_labels_as_they_are(tmp_path):
    # '$' starts no formula (it failed with matplotlib's ParseSyntaxException); a leading '_' keeps its legend entry.
    assert plot.labels_of(["a/_under.json", "b/cost$x^{$.json"]) == [" _under", r"cost\$x^{\$"]
    reports = [tmp_path / "cost$x^{$.json", tmp_path / "_under.json"]
    for r in reports:
        r.write_text(json.dumps(minimal_report()))
    assert plot.main([str(r) for r in reports] + ["-o", str(tmp_path / "plots")]) == 0


def test_a_write_that_fails_replaces_no_plot(tmp_path, monkeypatch):
    report = tmp_path / "run.json"
    report.write_text(json.dumps(minimal_report()))
    out = tmp_path / "plots"
    assert plot.main([str(report), "-o", str(out)]) == 0
    before = {name: (out / name).read_bytes() for name in os.listdir(out)}
    opened = []

    def open_until_full(path, mode="r", *args, **kwargs):  # the second temporary file meets a full disk
        if "w" in mode:
            opened.append(path)
            if len(opened) == 2:
                raise OSError(28, "No space left on device")
        return open(path, mode, *args, **kwargs)

    monkeypatch.setattr(plot, "open", open_until_full, raising=False)
    report.write_text(json.dumps(minimal_report(solve={"history": [1.0, 0.5, 0.25, 0.01], "tolerance": 0.01})))
    with pytest.raises(SystemExit, match="none replaced"):
        plot.main([str(report), "-o", str(out)])
    assert {name: (out / name).read_bytes() for name in os.listdir(out)} == before


def test_a_report_without_residual_histories_draws_no_convergence_plot(tmp_path, capsys):
    report = tmp_path / "run.json"
    report.write_text(json.dumps(minimal_report(solve={"tolerance": 0.01})))
    assert plot.main([str(report), "-o", str(tmp_path / "plots")]) == 0
    assert not (tmp_path / "plots" / "convergence.png").exists()
    assert "no residual history" in capsys.readouterr().err


def test_plots_replace_their_own_pngs_and_no_one_elses(tmp_path):
    report = tmp_path / "run.json"
    report.write_text(json.dumps(minimal_report()))
    out = tmp_path / "plots"
    assert plot.main([str(report), str(report), str(report), str(report), str(report), "-o", str(out)]) == 0
    assert plot.main([str(report), "-o", str(out)]) == 0  # its own files: replaced
    (out / "levels.png").write_bytes(b"\x89PNG\r\n\x1a\n someone else's picture")
    with pytest.raises(SystemExit, match="levels.png exists and is not a plot of amgsolve's"):
        plot.main([str(report), "-o", str(out)])
    assert (out / "levels.png").read_bytes().endswith(b"someone else's picture")


def poisson_2d(n):
    from test_amgsolve import poisson  # the suite's Laplacian (pytest puts this folder on the path)
    return poisson(n, dims=2)


def test_a_solve_from_python_is_plotted_as_the_programs_reports_are(tmp_path):
    import numpy as np

    import amgsolve

    A = poisson_2d(60)
    solver = amgsolve.Solver(A, amg={"coarse_size": 50})
    _, info = solver.solve(np.ones(A.shape[0]))
    report = solver.report(info)
    assert json.loads(json.dumps(report)) == report, "json.dump writes it as it is"
    assert plot.report_problem(report) is None
    assert report["solve"]["type"] == "pcg" and report["solve"]["precision"] == "double"
    assert report["setup"]["levels"] == solver.levels and len(solver.levels) > 1
    [(_, history)] = plot.convergence_curves(report)
    assert history == info["residuals"] and len(history) == info["iterations"] + 1
    written = plot.plot(report, output=str(tmp_path / "one"))
    assert sorted(os.path.basename(p) for p in written) == ["convergence.png", "levels.png", "setup_phases.png"]
    for path in written:
        with open(path, "rb") as f:
            assert plot.is_our_png(f.read(4096)), path
    # The command reads what json.dump wrote, as it reads the program's reports.
    (tmp_path / "python.json").write_text(json.dumps(report))
    assert plot.main([str(tmp_path / "python.json"), "-o", str(tmp_path / "command")]) == 0
    # Several right-hand sides are load cases, each a curve; runs given by label are overlaid under it.
    mixed = amgsolve.Solver(A, amg={"coarse_size": 50}, solver={"precision": "mixed"})
    _, infos = mixed.solve(np.column_stack([np.ones(A.shape[0]), np.arange(A.shape[0], dtype=float)]))
    cases = mixed.report(infos)
    assert [h for _, h in plot.convergence_curves(cases)] == [i["residuals"] for i in infos]
    assert cases["solve"]["precision"] == "mixed"
    labels = plot.legend_labels({k: plot.convergence_curves(r) for k, r in {"double": report, "mixed": cases}.items()})
    assert labels == {"double": ["double: pcg (double)"], "mixed": ["mixed: load case 1", "mixed: load case 2"]}
    assert len(plot.plot({"double": report, "mixed": cases}, output=str(tmp_path / "both"))) == 3


def test_a_report_after_a_rebuild_holds_the_levels_its_solve_used():
    import numpy as np

    import amgsolve

    A = poisson_2d(40)
    solver = amgsolve.Solver(A, amg={"coarse_size": 50})
    _, info = solver.solve(np.ones(A.shape[0]))
    solver.rebuild(poisson_2d(30))  # another hierarchy, whose summary is not that solve's
    report = solver.report(info)
    assert report["setup"] == {"levels": info["levels"]}
    assert report["setup"]["levels"][0]["rows"] == 1600


def test_what_cannot_be_plotted_from_python_is_named(tmp_path):
    import numpy as np

    import amgsolve

    solver = amgsolve.Solver(poisson_2d(20))
    with pytest.raises(amgsolve.InputError, match=r"report\(statistics\): give what solve\(\) returned"):
        solver.report({"iterations": 3})
    with pytest.raises(amgsolve.InputError, match="report"):
        solver.report([])
    with pytest.raises(plot.PlotError, match="mine: not an amgsolve report"):
        plot.plot({"mine": {"hello": 1}}, output=str(tmp_path / "plots"))
    with pytest.raises(plot.PlotError, match=r"plot\(runs\): give a report"):
        plot.plot("run.json", output=str(tmp_path / "plots"))
    assert not (tmp_path / "plots").exists(), "nothing written for a run that is refused"
    _, info = solver.solve(np.ones(400))
    (tmp_path / "taken").write_text("a file, where the folder would be")
    with pytest.raises(plot.PlotError, match="cannot create the folder"):
        plot.plot(solver.report(info), output=str(tmp_path / "taken"))
