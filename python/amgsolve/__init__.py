"""amgsolve: smoothed-aggregation AMG and AMG-preconditioned conjugate gradients for scipy.sparse.

    import amgsolve, scipy.sparse as sp
    solver = amgsolve.Solver(A, solver={"tolerance": 1e-10}, amg={"coarse_size": 500})
    x, info = solver.solve(b)                 # info["iterations"], info["residuals"], ...
    X, infos = solver.solve(B)                # B of shape (n, m): m right-hand sides, one hierarchy
    M = solver.aspreconditioner()             # for scipy.sparse.linalg.cg(A, b, M=M)
    amgsolve.plot.plot(solver.report(info))   # PNGs of the solve (import amgsolve.plot; matplotlib)
    C = amgsolve.spgemm(A, B, backend="magnus")
    K, f, points = amgsolve.elasticity((48, 12, 12))       # the program's 3D cantilever
    elastic = amgsolve.Solver(K, near_nullspace=amgsolve.rigid_body_modes(points), amg={"block_size": 3})

The parameters are the YAML keys of the amgsolve program (docs/CONFIG.md): a section as a dict
(amg={"coarse_size": 500}; an empty one sets nothing), or a dotted key (**{"amg.coarse_size": 500}), and
`backend`. They are checked as
a config file is, and a wrong one raises amgsolve.InputError (a ValueError) with the program's one-line message.
Memory that would not fit, or that runs out, raises MemoryError (amgsolve.MemoryLimitError, also an InputError,
where a check finds it before the work).
"""
from __future__ import annotations

import json
import numbers
import operator
import os
from typing import Any

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from . import _amgsolve
from ._amgsolve import Error, InputError, MemoryLimitError, NumericalError

# The exceptions are amgsolve's, as the docs name them (tracebacks said amgsolve._amgsolve.InputError); pickle
# finds them here too.
for _exception in (Error, InputError, MemoryLimitError, NumericalError):
    _exception.__module__ = __name__

_MAX_INDEX = 2**31 - 1  # amgsolve's indices are 32-bit
_MAX_BLOCK_SIZE = 64  # amg.block_size's bound (docs/CONFIG.md)

# A child forked from a process that has used amgsolve (multiprocessing's "fork" start method) would wait for
# ever on OpenMP threads that the fork did not copy: there amgsolve runs on one thread. Only after amgsolve
# has run (its threads exist): other OpenMP users of a child forked before keep theirs.
_threads_started = False


def _started() -> None:
    global _threads_started
    _threads_started = True


def _after_fork_in_child() -> None:
    if _threads_started:
        _amgsolve.run_on_one_thread()


if hasattr(os, "register_at_fork"):  # POSIX
    os.register_at_fork(after_in_child=_after_fork_in_child)

__all__ = ["Solver", "spgemm", "spgemm_backends", "rigid_body_modes", "elasticity", "keep_freed_memory", "Error",
           "InputError", "MemoryLimitError", "NumericalError"]
__version__ = "0.1.0"


def _solver_section(path: str) -> bool:
    """Whether path names a section of the solver's keys (amg, solver and theirs), not a key."""
    return path.split(".")[0] in ("amg", "solver") and _amgsolve.is_config_section(path)


def _refuse_pyamg_candidates(params: dict[str, Any]) -> None:
    """PyAMG's B and BH, named as amgsolve names them (they would otherwise be refused as values)."""
    if "B" in params:
        raise InputError("parameter B: PyAMG's near-nullspace candidates are near_nullspace= here "
                         "(Solver(A, near_nullspace=B), B of shape (n, k))")
    if "BH" in params:
        raise InputError("parameter BH: PyAMG's candidates for A^H; A is symmetric here, near_nullspace= serves both")


