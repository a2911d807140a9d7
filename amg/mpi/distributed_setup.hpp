#pragma once
// Smoothed aggregation's own steps on the mpi backend, as amg/smoothed_aggregation.hpp calls them: the
// overloads taking an MpiBackend of the functions in amg/strength.hpp, filtered_matrix.hpp,
// mis2_aggregation.hpp, tentative_prolongation.hpp, smoothed_prolongation.hpp, spectral_radius.hpp and
// nullspace.hpp. Each rank runs the cpu step on its rows; what a row reads of another rank's rows (a ghost
// column's diagonal entry, near-nullspace weight or MIS-2 state) comes through the matrix's halo, and counts
// and numberings are summed over the ranks. So every rank takes the decisions one process takes, and the hierarchy, level by
// level and bit for bit, is the single-process one for any rank count (tests/test_mpi.cpp).
#include <cstdint>
#include <memory>
#include <string>

#include "amg/filtered_matrix.hpp"
#include "amg/mis2_aggregation.hpp"
#include "amg/nullspace.hpp"
#include "amg/smoothed_prolongation.hpp"
#include "amg/strength.hpp"
#include "backend/mpi/mpi_backend.hpp"
#include "common/reduction_block.hpp"

namespace amgsolve {

// The strength graph of a rank's rows (its adjacency names own and ghost columns of A) and how to read
// across ranks: the matrix whose halo brings the ghosts' values.
template <class Value>
struct MpiStrength {
  Strength local;
  Offset weak_entries = 0;  // over all ranks: every rank decides alike whether to filter
  const DistributedMatrix<Value>* A = nullptr;
};

template <class Value>
MpiStrength<Value> strength_of_connection(const MpiBackend& backend, const DistributedMatrix<Value>& A, double theta);
// What a re-setup keeps of it (this rank's part) and the strength rebuilt from that for the level's new
// matrix A, whose pattern, hence halo, is the old one's.
template <class Value>
Strength& local_strength(MpiStrength<Value>& strength) {
  return strength.local;
}
template <class Value>
MpiStrength<Value> kept_strength(const MpiBackend&, const Strength& kept, Offset weak_entries,
                                 const DistributedMatrix<Value>& A) {
  return {kept, weak_entries, &A};
}
// strength_drift (amg/strength.hpp) over the ranks: each its rows of the sample, the counts summed, so the
// share is one process's on any rank count. Collective.
template <class Value>
double strength_drift(const MpiBackend& backend, const DistributedMatrix<Value>& A, double theta, const Strength& kept,
                      Index sampled_rows);
// weights: B^2 of this rank's rows, empty on the finest level; filtered_rows: which of this rank's rows
// lumped weak entries (what a re-setup compares, as on one process).
template <class Value>
DistributedMatrix<Value> filtered_matrix(const MpiBackend& backend, const DistributedMatrix<Value>& A,
                                         const MpiStrength<Value>& strength, const Vector<double>& weights,
                                         Array<std::uint8_t>* filtered_rows, IsolatedRows isolated);

// The aggregates of this rank's nodes (ids global, count over all ranks).
template <class Value>
Aggregates mis2_aggregation(const MpiBackend& backend, const MpiStrength<Value>& strength, std::uint64_t seed);
void aggregate_left_out_nodes(const MpiBackend& backend, Aggregates& aggregates);
// The aggregate of each of this rank's nodes (the finest level's, for the output: each rank its rows, as the
// solve's vectors; the program gathers them on rank 0 to write them).
inline Array<Index> aggregate_ids(const MpiBackend&, Aggregates& aggregates) { return std::move(aggregates.id); }

// The ranks' parts of the coarse level whose rows (a system's nodes) are the `count` aggregates of the level
// above, `mine` of them this rank's (those MIS-2 numbered here: it numbers each rank's aggregates after the
// ranks before it; Aggregates::mis2_roots; the rest of `count`, numbered after all ranks', are left-out nodes'
// and go with the last rank that made some). In whole blocks of kAggregateBlock, so that the level's reductions
// are one process's; on as many ranks as have at least `min_per_rank` each, the first ones, evenly (a small
// level gathers onto fewer ranks, as PETSc GAMG's and hypre's do); on all ranks, each about as many as it made,
// so that a rank's rows of the prolongator name its own columns, not the neighbour's. Collective.
BlockPartition coarse_partition(const Communicator& comm, std::int64_t count, std::int64_t mine, std::int64_t min_per_rank);
// A scalar problem's coarse level gathers onto fewer ranks below this many rows a rank: there each rank's
// share of a V-cycle's work on the level is about what its halo exchanges cost.
inline constexpr std::int64_t kCoarseRowsPerRank = 1024;

// weights: B^2 of this rank's nodes, empty on the finest level; coarse_weights receives this rank's
// aggregates' (its rows of the coarse level: coarse_partition).
template <class Value>
DistributedMatrix<Value> tentative_prolongation(const MpiBackend& backend, const Aggregates& aggregates,
                                                const Vector<double>& weights, Vector<double>& coarse_weights);

template <class Value>
RowSum largest_relative_row_sum(const MpiBackend& backend, const DistributedMatrix<Value>& A);
// Connected parts of the matrix's graph over all ranks: union-find within each rank's rows, then the links
// between those parts across rank boundaries gathered on every rank (about the halo's size, not the
// matrix's) and joined by a union-find of their own; the count of connected_components on the whole
// matrix, for any pattern (with `node_ptr`, this rank's nodes: whole on every rank). Collective.
Index connected_components(const MpiBackend& backend, const DistributedMatrix<double>& A,
                           const Array<Index>* node_ptr = nullptr);
// floating_part (amg/nullspace.hpp) on the ranks' rows, by the same parts: the same clause on every rank.
// B: a system's finest near-nullspace, this rank's nodes (null: a scalar matrix). Collective.
std::string floating_part(const MpiBackend& backend, const DistributedMatrix<double>& A,
                          const NearNullspace* B = nullptr);

// B's rows (k values each) over A's columns: this rank's, then its ghost columns' from their ranks, all k
// vectors in one exchange through A's halo. Collective.
template <class Value>
void rows_over_columns(const DistributedMatrix<Value>& A, const Vector<double>& own, int k, Vector<double>& columns) {
  columns.assign(own.begin(), own.begin() + static_cast<std::ptrdiff_t>(A.rows) * k);
  columns.resize(static_cast<std::size_t>(A.local().cols) * k);
  A.fill_ghosts(columns, k);
}
// resolve_nullspace on the ranks' rows: the same decision and messages on every rank. Collective.
NullspaceChoice resolve_nullspace(const MpiBackend& backend, const DistributedMatrix<double>& A, NullspaceChoice choice);

template <class Value>
void scale_and_add_tentative(const MpiBackend& backend, DistributedMatrix<Value>& P, const DistributedMatrix<Value>& A_f,
                             const DistributedMatrix<Value>& T, double omega);
// smoothed_prolongator(const MpiBackend&, A_f, T, omega, stats), declared in amg/smoothed_prolongation.hpp:
// P = T - omega D_f^-1 (A_f T) for T with at most one entry per row (a scalar problem), in one pass over a
// rank's rows as on one process: T's entries of A_f's ghost columns through A_f's halo, the aggregates they
// name numbered locally in global order, the same bits. `stats`: the ranks' multiplications and entries
// together. Collective.

template <class Value>
double gershgorin_bound_dinv_a(const MpiBackend& backend, const DistributedMatrix<Value>& A);
// The Lanczos passes (amg/spectral_radius.hpp) on this rank's rows, the dot products summed exactly in the
// level's reduction blocks (a rank's rows start on a multiple of the block: coarse_partition).
template <class Value>
Vector<double> inverse_sqrt_diagonal(const MpiBackend& backend, const DistributedMatrix<Value>& A);
// Hashed from the global row numbers: the single-process start vector's entries.
Vector<double> seeded_vector(const MpiBackend& backend, Index n, std::uint64_t seed);
void lanczos_rescale(const MpiBackend& backend, const Vector<double>& src, double divisor, Vector<double>& v);
template <class Value>
double lanczos_product(const MpiBackend& backend, const DistributedMatrix<Value>& A, const Vector<double>& scale,
                       double beta, const Vector<double>& v_prev, const Vector<double>& v, Vector<double>& w,
                       Vector<double>& scaled, std::int64_t block);
double lanczos_orthogonalize(const MpiBackend& backend, double alpha, const Vector<double>& v, Vector<double>& w,
                             std::int64_t block);

}  // namespace amgsolve
