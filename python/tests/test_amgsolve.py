"""The Python package against independent references: scipy's direct solver and sparse product, the
residual recomputed here, and the invariants the parameters and inputs must keep."""
import copy
import os
import pickle
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import amgsolve


def poisson(n, dims=3):
    """The 7-point (3D) or 5-point (2D) Laplacian on an n^dims grid, Dirichlet boundary."""
    T = sp.diags_array([-np.ones(n - 1), 2 * np.ones(n), -np.ones(n - 1)], offsets=[-1, 0, 1], format="csr")
    I = sp.identity(n, format="csr")
    if dims == 2:
        return (sp.kron(T, I) + sp.kron(I, T)).tocsr()
    return (sp.kron(sp.kron(T, I), I) + sp.kron(sp.kron(I, T), I) + sp.kron(sp.kron(I, I), T)).tocsr()


def relative_residual(A, x, b):
    return np.linalg.norm(b - A @ x) / np.linalg.norm(b)


def test_solution_meets_the_tolerance_and_matches_a_direct_solve():
    A = poisson(40, dims=2)
    rng = np.random.default_rng(7)
    b = rng.standard_normal(A.shape[0])
    solver = amgsolve.Solver(A, solver={"tolerance": 1e-10})
    x, info = solver.solve(b)
    assert info["converged"]
    assert relative_residual(A, x, b) <= 1e-10
    assert info["relative_residual"] == pytest.approx(relative_residual(A, x, b), rel=1e-3)
    reference = spla.spsolve(A.tocsc(), b)
    assert np.linalg.norm(x - reference) <= 1e-7 * np.linalg.norm(reference)


def test_statistics_describe_the_iteration_and_the_hierarchy():
    A = poisson(24)
    solver = amgsolve.Solver(A)
    x, info = solver.solve(np.ones(A.shape[0]))
    history = info["residuals"]
    assert len(history) == info["iterations"] + 1
    assert history[0] == pytest.approx(1.0)  # from x = 0
    assert history[-1] == info["relative_residual"] <= 1e-8
    levels = info["levels"]
    assert levels[0]["rows"] == A.shape[0] and levels[0]["nnz"] == A.nnz
    assert all(levels[i + 1]["rows"] == levels[i]["aggregates"] for i in range(len(levels) - 1))
    assert levels[-1]["coarsest"] and not levels[0]["coarsest"]
    setup = solver.setup
    assert setup["operator_complexity"] == pytest.approx(sum(l["nnz"] for l in levels) / A.nnz)
    assert f"{A.shape[0]}" in repr(solver)


def test_every_input_layout_gives_the_same_solution_bit_for_bit():
    A = poisson(12)
    b = np.linspace(1, 2, A.shape[0])
    x_ref, _ = amgsolve.Solver(A).solve(b)
    A64 = A.copy()
    A64.indices = A64.indices.astype(np.int64)
    A64.indptr = A64.indptr.astype(np.int64)
    for layout in (A64, A.tocoo(), A.tocsc(), sp.csr_matrix(A), A.toarray()):
        x, _ = amgsolve.Solver(layout).solve(b)
        np.testing.assert_array_equal(x, x_ref)
    # float32 values are widened exactly, so the solve is that of the widened matrix.
    A32 = A.astype(np.float32)
    x32, _ = amgsolve.Solver(A32).solve(b)
    x32_ref, _ = amgsolve.Solver(A32.astype(np.float64)).solve(b)
    np.testing.assert_array_equal(x32, x32_ref)


def test_unsorted_and_duplicate_entries_are_summed_as_scipy_does():
    A = poisson(10, dims=2).tocoo()
    # Every entry split in two halves, shuffled: the same matrix once summed.
    rng = np.random.default_rng(3)
    order = rng.permutation(2 * A.nnz)
    rows = np.concatenate([A.row, A.row])[order]
    cols = np.concatenate([A.col, A.col])[order]
    vals = np.concatenate([A.data / 2, A.data / 2])[order]
    split = sp.coo_array((vals, (rows, cols)), shape=A.shape)
    b = np.ones(A.shape[0])
    x, _ = amgsolve.Solver(split).solve(b)
    x_ref, _ = amgsolve.Solver(A).solve(b)
    np.testing.assert_allclose(x, x_ref, rtol=1e-12, atol=0)


def test_tolerance_and_iteration_limit_apply_per_solve():
    A = poisson(20)
    solver = amgsolve.Solver(A, solver={"tolerance": 1e-12})
    b = np.ones(A.shape[0])
    _, loose = solver.solve(b, tol=1e-3)
    assert loose["converged"] and loose["relative_residual"] <= 1e-3
    _, capped = solver.solve(b, maxiter=2)
    assert capped["iterations"] == 2 and not capped["converged"]
    _, tight = solver.solve(b)
    assert tight["relative_residual"] <= 1e-12 and tight["iterations"] > loose["iterations"]
    with pytest.raises(amgsolve.InputError, match="tolerance"):
        solver.solve(b, tol=2.0)
    # rtol, scipy's name for it, is the same setting
    _, scipy_named = solver.solve(b, rtol=1e-3)
    assert scipy_named["residuals"] == loose["residuals"]
    with pytest.raises(amgsolve.InputError, match="tol and rtol are one setting"):
        solver.solve(b, tol=1e-3, rtol=1e-3)


def test_atol_stops_at_a_residual_in_bs_units_as_scipys_cg_does():
    A = poisson(20)
    b = np.full(A.shape[0], 2.0)
    atol = 1e-5 * np.linalg.norm(b)
    solver = amgsolve.Solver(A, solver={"tolerance": 1e-12})
    x, info = solver.solve(b, atol=atol)
    assert info["converged"] and np.linalg.norm(b - A @ x) <= atol
    assert info["tolerance"] == pytest.approx(1e-5, rel=1e-12)
    _, tight = solver.solve(b)
    assert tight["iterations"] > info["iterations"] and tight["tolerance"] == 1e-12
    _, configured = amgsolve.Solver(A, solver={"tolerance": 1e-12, "absolute_tolerance": atol}).solve(b)
    assert configured["residuals"] == info["residuals"]
    with pytest.raises(amgsolve.InputError, match="absolute tolerance"):
        solver.solve(b, atol=-1.0)


def test_x0_is_where_the_iteration_starts():
    A = poisson(20)
    solver = amgsolve.Solver(A)
    b = np.ones(A.shape[0])
    x, cold = solver.solve(b)
    x0 = x + 1e-4 * np.cos(0.7 * np.arange(A.shape[0]))
    x_warm, warm = solver.solve(b, x0=x0)
    assert warm["residuals"][0] == pytest.approx(relative_residual(A, x0, b), rel=1e-12)
    assert warm["converged"] and warm["iterations"] < cold["iterations"]
    assert relative_residual(A, x_warm, b) <= 1e-8
    assert x0[0] == x[0] + 1e-4  # the caller's x0 is left as it was
    assert solver.solve(b, x0=x)[1]["iterations"] == 0
    with pytest.raises(amgsolve.InputError, match="initial guess has 3 entries"):
        solver.solve(b, x0=np.zeros(3))
    with pytest.raises(amgsolve.InputError, match="solver.initial_guess"):
        amgsolve.Solver(A, solver={"initial_guess": "previous_step"})


def test_preconditioner_drives_scipy_cg_like_the_built_in_pcg():
    A = poisson(24)
    b = np.ones(A.shape[0])
    solver = amgsolve.Solver(A)
    _, info = solver.solve(b)
    M = solver.aspreconditioner()
    assert M.shape == A.shape
    iterations = []
    x, status = spla.cg(A, b, M=M, rtol=1e-8, callback=lambda xk: iterations.append(1))
    assert status == 0
    assert relative_residual(A, x, b) <= 1e-8
    assert abs(len(iterations) - info["iterations"]) <= 1
    # One V-cycle from zero is linear in r.
    rng = np.random.default_rng(11)
    r1, r2 = rng.standard_normal((2, A.shape[0]))
    np.testing.assert_allclose(M @ (2 * r1 + r2), 2 * (M @ r1) + M @ r2, rtol=1e-9, atol=1e-12)


