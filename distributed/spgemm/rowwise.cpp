#include "distributed/spgemm/rowwise.hpp"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <string>

#include "common/error.hpp"
#include "common/timer.hpp"
#include "distributed/partition.hpp"
#include "distributed/spgemm/blocks.hpp"
#include "spgemm/numeric_product.hpp"

namespace amgsolve {

namespace {

// The rows of B that each rank asked for (`requests`; B's rows start at global row `first_row`), as one
// block per asking rank, their columns renamed by `global_column` (to global numbers). Where `sent_rows`
// is given, it receives the rows' local numbers in that order.
template <class V, class GlobalColumn>
std::vector<CsrMatrix<V>> asked_rows(const CsrMatrix<V>& B, std::int64_t first_row, const OwnerRequests& requests,
                                     Index global_cols, GlobalColumn global_column,
                                     std::vector<Index>* sent_rows = nullptr) {
  std::vector<CsrMatrix<V>> blocks;
  for (std::size_t r = 0; r + 1 < requests.from.size(); ++r) {
    CsrMatrix<V> rows(requests.from[r + 1] - requests.from[r], global_cols);
    for (int k = requests.from[r]; k < requests.from[r + 1]; ++k) {
      const auto i = static_cast<Index>(requests.received[static_cast<std::size_t>(k)] - first_row);
      if (sent_rows) sent_rows->push_back(i);
      for (Offset e = B.row_begin(i); e < B.row_end(i); ++e) {
        rows.col.push_back(global_column(B.col[e]));
        rows.val.push_back(B.val[e]);
      }
      rows.row_ptr[static_cast<std::size_t>(k - requests.from[r]) + 1] = static_cast<Offset>(rows.col.size());
    }
    blocks.push_back(std::move(rows));
  }
  return blocks;
}

// The rows of B (this rank's, from global row rows_of_B.begin(rank); columns renamed by `global_column`) that
// the `ghosts` of the ranks' A name, fetched from their owners: one block per owner, in `ghosts` order. The
// phase is recorded with the bytes this rank sent.
template <class V, class GlobalColumn>
std::vector<CsrMatrix<V>> fetch_rows(const Communicator& comm, const std::vector<std::int64_t>& ghosts,
                                     const BlockPartition& rows_of_B, const CsrMatrix<V>& B, Index global_cols,
                                     GlobalColumn global_column, SpgemmStats& stats) {
  Timer timer;
  const OwnerRequests requests = ask_owners(comm, ghosts, rows_of_B);
  std::vector<CsrMatrix<V>> fetched;
  std::uint64_t bytes = sizeof(std::int64_t) * ghosts.size();
  bytes += all_to_all_blocks(asked_rows(B, rows_of_B.begin(comm.rank()), requests, global_cols, global_column), fetched,
                             comm.get());
  stats.phases.push_back({"fetch B rows", timer.seconds(), bytes});
  return fetched;
}

// rowwise_multiply with A's columns in local numbers: this rank's inner indices (its range of rows_of_B)
// first, then `ghosts`, the other inner indices A references, sorted. B_rows is taken over: the fetched rows
// are appended to it.
template <class V>
CsrMatrix<V> rowwise_multiply_local(const Communicator& comm, const CsrMatrix<V>& A_local,
                                    const std::vector<std::int64_t>& ghosts, const BlockPartition& rows_of_B,
                                    CsrMatrix<V> B_rows, const SpgemmBackend& local, SpgemmStats& stats) {
  const auto global = [](Index j) { return j; };  // B_rows' columns are global already
  const std::vector<CsrMatrix<V>> fetched = fetch_rows(comm, ghosts, rows_of_B, B_rows, B_rows.cols, global, stats);
  // B's rows in A's local column order: the own rows, then the fetched ones (in `ghosts` order).
  Timer timer;
  append_rows(fetched, B_rows);
  SpgemmStats local_stats;
  CsrMatrix<V> C = local.multiply(A_local, B_rows, &local_stats);
  stats.multiplications += local_stats.multiplications;
  stats.phases.push_back({"local multiply", timer.seconds(), 0});
  return C;
}

}  // namespace

template <class V>
CsrMatrix<V> rowwise_multiply(const Communicator& comm, const CsrMatrix<V>& A_rows, const CsrMatrix<V>& B_rows,
                              const SpgemmBackend& local, SpgemmStats& stats) {
  const BlockPartition inner(A_rows.cols, comm.size());
  const std::int64_t own_first = inner.begin(comm.rank()), own_last = inner.end(comm.rank());
  // The B rows this rank's A references elsewhere, sorted (so each owner's are contiguous), and A's
  // columns renumbered onto them: own rows first, then these.
  std::vector<std::int64_t> needed;
  for (Index j : A_rows.col)
    if (j < own_first || j >= own_last) needed.push_back(j);
  std::sort(needed.begin(), needed.end());
  needed.erase(std::unique(needed.begin(), needed.end()), needed.end());
  CsrMatrix<V> A_local = A_rows;
  A_local.cols = static_cast<Index>(own_last - own_first + static_cast<std::int64_t>(needed.size()));
  for (Index& j : A_local.col)
    j = j >= own_first && j < own_last
            ? static_cast<Index>(j - own_first)
            : static_cast<Index>(own_last - own_first) +
                  static_cast<Index>(std::lower_bound(needed.begin(), needed.end(), j) - needed.begin());
  return rowwise_multiply_local(comm, A_local, needed, inner, B_rows, local, stats);
}

namespace {

// The columns of a product with B, numbered compactly in global order: B's ghosts and the fetched rows'
// other columns (`extra`, sorted) around B's own range; where each of B's local columns and each global
// column go.
class CompactColumns {
 public:
  template <class V>
  CompactColumns(const DistributedMatrix<V>& B, const std::vector<std::int64_t>& extra)
      : own_first_(B.column_partition().begin(B.communicator().rank())),
        own_count_(static_cast<Index>(B.column_partition().count(B.communicator().rank()))),
        ghosts_(merged(B.ghost_columns(), extra)), number_(ghosts_) {
    below_ = static_cast<Index>(std::lower_bound(ghosts_.begin(), ghosts_.end(), own_first_) - ghosts_.begin());
    of_local_.resize(static_cast<std::size_t>(B.local().cols));
    for (Index j = 0; j < B.local().cols; ++j) of_local_[static_cast<std::size_t>(j)] = (*this)(B.global_column(j));
  }
  CompactColumns(const CompactColumns&) = delete;  // number_ refers to ghosts_
  CompactColumns& operator=(const CompactColumns&) = delete;
  // B's local column j.
  Index of_local(Index j) const { return of_local_[static_cast<std::size_t>(j)]; }
  // A global column: B's own, or one of the ghosts.
  Index operator()(std::int64_t g) const {
    if (g >= own_first_ && g < own_first_ + own_count_) return below_ + static_cast<Index>(g - own_first_);
    const Index k = number_(g);
    return k < below_ ? k : k + own_count_;
  }
  // The global column of each compact one.
  std::vector<std::int64_t> columns() const {
    std::vector<std::int64_t> all(ghosts_.begin(), ghosts_.begin() + below_);
    for (Index j = 0; j < own_count_; ++j) all.push_back(own_first_ + j);
    all.insert(all.end(), ghosts_.begin() + below_, ghosts_.end());
    return all;
  }

