"""The benchmark scripts of bench/ read their arguments as the program reads its own: a bad count or a
missing binary is argparse's usage and one error line with exit 2, and a program they run that fails ends
them with that program's own last line and exit 1, never a traceback (bench/bench_common.py)."""
import argparse
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH = os.path.join(ROOT, "bench")
sys.path.insert(0, BENCH)

import bench_common  # noqa: E402  (bench/ is not a package)

# Each script with one of its counts.
COUNTS = [("amgcl-compare.py", "--runs"), ("compare-builds.py", "--runs"), ("mpi-poisson.py", "--runs"),
          ("poisson-threads.py", "--runs"), ("pyamg-compare.py", "--runs"), ("resetup-bench.py", "--steps"),
          ("systems-compare.py", "--runs")]


def run_script(name, *args):
    return subprocess.run([sys.executable, os.path.join(BENCH, name), *args], capture_output=True, text=True,
                          timeout=60)


def said_in_one_line(stderr):
    """The error lines a run printed: argparse's usage lines come before its one `error:` line."""
    assert "Traceback" not in stderr, stderr
    return [line for line in stderr.splitlines() if "error:" in line]


@pytest.mark.parametrize("script, option", COUNTS)
@pytest.mark.parametrize("count, why", [("0", "must be at least 1, got 0"), ("three", "'three' is not a whole number")])
def test_a_bad_count_is_one_line_and_exit_2(script, option, count, why):
    # compare-builds takes two programs first (any that run will do: the count is refused before they run).
    leading = [sys.executable, sys.executable] if script == "compare-builds.py" else []
    result = run_script(script, *leading, option, count)
    errors = said_in_one_line(result.stderr)
    assert result.returncode == 2, result.stderr
    assert len(errors) == 1 and option in errors[0] and why in errors[0], result.stderr


def test_a_binary_that_is_not_there_is_named(tmp_path):
    missing = str(tmp_path / "amgsolve")
    result = run_script("poisson-threads.py", "--binary", missing)
    errors = said_in_one_line(result.stderr)
    assert result.returncode == 2
    assert len(errors) == 1 and missing in errors[0] and "is not an executable program" in errors[0], result.stderr


def failing_main(error):
    def main():
        raise error
    return main


def test_a_failed_program_ends_the_script_with_its_own_last_line(monkeypatch):
    monkeypatch.setattr(sys, "argv", ["bench/some-bench.py"])
    failed = subprocess.CalledProcessError(1, ["/build/app/amgsolve", "cfg.yaml"],
                                           stderr="a progress line\namgsolve: cfg.yaml:3: solver.tolerance must be > 0\n")
    with pytest.raises(SystemExit) as ended:
        bench_common.run_main(failing_main(failed))
    assert ended.value.code == "some-bench.py: error: amgsolve failed: amgsolve: cfg.yaml:3: solver.tolerance must be > 0"


def test_a_failed_program_that_said_nothing_gives_its_exit_status(monkeypatch):
    monkeypatch.setattr(sys, "argv", ["bench/some-bench.py"])
    with pytest.raises(SystemExit) as ended:
        bench_common.run_main(failing_main(subprocess.CalledProcessError(137, ["mpirun", "-np", "2"])))
    assert ended.value.code == "some-bench.py: error: mpirun failed: exit status 137"


def test_a_missing_file_is_named(monkeypatch, tmp_path):
    monkeypatch.setattr(sys, "argv", ["bench/some-bench.py"])
    missing = tmp_path / "matrix.mtx"

    def main():
        open(missing)

    with pytest.raises(SystemExit) as ended:
        bench_common.run_main(main)
    assert ended.value.code == f"some-bench.py: error: {missing}: No such file or directory"


def test_counts_are_whole_and_positive():
    assert bench_common.positive_int("7") == 7
    for text in ("0", "-2", "1.5", ""):
        with pytest.raises(argparse.ArgumentTypeError, match="is not a whole number|must be at least 1"):
            bench_common.positive_int(text)


def test_counts_are_whole_and_positive_in_lists_and_times_finite():
    assert bench_common.positive_ints("2,1") == [2, 1]
    for text in ("abc", ",", "2,", "0,1"):
        with pytest.raises(argparse.ArgumentTypeError, match="is not a comma-separated list|is not a whole number|must be at least 1"):
            bench_common.positive_ints(text)
    assert bench_common.positive_seconds("1.5") == 1.5
    for text in ("0", "-5", "nan", "inf", "soon"):
        with pytest.raises(argparse.ArgumentTypeError, match="is not a number of seconds|must be a finite number"):
            bench_common.positive_seconds(text)


@pytest.mark.parametrize("args, why", [
    (["amgcl-compare.py", "--threads", "abc"], "--threads"),
    (["mpi-poisson.py", "--timeout", "-5"], "--timeout"),
    (["mpi-poisson.py", "--timeout", "nan"], "--timeout"),
    (["compare-builds.py", "/no/such/amgsolve", sys.executable], "/no/such/amgsolve is not an executable program"),
])
def test_bad_arguments_are_one_line_and_exit_2(args, why):
    result = run_script(*args)
    errors = said_in_one_line(result.stderr)
    assert result.returncode == 2, result.stderr
    assert len(errors) == 1 and why in errors[0], result.stderr


def test_a_file_that_is_no_matrix_is_named(tmp_path):
    garbage = tmp_path / "notes.mtx"
    garbage.write_text("root:x:0:0:root:/root:/bin/bash\n")
    with pytest.raises(bench_common.BenchError, match=f"{garbage}: cannot read a Matrix Market matrix"):
        bench_common.read_matrix(str(garbage))
    with pytest.raises(bench_common.BenchError, match="missing.mtx: cannot read a Matrix Market matrix .*does not exist"):
        bench_common.read_matrix(str(tmp_path / "missing.mtx"))
    wide = tmp_path / "wide.mtx"
    wide.write_text("%%MatrixMarket matrix coordinate real general\n3 4 1\n1 1 1.0\n")
    with pytest.raises(bench_common.BenchError, match="the matrix is 3 x 4, not square"):
        bench_common.read_matrix(str(wide))


PRINTING = ("import sys; sys.path.insert(0, {bench!r}); import bench_common; "
            "bench_common.run_main(lambda: [print('a table row ' * 8) for _ in range(200000)])")


def test_a_standard_output_that_cannot_be_written_is_one_line():
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full on this system")
    with open("/dev/full", "w") as full:
        result = subprocess.run([sys.executable, "-c", PRINTING.format(bench=BENCH)], stdout=full,
                                stderr=subprocess.PIPE, text=True, timeout=60)
    assert result.returncode == 1
    assert said_in_one_line(result.stderr) == ["-c: error: the standard output: No space left on device"], result.stderr
    reader = subprocess.Popen([sys.executable, "-c", PRINTING.format(bench=BENCH)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    reader.stdout.close()  # as `| head` does once it has its lines
    stderr = reader.stderr.read()
    assert reader.wait(timeout=60) == 1
    assert said_in_one_line(stderr) == ["-c: error: the standard output was closed"], stderr