def _settings(params: dict[str, Any]) -> list[str]:
    """The parameters as the program's --set assignments ("amg.coarse_size=500"), values in JSON (valid YAML)."""
    out: list[str] = []
    given: set[str] = set()

    def add(prefix: str, value: Any) -> None:
        # A name holding '=' would be read up to it: another parameter, set silently to what follows.
        if not isinstance(prefix, str) or "=" in prefix or not prefix.strip():
            raise InputError(f"parameter {prefix!r}: not a parameter name (the keys of docs/CONFIG.md)")
        if isinstance(value, dict) and (value or _solver_section(prefix)):
            for key, inner in value.items():  # amg={} or amg={"smoother": {}}: a section given no parameter
                add(f"{prefix}.{key}" if isinstance(key, str) else key, inner)
            return
        if prefix in given:  # amg={"coarse_size": 9} and **{"amg.coarse_size": 10}: which one is meant?
            raise InputError(f"parameter {prefix} is given twice")
        given.add(prefix)
        if isinstance(value, np.generic):
            value = value.item()
        # A whole number written as a float (coarse_size=50.0, max_iterations=1e3) is taken as solve()'s
        # maxiter is; the program's YAML reader would refuse "50.0" for an integer key. (A number key reads an
        # integer as well.)
        if isinstance(value, float) and value.is_integer() and abs(value) < 2.0**63:
            value = int(value)
        try:
            out.append(f"{prefix}={json.dumps(value)}")
        except TypeError:
            raise InputError(f"parameter {prefix}: {_shown(value)} is not a number, string, bool, list or dict") from None

    for key, value in params.items():
        add(key, value)
    return out


def _require_valid_indptr(A: Any, name: str) -> None:
    """A's row offsets from 0, non-decreasing, within its arrays: checked before scipy's own sparse tools
    (sum_duplicates, has_canonical_format) read a corrupt indptr and fail with a bare C++ error, or with
    "unsupported data types in input" for index arrays of another type assigned to a matrix."""
    for part in ("indptr", "indices", "data"):
        array = getattr(A, part)
        if not isinstance(array, np.ndarray) or array.ndim != 1:
            raise InputError(f"{name}.{part} must be a 1-D numpy array, got {type(array).__name__}"
                             f"{f' of shape {array.shape}' if isinstance(array, np.ndarray) else ''}")
        if part != "data" and array.dtype not in (np.int32, np.int64):
            raise InputError(f"{name}: {part} must hold int32 or int64 indices, got {array.dtype}")
    indptr = np.asarray(A.indptr)
    if indptr.ndim != 1 or indptr.shape[0] != A.shape[0] + 1:
        raise InputError(f"{name}: indptr has {indptr.shape[0] if indptr.ndim == 1 else indptr.shape} entries, "
                         f"expected rows + 1 = {A.shape[0] + 1}")
    if indptr[0] != 0:
        raise InputError(f"{name}: indptr must start at 0, not {indptr[0]}")
    steps = np.diff(indptr)
    if steps.size and steps.min() < 0:
        raise InputError(f"{name}: indptr decreases at row {int(np.argmax(steps < 0))}")
    stored = min(len(A.indices), len(A.data))
    if indptr[-1] > stored:
        raise InputError(f"{name}: indptr ends at {indptr[-1]}, beyond the {stored} stored entries")


def _csr(A: Any, name: str, dtypes=(np.float64, np.float32)) -> sp.csr_array | sp.csr_matrix:
    """A in canonical CSR (sorted, unique columns), its arrays passed on as they are where they already are."""
    if sp.issparse(A) and len(A.shape) != 2:  # a 1-D sparse array (scipy's coo_array of a vector)
        raise InputError(f"{name}: a matrix is needed (scipy.sparse or a 2-D array), got {type(A).__name__} of "
                         f"shape {A.shape}")
    if not sp.issparse(A):
        dense = np.asarray(A)
        if dense.ndim == 2 and np.iscomplexobj(dense):
            raise InputError(f"{name}: values must be real numbers, got {dense.dtype}")
        if dense.ndim != 2 or dense.dtype.kind not in "biuf":
            raise InputError(f"{name}: a matrix is needed (scipy.sparse or a 2-D array), got {type(A).__name__}"
                             f"{f' of {dense.dtype} values, shape {dense.shape}' if dense.dtype != object else ''}")
        A = sp.csr_array(dense)
    _require_fits_indices(A.shape, name)
    if A.format != "csr":
        A = A.tocsr()
    _require_valid_indptr(A, name)
    if A.dtype not in dtypes:
        real = np.issubdtype(A.dtype, np.floating) or np.issubdtype(A.dtype, np.integer) or A.dtype == np.bool_
        if not real:
            raise InputError(f"{name}: values must be real numbers, got {A.dtype}")
        A = A.astype(np.float64)
    if not A.has_canonical_format:
        A = A.copy()
        A.sum_duplicates()
    return A


