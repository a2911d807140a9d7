#pragma once
// A level's near-nullspace for smoothed aggregation of systems (P. Vanek, J. Mandel, M. Brezina, "Algebraic
// multigrid by smoothed aggregation for second and fourth order elliptic problems", Computing 56, 1996,
// section 3): its rows grouped in nodes, the vectors B each level carries, and what given vectors must be.
// The steps that use it are in amg/system_setup.hpp; the rigid-body modes, a usual B, in
// amg/rigid_body_modes.hpp.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "amg/params.hpp"
#include "common/device.hpp"
#include "common/exact_sum.hpp"
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

}  // namespace amgsolve
