"""The benchmark scripts of bench/ read their arguments as the program reads its own: a bad count or a
missing binary is argparse's usage and one error line with exit 2, and a program they run that fails ends
them with that program's own last line and exit 1, never a traceback (bench/bench_common.py)."""
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
    # compare-builds takes two build folders first; any text will do, the count is read before they are used.
    leading = ["old", "new"] if script == "compare-builds.py" else []
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
        with pytest.raises(Exception):
            bench_common.positive_int(text)