def _block_size_of(A: Any, settings: list[str]) -> list[str]:
    """amg.block_size from a scipy BSR matrix's square blocks (as PyAMG takes it), where the settings do not set
    it."""
    if not sp.issparse(A) or A.format != "bsr" or A.blocksize[0] != A.blocksize[1] or A.blocksize[0] == 1:
        return []
    if any(s.startswith("amg.block_size=") for s in settings):
        return []
    if A.blocksize[0] > _MAX_BLOCK_SIZE:  # said of A, whose blocks give it, not of a parameter never given
        raise InputError(f"A: a BSR matrix's blocks ({A.blocksize[0]}x{A.blocksize[1]}) give amg.block_size, at "
                         f"most {_MAX_BLOCK_SIZE}: convert it (A.tocsr()) and give amg.block_size if its nodes are "
                         f"smaller")
    return [f"amg.block_size={A.blocksize[0]}"]


def _arrays(A) -> tuple:
    """rows, cols, indptr, indices, data; scipy may keep spare room after the last entry, which is left out."""
    nnz = int(A.indptr[-1])
    return (A.shape[0], A.shape[1], np.ascontiguousarray(A.indptr), np.ascontiguousarray(A.indices[:nnz]),
            np.ascontiguousarray(A.data[:nnz]))


def _from_arrays(kind, data: np.ndarray, indices: np.ndarray, indptr: np.ndarray, shape: tuple[int, int]):
    """scipy's CSR (kind: csr_array or csr_matrix) of amgsolve's arrays, taken as they are: indptr narrowed to
    int32 where the entries fit, as in scipy's own products, so that the int32 column indices are not widened to
    int64 by a copy (scipy gives both one dtype)."""
    if indptr[-1] <= _MAX_INDEX:  # the columns fit: they are int32 already
        indptr = indptr.astype(np.int32)
    return kind((data, indices, indptr), shape=shape)


def _require_fits_indices(shape: tuple[int, int], name: str) -> None:
    """A shape beyond the 32-bit indices, refused before scipy converts the matrix (tocsr of 3 entries declared
    2^31 square allocates 16 GiB) with the message the core gives."""
    for what, n in zip(("rows", "columns"), shape):
        if n > _MAX_INDEX:
            raise InputError(f"{name}: {what} {n} does not fit the 32-bit indices of amgsolve (at most {_MAX_INDEX})")


def _vector(v: Any, name: str) -> np.ndarray:
    """v as a contiguous float64 vector; complex values are refused rather than cut to their real part."""
    if sp.issparse(v):
        v = v.toarray()
    v = np.asarray(v)
    if np.iscomplexobj(v):
        raise InputError(f"{name}: values must be real numbers, got {v.dtype}")
    if v.ndim == 0 or (v.ndim == 2 and 1 not in v.shape) or v.ndim > 2:
        several = "; b may be several, the columns of (n, m)" if name == "b" else ""
        raise InputError(f"{name}: one vector is needed (shape (n,), (n, 1) or (1, n){several}), got "
                         f"{type(v).__name__} of shape {v.shape}")
    if v.dtype.kind not in "biuf":  # None, strings, objects
        raise InputError(f"{name}: values must be real numbers, got {v.dtype}")
    return np.ascontiguousarray(v, dtype=np.float64).ravel()


