"""SPD problems that are hard for smoothed aggregation, as scipy CSR matrices, for bench/pyamg-compare.py
--problem: rotated anisotropy (the classic weakness of SA), coefficient jumps in 2D and 3D, a plane-stress
elasticity system with its rigid-body modes, and a mass matrix plus a small time step's stiffness. Each
builder returns (A, B): B is the near-nullspace (PyAMG's B) for a system, else None."""
import numpy as np
import scipy.sparse as sp
from pyamg.gallery import diffusion_stencil_2d, linear_elasticity, stencil_grid


def rotated_anisotropy(theta, n=300, epsilon=1e-3):
    """-div(K grad u), K of eigenvalues 1 and epsilon rotated by theta, Q1 finite elements on n^2 (PyAMG's
    gallery)."""
    return stencil_grid(diffusion_stencil_2d(epsilon=epsilon, theta=theta, type="FE"), (n, n), format="csr"), None


def finite_volumes(k):
    """Cell-centred finite volumes for -div(k grad u) on a uniform grid of k's shape (2D or 3D), u = 0 on the
    boundary half a cell away, harmonic means of k across each face; the scale of h drops out."""
    index = np.arange(k.size).reshape(k.shape)
    rows, cols, values = [], [], []
    diagonal = np.zeros(k.shape)
    for axis in range(k.ndim):
        low = [slice(None)] * k.ndim
        high = [slice(None)] * k.ndim
        low[axis], high[axis] = slice(0, -1), slice(1, None)
        low, high = tuple(low), tuple(high)
        t = 2 * k[low] * k[high] / (k[low] + k[high])
        rows += [index[low].ravel(), index[high].ravel()]
        cols += [index[high].ravel(), index[low].ravel()]
        values += [-t.ravel(), -t.ravel()]
        diagonal[low] += t
        diagonal[high] += t
        for end in (0, -1):  # the boundary face: k over half a cell
            face = [slice(None)] * k.ndim
            face[axis] = end
            diagonal[tuple(face)] += 2 * k[tuple(face)]
    rows.append(index.ravel())
    cols.append(index.ravel())
    values.append(diagonal.ravel())
    return sp.csr_array((np.concatenate(values), (np.concatenate(rows), np.concatenate(cols))), shape=(k.size,) * 2)


def checkerboard(n=300, cells=8, contrast=1e6):
    """2D jumps: a checkerboard of cells^2 squares alternating 1 and contrast."""
    i, j = np.indices((n, n)) * cells // n
    return finite_volumes(np.where((i + j) % 2 == 0, 1.0, contrast)), None


def random_binary_3d(n=50, contrast=1e6, seed=7):
    """3D jumps: each cell 1 or contrast at random (seeded), the hardest of the jump problems for SA."""
    k = np.where(np.random.default_rng(seed).random((n, n, n)) < 0.5, 1.0, contrast)
    return finite_volumes(k), None


def elasticity(n=300):
    """Plane-stress linear elasticity on n^2 Q1 elements (PyAMG's gallery) with its three rigid-body modes."""
    A, B = linear_elasticity((n, n), format="csr")
    return A.tocsr(), B


def mass_plus_stiffness(n=300, dt=1e-6):
    """A time step's matrix M + dt K (Q1 mass and stiffness on n^2): nearly the mass matrix, well conditioned,
    where a smoother that exploits that does best."""
    mass = stencil_grid(np.array([[1, 4, 1], [4, 16, 4], [1, 4, 1]]) / 36.0, (n, n), format="csr")
    stiffness = stencil_grid(np.array([[-1, -1, -1], [-1, 8, -1], [-1, -1, -1]]) / 3.0, (n, n), format="csr")
    return (mass / n**2 + dt * stiffness).tocsr(), None


PROBLEMS = {
    "anisotropy-0": lambda: rotated_anisotropy(0.0),
    "anisotropy-pi/4": lambda: rotated_anisotropy(np.pi / 4),
    "checkerboard-1e6": checkerboard,
    "random-3d-1e6": random_binary_3d,
    "elasticity": elasticity,
    "mass-stiffness-1e-6": mass_plus_stiffness,
}
