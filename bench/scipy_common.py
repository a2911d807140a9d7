"""What the benchmarks that run amgsolve beside PyAMG share (bench_common.py holds what every script
shares): the 7-point Poisson matrix, the true relative residual, and PyAMG's solve held to the true
residual."""
import time

import numpy as np
import scipy.sparse as sp


def poisson7(n):
    """The 7-point Laplacian on an n^3 grid (Dirichlet boundary), as scipy CSR."""
    T = sp.diags_array([-np.ones(n - 1), 2 * np.ones(n), -np.ones(n - 1)], offsets=[-1, 0, 1], format="csr")
    I = sp.identity(n, format="csr")
    return (sp.kron(sp.kron(T, I), I) + sp.kron(sp.kron(I, T), I) + sp.kron(sp.kron(I, I), T)).tocsr()


def true_residual(A, b, x):
    """||b - A x|| / ||b||, recomputed here whatever the solver reported."""
    return np.linalg.norm(b - A @ x) / np.linalg.norm(b)


def pyamg_solve(ml, A, b, tolerance, maxiter):
    """PyAMG's CG stops on the preconditioner's norm of the residual, not on ||b - A x|| / ||b||: its tol is
    divided by 10 (at most three times) until the true residual meets `tolerance`. Returns x, the iterations
    and the seconds of the solve that did (or of the last one tried)."""
    for tol in (tolerance, tolerance / 10, tolerance / 100, tolerance / 1000):
        residuals = []
        # (Where its CG stops on an "indefinite" matrix or preconditioner it warns on stderr; the caller says
        # where it stopped.)
        start = time.perf_counter()
        x = ml.solve(b, tol=tol, accel="cg", maxiter=maxiter, residuals=residuals)
        seconds = time.perf_counter() - start
        if true_residual(A, b, x) <= tolerance:
            break
    return x, len(residuals) - 1, seconds