def _columns(v: Any, rows: int, name: str) -> np.ndarray | None:
    """v as several vectors of `rows` entries, its columns (shape (rows, m), m > 1), or None where it is one
    vector or something else (which _vector then judges)."""
    if sp.issparse(v):
        v = v.toarray()
    v = np.asarray(v)
    if v.ndim == 2 and v.shape[1] > 1 and v.shape[0] not in (1, rows):
        raise InputError(f"{name}: shape {v.shape}, but several right-hand sides are the columns of ({rows}, m)")
    if v.ndim != 2 or v.shape[0] != rows or v.shape[1] < 2:
        return None
    if np.iscomplexobj(v) or v.dtype.kind not in "biuf":
        raise InputError(f"{name}: values must be real numbers, got {v.dtype}")
    v = np.asarray(v, dtype=np.float64)
    if not np.isfinite(v).all():  # before any column's solve
        row, column = np.argwhere(~np.isfinite(v))[0]
        raise InputError(f"{name}: entry ({row}, {column}) (counted from 0) is {v[row, column]}")
    return v


def _shown(value: Any) -> str:
    """A value as a message shows it: its repr on one line, cut at 80 characters (an array's is many lines)."""
    text = " ".join(repr(value).split())
    return text if len(text) <= 80 else text[:77] + "..."


def _count(value: Any, name: str) -> int | None:
    """A whole number given as an int, a numpy integer or an integral float (50.0); None stays None."""
    if value is None:
        return None
    if isinstance(value, (bool, np.bool_)):
        raise InputError(f"{name} must be a whole number, got {_shown(value)}")
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        value = int(value)
    try:
        value = operator.index(value)
    except TypeError:
        raise InputError(f"{name} must be a whole number, got {_shown(value)}") from None
    if not 1 <= value <= 2**31 - 1:
        raise InputError(f"{name} must be from 1 to 2147483647, got {value}")
    return value


def _number(value: Any, name: str) -> float | None:
    """A real number: Python's or numpy's (a 0-d array too), not a bool, a string or a time span, as _count
    refuses them; None stays None."""
    if value is None:
        return None
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iuf":
        value = value.item()
    if isinstance(value, (bool, np.bool_, np.timedelta64)) or not isinstance(value, numbers.Real):
        raise InputError(f"{name} must be a number, got {_shown(value)}")
    try:
        return float(value)
    except (TypeError, ValueError, OverflowError):
        raise InputError(f"{name} must be a number, got {_shown(value)}") from None


def _near_nullspace(B: Any, rows: int) -> np.ndarray | None:
    """B as a C-ordered float64 array of shape (rows, k), 1 <= k <= 64, finite; None stays None."""
    if B is None:
        return None
    B = B.toarray() if sp.issparse(B) else np.asarray(B)
    if np.iscomplexobj(B) or B.dtype.kind not in "biuf":
        raise InputError(f"near_nullspace: real values are needed, got {B.dtype}")
    if B.ndim == 1:
        B = B.reshape(-1, 1)
    if B.ndim != 2 or B.shape[0] != rows or not 1 <= B.shape[1] <= 64:
        raise InputError(f"near_nullspace: shape (n, k) with A's n = {rows} rows and 1 <= k <= 64 vectors is "
                         f"needed, got {B.shape}")
    B = np.ascontiguousarray(B, dtype=np.float64)
    if not np.isfinite(B).all():
        row = int(np.argwhere(~np.isfinite(B))[0][0])
        raise InputError(f"near_nullspace: row {row} holds a value that is not finite")
    return B


def keep_freed_memory() -> bool:
    """Lets this process keep the memory it frees for its next allocations, as the amgsolve program does:
    glibc's malloc then serves large blocks from its heap instead of mapping fresh pages, and never gives the
    heap's top back. A setup frees and allocates hundreds of MB of temporaries, and every fresh page costs a
    page fault on first touch: a time-stepping loop's Solver.rebuild at 128^3 takes about a quarter less
    (docs/BENCHMARKS.md, "Re-setup on the same pattern"). It is the whole process's policy, so the package
    does not set it on import: call it once, first, where the process is yours. The price is a resident size
    that does not drop when memory is freed. Returns False where the C library has no such settings (not
    glibc), which changes only speed."""
    return _amgsolve.keep_freed_memory()


