#pragma once
// What is wrong with a matrix given to the Solver, as the one line it throws, before any work: its shape and
// CSR structure, the range its entries need on the solver's scale (amgsolve/matrix_scale.hpp) and in the float
// cycle, a system's support, and over MPI ranks each rank's block, agreed on every rank so that one rank's bad
// block is every rank's error instead of leaving the others waiting. The vectors of a solve are checked by
// amgsolve/solve_inputs.hpp.
#include "amgsolve/solver.hpp"
#include "common/device.hpp"

namespace amgsolve {

// A matrix the setup can read: not null, square, not empty, valid CSR with finite values (one parallel pass;
// the symmetry and the diagonal's signs are the caller's to check where it cannot vouch for them:
// require_spd_candidate in sparse/csr_ops.hpp, as the program and the Python package do). `who` begins the
// message ("Solver", "Solver::rebuild").
void require_solvable_matrix(const CsrMatrix<double>* A, const char* who);

// A whole matrix (or one process's block) whose diagonal double holds on the solver's scale, and which the
// cycle's precision can hold (mixed_precision_problem on that scale): a MatrixEntryError otherwise. Returns
// that scale's matrix_exponent (amgsolve/matrix_scale.hpp), found in the same pass over the diagonal.
int require_representable(const CsrMatrix<double>& A, const Parameters& params);

// On one process a row block is the whole matrix.
void require_whole_block(const RowBlock& block);

// A system (amg.block_size, a near-nullspace) is set up on the cpu backend (of one process or of each MPI
// rank), for a matrix whose rows its nodes and vectors fit, with a system's nullspace choice.
void require_system_supported(const CsrMatrix<double>& A, const Parameters& params, BackendKind kind);

#ifdef AMGSOLVE_WITH_MPI
// Every rank checks its block (and the parameters) and all agree on the row count: a bad block on any rank is
// the first such rank's error on every rank (the message sent from there), before anything else collective.
// Collective over MPI_COMM_WORLD.
void require_agreed_blocks(const RowBlock& block, const Parameters& params, BackendKind kind);
#endif

}  // namespace amgsolve