 private:
  static std::vector<std::int64_t> merged(const std::vector<std::int64_t>& a, const std::vector<std::int64_t>& b) {
    std::vector<std::int64_t> both;
    std::merge(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(both));
    return both;
  }

  std::int64_t own_first_;
  Index own_count_, below_ = 0;
  std::vector<std::int64_t> ghosts_;  // sorted
  GhostNumbers number_;               // over ghosts_
  std::vector<Index> of_local_;
};

}  // namespace

template <class V>
NumberedRows<V> rowwise_multiply_numbered(const DistributedMatrix<V>& A, const DistributedMatrix<V>& B,
                                          const SpgemmBackend& local, SpgemmStats& stats) {
  const Communicator& comm = A.communicator();
  const auto global = [&B](Index j) { return static_cast<Index>(B.global_column(j)); };
  std::vector<CsrMatrix<V>> fetched = fetch_rows(comm, A.ghost_columns(), B.row_partition(), B.local(),
                                                 static_cast<Index>(B.global_cols()), global, stats);
  // B's rows in A's local column order, in compact columns: the own rows through a table, the fetched ones
  // (global columns) through the ghosts' numbers.
  Timer timer;
  const std::int64_t own_first = B.column_partition().begin(comm.rank()), own_last = B.column_partition().end(comm.rank());
  const GhostNumbers b_ghost(B.ghost_columns());
  std::vector<std::int64_t> extra;  // the fetched rows' columns that are neither B's own nor its ghosts
  for (const CsrMatrix<V>& block : fetched)
    for (Index j : block.col)
      if ((j < own_first || j >= own_last) && b_ghost.find(j) < 0) extra.push_back(j);
  std::sort(extra.begin(), extra.end());
  extra.erase(std::unique(extra.begin(), extra.end()), extra.end());
  const CompactColumns compact(B, extra);
  const std::vector<std::int64_t> columns = compact.columns();
  const CsrMatrix<V>& own = B.local();
  Offset fetched_entries = 0;
  Index fetched_rows = 0;
  for (const CsrMatrix<V>& block : fetched) fetched_entries += block.nnz(), fetched_rows += block.rows;
  CsrMatrix<V> B_rows(own.rows + fetched_rows, static_cast<Index>(columns.size()));
  B_rows.col.resize(static_cast<std::size_t>(own.nnz() + fetched_entries));
  B_rows.val.resize(B_rows.col.size());
  std::copy(own.row_ptr.begin(), own.row_ptr.end(), B_rows.row_ptr.begin());
#pragma omp parallel for schedule(static)
  for (std::int64_t k = 0; k < static_cast<std::int64_t>(own.nnz()); ++k) {
    B_rows.col[static_cast<std::size_t>(k)] = compact.of_local(own.col[static_cast<std::size_t>(k)]);
    B_rows.val[static_cast<std::size_t>(k)] = own.val[static_cast<std::size_t>(k)];
  }
  Offset at = own.nnz();
  Index row = own.rows;
  for (const CsrMatrix<V>& block : fetched)
    for (Index i = 0; i < block.rows; ++i, ++row) {
      for (Offset e = block.row_begin(i); e < block.row_end(i); ++e, ++at) {
        B_rows.col[static_cast<std::size_t>(at)] = compact(block.col[e]);
        B_rows.val[static_cast<std::size_t>(at)] = block.val[e];
      }
      B_rows.row_ptr[static_cast<std::size_t>(row) + 1] = at;
    }
  fetched = {};
  SpgemmStats local_stats;
  NumberedRows<V> C{local.multiply(A.local(), B_rows, &local_stats), columns};
  stats.multiplications += local_stats.multiplications;
  stats.phases.push_back({"local multiply", timer.seconds(), 0});
  return C;
}

namespace {

// What names a message too large for MPI's counts.
const std::string kPlanned = "rowwise product plan";

// C's local column of a global column: its own columns first, then its ghosts; -1 for a column C lacks.
template <class V>
class LocalColumnsOf {
 public:
  explicit LocalColumnsOf(const DistributedMatrix<V>& C)
      : own_first_(C.column_partition().begin(C.communicator().rank())),
        own_last_(C.column_partition().end(C.communicator().rank())), own_(C.own_columns()),
        ghosts_(C.ghost_columns()) {}
  Index operator()(std::int64_t g) const {
    if (g >= own_first_ && g < own_last_) return static_cast<Index>(g - own_first_);
    const Index ghost = ghosts_.find(g);
    return ghost < 0 ? -1 : own_ + ghost;
  }