def test_mixed_precision_and_other_parameters_reach_the_tolerance():
    A = poisson(24)
    b = np.ones(A.shape[0])
    for params in ({"solver": {"precision": "mixed"}}, {"amg.smoother.type": "jacobi", "amg.coarse_size": 50},
                   {"amg": {"spgemm": "magnus"}}, {"backend": "cpu", "solver": {"type": "amg", "max_iterations": 100}}):
        x, info = amgsolve.Solver(A, **params).solve(b)
        assert info["converged"], params
        assert relative_residual(A, x, b) <= 1e-8, params


@pytest.mark.parametrize("params, message", [
    ({"amg": {"coarse_size": 0}}, "amg.coarse_size"),
    ({"amg": {"coarse_sise": 10}}, "coarse_size"),  # unknown, with a suggestion
    ({"solver": {"precision": "quad"}}, "solver.precision"),
    ({"problem": {"size": [4, 4]}}, "not a solver parameter"),
    ({"amg.spgemm": "no-such-backend"}, "no-such-backend"),
])
def test_a_wrong_parameter_is_an_input_error_naming_it(params, message):
    with pytest.raises(amgsolve.InputError, match=message):
        amgsolve.Solver(poisson(6), **params)


def test_the_first_bad_entry_of_a_large_matrix_is_named():
    # Copied and checked by all threads (two or more: the CI's runner has two cores): the entry named is the
    # first in storage order, not the first a thread found (a matrix large enough for the thread team; the bad
    # entries far apart).
    A = poisson(30)
    first, later = 1000, A.nnz - 1000
    row_of = lambda k: int(np.searchsorted(A.indptr, k, side="right") - 1)
    M = A.copy()
    M.data[later], M.data[first] = np.inf, np.nan
    with pytest.raises(amgsolve.InputError, match=rf"entry \({row_of(first)}, {M.indices[first]}\) is not finite"):
        amgsolve.Solver(M)
    M = A.copy()
    M.indices[later], M.indices[first] = A.shape[1] + 5, -3
    with pytest.raises(amgsolve.InputError, match=r"column index -3 is outside"):
        amgsolve.Solver(M)


def test_bad_matrices_and_vectors_are_refused_with_the_reason():
    A = poisson(6).tolil()
    cases = {
        "not square": sp.random(5, 6, density=0.5, format="csr", random_state=1),
        "not symmetric": (A + sp.csr_array(([3.0], ([0], [1])), shape=A.shape)).tocsr(),
        r"entry \(\d+, \d+\) is not finite": poisson(6).astype(np.float64),
        "zero or missing": poisson(6).tolil(),
    }
    cases[r"entry \(\d+, \d+\) is not finite"].data[4] = np.nan
    cases["zero or missing"][2, 2] = 0
    cases["zero or missing"] = cases["zero or missing"].tocsr()
    cases["zero or missing"].eliminate_zeros()
    for message, M in cases.items():
        with pytest.raises(amgsolve.InputError, match=message):
            amgsolve.Solver(M)
    # scipy's indices, counted from 0, and said to be
    with pytest.raises(amgsolve.InputError, match=r"entries \(0, 1\) and \(1, 0\) differ \(relative difference [0-9.]+\) "
                                                  r"\(indices counted from 0\)"):
        amgsolve.Solver(cases["not symmetric"])
    with pytest.raises(amgsolve.InputError, match=r"diagonal entry 2 is zero or missing \(indices counted from 0\)"):
        amgsolve.Solver(cases["zero or missing"])
    with pytest.raises(amgsolve.InputError, match="values must be real"):
        amgsolve.Solver(poisson(4).astype(np.complex128))
    # A corrupt indptr is named before scipy's own tools read it (they failed with a bare C++ error).
    for row, offset, message in [(10, None, "indptr decreases at row"), (10, -5, "indptr decreases at row"),
                                 (0, 3, "indptr must start at 0")]:
        M = poisson(6)
        M.indptr[row] = M.indptr[row + 2] + 1 if offset is None else offset
        with pytest.raises(amgsolve.InputError, match=message):
            amgsolve.Solver(M)
        with pytest.raises(amgsolve.InputError, match=message):
            amgsolve.spgemm(M, poisson(6))
    # Index arrays of another type assigned to a matrix scipy has not checked yet (scipy's own check said only
    # "unsupported data types in input").
    for kind in (np.uint64, np.float64):
        M = sp.kron(poisson(3), sp.eye(2)).tocsr()
        M.indices, M.indptr = M.indices.astype(kind), M.indptr.astype(kind)
        with pytest.raises(amgsolve.InputError, match=f"A: indptr must hold int32 or int64 indices, got {np.dtype(kind)}"):
            amgsolve.Solver(M)
    # Columns out of order in a matrix that says its format is canonical: the remedy named is one that works
    # (A.sum_duplicates() alone does nothing where the flag is set).
    M = sp.csr_matrix((np.array([1.0, 2.0, 3.0]), np.array([1, 0, 1]), np.array([0, 2, 3])), shape=(2, 2))
    M.has_canonical_format = True
    with pytest.raises(amgsolve.InputError, match=r"A.has_sorted_indices = False; A.sum_duplicates\(\)"):
        amgsolve.spgemm(M, M)
    M.has_sorted_indices = False
    M.sum_duplicates()
    np.testing.assert_array_equal(amgsolve.spgemm(M, M).toarray(), (M @ M).toarray())
    solver = amgsolve.Solver(poisson(6))
    with pytest.raises(amgsolve.InputError, match="entries"):
        solver.solve(np.ones(5))


def test_an_indefinite_matrix_is_a_numerical_error():
    A = poisson(8) - 2.5 * sp.identity(512, format="csr")  # symmetric, positive diagonal, indefinite
    with pytest.raises(amgsolve.NumericalError):
        amgsolve.Solver(A).solve(np.ones(512))


def test_errors_derive_from_amgsolve_error_and_the_builtin_kind():
    assert issubclass(amgsolve.InputError, amgsolve.Error) and issubclass(amgsolve.InputError, ValueError)
    assert issubclass(amgsolve.NumericalError, amgsolve.Error)
    assert issubclass(amgsolve.NumericalError, ArithmeticError)
    with pytest.raises(amgsolve.Error, match="coarse_size"):
        amgsolve.Solver(poisson(4), amg={"coarse_size": 0})
    # Named as the docs name them (a traceback said amgsolve._amgsolve.InputError), and pickled by that name.
    assert amgsolve.InputError.__module__ == "amgsolve" and amgsolve.NumericalError.__module__ == "amgsolve"
    assert type(pickle.loads(pickle.dumps(amgsolve.InputError("x")))) is amgsolve.InputError
    # Other solvers' names and keys without their section point at ours.
    with pytest.raises(amgsolve.InputError, match=r"did you mean 'solver.tolerance'"):
        amgsolve.Solver(poisson(4), solver={"tol": 1e-6})
    with pytest.raises(amgsolve.InputError, match=r"did you mean 'amg.coarse_size'"):
        amgsolve.Solver(poisson(4), coarse_size=10)
    # PyAMG's: its smoother argument, a section given a value, and its candidates B (an array).
    with pytest.raises(amgsolve.InputError, match=r"did you mean 'amg.smoother.type'"):
        amgsolve.Solver(poisson(4), presmoother=("gauss_seidel", {"sweep": "symmetric"}))
    with pytest.raises(amgsolve.InputError, match=r"must be a section .*did you mean 'amg.smoother.type'"):
        amgsolve.Solver(poisson(4), amg={"smoother": "jacobi"})
    with pytest.raises(amgsolve.InputError, match=r"did you mean 'amg.smoother.type'"):
        amgsolve.Solver(poisson(4), smoother={"type": "jacobi"})
    with pytest.raises(amgsolve.InputError, match=r"parameter B: .*near_nullspace="):
        amgsolve.Solver(poisson(4), B=np.ones((64, 1)))


