"""What the benchmark scripts share: arguments checked as the program checks its own (argparse's one line
and exit 2), and a failure of a program they run, or of amgsolve's Python package, said in one line with
the program's own message instead of a traceback."""
import argparse
import os
import subprocess
import sys


def positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1 (sizes, runs, steps, threads, ranks)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def executable(path: str) -> str:
    """An argparse type: a program that exists and runs (the amgsolve binary of a build)."""
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        raise argparse.ArgumentTypeError(f"{path} is not an executable program (build it first: scripts/build)")
    return path


def run_main(main) -> None:
    """main(), its failures ended with `script: error: ...` and exit 1: a program that failed (its last line
    on stderr, where it says why), a program or file that is missing, amgsolve's InputError/NumericalError."""
    name = os.path.basename(sys.argv[0])
    try:
        main()
    except subprocess.CalledProcessError as e:
        said = (e.stderr or "").strip().splitlines() if isinstance(e.stderr, str) else []
        why = said[-1] if said else f"exit status {e.returncode}"
        sys.exit(f"{name}: error: {os.path.basename(str(e.cmd[0]))} failed: {why}")
    except (FileNotFoundError, PermissionError) as e:
        sys.exit(f"{name}: error: {e.filename or e}: {e.strerror}")
    except _package_errors() as e:
        sys.exit(f"{name}: error: {e}")


def _package_errors() -> tuple:
    """amgsolve.Error (InputError, NumericalError), where the package is installed."""
    try:
        import amgsolve
    except ImportError:
        return ()
    return (amgsolve.Error,)