def rigid_body_modes(coordinates: Any, block_size: int | None = None) -> np.ndarray:
    """The rigid-body modes of linear elasticity (translations, and rotations about the points' centroid) at
    points given as an array of shape (nodes, d), d = 2 or 3: shape (nodes * block_size, 3) in 2D or
    (nodes * block_size, 6) in 3D, for unknowns interleaved node by node: the displacements (block_size d,
    the default) or, for beams, plates and shells, the displacements and the rotations (theta_z in 2D,
    theta_x, theta_y, theta_z in 3D: block_size 3 or 6). The near_nullspace of Solver with
    amg={"block_size": block_size}."""
    c = np.asarray(coordinates)
    if c.ndim != 2 or c.shape[1] not in (2, 3) or c.shape[0] == 0 or c.dtype.kind not in "biuf":
        raise InputError(f"rigid_body_modes: real coordinates of shape (nodes, 2) or (nodes, 3) are needed, got "
                         f"{c.dtype} of shape {c.shape}")
    block = _count(block_size, "block_size") or c.shape[1]
    modes, values = _amgsolve.rigid_body_modes(np.ascontiguousarray(c, dtype=np.float64).ravel(), c.shape[1], block)
    return values.reshape(-1, modes)


def elasticity(box: Any, young_modulus: float = 1.0, poisson_ratio: float = 0.3):
    """The program's elasticity problem (problem.type elasticity): a cantilever of box = (nx, ny) or (nx, ny,
    nz) cells of side 1 / ny, clamped at x = 0 and loaded by its weight, linear triangles (plane strain) or
    tetrahedra. Returns (A, b, points): the stiffness matrix (a csr_array; unknowns ux, uy[, uz] interleaved
    node by node), the load, and the free nodes' coordinates, shape (nodes, d), for rigid_body_modes."""
    if not isinstance(box, (list, tuple, np.ndarray)) or len(box) not in (2, 3):
        raise InputError(f"box: 2 or 3 cell counts (x, y[, z]) are needed, got {box!r}")
    cells = [_count(c, "box") for c in box]
    if any(c is None for c in cells):
        raise InputError(f"box: every cell count must be a whole number, got {box!r}")
    E, nu = _number(young_modulus, "young_modulus"), _number(poisson_ratio, "poisson_ratio")
    rows, indptr, indices, data, load, points = _amgsolve.elasticity(cells, E, nu)
    A = _from_arrays(sp.csr_array, data, indices, indptr, (rows, rows))
    return A, load, points.reshape(-1, len(cells))


