#pragma once
// Row-wise distributed SpGEMM, the way hypre (hypre_ParCSRMatMat) and PETSc (MatMatMult for MPIAIJ) form
// C = A B: A and B are distributed by rows (distributed/partition.hpp); each rank fetches the rows of B
// that its rows of A reference on other ranks, in one all-to-all, and multiplies its rows locally with any
// local SpGEMM backend. Only B moves. Each row of C is formed from the same products in the same order as
// on one process (A's rows keep their order, the fetched rows theirs), so with the same local backend the
// result is the single-process product bit for bit.
#include <memory>

#include "distributed/communicator.hpp"
#include "distributed/distributed_matrix.hpp"
#include "spgemm/spgemm.hpp"

namespace amgsolve {

// This rank's rows of C = A B (columns numbered globally). A_rows: this rank's rows of A (global columns,
// A.cols = the inner dimension); B_rows: this rank's rows of B by BlockPartition(inner, ranks). Phases go
// to `stats` with this rank's seconds and bytes.
template <class V>
CsrMatrix<V> rowwise_multiply(const Communicator& comm, const CsrMatrix<V>& A_rows, const CsrMatrix<V>& B_rows,
                              const SpgemmBackend& local, SpgemmStats& stats);

// The same for the distributed setup, whose operands are DistributedMatrix: C's columns numbered compactly,
// column j being global column columns[j] (B's own range, B's ghosts and the fetched rows' other columns, in
// global order), so that the local backend's accumulators span this rank's columns rather than all of them
// and C is laid out through a table (DistributedMatrix's numbered constructor) instead of a search of
// global numbers. The same products in the same order: the same bits as rowwise_multiply. Collective.
template <class V>
struct NumberedRows {
  CsrMatrix<V> rows;
  std::vector<std::int64_t> columns;
};
template <class V>
NumberedRows<V> rowwise_multiply_numbered(const DistributedMatrix<V>& A, const DistributedMatrix<V>& B,
                                          const SpgemmBackend& local, SpgemmStats& stats);

// ---- the same product formed again, for operands with new values on the same patterns (a re-setup)

// What a rowwise product C = A B keeps to be formed again by its numeric phase alone: which of this rank's
// rows of B each rank fetches, and B's rows as this rank multiplies them (its own, then the fetched ones in
// the order of A's ghosts) with their columns numbered as C's local columns. Then only B's values move, in
// one all-to-all, the numeric phase sums into C's kept local pattern (spgemm/numeric_product.hpp, the sums
// gustavson forms), and C takes its kept layout (ghosts, halo plan) instead of building it anew.
template <class V>
struct RowFetchPlan {
  std::vector<Index> sent_rows;                  // this rank's rows of B that the ranks fetch, rank by rank
  std::vector<int> send_counts, receive_counts;  // B's values to and from each rank
  // No values: B's own rows, then the fetched ones (a row of B that no row of A reads has its columns at 0:
  // C need not have them).
  CsrMatrix<V> rows;
  std::uint64_t bytes() const;
};

// A kept product: its fetch plan and C's layout (a matrix whose values are not read).
template <class V>
struct RowwisePattern {
  std::shared_ptr<const RowFetchPlan<V>> fetch;
  std::shared_ptr<const DistributedMatrix<V>> layout;
  std::uint64_t bytes() const { return (fetch ? fetch->bytes() : 0) + (layout ? layout->bytes() : 0); }
};

// The plan of C = A B, as `rowwise_multiply_numbered` fetched its rows; `bytes` grows by what this rank sent.
// Collective.
template <class V>
RowFetchPlan<V> rowwise_fetch_plan(const DistributedMatrix<V>& A, const DistributedMatrix<V>& B,
                                   const DistributedMatrix<V>& C, std::uint64_t& bytes);

// This rank's rows of C = A B by the plan, into `layout`'s local pattern (their values in its order). A and
// B on the patterns of the plan's product. Collective; this rank's phases go to `stats` as above.
template <class V>
CsrMatrix<V> rowwise_multiply_planned(const DistributedMatrix<V>& A, const DistributedMatrix<V>& B,
                                      const RowFetchPlan<V>& plan, const DistributedMatrix<V>& layout,
                                      SpgemmStats& stats);

}  // namespace amgsolve
