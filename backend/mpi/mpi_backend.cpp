// The mpi backend's sparse operations for the distributed setup (backend/mpi/mpi_backend.hpp).
#include "backend/mpi/mpi_backend.hpp"

#include <algorithm>
#include <cstdint>
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
  if (!(A.column_partition() == B.row_partition()))  // the same offsets on every rank: all end here together
    abort_every_rank("distributed product: A's columns and B's rows are partitioned differently");
  SpgemmStats ignored;
  return multiply_rows(A, B, spgemm, stats ? *stats : ignored);
}

template <class V>
DistributedMatrix<V> MpiBackend::multiply_into(const SpgemmBackend& spgemm, const Csr<V>& X, const Csr<V>& Y,
                                               const RowwisePattern<V>& pattern, SpgemmStats& stats) const {
  if (!spgemm.sums_in_row_order())  // its bits are not the numeric phase's (smoothed_aggregation.hpp asks first)
    throw Error("the numeric phase stands in only for a SpGEMM that sums in A's row order, not " + spgemm.name());
  return multiply_rows_into(X, Y, pattern, stats);
}

namespace {

// What names a message too large for MPI's counts.
const std::string kTransposePlan = "transpose plan";

// The local columns of M whose entries go to rank r (its rows of M^T): the own ones for this rank, a run of
// ghosts for another (the ghosts are sorted, so each owner's are consecutive). `ghost` walks the ghosts as r
// goes up.
template <class V>
std::pair<Index, Index> columns_for(const DistributedMatrix<V>& M, int r, int rank,
                                    std::vector<std::int64_t>::const_iterator& ghost) {
  const std::vector<std::int64_t>& ghosts = M.ghost_columns();
  const Index own = M.own_columns();
  if (r == rank) return {0, own};
  const Index first = own + static_cast<Index>(ghost - ghosts.begin());
  while (ghost != ghosts.end() && *ghost < M.column_partition().end(r)) ++ghost;
  return {first, own + static_cast<Index>(ghost - ghosts.begin())};
}

}  // namespace

template <class V>
DistributedMatrix<V> MpiBackend::transpose(const Csr<V>& M) const {
  return transpose_recording<V>(M, nullptr);
}

template <class V>
DistributedMatrix<V> MpiBackend::transpose_kept(const Csr<V>& M, TransposePlan<V>& plan) const {
  plan = {};
  return transpose_recording(M, &plan);
}