class Solver:
    """The AMG hierarchy of a symmetric positive definite matrix and its outer iteration (PCG by default).

    A: a scipy.sparse matrix (CSR or anything convertible; float64 or float32 values, int32 or int64
    indices), copied once. params: the YAML keys (see the module's docstring).

    A system of PDEs (linear elasticity: ux, uy, uz at each node) takes amg={"block_size": 3}, its unknowns
    interleaved node by node, and near_nullspace: the vectors the coarse levels must represent (PyAMG's B:
    shape (n, k), or (n,) for one), e.g. rigid_body_modes(coordinates). With block_size alone, the unit
    vector of each component. A scipy BSR matrix with square blocks of b > 1 rows (A.tobsr(blocksize=(b, b)))
    sets amg.block_size to b unless params set it. A system held nowhere (A maps some combinations of the
    near_nullspace vectors to zero: rigid-body motions) is solved on its range, the solution orthogonal to
    them, for b without a part along them. The cpu backend on one process. It pickles as its matrix, vectors
    and parameters, and the copy sets itself up again (__reduce__).
    """

    def __init__(self, A: Any, near_nullspace: Any = None, **params: Any) -> None:
        _refuse_pyamg_candidates(params)
        settings = _settings(params)
        settings += _block_size_of(A, settings)
        A = _csr(A, "A")
        self._settings = settings
        self._core = _core_solver(A, _near_nullspace(near_nullspace, A.shape[0]), settings)

    def solve(self, b: Any, tol: float | None = None, maxiter: int | None = None,
              x0: Any = None, atol: float | None = None, *, rtol: float | None = None
              ) -> tuple[np.ndarray, dict | list[dict]]:
        """x with A x = b from x0 (zero when not given), to ||b - A x|| <= max(tol ||b||, atol) (scipy's cg
        test; tol and atol default to solver.tolerance and solver.absolute_tolerance, 0; rtol is scipy's
        name for tol, either may be given), and the
        statistics: converged, iterations, tolerance (the relative residual held to, atol counted),
        relative_residual, residuals (the relative residual ||b - A x|| / ||b|| before the first iteration and
        after each), seconds, convergence_factor (the average reduction per iteration), stagnated (the true
        residual stopped falling above the tolerance: the attainable accuracy, or a singular A), type and
        precision (solver.type and solver.precision), levels (the hierarchy this solve used, as
        Solver.levels). Solver.report turns them into a report that amgsolve.plot draws.

        b of shape (n, m), m > 1: m right-hand sides (load cases), each column solved in turn with the same
        hierarchy (x0, if given, of the same shape); x is then (n, m) and the statistics a list of m dicts. (b
        of shape (n, 1) is one vector: x of shape (n,).)"""
        if isinstance(tol, np.ndarray) and tol.ndim > 0 or isinstance(tol, (list, tuple)) or sp.issparse(tol):
            raise InputError("solve(b, x0): the second argument is tol; give the start by name, solve(b, x0=x0) "
                             "(scipy's cg(A, b, x0) takes it second)")
        if rtol is not None:
            if tol is not None:
                raise InputError("tol and rtol are one setting (rtol is scipy's name for it): give one of them")
            tol = rtol
        rhs = _columns(b, self.shape[0], "b")
        if rhs is not None:
            starts = None if x0 is None else _columns(x0, self.shape[0], "x0")
            if x0 is not None and (starts is None or starts.shape != rhs.shape):
                raise InputError(f"x0: the shape of b, {rhs.shape}, is needed for several right-hand sides, got "
                                 f"{np.shape(x0)}")
            solved = [self.solve(rhs[:, j], tol, maxiter, None if starts is None else starts[:, j], atol)
                      for j in range(rhs.shape[1])]
            return np.column_stack([x for x, _ in solved]), [info for _, info in solved]
        start = None if x0 is None else _vector(x0, "x0")
        return self._core.solve(_vector(b, "b"), _number(tol, "tol"), _count(maxiter, "maxiter"), start,
                                _number(atol, "atol"))

    def rebuild(self, A: Any) -> None:
        """Re-setup for new values of A (time stepping, nonlinear iterations). Built with
        amg={"keep_structure": True} and A on the same pattern, the aggregates and tentative prolongators are
        kept and the rest recomputed, the products by their numeric phase only (by the SpGEMM from a level
        whose filtered matrix has another pattern than before, and in full with amg spgemm heap,
        rmerge-cpu, eigen or graphblas, which sum in another order); otherwise a full setup. solver.setup["reused"]
        says which, solver.setup["rebuild_note"] why (and from which level the products were formed anew).
        The old levels are let go of as the new ones are made, or before a full setup in their place (no more
        memory than the first setup). A matrix refused before any work (not square, not symmetric, not finite,
        of another size than a system's near-nullspace, which a rebuild keeps, singular in disconnected parts,
        or not of the declared nullspace: InputError) leaves the hierarchy as it was; a setup that fails on the values (not positive definite: NumericalError) leaves none, and
        solve() raises until a rebuild succeeds (solver.setup then lists no levels)."""
        A = _csr(A, "A")
        self._core.rebuild(*_arrays(A))

    def report(self, statistics: dict | list[dict]) -> dict:
        """A solve's statistics (what solve returned: a dict, or the list of a solve of several right-hand
        sides) as a report in the program's JSON form (--report): amgsolve.plot.plot(report) draws its
        convergence, levels and setup phases, as `python -m amgsolve.plot` does a file json.dump wrote. Its
        setup is this solver's summary where the solve used the current hierarchy, else (a rebuild came after)
        the solve's levels alone."""
        solves = statistics if isinstance(statistics, list) else [statistics]
        if not solves or not all(isinstance(s, dict) and {"residuals", "levels", "type"} <= s.keys() for s in solves):
            raise InputError("report(statistics): give what solve() returned for its statistics (a dict, or the "
                             "list of a solve of several right-hand sides)")
        levels = solves[-1]["levels"]
        setup = self.setup
        if setup["levels"] != levels:  # a later setup's summary is not the one this solve used
            setup = {"levels": levels}
        report = {"amgsolve": f"amgsolve {__version__} (Python package)", "backend": setup.get("backend"),
                  "setup": setup, "solve": _solve_record(solves[-1])}
        if isinstance(statistics, list):
            report["load_cases"] = [dict(_brief_solve_record(s), column=j + 1) for j, s in enumerate(solves)]
        return report

    @property
    def shape(self) -> tuple[int, int]:
        """The shape of the matrix the hierarchy was built for (the last successful setup's)."""
        rows = self._core.rows  # an atomic the core sets with the hierarchy: never a half-done rebuild's
        return (rows, rows)

    def aspreconditioner(self) -> spla.LinearOperator:
        """One V-cycle as a scipy LinearOperator (M ~ A^-1), for scipy.sparse.linalg.cg and its kin. numpy's BLAS
        threads and amgsolve's take turns on the cores there: on few cores run scipy's iteration with
        OPENBLAS_NUM_THREADS=1 or threadpoolctl.threadpool_limits(1, "blas") (README, "Python"), or use solve()."""

        def matvec(r: np.ndarray) -> np.ndarray:
            return self._core.precondition(_vector(r, "r"))

        # M^T = M where the cycle is symmetric (pre_steps = post_steps); else scipy is given no transpose.
        rmatvec = matvec if self._core.symmetric_cycle else None
        return spla.LinearOperator(self.shape, matvec=matvec, rmatvec=rmatvec, dtype=np.float64)

    @property
    def setup(self) -> dict:
        """What the setup built: backend, seconds, operator_complexity, grid_complexity, spgemm, nullspace
        (what amg.nullspace resolved to), nullspace_vectors, block_size, near_nullspace_vectors (1: a scalar problem's
        constant), near_nullspace_sweeps (amg.improve_near_nullspace where it was applied), hierarchy_bytes, reused and rebuild_note (after a rebuild: whether
        the aggregates were kept, and how the products were formed), levels."""
        return self._core.setup()

    @property
    def levels(self) -> list[dict]:
        """One dict per level: level, rows, nnz, aggregates, spectral_radius, seconds, spgemm_seconds, phases
        (seconds per setup phase), smoother, coarsest (the level solved directly)."""
        return self._core.setup()["levels"]

    def __reduce__(self):
        """pickle and copy: the matrix of the last successful setup, the near-nullspace vectors and the
        parameters, from which the copy sets itself up again: a fresh Solver's hierarchy of that matrix, bit
        for bit (the setup is deterministic), which is this one's unless a re-setup kept an earlier matrix's
        aggregates; so another process (multiprocessing's spawn, joblib) solves as this one does."""
        rows, cols, indptr, indices, data, near, count = self._core.state()
        A = _from_arrays(sp.csr_array, data, indices, indptr, (rows, cols))
        vectors = None if near is None else near.reshape(rows, count)
        others = {k: v for k, v in self.__dict__.items() if k not in ("_core", "_settings")}  # a subclass's
        return _restored_solver, (type(self), A, vectors, self._settings), others

    def __repr__(self) -> str:
        s = self.setup
        if not s["levels"]:
            return f"amgsolve.Solver: no hierarchy on {s['backend']} (its last rebuild failed: {s['rebuild_note']})"
        lines = [f"amgsolve.Solver: {len(s['levels'])} levels on {s['backend']}, operator complexity "
                 f"{s['operator_complexity']:.3f}, grid complexity {s['grid_complexity']:.3f}, setup "
                 f"{s['seconds']:.3f} s",
                 f"  {'level':>5} {'rows':>12} {'nnz':>14}"]
        lines += [f"  {l['level']:>5} {l['rows']:>12} {l['nnz']:>14}" for l in s["levels"]]
        return "\n".join(lines)