def level_design(solver):
    """The level table without its timings."""
    return [{k: v for k, v in level.items() if k not in ("seconds", "spgemm_seconds", "phases")}
            for level in solver.levels]


class TaggedSolver(amgsolve.Solver):
    pass


def test_a_pickled_solver_is_the_same_hierarchy_and_solves_bit_for_bit_as_the_original():
    A = poisson(10)
    b = np.linspace(1.0, 2.0, A.shape[0])
    params = {"solver": {"precision": "mixed"}, "amg": {"coarse_size": 50, "keep_structure": True}}
    K, f, points = amgsolve.elasticity((6, 3))  # a system: its near-nullspace vectors go along
    cases = [(amgsolve.Solver(A, **params), b),
             (amgsolve.Solver(K, near_nullspace=amgsolve.rigid_body_modes(points), amg={"block_size": 2}), f)]
    for solver, rhs in cases:
        x, info = solver.solve(rhs)
        for copied in (pickle.loads(pickle.dumps(solver)), copy.deepcopy(solver)):
            assert level_design(copied) == level_design(solver)
            x_copy, info_copy = copied.solve(rhs)
            assert np.array_equal(x_copy, x) and info_copy["residuals"] == info["residuals"]
    # After a rebuild the copy is set up from the new matrix, as a fresh Solver of it with the same parameters.
    D = sp.diags_array(1.0 + 0.3 * np.sin(np.arange(A.shape[0])))
    A2 = (D @ A @ D).tocsr()
    rebuilt = cases[0][0]
    rebuilt.rebuild(A2)
    fresh = amgsolve.Solver(A2, **params)
    copied = pickle.loads(pickle.dumps(rebuilt))
    assert level_design(copied) == level_design(fresh)
    assert np.array_equal(copied.solve(b)[0], fresh.solve(b)[0])
    # A subclass's object comes back as one, with its own attributes.
    tagged = TaggedSolver(A)
    tagged.tag = "step 3"
    copied = pickle.loads(pickle.dumps(tagged))
    assert type(copied) is TaggedSolver and copied.tag == "step 3"
    assert np.array_equal(copied.solve(b)[0], tagged.solve(b)[0])
    # In another process, as multiprocessing's spawn sends it.
    child = subprocess.run([sys.executable, "-c", "import pickle, sys; solver, b = pickle.load(sys.stdin.buffer); "
                            "sys.stdout.buffer.write(pickle.dumps(solver.solve(b)[0]))"],
                           input=pickle.dumps((fresh, b)), capture_output=True, check=True)
    np.testing.assert_array_equal(pickle.loads(child.stdout), fresh.solve(b)[0])


def test_a_solver_without_a_hierarchy_does_not_pickle_and_says_why():
    A = poisson(6)
    solver = amgsolve.Solver(A)
    with pytest.raises(amgsolve.NumericalError):  # diagonal 0.5, indefinite: no hierarchy is left
        solver.rebuild((A - 5.5 * sp.identity(A.shape[0], format="csr")).tocsr())
    with pytest.raises(amgsolve.InputError, match="no hierarchy .* rebuild it before pickling it"):
        pickle.dumps(solver)
    solver.rebuild(A)
    assert level_design(pickle.loads(pickle.dumps(solver))) == level_design(solver)
    # A matrix of 1e-300 is solved scaled by a power of two; the matrix as given is no longer held.
    with pytest.raises(amgsolve.InputError, match="scaled by a power of two.*does not pickle"):
        pickle.dumps(amgsolve.Solver((A * 1e-300).tocsr()))


def test_returned_arrays_are_writable_and_read_only_inputs_are_accepted():
    A = random_sparse(60, 50, 0.1, 4)
    B = random_sparse(50, 70, 0.1, 5)
    C = amgsolve.spgemm(A, B)
    D = amgsolve.spgemm(C, B.T.tocsr())  # an array this module returned, fed back in
    np.testing.assert_allclose(D.toarray(), (A @ B @ B.T).toarray(), rtol=1e-12, atol=1e-14)
    C.data *= 2  # writable
    M = poisson(6)
    M.data.setflags(write=False)
    M.indices.setflags(write=False)
    x, _ = amgsolve.Solver(M).solve(np.ones(M.shape[0]))
    x -= 1.0  # writable
    # scipy's older matrix API in, the same out; boolean patterns are multiplied as 0/1 values.
    assert isinstance(amgsolve.spgemm(sp.csr_matrix(A), sp.csr_matrix(B)), sp.csr_matrix)
    P = amgsolve.spgemm(A.astype(bool), B.astype(bool))
    np.testing.assert_array_equal(P.toarray(), (A.astype(bool).astype(float) @ B.astype(bool).astype(float)).toarray())


def test_spare_room_after_the_last_entry_is_ignored():
    A = poisson(6)
    roomy = sp.csr_array((np.concatenate([A.data, [7.0, 7.0]]), np.concatenate([A.indices, [0, 0]]), A.indptr),
                         shape=A.shape)
    b = np.ones(A.shape[0])
    np.testing.assert_array_equal(amgsolve.Solver(roomy).solve(b)[0], amgsolve.Solver(A).solve(b)[0])


def random_sparse(rows, cols, density, seed, empty_rows=()):
    M = sp.random(rows, cols, density=density, format="csr", random_state=seed)
    M = M.tolil()
    for r in empty_rows:
        M[r, :] = 0
    M = M.tocsr()
    M.eliminate_zeros()
    return M


def test_every_cpu_spgemm_backend_equals_scipys_product():
    A = random_sparse(120, 90, 0.05, 1, empty_rows=(0, 7, 119))
    B = random_sparse(90, 150, 0.04, 2, empty_rows=(3,))
    reference = (A @ B).tocsr()
    reference.sort_indices()
    names = [b["name"] for b in amgsolve.spgemm_backends() if b["available"] and b["runs_on"] == "cpu"]
    assert {"gustavson", "hash", "heap", "magnus", "auto"} <= set(names)
    for name in names:
        C, info = amgsolve.spgemm(A, B, backend=name, return_info=True)
        assert C.shape == reference.shape and info["backend"] == name
        np.testing.assert_array_equal(C.indptr, reference.indptr, err_msg=name)
        np.testing.assert_array_equal(C.indices, reference.indices, err_msg=name)
        np.testing.assert_allclose(C.data, reference.data, rtol=1e-12, err_msg=name)
    # An entry of spgemm_backends() names its backend too.
    entry = next(b for b in amgsolve.spgemm_backends() if b["name"] == "hash")
    assert amgsolve.spgemm(A, B, backend=entry, return_info=True)[1]["backend"] == "hash"
    C32 = amgsolve.spgemm(A.astype(np.float32), B.astype(np.float32))
    assert C32.dtype == np.float32
    np.testing.assert_allclose(C32.toarray(), reference.toarray(), rtol=1e-5, atol=1e-6)
    with pytest.raises(amgsolve.InputError, match="columns must equal"):
        amgsolve.spgemm(A, A)
    # int32 indices where they fit, as scipy's own A @ B (its int32 columns were widened by a copy).
    assert C.indices.dtype == np.int32 and C.indptr.dtype == np.int32


def test_a_shape_beyond_the_32_bit_indices_is_refused_before_scipy_converts_it():
    # Three entries declared 2^31 + 5 square: tocsr() alone would allocate 16 GiB.
    n = 2**31 + 5
    huge = sp.coo_array((np.ones(3), (np.array([0, 1, n - 1]), np.array([0, 1, n - 1]))), shape=(n, n))
    with pytest.raises(amgsolve.InputError, match=r"A: rows 2147483653 does not fit the 32-bit indices"):
        amgsolve.Solver(huge)
    with pytest.raises(amgsolve.InputError, match=r"B: rows 2147483653 does not fit"):
        amgsolve.spgemm(sp.eye(4, format="csr"), huge)


