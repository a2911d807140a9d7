"""What the benchmark scripts share: arguments checked as the program checks its own (argparse's one line
and exit 2), and a failure of a program they run, or of amgsolve's Python package, said in one line with
the program's own message instead of a traceback."""
import argparse
import math
import os
import subprocess
import sys


class BenchError(Exception):
    """A failure the script explains in its own words (run_main prints it as `script: error: ...`)."""


class StandardOutputError(Exception):
    """A write to the standard output failed (a full disk, /dev/full): its OSError, told apart from others."""


class _StandardOutput:
    """sys.stdout, its write errors raised as StandardOutputError (a closed pipe as it is)."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text):
        return self._checked(self._stream.write, text)

    def flush(self):
        return self._checked(self._stream.flush)

    def __getattr__(self, name):
        return getattr(self._stream, name)

    @staticmethod
    def _checked(call, *args):
        try:
            return call(*args)
        except BrokenPipeError:
            raise
        except OSError as e:
            raise StandardOutputError(e.strerror or str(e)) from None


def positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1 (sizes, runs, steps, threads, ranks)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def positive_ints(text: str) -> list[int]:
    """An argparse type: a comma-separated list of whole numbers of at least 1 ("2,1": thread counts)."""
    parts = text.split(",")
    if not all(p.strip() for p in parts):
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of whole numbers")
    return [positive_int(p.strip()) for p in parts]


def positive_seconds(text: str) -> float:
    """An argparse type: a finite number of seconds above 0 (a time limit)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a finite number of seconds above 0, got {text}")
    return value


def read_matrix(path: str):
    """A square Matrix Market matrix as scipy CSR, or BenchError naming the file."""
    import scipy.io
    import scipy.sparse as sp
    try:
        A = sp.csr_array(scipy.io.mmread(path))
    except (OSError, ValueError, TypeError) as e:
        raise BenchError(f"{path}: cannot read a Matrix Market matrix ({getattr(e, 'strerror', None) or e})") from None
    if A.shape[0] != A.shape[1]:
        raise BenchError(f"{path}: the matrix is {A.shape[0]} x {A.shape[1]}, not square")
    return A


def executable(path: str) -> str:
    """An argparse type: a program that exists and runs (the amgsolve binary of a build)."""
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        raise argparse.ArgumentTypeError(f"{path} is not an executable program (build it first: scripts/build)")
    return path


def run_main(main) -> None:
    """main(), its failures ended with `script: error: ...` and exit 1: a program that failed (its last line
    on stderr, where it says why), a program or file that is missing, amgsolve's InputError/NumericalError."""
    name = os.path.basename(sys.argv[0])
    if not isinstance(sys.stdout, _StandardOutput):
        sys.stdout = _StandardOutput(sys.stdout)
    try:
        main()
        sys.stdout.flush()  # here, where a full disk or a closed pipe is said as the others are
    except subprocess.CalledProcessError as e:
        said = (e.stderr or "").strip().splitlines() if isinstance(e.stderr, str) else []
        why = said[-1] if said else f"exit status {e.returncode}"
        sys.exit(f"{name}: error: {os.path.basename(str(e.cmd[0]))} failed: {why}")
    except BrokenPipeError:  # the reader went away (| head): nothing more can be printed there
        _drop_standard_output()
        sys.exit(f"{name}: error: the standard output was closed")
    except StandardOutputError as e:
        _drop_standard_output()
        sys.exit(f"{name}: error: the standard output: {e}")
    except OSError as e:  # a file or folder that cannot be read or written
        sys.exit(f"{name}: error: {f'{e.filename}: ' if e.filename else ''}{e.strerror or e}")
    except (BenchError, *_package_errors()) as e:
        sys.exit(f"{name}: error: {e}")


def _drop_standard_output() -> None:
    """What is still buffered for a standard output that failed goes nowhere at exit (not a second error)."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _package_errors() -> tuple:
    """amgsolve.Error (InputError, NumericalError), where the package is installed."""
    try:
        import amgsolve
    except ImportError:
        return ()
    return (amgsolve.Error,)