template <class V>
DistributedMatrix<V> MpiBackend::transpose_recording(const Csr<V>& M, TransposePlan<V>* plan) const {
  // This rank's rows transposed locally (a counting sort: each row of the result lists this rank's rows in
  // order), by local column: the own columns are this rank's rows of M^T, each ghost column a row of its
  // owner's. Every other rank gets its rows of M^T that this rank holds entries of, as a block over its
  // whole range (the other rows empty); a rank this one holds nothing for gets a block of no rows.
  const CsrMatrix<V> T = amgsolve::transpose(M.local());
  const BlockPartition& rows_of_transpose = M.column_partition();
  const int me = comm_->rank();
  std::vector<CsrMatrix<V>> send(static_cast<std::size_t>(comm_->size())), received;
  auto ghost = M.ghost_columns().begin();
  for (int r = 0; r < comm_->size(); ++r) {
    const auto [first, last] = columns_for(M, r, me, ghost);
    if (plan) plan->send_counts.push_back(mpi_count(T.row_begin(last) - T.row_begin(first), kTransposePlan));
    if (first == last || r == me) continue;  // nothing of this rank's for r; this rank's own part stays in T
    CsrMatrix<V>& block = send[static_cast<std::size_t>(r)];
    block = CsrMatrix<V>(static_cast<Index>(rows_of_transpose.count(r)), static_cast<Index>(M.global_rows()));
    block.col.reserve(static_cast<std::size_t>(T.row_begin(last) - T.row_begin(first)));
    block.val.reserve(block.col.capacity());
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
  send = {};
  if (plan) record_transpose(M, T, received, *plan);
  std::vector<std::int64_t> ghosts = ghosts_of_transposed(received);
  CsrMatrix<V> rows = rows_of_transposed(M, T, received, ghosts);
  Csr<V> MT(*comm_, M.column_partition(), M.row_partition(), std::move(rows), std::move(ghosts),
            typename Csr<V>::LocalNumbers{});
  if (plan) plan->layout = std::make_shared<const Csr<V>>(MT.layout_copy());
  return MT;
}

template <class V>
std::vector<std::int64_t> MpiBackend::ghosts_of_transposed(const std::vector<CsrMatrix<V>>& received) const {
  // The other ranks' parts' columns lie in their ranges: their distinct columns, rank by rank, are sorted.
  std::vector<std::int64_t> ghosts;
  for (const CsrMatrix<V>& part : received) {
    const std::vector<std::int64_t> columns = sorted_distinct(
        part.col.size(), [&](std::size_t k) { return part.col[k]; }, [](std::size_t) { return true; });
    ghosts.insert(ghosts.end(), columns.begin(), columns.end());
  }
  return ghosts;
}

template <class V>
CsrMatrix<V> MpiBackend::rows_of_transposed(const Csr<V>& M, const CsrMatrix<V>& T,
                                            const std::vector<CsrMatrix<V>>& received,
                                            const std::vector<std::int64_t>& ghosts) const {
  // Each row of M^T: the senders' parts in rank order, this rank's own (T's row, its columns M's local rows:
  // M^T's own columns) in its place; the others' columns by their place among the ghosts. The senders'
  // columns (M's rows) lie in their ranges, so the row is in global column order.
  const int me = comm_->rank();
  const auto own_rows = static_cast<Index>(M.column_partition().count(me));
  const GhostNumbers ghost_number(ghosts);
  const auto own_columns = static_cast<Index>(M.rows);
  CsrMatrix<V> local(own_rows, own_columns + static_cast<Index>(ghosts.size()));
  std::vector<int> senders;  // the ranks with a part, in rank order (not every rank: hundreds of them)
  for (int r = 0; r < comm_->size(); ++r)
    if (r == me ? own_rows > 0 : received[static_cast<std::size_t>(r)].rows > 0) senders.push_back(r);
  const auto part_of = [&](int r) -> const CsrMatrix<V>& { return r == me ? T : received[static_cast<std::size_t>(r)]; };
  for (Index i = 0; i < own_rows; ++i) {
    Offset length = 0;
    for (int r : senders) length += part_of(r).row_length(i);
    local.row_ptr[static_cast<std::size_t>(i) + 1] = local.row_ptr[static_cast<std::size_t>(i)] + length;
  }
  local.col.resize(static_cast<std::size_t>(local.row_ptr.back()));
  local.val.resize(local.col.size());
#pragma omp parallel for schedule(static)
  for (Index i = 0; i < own_rows; ++i) {
    Offset at = local.row_begin(i);
    for (int r : senders) {
      const bool own = r == me;
      const CsrMatrix<V>& part = part_of(r);
      for (Offset k = part.row_begin(i); k < part.row_end(i); ++k, ++at) {
        local.col[static_cast<std::size_t>(at)] = own ? part.col[k] : own_columns + ghost_number(part.col[k]);
        local.val[static_cast<std::size_t>(at)] = part.val[k];
      }
    }
  }
  return local;
}

template <class V>
void MpiBackend::record_transpose(const Csr<V>& M, const CsrMatrix<V>& T, const std::vector<CsrMatrix<V>>& received,
                                  TransposePlan<V>& plan) const {
  // The entries in the order they were sent: each rank's run of local columns, each column's entries as the
  // local transpose T lists them (by row); entry (i, c) found in M's row i, a short one.
  const CsrMatrix<V>& L = M.local();
  plan.sent_entries.resize(static_cast<std::size_t>(L.nnz()));
  Offset sent = 0;
  auto ghost = M.ghost_columns().begin();
  for (int r = 0; r < comm_->size(); ++r) {
    const std::pair<Index, Index> columns = columns_for(M, r, comm_->rank(), ghost);
    const Index first = columns.first, last = columns.second;  // not a structured binding: clang's OpenMP
    const Offset shift = sent - T.row_begin(first);           // region cannot capture one
#pragma omp parallel for schedule(dynamic, 1024)
    for (Index c = first; c < last; ++c)
      for (Offset k = T.row_begin(c); k < T.row_end(c); ++k) {
        const Index i = T.col[k];
        Offset e = L.row_begin(i);
        while (L.col[e] != c) ++e;
        plan.sent_entries[static_cast<std::size_t>(shift + k)] = e;
      }
    sent += T.row_begin(last) - T.row_begin(first);
  }
  // What each rank sends this one: its part of M^T's rows; this rank's own part is T's rows of the own
  // columns (not sent by the first transpose, sent to itself by the planned one).
  const auto me = static_cast<std::size_t>(comm_->rank());
  const Index own = M.own_columns();
  for (std::size_t r = 0; r < received.size(); ++r) {
    const bool own_part = r == me && own > 0;
    plan.receive_counts.push_back(mpi_count(r == me ? T.row_begin(own) : received[r].nnz(), kTransposePlan));
    if (!own_part && received[r].rows == 0) continue;  // nothing from r
    plan.senders.push_back(static_cast<int>(r));
    plan.received_rows.push_back(own_part ? Array<Offset>(T.row_ptr.begin(), T.row_ptr.begin() + own + 1)
                                          : received[r].row_ptr);
  }
  mpi_displacements(plan.send_counts, kTransposePlan);
  mpi_displacements(plan.receive_counts, kTransposePlan);
}

template <class V>
DistributedMatrix<V> MpiBackend::transpose(const Csr<V>& M, const TransposePlan<V>& plan) const {
  // M's values in the order the first transpose sent them, one all-to-all, and each row of M^T put together
  // from the senders' parts in rank order.
  const std::vector<int> send_at = mpi_displacements(plan.send_counts, kTransposePlan);
  const std::vector<int> receive_at = mpi_displacements(plan.receive_counts, kTransposePlan);
  const Array<V>& values = M.local().val;
  if (values.size() != plan.sent_entries.size())
    abort_every_rank("transpose plan: the matrix is not on the pattern the plan was made for");
  std::vector<V> sent(plan.sent_entries.size());
#pragma omp parallel for schedule(static)
  for (std::int64_t k = 0; k < static_cast<std::int64_t>(sent.size()); ++k)
    sent[static_cast<std::size_t>(k)] = values[static_cast<std::size_t>(plan.sent_entries[static_cast<std::size_t>(k)])];
  std::vector<V> received(static_cast<std::size_t>(receive_at.back() + plan.receive_counts.back()));
  MPI_Alltoallv(sent.data(), plan.send_counts.data(), send_at.data(), mpi_type<V>(), received.data(),
                plan.receive_counts.data(), receive_at.data(), mpi_type<V>(), comm_->get());
  comm_->stats().halo_bytes += bytes_to_other_ranks(plan.send_counts, comm_->rank(), sizeof(V));

  const CsrMatrix<V>& pattern = plan.layout->local();
  CsrMatrix<V> local(pattern.rows, pattern.cols);
  local.row_ptr = pattern.row_ptr;
  local.col = pattern.col;
  local.val.resize(pattern.col.size());
#pragma omp parallel for schedule(static)
  for (Index i = 0; i < local.rows; ++i) {
    Offset at = local.row_begin(i);
    for (std::size_t s = 0; s < plan.senders.size(); ++s) {
      const Array<Offset>& rows = plan.received_rows[s];
      const V* part = received.data() + receive_at[static_cast<std::size_t>(plan.senders[s])];
      at = std::copy(part + rows[i], part + rows[i + 1], local.val.begin() + at) - local.val.begin();
    }
  }
  return DistributedMatrix<V>(*plan.layout, std::move(local));
}

template <class V>
void MpiBackend::require_positive_diagonal(const Csr<V>& A, int level) const {
  const Vector<V>& d = A.diagonal();
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
  template DistributedMatrix<V> MpiBackend::transpose_kept(const Csr<V>&, TransposePlan<V>&) const;                 \
  template DistributedMatrix<V> MpiBackend::transpose(const Csr<V>&, const TransposePlan<V>&) const;                \
  template void MpiBackend::require_positive_diagonal(const Csr<V>&, int) const;
AMGSOLVE_MPI_BACKEND(double)
AMGSOLVE_MPI_BACKEND(float)
#undef AMGSOLVE_MPI_BACKEND

}  // namespace amgsolve