def test_a_product_that_does_not_fit_is_a_memory_error_that_says_what(tmp_path):
    # An outer product of 10^10 entries under a 4 GB address space, in a child process: MemoryError naming
    # the operands and the backend (it said "std::bad_alloc").
    script = (
        "import resource, numpy as np, scipy.sparse as sp, amgsolve\n"
        "resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))\n"
        "u = sp.csr_matrix(np.ones((100000, 1)))\n"
        "try:\n"
        "    amgsolve.spgemm(u, u.T.tocsr(), backend='gustavson')\n"
        "except MemoryError as e:\n"
        "    print('MemoryError:', e)\n")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                            env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert "MemoryError: amgsolve.spgemm: out of memory multiplying A (100000x1" in result.stdout, result.stdout + result.stderr
    assert "with gustavson" in result.stdout


def test_a_setup_that_runs_out_of_memory_is_a_memory_error():
    # 7-point 64^3 under address-space limits from 40 MiB to 400 MiB above what the child has mapped (its
    # OpenMP threads started before, by a small solve: libgomp ends the process where it cannot start one),
    # in child processes: each either solves or raises MemoryError, which says what ran out, and the child
    # ends normally. A memory check's refusal is amgsolve.MemoryLimitError, a MemoryError and an InputError
    # (before: an InputError alone, a ValueError); an allocation that fails, in the setup's threads too, says
    # "out of memory" (before: "std::bad_alloc").
    script = (
        "import resource, sys, numpy as np, scipy.sparse as sp, amgsolve\n"
        "def poisson(n):\n"
        "    I = sp.identity(n); T = sp.diags([-1, 2, -1], [-1, 0, 1], shape=(n, n))\n"
        "    return (sp.kron(sp.kron(T, I), I) + sp.kron(sp.kron(I, T), I) + sp.kron(sp.kron(I, I), T)).tocsr()\n"
        "amgsolve.Solver(poisson(32)).solve(np.ones(32 ** 3))\n"
        "A = poisson(64); b = np.ones(A.shape[0])\n"
        "mapped = int(open('/proc/self/status').read().split('VmSize:')[1].split()[0]) << 10\n"
        "resource.setrlimit(resource.RLIMIT_AS, (mapped + (int(sys.argv[1]) << 20), resource.RLIM_INFINITY))\n"
        "try:\n"
        "    x, info = amgsolve.Solver(A).solve(b)\n"
        "    print('solved', info['iterations'])\n"
        "except MemoryError as e:\n"
        "    print(type(e).__name__, isinstance(e, amgsolve.InputError), e)\n")
    outcomes = []
    for extra_mib in (40, 80, 160, 400):
        result = subprocess.run([sys.executable, "-c", script, str(extra_mib)], capture_output=True, text=True,
                                timeout=120, env={**os.environ, "OMP_NUM_THREADS": "2"})
        assert result.returncode == 0, f"{extra_mib} MiB: rc {result.returncode}\n{result.stdout}{result.stderr}"
        outcomes.append(result.stdout.strip().splitlines()[-1])
    for outcome in outcomes:
        assert outcome.startswith(("solved", "MemoryLimitError True", "MemoryError False out of memory")), outcomes
        assert "bad_alloc" not in outcome, outcomes
    assert not outcomes[0].startswith("solved"), outcomes
    assert outcomes[-1].startswith("solved"), outcomes


def test_the_gil_is_released_during_the_setup_and_the_solve():
    # Another thread runs a Python loop (10^6 steps: some 50 ms, ten of Python's 5 ms switch intervals) once
    # this one is about to enter a call of about half a second. With the GIL released inside the call, the
    # loop ends while the call still runs; with the GIL held for the whole C++ call, it can run only in the
    # moments before (the arguments' checks, where numpy lets the GIL go for an interval or two), too few to
    # end before the call returned. Which of the two ends first decides, not a clock.
    A = poisson(80)
    b = np.ones(A.shape[0])
    solver = None
    for call in ("setup", "solve"):
        entering, returned = threading.Event(), threading.Event()
        loop_ended_inside = []

        def python_work():
            entering.wait()
            total = 0
            for k in range(1000000):
                total += k
            loop_ended_inside.append(not returned.is_set())

        other = threading.Thread(target=python_work)
        other.start()
        entering.set()
        if call == "setup":
            solver = amgsolve.Solver(A)
        else:
            solver.solve(b)
        returned.set()
        other.join()
        assert loop_ended_inside == [True], call