def _brief_solve_record(statistics: dict) -> dict:
    """A solve's entry in a report, as the program writes each load case and time step."""
    return {"iterations": statistics["iterations"], "relative_residual": statistics["relative_residual"],
            "converged": statistics["converged"], "seconds": statistics["seconds"],
            "history": list(statistics["residuals"])}


def _solve_record(statistics: dict) -> dict:
    """A report's solve section, as the program's (its tolerance the one the solve held to)."""
    return dict(_brief_solve_record(statistics), type=statistics["type"], precision=statistics["precision"],
                tolerance=statistics["tolerance"], stagnated=statistics["stagnated"],
                convergence_factor=statistics["convergence_factor"])


def _core_solver(A: Any, vectors: np.ndarray | None, settings: list[str]):
    """The library's solver of a CSR matrix, its near-nullspace vectors (n, k) or None, and the parameters as
    --set assignments."""
    _started()
    return _amgsolve.Solver(*_arrays(A), settings, None if vectors is None else vectors.ravel(),
                            0 if vectors is None else vectors.shape[1])


def _restored_solver(kind: type, A: Any, vectors: np.ndarray | None, settings: list[str]) -> Solver:
    """A Solver (or a subclass's object, kind) set up again from what Solver.__reduce__ kept."""
    solver = kind.__new__(kind)
    solver._settings = settings
    solver._core = _core_solver(A, vectors, settings)
    return solver


