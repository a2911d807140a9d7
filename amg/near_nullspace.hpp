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
#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "amg/mis2_aggregation.hpp"
#include "amg/params.hpp"
#include "amg/strength.hpp"
#include "common/device.hpp"
#include "common/exact_sum.hpp"
#include "common/reduction_block.hpp"
#include "sparse/csr.hpp"

namespace amgsolve {

// A level's rows grouped in nodes (node n's rows are [node_ptr[n], node_ptr[n + 1])) and its near-nullspace
// vectors B, stored row by row (values[i * vectors + v]). Over MPI ranks, a rank's nodes (whole: a node's rows
// are one rank's), numbered from 0 on each.
//
// The level's reductions (a system's Lanczos estimate, amg/system_spectral_radius.hpp) sum its rows in the
// blocks of reduction_blocks (block b: nodes [reduction_blocks[b], reduction_blocks[b + 1])), each block's
// rows in order, the block sums exactly (common/exact_sum.hpp): the finest level's blocks are
// kReductionBlock nodes, a coarse level's the nodes of kAggregateBlock aggregates of the level above (an
// aggregate whose vectors vanish makes no node). The ranks own whole blocks (the mpi backend's partitions),
// so every rank count sums as one process does.
struct NearNullspace {
  int vectors = 0;
  Array<Index> node_ptr = {0};
  Vector<double> values;
  Array<Index> reduction_blocks = {0};
  Index rows() const { return node_ptr.back(); }
  Index nodes() const { return static_cast<Index>(node_ptr.size()) - 1; }
  std::uint64_t bytes() const {
    return (node_ptr.size() + reduction_blocks.size()) * sizeof(Index) + values.size() * sizeof(double);
  }
};

// The reduction blocks of `nodes` nodes in blocks of kReductionBlock.
Array<Index> regular_reduction_blocks(Index nodes);

// The exact sum of f(i) over the level's rows, summed in its reduction blocks (above): what a rank
// contributes to a global reduction.
template <class F>
ExactSum node_blocked_partial_sum(const NearNullspace& level, F&& f) {
  const Array<Index>& blocks = level.reduction_blocks;
  const auto count = static_cast<std::int64_t>(blocks.size()) - 1;
  std::vector<double> partial(static_cast<std::size_t>(std::max<std::int64_t>(count, 0)));
#pragma omp parallel for schedule(static) if (count > 1)
  for (std::int64_t b = 0; b < count; ++b) {
    double s = 0;
    for (Index i = level.node_ptr[blocks[b]]; i < level.node_ptr[blocks[b + 1]]; ++i) s += f(i);
    partial[static_cast<std::size_t>(b)] = s;
  }
  ExactSum sum;
  for (double p : partial) sum.add(p);
  return sum;
}

// Row i of A B, all of B's vectors at once (one pass over the row): out[v] = sum_j a_ij b_jv.
template <class Value>
void product_row(const CsrMatrix<Value>& A, Index i, const NearNullspace& B, double* out) {
  const auto k = static_cast<std::size_t>(B.vectors);
  std::fill(out, out + k, 0.0);
  for (Offset e = A.row_begin(i); e < A.row_end(i); ++e) {
    const double a = static_cast<double>(A.val[e]);
    const double* b = B.values.data() + static_cast<std::size_t>(A.col[e]) * k;
    for (std::size_t v = 0; v < k; ++v) out[v] += a * b[v];
  }
}

// A column of B that is at most this fraction of its norm on an aggregate once the columns before it are
// taken out (modified Gram-Schmidt, twice) is left out there: it lies in their span up to rounding.
inline constexpr double kDependentColumn = 1e-8;

// At most this many near-nullspace vectors (each aggregate's QR keeps k x k values of R; elasticity has 6).
inline constexpr int kMaxNearNullspaceVectors = 64;

// What does not fit: a block_size that does not divide `rows`, vectors that are not rows x count (count at
// most kMaxNearNullspaceVectors) with finite values; "" when all does.
std::string near_nullspace_problem(Index rows, int block_size, const NearNullspaceVectors& given);
// Whether vectors given to a rank that holds `rows` of a matrix's global_rows are its rows of them rather
// than the whole vectors: by their length (on a rank that holds every row both are the same).
inline bool near_nullspace_given_by_rows(const NearNullspaceVectors& given, Index rows, std::int64_t global_rows) {
  return given.count > 0 && given.values && rows != global_rows &&
         given.values->size() == static_cast<std::size_t>(rows) * static_cast<std::size_t>(given.count);
}
// near_nullspace_problem of the vectors such a rank was given: of its rows where they are those, else of the
// whole.
inline std::string rank_near_nullspace_problem(Index rows, std::int64_t global_rows, int block_size,
                                               const NearNullspaceVectors& given) {
  return near_nullspace_problem(near_nullspace_given_by_rows(given, rows, global_rows) ? rows : static_cast<Index>(global_rows),
                                block_size, given);
}

// The largest magnitude of each of `count` vectors stored row by row in `values` (of these rows).
std::vector<double> largest_entries(const Vector<double>& values, int count);
// "the near-nullspace's vector v is zero on every row" for the first vector whose largest magnitude (of all
// the rows: a rank's rows of a vector may be zero) is 0, or "".
std::string zero_vector_problem(const std::vector<double>& largest);

// The finest level's: nodes of block_size rows, B the given vectors or, none given, the block_size unit
// vectors of the components (the constant in each). Each given vector is scaled by the power of two that
// brings its largest entry (`largest`, of every rank's rows; null: of these rows) to [1, 2): exact, the same
// aggregates' bases and hierarchy, and no square of a vector 1e200 or 1e-300 long over- or underflows in the
// QR of its aggregates. An InputError where near_nullspace_problem finds one.
NearNullspace finest_near_nullspace(Index rows, int block_size, const NearNullspaceVectors& given,
                                    const std::vector<double>* largest = nullptr);

// Why a system cannot be set up on `kind`, or "": the cpu backend only (of one process or of each MPI rank),
// so far.
std::string system_support_problem(BackendKind kind);

// A system's nullspace is found among its near-nullspace vectors (amg/system_nullspace.hpp): amg.nullspace
// constant, a scalar problem's, is an InputError for it.
void require_system_nullspace_choice(NullspaceChoice nullspace);

// The rigid-body modes of linear elasticity at nodes with the given coordinates (nodes x dimension, row by
// row; dimension 2 or 3), for unknowns interleaved per node: the translations and the rotations about the
// coordinates' centroid, 3 vectors in 2D, 6 in 3D. A node's unknowns are its displacements (ux, uy[, uz]:
// block_size = dimension) or, for beams, plates and shells, those and its rotations (theta_z in 2D,
// theta_x, theta_y, theta_z in 3D: block_size 3 or 6), which a rotation about axis e turns by e.
// An InputError for another block_size.
NearNullspaceVectors rigid_body_modes(const Vector<double>& coordinates, int dimension, int block_size = 0);
// What rigid_body_modes checks first, on all the nodes or some: 2 or 3 dimensions, finite coordinates, a
// whole number of points, a block size that fits (0 taken as the dimension); an InputError otherwise. The
// number of rotations.
int require_rigid_body_input(const Vector<double>& coordinates, int dimension, int& block_size);
// The same about a given centre: some of the nodes (a rank's), the centroid being that of them all.
NearNullspaceVectors rigid_body_modes(const Vector<double>& coordinates, int dimension, int block_size,
                                      const std::array<double, 3>& centre);
// The sums of the nodes' coordinates along each axis, exact (so that the ranks' sums add up to one process's
// whatever the split), and the centroid of `nodes` nodes from those sums' values.
std::array<ExactSum, 3> coordinate_sums(const Vector<double>& coordinates, int dimension);
std::array<double, 3> centroid(const std::array<double, 3>& sums, std::int64_t nodes);

// Step 1 for a level whose rows are grouped by node_ptr: the nodes' graph (for MIS-2) and the rows' strength
// (every entry classified; the rows' graph names each row's strong off-diagonal entries, but none for a node
// without strong neighbours, whose rows then count as isolated in the filtered matrix, amg/filtered_matrix.hpp).
struct NodeStrength {
  StrengthGraph nodes;
  Strength rows;
};
template <class Value>
NodeStrength node_strength(const CsrMatrix<Value>& A, const Array<Index>& node_ptr, double theta);
// The same on a rank's rows, whose columns name other ranks' nodes too: how its columns map to nodes.
struct NodeColumns {
  Array<Index> node_ptr = {0};          // the own nodes' rows
  Array<Index> node_of_column;          // each local column's node: own nodes first, ghost nodes after them
  Index nodes_with_ghosts = 0;
  std::vector<std::int64_t> global_node;  // each node's global number (empty: the local one, one process)
  Vector<double> node_norms;            // s_JJ of every node, own and ghost: the amalgamated diagonal
};
template <class Value>
NodeStrength node_strength(const CsrMatrix<Value>& A, const NodeColumns& nodes, double theta);
// s_II, the Frobenius norm of each own node's diagonal block (node_of_column: each column's node).
template <class Value>
Vector<double> diagonal_block_norms(const CsrMatrix<Value>& A, const Array<Index>& node_ptr,
                                    const Array<Index>& node_of_column);

// B restricted to one aggregate of m rows (B's rows `rows`, k values each, row by row) factorised as Q R by
// modified Gram-Schmidt with one reorthogonalisation, leaving out dependent columns (kDependentColumn): Q's
// kept columns one after the other in q (m values each), R in r (k x k, row by row, zero on entry; rows past
// the kept count stay zero). Returns the number of columns kept. The arithmetic runs over the rows in order.
int factor_aggregate(const double* values, int k, const Index* rows, Index m, double* q, double* r);

// The coarse level of aggregates whose QR kept first_column[a + 1] - first_column[a] columns (first_column:
// the running count, aggregates + 1 entries), R_a in r (k x k each): a node per aggregate that kept a
// column, B_c the R_a stacked, the reduction blocks kAggregateBlock aggregates each.
NearNullspace coarse_near_nullspace(int k, const std::vector<Index>& first_column, const std::vector<double>& r);

// Step 3: T from the aggregates of the nodes and the level's B; `coarse` receives the next level's nodes (one
// per aggregate that keeps a column) and B, row_aggregates every row's aggregate (kNotAggregated: none).
template <class Value>
CsrMatrix<Value> tentative_prolongation(const Aggregates& node_aggregates, const NearNullspace& B,
                                        NearNullspace& coarse, Array<Index>& row_aggregates);

// ---- a system's steps through the setup's backend (amg/smoothed_aggregation.hpp): on the cpu backend the
// functions above, the mpi backend's in amg/mpi/distributed_setup.hpp

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