 private:
  std::int64_t own_first_, own_last_;
  Index own_;
  GhostNumbers ghosts_;
};

}  // namespace

template <class V>
std::uint64_t RowFetchPlan<V>::bytes() const {
  return sizeof(Index) * sent_rows.size() + sizeof(int) * (send_counts.size() + receive_counts.size()) +
         rows.bytes();
}

template <class V>
RowFetchPlan<V> rowwise_fetch_plan(const DistributedMatrix<V>& A, const DistributedMatrix<V>& B,
                                   const DistributedMatrix<V>& C, std::uint64_t& bytes) {
  const Communicator& comm = A.communicator();
  const OwnerRequests requests = ask_owners(comm, A.ghost_columns(), B.row_partition());  // as the product fetched
  RowFetchPlan<V> plan;
  // The fetched rows once, as the product fetched them (their values too).
  std::vector<CsrMatrix<V>> fetched;
  bytes += sizeof(std::int64_t) * A.ghost_columns().size();
  const auto global = [&B](Index j) { return static_cast<Index>(B.global_column(j)); };
  std::vector<CsrMatrix<V>> asked = asked_rows(B.local(), B.first_row(), requests, static_cast<Index>(B.global_cols()),
                                               global, &plan.sent_rows);
  for (const CsrMatrix<V>& block : asked) plan.send_counts.push_back(mpi_count(block.nnz(), kPlanned));
  bytes += all_to_all_blocks(asked, fetched, comm.get());
  asked = {};  // sent: not held while the plan is made
  for (const CsrMatrix<V>& block : fetched) plan.receive_counts.push_back(mpi_count(block.nnz(), kPlanned));
  if (plan.receive_counts.size() != static_cast<std::size_t>(comm.size()))
    abort_every_rank("rowwise product plan: blocks from " + std::to_string(plan.receive_counts.size()) + " of " +
                     std::to_string(comm.size()) + " ranks");
  // B's rows in C's columns: the own ones through a table over B's local columns, the fetched ones by column.
  // Every column of a row A reads is one of C's; a row that no row of A reads (an own row, or a fetched
  // one whose ghost A's layout keeps though its entries were dropped: a filtered matrix) may have others,
  // which become 0 (never read: A's pattern is the plan's).
  const LocalColumnsOf<V> in_c(C);
  std::vector<Index> column_in_c(static_cast<std::size_t>(B.local().cols));
  for (Index j = 0; j < B.local().cols; ++j) column_in_c[static_cast<std::size_t>(j)] = in_c(B.global_column(j));
  std::vector<std::uint8_t> read(static_cast<std::size_t>(A.local().cols), 0);  // B's rows: own, then fetched
  for (Index j : A.local().col) read[static_cast<std::size_t>(j)] = 1;
  const CsrMatrix<V>& own = B.local();
  CsrMatrix<V>& rows = plan.rows;
  rows = CsrMatrix<V>(B.rows, C.local().cols);
  rows.row_ptr = own.row_ptr;
  rows.col.resize(own.col.size());
  bool lacking = false;  // a column of a row A reads that C lacks
#pragma omp parallel for schedule(static) reduction(|| : lacking)
  for (Index i = 0; i < B.rows; ++i)
    for (Offset k = own.row_begin(i); k < own.row_end(i); ++k) {
      const Index c = column_in_c[static_cast<std::size_t>(own.col[k])];
      lacking = lacking || (c < 0 && read[static_cast<std::size_t>(i)]);
      rows.col[k] = c < 0 ? 0 : c;
    }
  for (const CsrMatrix<V>& block : fetched) {
    for (Index i = 0; i < block.rows; ++i) {
      const bool row_read = read[static_cast<std::size_t>(rows.rows + i)];
      for (Offset e = block.row_begin(i); e < block.row_end(i); ++e) {
        const Index c = in_c(block.col[e]);
        lacking = lacking || (c < 0 && row_read);
        rows.col.push_back(c < 0 ? 0 : c);
      }
      rows.row_ptr.push_back(static_cast<Offset>(rows.col.size()));
    }
    rows.rows += block.rows;
  }
  if (lacking) abort_every_rank("rowwise product plan: a product lies outside the product's pattern");
  mpi_displacements(plan.send_counts, kPlanned);  // a product too large for MPI's counts ends here, at its setup
  mpi_displacements(plan.receive_counts, kPlanned);
  return plan;
}

template <class V>
CsrMatrix<V> rowwise_multiply_planned(const DistributedMatrix<V>& A, const DistributedMatrix<V>& B,
                                      const RowFetchPlan<V>& plan, const DistributedMatrix<V>& layout,
                                      SpgemmStats& stats) {
  const Communicator& comm = A.communicator();
  Timer timer;
  // B's values in the plan's row order: this rank's rows as they are, then the fetched rows' from their owners.
  const CsrMatrix<V>& own = B.local();
  if (own.rows + static_cast<Index>(A.ghost_columns().size()) != plan.rows.rows ||
      own.nnz() != plan.rows.row_ptr[static_cast<std::size_t>(own.rows)])
    abort_every_rank("rowwise product plan: B is not on the pattern the plan was made for");
  const std::vector<int> send_at = mpi_displacements(plan.send_counts, kPlanned);
  const std::vector<int> receive_at = mpi_displacements(plan.receive_counts, kPlanned);
  std::vector<V> send;  // sent_rows lists each rank's rows in turn
  send.reserve(static_cast<std::size_t>(send_at.back() + plan.send_counts.back()));
  for (Index i : plan.sent_rows) send.insert(send.end(), own.val.begin() + own.row_begin(i), own.val.begin() + own.row_end(i));
  const std::uint64_t bytes = bytes_to_other_ranks(plan.send_counts, comm.rank(), sizeof(V));
  Array<V> values(static_cast<std::size_t>(own.nnz() + receive_at.back() + plan.receive_counts.back()));
  std::copy(own.val.begin(), own.val.end(), values.begin());
  MPI_Alltoallv(send.data(), plan.send_counts.data(), send_at.data(), mpi_type<V>(), values.data() + own.nnz(),
                plan.receive_counts.data(), receive_at.data(), mpi_type<V>(), comm.get());
  stats.phases.push_back({"fetch B rows", timer.seconds(), bytes});

  timer.restart();
  CsrMatrix<V> C;
  try {
    C = numeric_product(A.local(), plan.rows, values.data(), layout.local(), &stats.multiplications);
  } catch (const Error& e) {  // the patterns agreed on every rank: one that no longer holds is a bug here
    abort_every_rank("rowwise numeric product: " + std::string(e.what()));
  }
  stats.phases.push_back({"local multiply", timer.seconds(), 0});
  return C;
}

template CsrMatrix<double> rowwise_multiply(const Communicator&, const CsrMatrix<double>&, const CsrMatrix<double>&,
                                            const SpgemmBackend&, SpgemmStats&);
template CsrMatrix<float> rowwise_multiply(const Communicator&, const CsrMatrix<float>&, const CsrMatrix<float>&,
                                           const SpgemmBackend&, SpgemmStats&);
template NumberedRows<double> rowwise_multiply_numbered(const DistributedMatrix<double>&, const DistributedMatrix<double>&,
                                                        const SpgemmBackend&, SpgemmStats&);
template NumberedRows<float> rowwise_multiply_numbered(const DistributedMatrix<float>&, const DistributedMatrix<float>&,
                                                       const SpgemmBackend&, SpgemmStats&);
#define AMGSOLVE_ROWWISE_PLAN(V)                                                                                \
  template struct RowFetchPlan<V>;                                                                              \
  template RowFetchPlan<V> rowwise_fetch_plan(const DistributedMatrix<V>&, const DistributedMatrix<V>&,          \
                                              const DistributedMatrix<V>&, std::uint64_t&);                     \
  template CsrMatrix<V> rowwise_multiply_planned(const DistributedMatrix<V>&, const DistributedMatrix<V>&,       \
                                                 const RowFetchPlan<V>&, const DistributedMatrix<V>&, SpgemmStats&);
AMGSOLVE_ROWWISE_PLAN(double)
AMGSOLVE_ROWWISE_PLAN(float)
#undef AMGSOLVE_ROWWISE_PLAN

}  // namespace amgsolve
