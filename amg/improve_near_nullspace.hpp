#pragma once
// Improving a system's near-nullspace vectors before the finest tentative prolongator: each vector b is
// relaxed on A x = 0, b <- (I - omega D^-1 A)^s b. What A maps to zero stays; what the smoother reduces at once
// (the high-energy part) is taken out, so the aggregates' QR (amg/qr_tentative_prolongation.hpp) fits the low-energy
// vectors the matrix has rather than the ones it was given. This is PyAMG's `improve_candidates` (N. Bell,
// L. N. Olson, J. Schroder, B. Southworth, "PyAMG: Algebraic Multigrid Solvers in Python", J. Open Source
// Softw. 7(72), 2022), and the relaxation by which adaptive smoothed aggregation exposes its candidates
// (M. Brezina, R. Falgout, S. MacLachlan, T. Manteuffel, S. McCormick, J. Ruge, "Adaptive smoothed
// aggregation (alphaSA)", SIAM J. Sci. Comput. 25(6), 2004).
//
// The given vectors are exact only where no boundary condition, change of material or shell orientation
// breaks them: the unit vectors of a shell's rotations (amg.block_size's default) are far from the modes
// of a clamped roof. PyAMG sweeps symmetric Gauss-Seidel, which is sequential; here the sweeps are damped
// Jacobi in the level's smoother diagonal (the node blocks, amg.smoother.diagonal), the same on any thread
// count, with the prolongator smoothing's weight omega = amg.prolongator_damping / rho(D^-1 A) (4/3 / rho by
// default). The iterations this saves are
// in docs/BENCHMARKS.md ("Systems").
#include <functional>
#include <memory>

#include "amg/near_nullspace.hpp"
#include "sparse/csr.hpp"

namespace amgsolve {

class CpuBackend;

// B's values over A's columns: on a rank's rows, whose columns name other ranks' rows after its own, B's rows
// there brought from their ranks (amg/mpi/distributed_setup.cpp); `own` holds this rank's rows, k values each.
using GhostRows = std::function<void(const Vector<double>& own, int k, Vector<double>& columns)>;

// B's vectors <- (I - omega D^-1 A)^sweeps B, D the diagonal blocks of `nodes` (single rows: the pointwise
// diagonal). A NumericalError where a block is not positive definite. With ghost_rows, A is a rank's rows.
template <class Value>
void improve_near_nullspace(const CsrMatrix<Value>& A, std::shared_ptr<const Array<Index>> nodes, double omega,
                            int sweeps, NearNullspace& B, const GhostRows& ghost_rows = {});

// Nodes of one row each: the pointwise diagonal as node blocks.
std::shared_ptr<const Array<Index>> single_row_nodes(Index rows);

// Through the setup's backend (amg/smoothed_aggregation.hpp); the mpi backend's in amg/mpi/.
template <class Value>
void improve_near_nullspace(const CpuBackend&, const CsrMatrix<Value>& A, std::shared_ptr<const Array<Index>> nodes,
                            double omega, int sweeps, NearNullspace& B) {
  improve_near_nullspace(A, std::move(nodes), omega, sweeps, B);
}

}  // namespace amgsolve