def spgemm(A: Any, B: Any, backend: str = "auto", return_info: bool = False):
    """C = A @ B with one of amgsolve's SpGEMM backends (its name, or its entry of amgsolve.spgemm_backends(),
    which lists them). float32 when both are float32, else float64 (boolean and integer values are
    converted); a csr_matrix when both are scipy matrices, else a csr_array. return_info: also a dict with the
    backend's choice and seconds. The pattern is the structural product's, as a solver's setup needs it (the
    same pattern for any values): an entry that cancels exactly, or comes from stored zeros, stays as a stored
    0, where scipy's A @ B drops it (C.eliminate_zeros() does the same here)."""
    if isinstance(backend, dict) and isinstance(backend.get("name"), str):
        backend = backend["name"]  # an entry of amgsolve.spgemm_backends()
    if not isinstance(backend, str):
        raise InputError(f"backend must be a SpGEMM backend's name (amgsolve.spgemm_backends()), got "
                         f"{type(backend).__name__} {str(backend)[:80]!r}")
    matrices = sp.isspmatrix(A) and sp.isspmatrix(B)
    A, B = _csr(A, "A"), _csr(B, "B")
    single = A.dtype == np.float32 and B.dtype == np.float32
    if not single:
        A, B = (M if M.dtype == np.float64 else M.astype(np.float64) for M in (A, B))
    multiply = _amgsolve.spgemm_float32 if single else _amgsolve.spgemm_float64
    _started()
    indptr, indices, data, shape, info = multiply(backend, *_arrays(A), *_arrays(B))
    C = _from_arrays(sp.csr_matrix if matrices else sp.csr_array, data, indices, indptr, tuple(shape))
    return (C, info) if return_info else C


def spgemm_backends() -> list[dict]:
    """Every SpGEMM backend built in: name, description, runs_on, available (and why not), external_baseline."""
    return _amgsolve.spgemm_backends()
