// The mpi backend's sparse operations for the distributed setup (backend/mpi/mpi_backend.hpp).
#include "backend/mpi/mpi_backend.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "common/error.hpp"
#include "common/parallel.hpp"
#include "distributed/spgemm/backends.hpp"
#include "distributed/spgemm/blocks.hpp"

namespace amgsolve {

template <class V>
std::shared_ptr<const CsrMatrix<V>> MpiBackend::host_view(const Csr<V>& M) const {
  std::vector<CsrMatrix<V>> all;
  comm_->stats().gathered_bytes += all_gather_blocks(std::vector<CsrMatrix<V>>{M.with_global_columns()}, all, comm_->get());
  return std::make_shared<const CsrMatrix<V>>(stack_rows(all, static_cast<Index>(M.global_cols())));
}

template <class V>
DistributedMatrix<V> MpiBackend::multiply(const SpgemmBackend& spgemm, const Csr<V>& A, const Csr<V>& B,
                                          SpgemmStats* stats) const {
  SpgemmStats ignored;
  CsrMatrix<V> C = multiply_rows(A, B.with_global_columns(), spgemm, stats ? *stats : ignored);
  return Csr<V>(*comm_, A.global_rows(), std::move(C));
}

template <class V>
DistributedMatrix<V> MpiBackend::multiply_into(const SpgemmBackend& spgemm, const Csr<V>& X, const Csr<V>& Y,
                                               const RowwisePattern<V>& pattern, SpgemmStats& stats) const {
  if (!spgemm.sums_in_row_order())  // its bits are not the numeric phase's (smoothed_aggregation.hpp asks first)
    throw Error("the numeric phase stands in only for a SpGEMM that sums in A's row order, not " + spgemm.name());
  return multiply_rows_into(X, Y, pattern, stats);
}

template <class V>
DistributedMatrix<V> MpiBackend::transpose(const Csr<V>& M) const {
  // This rank's rows transposed locally (a counting sort: each row of the result lists this rank's rows in
  // order), by local column: the own columns are this rank's rows of M^T, each ghost column a row of its
  // owner's. Every rank then gets its rows of M^T that this rank holds entries of, as a block over its
  // whole range (the other rows empty); a rank this one holds nothing for gets nothing.
  const CsrMatrix<V> T = amgsolve::transpose(M.local());
  const BlockPartition& rows_of_transpose = M.column_partition();
  const std::vector<std::int64_t>& ghosts = M.ghost_columns();
  const Index own = M.own_columns();
  std::vector<CsrMatrix<V>> send(static_cast<std::size_t>(comm_->size())), received;
  auto ghost = ghosts.begin();
  for (int r = 0; r < comm_->size(); ++r) {
    // The local columns that are r's rows of M^T: the own ones for this rank, a run of ghosts for another.
    Index first = own, last = own;
    if (r == comm_->rank()) {
      first = 0;
    } else {
      first = own + static_cast<Index>(ghost - ghosts.begin());
      while (ghost != ghosts.end() && *ghost < rows_of_transpose.end(r)) ++ghost;
      last = own + static_cast<Index>(ghost - ghosts.begin());
    }
    if (first == last) continue;  // an empty block: nothing of this rank's for r
    CsrMatrix<V>& block = send[static_cast<std::size_t>(r)];
    block = CsrMatrix<V>(static_cast<Index>(rows_of_transpose.count(r)), static_cast<Index>(M.global_rows()));
    for (Index c = first; c < last; ++c) {
      for (Offset k = T.row_begin(c); k < T.row_end(c); ++k) {
        block.col.push_back(static_cast<Index>(M.first_row() + T.col[k]));
        block.val.push_back(T.val[k]);
      }
      block.row_ptr[static_cast<std::size_t>(M.global_column(c) - rows_of_transpose.begin(r)) + 1] = T.row_end(c) - T.row_begin(c);
    }
    for (Index i = 0; i < block.rows; ++i) block.row_ptr[i + 1] += block.row_ptr[i];
  }
  comm_->stats().halo_bytes += all_to_all_blocks(send, received, comm_->get());
  // The senders' columns (M's rows) lie in their ranges, in rank order: each row is their parts in turn.
  std::vector<CsrMatrix<V>> parts;
  for (CsrMatrix<V>& block : received)
    if (block.rows > 0) parts.push_back(std::move(block));
  const auto own_rows = static_cast<Index>(rows_of_transpose.count(comm_->rank()));
  const auto cols = static_cast<Index>(M.global_rows());
  CsrMatrix<V> mine = parts.empty() ? CsrMatrix<V>(own_rows, cols)
                                    : concatenate_rows(parts, std::vector<Index>(parts.size(), 0), cols);
  return Csr<V>(*comm_, M.global_cols(), std::move(mine));
}

template <class V>
void MpiBackend::require_positive_diagonal(const Csr<V>& A, int level) const {
  const Vector<V> d = A.diagonal();
  const std::int64_t found = first_index_where(A.rows, [&](std::int64_t i) { return !(d[i] > 0); });
  const Index first_bad = found < A.rows ? static_cast<Index>(found) : -1;
  constexpr std::int64_t kNone = std::numeric_limits<std::int64_t>::max();
  const std::int64_t row = comm_->min(first_bad < 0 ? kNone : A.first_row() + first_bad);
  if (row == kNone) return;
  // The owner's value, on every rank: everybody else adds zero.
  const bool mine = first_bad >= 0 && A.first_row() + first_bad == row;
  double value = mine ? static_cast<double>(d[first_bad]) : 0.0;
  MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_DOUBLE, MPI_SUM, comm_->get());
  throw NumericalError("AMG level " + std::to_string(level) + ": diagonal entry " + std::to_string(row + 1) + " is " +
                       format_number(value) + ", so the input matrix is not positive definite");
}

#define AMGSOLVE_MPI_BACKEND(V)                                                                                    \
  template std::shared_ptr<const CsrMatrix<V>> MpiBackend::host_view(const Csr<V>&) const;                          \
  template DistributedMatrix<V> MpiBackend::multiply(const SpgemmBackend&, const Csr<V>&, const Csr<V>&,             \
                                                     SpgemmStats*) const;                                          \
  template DistributedMatrix<V> MpiBackend::multiply_into(const SpgemmBackend&, const Csr<V>&, const Csr<V>&,        \
                                                          const RowwisePattern<V>&, SpgemmStats&) const;           \
  template DistributedMatrix<V> MpiBackend::transpose(const Csr<V>&) const;                                         \
  template void MpiBackend::require_positive_diagonal(const Csr<V>&, int) const;
AMGSOLVE_MPI_BACKEND(double)
AMGSOLVE_MPI_BACKEND(float)
#undef AMGSOLVE_MPI_BACKEND

}  // namespace amgsolve