def test_threads_sharing_one_solver_get_the_answer_of_a_solve_alone():
    A = poisson(20)
    solver = amgsolve.Solver(A)
    rng = np.random.default_rng(5)
    rhs = [rng.standard_normal(A.shape[0]) for _ in range(4)]
    alone = [solver.solve(b)[0] for b in rhs]
    together = [None] * len(rhs)

    def work(k):
        together[k] = solver.solve(rhs[k])[0]

    threads = [threading.Thread(target=work, args=(k,)) for k in range(len(rhs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for x, y in zip(alone, together):
        np.testing.assert_array_equal(x, y)


@pytest.mark.skipif(not sys.platform.startswith("linux") or os.confstr("CS_GNU_LIBC_VERSION") is None,
                    reason="keep_freed_memory sets glibc's malloc policy; this is not glibc")
def test_keep_freed_memory_serves_large_blocks_from_the_heap():
    # In child processes (the policy is the process's): a 160 MB array is mapped afresh by glibc's default
    # policy (mallinfo2's hblkhd counts it), from the heap once amgsolve.keep_freed_memory() has run; a solve
    # there still solves.
    script = (
        "import ctypes, sys, numpy as np, scipy.sparse as sp, amgsolve\n"
        "class MallInfo2(ctypes.Structure):\n"
        "    _fields_ = [(n, ctypes.c_size_t) for n in ('arena', 'ordblks', 'smblks', 'hblks', 'hblkhd', 'usmblks',\n"
        "                                                'fsmblks', 'uordblks', 'fordblks', 'keepcost')]\n"
        "libc = ctypes.CDLL('libc.so.6')\n"
        "libc.mallinfo2.restype = MallInfo2\n"
        "kept = amgsolve.keep_freed_memory() if sys.argv[1] == 'keep' else None\n"
        "a = np.ones(20_000_000)\n"
        "mapped = libc.mallinfo2().hblkhd\n"
        "A = sp.diags([-np.ones(999), 2 * np.ones(1000), -np.ones(999)], [-1, 0, 1], format='csr')\n"
        "x, info = amgsolve.Solver(A).solve(np.ones(1000))\n"
        "print(kept, mapped >= a.nbytes, info['converged'])\n")
    def run(policy):
        result = subprocess.run([sys.executable, "-c", script, policy], capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stderr
        return result.stdout.split()
    assert run("default") == ["None", "True", "True"]
    assert run("keep") == ["True", "False", "True"]


def test_rebuild_keeps_the_structure_and_solves_like_a_fresh_setup():
    A = poisson(18)
    b = np.ones(A.shape[0])
    solver = amgsolve.Solver(A, amg={"keep_structure": True})
    A2 = (2.0 * A).tocsr()  # new values on the same pattern; a fresh setup finds the same aggregates
    solver.rebuild(A2)
    assert solver.setup["reused"], solver.setup["rebuild_note"]
    x, info = solver.solve(b)
    y, fresh = amgsolve.Solver(A2, amg={"keep_structure": True}).solve(b)
    np.testing.assert_array_equal(x, y)
    assert info["residuals"] == fresh["residuals"]
    # Another pattern: a full setup, said so.
    B = poisson(10)
    solver.rebuild(B)
    assert not solver.setup["reused"] and "pattern" in solver.setup["rebuild_note"]
    x, info = solver.solve(np.ones(B.shape[0]))
    assert info["converged"] and relative_residual(B, x, np.ones(B.shape[0])) <= 1e-8


def test_arguments_of_the_wrong_form_are_one_short_line_naming_them():
    # What a user coming from scipy or PyAMG writes by habit: each refused in one line that names the argument.
    A = poisson(6)
    b = np.ones(A.shape[0])
    solver = amgsolve.Solver(A)
    with pytest.raises(amgsolve.InputError, match=r"^A: a matrix is needed .* got csr_array of shape \(5,\)$"):
        amgsolve.Solver(sp.csr_array(np.ones(5)))
    with pytest.raises(amgsolve.InputError, match=r"^B: a matrix is needed"):
        amgsolve.spgemm(A, sp.csr_array(np.ones(A.shape[0])))
    column_data = A.copy()
    column_data.data = column_data.data.reshape(-1, 1)
    with pytest.raises(amgsolve.InputError, match=r"^A.data must be a 1-D numpy array, got ndarray of shape"):
        amgsolve.Solver(column_data)
    listed = A.copy()
    listed.indices = list(listed.indices)
    with pytest.raises(amgsolve.InputError, match=r"^A.indices must be a 1-D numpy array, got list$"):
        amgsolve.Solver(listed)
    with pytest.raises(amgsolve.InputError, match=r"solve\(b, x0=x0\)"):
        solver.solve(b, np.zeros_like(b))  # scipy's cg(A, b, x0) order
    with pytest.raises(amgsolve.InputError) as refused:
        amgsolve.rigid_body_modes(np.zeros((500, 2)), block_size=np.ones(500))
    assert "\n" not in str(refused.value) and len(str(refused.value)) < 200, str(refused.value)
    with pytest.raises(amgsolve.InputError) as refused:
        amgsolve.Solver(A, amg={"spgemm": "x" * 100000})
    assert len(str(refused.value)) < 1000, len(str(refused.value))
    wide = (sp.identity(130) * 4.0).tobsr(blocksize=(65, 65))  # blocks wider than a node may be
    with pytest.raises(amgsolve.InputError, match=r"^A: a BSR matrix's blocks \(65x65\) give amg.block_size"):
        amgsolve.Solver(wide)


def test_rebuild_says_where_the_new_values_couple_otherwise():
    # 2D Poisson made anisotropic on its pattern: the y couplings turn weak, half the finest level's, which
    # the kept aggregates were made strong for; the note says so, and each level's share is in the table.
    n = 60
    T = sp.diags_array([-np.ones(n - 1), 2 * np.ones(n), -np.ones(n - 1)], offsets=[-1, 0, 1], format="csr")
    I = sp.identity(n, format="csr")
    A = (sp.kron(I, T) + sp.kron(T, I)).tocsr()
    stretched = (sp.kron(I, T) + 1e-4 * sp.kron(T, I)).tocsr()
    solver = amgsolve.Solver(A, amg={"keep_structure": True})
    assert "strength_drift" not in solver.setup["levels"][0]  # a first setup checks nothing
    solver.rebuild(stretched)
    assert solver.setup["reused"], solver.setup["rebuild_note"]
    assert "sampled couplings strong where they were weak" in solver.setup["rebuild_note"]
    assert solver.setup["levels"][0]["strength_drift"] >= 0.4
    solver.rebuild((3.0 * A).tocsr())  # classified as before
    assert "sampled couplings" not in solver.setup["rebuild_note"], solver.setup["rebuild_note"]
    assert solver.setup["levels"][0]["strength_drift"] == 0.0


def test_a_refused_rebuild_keeps_the_hierarchy_and_a_breakdown_leaves_none():
    A = poisson(10)
    b = np.ones(A.shape[0])
    solver = amgsolve.Solver(A, amg={"keep_structure": True})
    _, before = solver.solve(b)
    lopsided = A.tolil()
    lopsided[0, 1] = -0.5  # no longer symmetric: refused before any work
    with pytest.raises(amgsolve.InputError, match="symmetric"):
        solver.rebuild(lopsided.tocsr())
    _, after = solver.solve(b)
    assert after["residuals"] == before["residuals"] and len(solver.levels) == len(before["levels"])
    indefinite = (A - 5.5 * sp.identity(A.shape[0], format="csr")).tocsr()  # diagonal 0.5, indefinite
    with pytest.raises(amgsolve.NumericalError):
        solver.rebuild(indefinite)
    assert solver.levels == [] and "no hierarchy" in repr(solver)
    with pytest.raises(amgsolve.InputError, match="last rebuild failed"):
        solver.solve(b)
    solver.rebuild(A)
    np.testing.assert_array_equal(solver.solve(b)[0], amgsolve.Solver(A, amg={"keep_structure": True}).solve(b)[0])


def test_vectors_and_counts_are_checked_in_one_line():
    solver = amgsolve.Solver(poisson(6))
    b = np.ones(216)
    with pytest.raises(amgsolve.InputError, match="b: values must be real"):
        solver.solve(b + 1j)
    assert solver.solve(b, maxiter=50.0)[1]["converged"]
    with pytest.raises(amgsolve.InputError, match="maxiter must be a whole number, got 2.5"):
        solver.solve(b, maxiter=2.5)
    # tol as maxiter: a number, not a string or a bool (tol="1e-3" was taken, tol=True read as 1).
    for tol in ("1e-3", True):
        with pytest.raises(amgsolve.InputError, match="tol must be a number"):
            solver.solve(b, tol=tol)
    assert solver.solve(b, tol=np.float32(1e-6))[1]["converged"]
    assert solver.solve(b, tol=np.array(1e-6))[1]["converged"]  # a 0-d array, as numpy's reductions give
    with pytest.raises(amgsolve.InputError, match="tol must be a number"):
        solver.solve(b, tol=np.timedelta64(1, "ms"))
    # The parameters take whole numbers written as floats alike; a fraction stays the YAML reader's error.
    as_floats = amgsolve.Solver(poisson(6), amg={"coarse_size": 50.0}, solver={"max_iterations": 1e3})
    np.testing.assert_array_equal(as_floats.solve(b)[0],
                                  amgsolve.Solver(poisson(6), amg={"coarse_size": 50}).solve(b)[0])
    with pytest.raises(amgsolve.InputError, match="amg.coarse_size"):
        amgsolve.Solver(poisson(6), amg={"coarse_size": 50.5})
    # The float cycle's range is checked in numpy's numbering too; the program's own keys are refused.
    # (on the scale of its largest diagonal entry: a spread beyond float's range, not a matrix far from 1)
    with pytest.raises(amgsolve.InputError, match=r"A: entry \(1, 1\) \(counted from 0\) = 2 is outside"):
        amgsolve.Solver(sp.csr_matrix(np.diag([1e35, 2.0, 3.0])), solver={"precision": "mixed"})
    amgsolve.Solver(sp.csr_matrix(np.diag([1e35, 2e35, 3e35])), solver={"precision": "mixed"})
    with pytest.raises(amgsolve.InputError, match="print_every: the program's progress lines"):
        amgsolve.Solver(poisson(6), solver={"print_every": 0})
    # The library's messages count a vector's entries from 0, as numpy does, and say so.
    with_nan = b.copy()
    with_nan[3] = np.nan
    with pytest.raises(amgsolve.InputError, match=r"right-hand side: entry 3 \(counted from 0\) is nan"):
        solver.solve(with_nan)


def test_every_malformed_argument_is_one_input_error():
    A = poisson(6)
    solver = amgsolve.Solver(A)
    b = np.ones(A.shape[0])
    cases = [
        (lambda: amgsolve.Solver(None), "A: a matrix is needed"),
        (lambda: amgsolve.Solver(np.ones(5)), r"A: a matrix is needed .* shape \(5,\)"),
        (lambda: amgsolve.Solver(sp.csr_array((0, 0))), "empty"),
        (lambda: amgsolve.Solver(A, amg={"coarse_size": 9}, **{"amg.coarse_size": 10}), "amg.coarse_size is given twice"),
        (lambda: amgsolve.Solver(A, amg={"coarse_size": {1, 2}}), "amg.coarse_size"),
        (lambda: amgsolve.Solver(A, amg={"coarse_size": {}}), "amg.coarse_size"),
        (lambda: amgsolve.Solver(A, amgg={}), "amgg"),  # not a section: an unknown key, even empty
        (lambda: amgsolve.Solver(A, problem={}), "problem.*not a solver parameter"),  # the program's section
        (lambda: solver.solve(np.ones((A.shape[0] - 1, 2))), "several right-hand sides are the columns"),
        (lambda: solver.solve(b, maxiter=2**31), "maxiter must be from 1 to 2147483647"),
        (lambda: solver.solve(b, maxiter=0), "maxiter must be from 1"),
        (lambda: solver.solve(b, maxiter=True), "maxiter must be a whole number"),
        (lambda: amgsolve.Solver(np.array([["a", "b"], ["c", "d"]])), "A: a matrix is needed"),
        (lambda: amgsolve.Solver(np.eye(3) * (1 + 1j)), "A: values must be real numbers, got complex128"),
        (lambda: solver.solve(b, tol="small"), "tol must be a number"),
        (lambda: amgsolve.spgemm(A, A, backend=None), "backend must be a SpGEMM backend's name"),
        # a name holding '=' would have set the parameter before it, silently
        (lambda: amgsolve.Solver(A, amg={"coarse_size=5 #": 50}), "not a parameter name"),
        (lambda: amgsolve.Solver(A, **{"amg.coarse_size=5 #": 50}), "not a parameter name"),
        (lambda: amgsolve.Solver(A, amg={1: 2}), "not a parameter name"),
        (lambda: solver.solve([None] * A.shape[0]), "b: values must be real numbers, got object"),
        (lambda: solver.solve(np.array(["1"] * A.shape[0])), "b: values must be real numbers"),
    ]
    for call, message in cases:
        with pytest.raises(amgsolve.InputError, match=message):
            call()
    for empty_sections in ({"amg": {}, "solver": {}}, {"amg": {"smoother": {}}}):  # no parameter
        rows = [l["rows"] for l in amgsolve.Solver(A, **empty_sections).levels]
        assert rows == [l["rows"] for l in solver.levels]
    x_sparse_b, _ = solver.solve(sp.csr_array(b.reshape(-1, 1)))  # a sparse column is a vector too
    np.testing.assert_array_equal(x_sparse_b, solver.solve(b)[0])


def test_the_levels_of_a_solve_are_those_it_used_while_another_thread_rebuilds():
    # Each rebuild (a full setup) lets go of the levels and makes new ones; setup() and solve() read them in
    # turn with it (before, setup() read them unguarded while a rebuild freed them).
    A = poisson(14)
    solver = amgsolve.Solver(A)
    rows = [l["rows"] for l in solver.levels]
    b = np.ones(A.shape[0])
    stop = threading.Event()

    def rebuild():
        while not stop.is_set():
            solver.rebuild(A)

    worker = threading.Thread(target=rebuild)
    worker.start()
    try:
        for _ in range(20):
            _, info = solver.solve(b)
            assert info["converged"] and [l["rows"] for l in info["levels"]] == rows
            assert [l["rows"] for l in solver.setup["levels"]] == rows
    finally:
        stop.set()
        worker.join()


def test_right_hand_sides_far_from_one_are_solved_on_their_own_scale():
    A = poisson(8)
    rng = np.random.default_rng(3)
    b = rng.standard_normal(A.shape[0])
    for precision in ("double", "mixed"):
        solver = amgsolve.Solver(A, solver={"precision": precision})
        x, info = solver.solve(b)
        for scale in (2.0**-600, 2.0**-130, 2.0**900):
            xs, infos = solver.solve(b * scale)
            assert infos["residuals"] == info["residuals"]
            np.testing.assert_array_equal(xs, x * scale)


def _solve_in_child(A, b):
    return amgsolve.Solver(A).solve(b)[1]["iterations"]


def test_a_forked_child_solves_on_one_thread():
    """GNU OpenMP's threads do not survive fork(): a child of a process that has used them waited for ever
    (multiprocessing's default on Linux); now it runs on one thread, with the same answer."""
    import multiprocessing
    A, b = poisson(12), np.ones(12**3)
    parent = amgsolve.Solver(A).solve(b)[1]["iterations"]  # the parent's OpenMP threads exist now
    with multiprocessing.get_context("fork").Pool(1) as pool:
        assert pool.apply_async(_solve_in_child, (A, b)).get(timeout=120) == parent


def test_ctrl_c_interrupts_a_long_solve():
    """Python's SIGINT handler only sets a flag; the solve, without the GIL, now reads it between iterations
    and raises KeyboardInterrupt (before, only after the whole solve)."""
    import signal
    # Damped Jacobi at omega 0.0002 as stand-alone V-cycles: each iteration gains a little (so it never
    # stagnates), 20,000 of them at omega 0.001 took 10.6 s here and reached 1e-5, so this one would take
    # minutes to reach 1e-14 or its attainable accuracy: far longer than the 20 s allowed below.
    solver = amgsolve.Solver(poisson(30), amg={"smoother": {"type": "jacobi", "omega": 0.0002}},
                             solver={"type": "amg", "max_iterations": 1000000})
    # A job a non-interactive shell starts in the background ignores SIGINT, and Python then installs no
    # handler (Ctrl-C could not reach it): the test installs Python's own for its duration.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    interrupter = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))  # Ctrl-C, as a terminal sends it
    started = time.monotonic()
    try:
        interrupter.start()
        with pytest.raises(KeyboardInterrupt):
            solver.solve(np.ones(30**3), tol=1e-14)
    finally:
        interrupter.cancel()
        interrupter.join()
        signal.signal(signal.SIGINT, previous)
    assert time.monotonic() - started < 20  # at the press, not after the whole solve
    assert solver.solve(np.ones(30**3), maxiter=3)[1]["iterations"] == 3  # still usable


def test_the_preconditioner_has_a_transpose_only_where_the_cycle_is_symmetric():
    A, r = poisson(6), np.linspace(1.0, 2.0, 216)
    M = amgsolve.Solver(A).aspreconditioner()
    np.testing.assert_array_equal(M.rmatvec(r), M.matvec(r))
    one_sided = amgsolve.Solver(A, solver={"type": "amg"}, amg={"smoother": {"pre_steps": 2, "post_steps": 1}})
    with pytest.raises(NotImplementedError):
        one_sided.aspreconditioner().rmatvec(r)


def elasticity_2d(nx, ny, E=1.0, nu=0.3, clamped=True):
    """Plane-strain linear elasticity with linear triangles on an nx x ny grid of [0, nx/ny] x [0, 1], clamped
    on its left edge (or, clamped=False, held nowhere: singular): the matrix (unknowns ux, uy of each free
    node, interleaved) and the free nodes' points."""
    h = 1.0 / ny
    X, Y = np.meshgrid(np.arange(nx + 1) * h, np.arange(ny + 1) * h, indexing="ij")
    points = np.c_[X.ravel(), Y.ravel()]
    node = np.arange((nx + 1) * (ny + 1)).reshape(nx + 1, ny + 1)
    lower = np.c_[node[:-1, :-1].ravel(), node[1:, :-1].ravel(), node[1:, 1:].ravel()]
    upper = np.c_[node[:-1, :-1].ravel(), node[1:, 1:].ravel(), node[:-1, 1:].ravel()]
    lam, mu = E * nu / ((1 + nu) * (1 - 2 * nu)), E / (2 * (1 + nu))
    D = np.array([[lam + 2 * mu, lam, 0], [lam, lam + 2 * mu, 0], [0, 0, mu]])
    rows, cols, vals = [], [], []
    for tri in np.vstack([lower, upper]):
        M = np.c_[np.ones(3), points[tri]]
        G = np.linalg.inv(M)[1:]  # the shape functions' gradients
        B = np.zeros((3, 6))
        B[0, 0::2], B[1, 1::2], B[2, 0::2], B[2, 1::2] = G[0], G[1], G[1], G[0]
        dofs = np.c_[2 * tri, 2 * tri + 1].ravel()
        rows.append(np.repeat(dofs, 6)), cols.append(np.tile(dofs, 6))
        vals.append((abs(np.linalg.det(M)) / 2 * B.T @ D @ B).ravel())
    n = 2 * len(points)
    K = sp.csr_array((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(n, n))
    free_nodes = np.flatnonzero(points[:, 0] > 0) if clamped else np.arange(len(points))
    free = np.c_[2 * free_nodes, 2 * free_nodes + 1].ravel()
    K = K[free][:, free].tocsr()
    return ((K + K.T) / 2).tocsr(), points[free_nodes]


def test_a_system_with_its_rigid_body_modes_converges_as_pyamg_does_with_them():
    pyamg = pytest.importorskip("pyamg", reason="PyAMG (scripts/python installs it) is the reference here")
    A, points = elasticity_2d(96, 24)
    b = np.random.default_rng(3).standard_normal(A.shape[0])
    B = amgsolve.rigid_body_modes(points)
    assert B.shape == (A.shape[0], 3)
    # A rigid motion strains nothing: K B vanishes on the nodes away from the clamped edge.
    inner = np.repeat(points[:, 0] > 2.0 / 24, 2)
    assert np.abs((A @ B)[inner]).max() <= 1e-10 * abs(A).max()
    scalar = amgsolve.Solver(A, solver={"tolerance": 1e-8, "max_iterations": 2000})
    system = amgsolve.Solver(A, near_nullspace=B, amg={"block_size": 2}, solver={"tolerance": 1e-8})
    x, info = system.solve(b)
    _, scalar_info = scalar.solve(b)
    assert info["converged"] and relative_residual(A, x, b) <= 1e-8
    reference = spla.spsolve(A.tocsc(), b)
    assert np.linalg.norm(x - reference) <= 1e-5 * np.linalg.norm(reference)
    assert system.setup["near_nullspace_vectors"] == 3 and system.setup["block_size"] == 2
    assert 3 * info["iterations"] < scalar_info["iterations"]
    # B as a scipy sparse matrix too (it read "real values are needed, got object"), as b may be.
    sparse_B = amgsolve.Solver(A, near_nullspace=sp.csr_array(B), amg={"block_size": 2}, solver={"tolerance": 1e-8})
    np.testing.assert_array_equal(sparse_B.solve(b)[0], x)
    # PyAMG's smoothed aggregation with the same B on the same matrix (BSR blocks of 2).
    ml = pyamg.smoothed_aggregation_solver(A.tobsr(blocksize=(2, 2)), B=B)
    residuals = []
    ml.solve(b, tol=1e-8, accel="cg", residuals=residuals, maxiter=500)
    assert info["iterations"] <= 1.25 * (len(residuals) - 1)


def test_a_systems_smoothers_scale_by_its_node_blocks():
    # A nearly incompressible material (nu = 0.45), whose displacements couple strongly within a node: there
    # the node blocks save iterations whatever the aggregates; at nu = 0.3 the gain is within what another
    # set of aggregates moves (docs/BENCHMARKS.md, "MIS-2 with Luby's fresh priorities").
    A, points = elasticity_2d(64, 16, nu=0.45)
    b = np.random.default_rng(4).standard_normal(A.shape[0])
    B = amgsolve.rigid_body_modes(points)
    node = amgsolve.Solver(A, near_nullspace=B, amg={"block_size": 2})
    point = amgsolve.Solver(A, near_nullspace=B, amg={"block_size": 2, "smoother": {"diagonal": "point"}})
    x, info = node.solve(b)
    _, point_info = point.solve(b)
    assert info["converged"] and relative_residual(A, x, b) <= 1e-8
    assert info["iterations"] < point_info["iterations"]
    assert "node blocks" in node.setup["levels"][0]["smoother"]
    assert "node blocks" not in point.setup["levels"][0]["smoother"]
    with pytest.raises(amgsolve.InputError, match="amg.smoother.diagonal"):
        amgsolve.Solver(A, amg={"smoother": {"diagonal": "blocks"}})


def test_several_right_hand_sides_solve_column_by_column():
    A = poisson(40, dims=2)
    B = np.random.default_rng(6).standard_normal((A.shape[0], 3))
    solver = amgsolve.Solver(A)
    X, infos = solver.solve(B)
    assert X.shape == B.shape and len(infos) == 3
    for j in range(3):
        x, info = solver.solve(B[:, j])
        assert np.array_equal(X[:, j], x) and infos[j]["residuals"] == info["residuals"]
        assert relative_residual(A, X[:, j], B[:, j]) <= 1e-8
    # From a start of the same shape, each column from its own.
    X2, infos2 = solver.solve(B, x0=X)
    assert all(info["iterations"] <= 1 for info in infos2)
    with pytest.raises(amgsolve.InputError, match="x0: the shape of b"):
        solver.solve(B, x0=np.zeros(A.shape[0]))
    B[5, 2] = np.nan  # refused before the first column's solve
    with pytest.raises(amgsolve.InputError, match=r"b: entry \(5, 2\) \(counted from 0\) is nan"):
        solver.solve(B)


def test_the_elasticity_cantilever_is_the_tests_own_beam():
    # The program's generator (row by row, nodes x fastest) against this file's (element by element, y fastest).
    A, b, points = amgsolve.elasticity((12, 5))
    R, reference_points = elasticity_2d(12, 5)
    assert A.shape == R.shape and points.shape == reference_points.shape
    order = {tuple(np.round(p * 1e6).astype(int)): k for k, p in enumerate(reference_points)}
    node = np.array([order[tuple(np.round(p * 1e6).astype(int))] for p in points])
    unknown = np.c_[2 * node, 2 * node + 1].ravel()
    P = sp.csr_array((np.ones(A.shape[0]), (np.arange(A.shape[0]), unknown)), shape=A.shape)
    assert abs(P @ R @ P.T - A).max() <= 1e-13 * abs(R).max()
    assert b[0::2].max() == 0 and b[1::2].sum() < 0  # its weight, straight down
    x, info = amgsolve.Solver(A, near_nullspace=amgsolve.rigid_body_modes(points), amg={"block_size": 2}).solve(b)
    assert info["converged"] and relative_residual(A, x, b) <= 1e-8
    for bad, message in [(dict(poisson_ratio=0.5), "Poisson ratio"), (dict(young_modulus=np.inf), "Young's modulus"),
                         (dict(box=4), "box: 2 or 3 cell counts"), (dict(box=(4, 0)), "box must be from 1"),
                         (dict(box=(4, 2.5)), "box must be a whole number"), (dict(box=None), "box: 2 or 3")]:
        with pytest.raises(amgsolve.InputError, match=message):
            amgsolve.elasticity(**{"box": (4, 2), **bad})


def test_a_systems_near_nullspace_is_relaxed_as_asked():
    A, _ = elasticity_2d(64, 16)
    b = np.random.default_rng(5).standard_normal(A.shape[0])
    relaxed = amgsolve.Solver(A, amg={"block_size": 2})  # amg.improve_near_nullspace: 4 sweeps by default
    as_given = amgsolve.Solver(A, amg={"block_size": 2, "improve_near_nullspace": 0})
    x, info = relaxed.solve(b)
    _, given_info = as_given.solve(b)
    assert info["converged"] and relative_residual(A, x, b) <= 1e-8
    assert relaxed.setup["near_nullspace_sweeps"] == 4 and as_given.setup["near_nullspace_sweeps"] == 0
    assert info["residuals"] != given_info["residuals"]  # another tentative prolongator, another cycle
    with pytest.raises(amgsolve.InputError, match="amg.improve_near_nullspace"):
        amgsolve.Solver(A, amg={"block_size": 2, "improve_near_nullspace": -1})


def test_a_floating_body_solves_on_its_range():
    A, points = elasticity_2d(96, 24, clamped=False)
    B = amgsolve.rigid_body_modes(points)
    Q, _ = np.linalg.qr(B)
    b = np.random.default_rng(6).standard_normal(A.shape[0])
    b -= Q @ (Q.T @ b)  # loads in equilibrium
    solver = amgsolve.Solver(A, near_nullspace=B, amg={"block_size": 2})
    assert solver.setup["nullspace"] == "near_nullspace" and solver.setup["nullspace_vectors"] == 3
    x, info = solver.solve(b)
    # A x = b and x orthogonal to the rigid-body modes: the pseudo-inverse's solution.
    assert info["converged"] and relative_residual(A, x, b) <= 1e-8
    assert np.linalg.norm(Q.T @ x) <= 1e-12 * np.linalg.norm(x)
    with pytest.raises(amgsolve.InputError, match="inconsistent with the singular matrix"):
        solver.solve(b + B[:, 0])  # a net force in x


def test_a_floating_part_beside_a_held_one_is_named():
    # A Neumann 6 x 5 grid (rows sum to zero) beside a Dirichlet 100 x 100 one, coupled nowhere.
    T = sp.diags_array([-np.ones(5), np.r_[1.0, 2 * np.ones(4), 1.0], -np.ones(5)], offsets=[-1, 0, 1])
    S = sp.diags_array([-np.ones(4), np.r_[1.0, 2 * np.ones(3), 1.0], -np.ones(4)], offsets=[-1, 0, 1])
    floating = sp.kron(sp.identity(5), T) + sp.kron(S, sp.identity(6))
    A = sp.block_diag([poisson(100, dims=2), floating], format="csr")
    b = np.ones(A.shape[0])
    # In double the setup fails on the singular coarsest level, in mixed precision the solve breaks down.
    with pytest.raises(amgsolve.NumericalError, match="coarsest-level.*row 10001 and the 29 rows coupled to it"):
        amgsolve.Solver(A)
    solver = amgsolve.Solver(A, solver={"precision": "mixed"})
    with pytest.raises(amgsolve.NumericalError, match="PCG breakdown.*row 10001 and the 29 rows coupled to it"):
        solver.solve(b)
    # A system's: an elastic body held nowhere beside a clamped one moves as its first rigid-body mode.
    held, held_points = elasticity_2d(48, 12)
    free, free_points = elasticity_2d(12, 6, clamped=False)
    bodies = sp.block_diag([held, free], format="csr")
    modes = amgsolve.rigid_body_modes(np.vstack([held_points, free_points]))
    part = f"row {held.shape[0] + 1} and the {free.shape[0] - 1} rows coupled to it"
    with pytest.raises(amgsolve.NumericalError, match=part + ".*A maps near-nullspace vector 1 to zero"):
        amgsolve.Solver(bodies, near_nullspace=modes, amg={"block_size": 2})


def test_a_bsr_matrix_gives_its_block_size():
    A, points = elasticity_2d(64, 16)
    b = np.ones(A.shape[0])
    by_blocks = amgsolve.Solver(A.tobsr(blocksize=(2, 2)))
    assert by_blocks.setup["block_size"] == 2
    # The same matrix (BSR keeps a block's zeros as entries) with the key: the same solve, bit for bit.
    by_key = amgsolve.Solver(A.tobsr(blocksize=(2, 2)).tocsr(), amg={"block_size": 2})
    x, info = by_blocks.solve(b)
    assert info["iterations"] > 1 and info["residuals"] == by_key.solve(b)[1]["residuals"]
    # A block size set in the parameters wins; blocks of one row or not square set none.
    assert amgsolve.Solver(A.tobsr(blocksize=(2, 2)), **{"amg.block_size": 1}).setup["block_size"] == 1
    assert amgsolve.Solver(A.tobsr(blocksize=(1, 1))).setup["block_size"] == 1
    assert amgsolve.Solver(A.tobsr(blocksize=(2, 4))).setup["block_size"] == 1


def test_near_nullspace_and_rigid_body_modes_refuse_what_does_not_fit():
    A, points = elasticity_2d(8, 4)
    with pytest.raises(amgsolve.InputError, match="near_nullspace: shape"):
        amgsolve.Solver(A, near_nullspace=np.ones((A.shape[0] - 2, 3)))
    with pytest.raises(amgsolve.InputError, match="not finite"):
        amgsolve.Solver(A, near_nullspace=np.full(A.shape[0], np.nan))
    with pytest.raises(amgsolve.InputError, match="amg.block_size is 3, but the matrix has 80 rows"):
        amgsolve.Solver(A, amg={"block_size": 3})
    with pytest.raises(amgsolve.InputError, match="rigid_body_modes"):
        amgsolve.rigid_body_modes(np.ones((5, 4)))
    with pytest.raises(amgsolve.InputError, match="vector 2 is zero on every row"):
        amgsolve.Solver(A, near_nullspace=np.column_stack([np.ones(A.shape[0]), np.zeros(A.shape[0])]))
    # Vectors of any length (their squares over- or underflow in double) are the same near-nullspace.
    modes = amgsolve.rigid_body_modes(points)
    b = np.ones(A.shape[0])
    reference = amgsolve.Solver(A, near_nullspace=modes, amg={"block_size": 2}).solve(b)[1]["iterations"]
    for scale in (1e200, 1e-300):
        x, info = amgsolve.Solver(A, near_nullspace=modes * scale, amg={"block_size": 2}).solve(b)
        assert info["converged"] and info["iterations"] == reference
    # A vector of the constant (PyAMG's default B) is a scalar problem's near-nullspace given explicitly.
    x, info = amgsolve.Solver(A, near_nullspace=np.ones(A.shape[0])).solve(np.ones(A.shape[0]))
    assert info["converged"]


def test_a_system_rebuilds_on_its_aggregates():
    A, points = elasticity_2d(48, 12)
    b = np.ones(A.shape[0])
    solver = amgsolve.Solver(A, near_nullspace=amgsolve.rigid_body_modes(points), amg={"block_size": 2,
                                                                                       "keep_structure": True})
    _, first = solver.solve(b)
    solver.rebuild(2 * A)  # a stiffer material: the same aggregates, x halves
    assert solver.setup["reused"] and solver.setup["near_nullspace_vectors"] == 3
    x, second = solver.solve(b)
    assert second["converged"] and relative_residual(2 * A, x, b) <= 1e-8
    assert second["iterations"] == first["iterations"]
    # A body of another size: the near-nullspace of the first setup does not fit it, which is refused before
    # any work, and the hierarchy stays and solves as before (it was dropped).
    longer, _ = elasticity_2d(96, 12)
    with pytest.raises(amgsolve.InputError, match="build a new Solver"):
        solver.rebuild(longer)
    again, third = solver.solve(b)
    assert third["residuals"] == second["residuals"] and np.array_equal(again, x)


def test_rigid_body_modes_of_nodes_with_rotations():
    points = np.random.default_rng(5).standard_normal((30, 3))
    B = amgsolve.rigid_body_modes(points, block_size=6)
    assert B.shape == (180, 6)
    # A rotation about axis e turns each node's rotational unknowns (theta_x, theta_y, theta_z) by e.
    for axis in range(3):
        assert np.array_equal(B.reshape(30, 6, 6)[:, 3:, 3 + axis], np.tile(np.eye(3)[axis], (30, 1)))
    assert np.array_equal(B.reshape(30, 6, 6)[:, :3, :], amgsolve.rigid_body_modes(points).reshape(30, 3, 6))
    with pytest.raises(amgsolve.InputError, match="not 4"):
        amgsolve.rigid_body_modes(points, block_size=4)
