#pragma once
// Smoothed aggregation for systems: several near-nullspace vectors and unknowns grouped in nodes (P. Vanek,
// J. Mandel, M. Brezina, "Algebraic multigrid by smoothed aggregation for second and fourth order elliptic
// problems", Computing 56, 1996, section 3 and its elasticity examples; the QR form of the tentative
// prolongator as in Vanek, Brezina & Mandel, Numer. Math. 88, 2001, section 3).
//
// The error a scalar aggregation cannot reduce is the near-nullspace of A: the constant for a Laplacian, the
// rigid-body modes (translations and rotations) for linear elasticity. Each level carries a matrix B of such
// vectors (rows x k), and its rows are grouped in nodes (the unknowns of one mesh point: ux, uy, uz).
//   1. strength of the nodes: the block A_IJ of nodes I, J counts by its Frobenius norm s_IJ, and J is a
//      strong neighbour of I when s_IJ >= theta sqrt(s_II s_JJ) (the scalar test on the amalgamated matrix);
//      every entry of a strong block, and of a node's own block, is strong.
//   2. MIS-2 aggregation of the nodes' graph (amg/mis2_aggregation.hpp): a node's unknowns stay together.
//   3. T by a QR factorisation of B on each aggregate: B_a = Q_a R_a with orthonormal columns, T's columns of
//      aggregate a are Q_a's and the coarse level's B is the R_a stacked, so T B_c = B on the aggregated
//      rows (to rounding, and to kDependentColumn where a column is left out): the near-nullspace is carried
//      to every level, and T^T T = I. The aggregate is a coarse node with one unknown per column. A column
//      that B's others already span on the aggregate (two nodes do not fix a rotation about the line through
//      them) is left out of Q_a, so T has full column rank.
// Steps 4-5 (the filtered matrix, P = (I - omega D_f^-1 A_f) T, P^T A P) are the scalar ones
// (amg/smoothed_aggregation.hpp), P by the SpGEMM A_f T: T has several entries per row. The filtered matrix
// lumps a weak entry into its row's diagonal, as the paper's definition does for systems too: that keeps
// A_f 1 = A 1, not A_f B for a rotation. Without filtering (A_f = A, PyAMG's default) the iterations were the
// same to within 3 on the beam and six structural matrices of docs/BENCHMARKS.md ("Systems"), where few
// blocks are weak; the filtering keeps P sparse where many are.
//
// The smoothers of a system scale by the diagonal blocks of each level's nodes (amg.smoother.diagonal,
// sparse/block_diagonal.hpp); the prolongator smoothing keeps the pointwise D_f of the filtered matrix, whose
// lumped diagonal blocks need not be positive definite (bcsstk14's are not).
//
// Every step is deterministic: the QR of an aggregate runs over its rows in order, on one thread.
//
// This file: the steps through the setup's backend (amg/smoothed_aggregation.hpp calls them); on the cpu
// backend the functions of amg/node_strength.hpp, amg/mis2_aggregation.hpp and
// amg/qr_tentative_prolongation.hpp, the mpi backend's in amg/mpi/system_setup.hpp.
#include <cstdint>
#include <type_traits>

#include "amg/mis2_aggregation.hpp"
#include "amg/near_nullspace.hpp"
#include "amg/node_strength.hpp"
#include "amg/qr_tentative_prolongation.hpp"
#include "sparse/csr.hpp"

namespace amgsolve {

class CpuBackend;

// Whether a backend sets up systems (has the overloads below).
template <class Backend>
struct SetsUpSystems : std::false_type {};
template <>
struct SetsUpSystems<CpuBackend> : std::true_type {};

template <class Value>
NodeStrength node_strength(const CpuBackend&, const CsrMatrix<Value>& A, const NearNullspace& level, double theta) {
  return node_strength(A, level.node_ptr, theta);
}
inline Aggregates node_aggregation(const CpuBackend&, const NodeStrength& strength, std::uint64_t seed) {
  return mis2_aggregation(strength.nodes, seed);
}
template <class Value>
CsrMatrix<Value> tentative_prolongation(const CpuBackend&, const Aggregates& node_aggregates, const NearNullspace& B,
                                        NearNullspace& coarse, Array<Index>& row_aggregates) {
  return tentative_prolongation<Value>(node_aggregates, B, coarse, row_aggregates);
}
template <class Value>
NearNullspace finest_near_nullspace(const CpuBackend&, const CsrMatrix<Value>& A, int block_size,
                                    const NearNullspaceVectors& given) {
  return finest_near_nullspace(A.rows, block_size, given);
}
// The level's near-nullspace whole (over MPI ranks gathered on every rank: the coarsest level's, for its
// pseudo-inverse).
inline const NearNullspace& whole_near_nullspace(const CpuBackend&, const NearNullspace& level) { return level; }
// A count over the ranks (one process: itself).
inline std::int64_t sum_over_ranks(const CpuBackend&, std::int64_t count) { return count; }

}  // namespace amgsolve
