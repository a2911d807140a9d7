#pragma once
// A sparse matrix distributed by rows (the hypre ParCSR / PETSc MPIAIJ layout): each rank holds its block of
// rows, with the columns it owns numbered first (0 .. own_columns - 1) and the ghost columns after them
// (own_columns + k for the k-th ghost in global order), a global column map, and the halo plan that brings
// the ghost values. Global indices and counts are 64-bit, local ones 32-bit.
//
// A row keeps its entries in global column order, so a kernel that reads column j as x_j (own) or ghost_k
// forms each row's sum exactly as one process does: the distributed products equal the single-process ones
// bit for bit. The rows with no ghost column (interior) are computed while the halo exchange is in flight,
// the others (boundary) after it (Kreutzer et al. 2011, section 5, naive overlap, by row rather than by
// column, which would change the order of each boundary row's sum).
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "backend/cpu/cpu_backend.hpp"
#include "common/parallel.hpp"
#include "distributed/communicator.hpp"
#include "distributed/halo.hpp"
#include "distributed/partition.hpp"
#include "sparse/csr.hpp"

namespace amgsolve {

// The halo mode a product runs in `mode`: task mode needs a second thread for the communication, and with one
// thread is naive overlap (what with_halo runs and the report names).
inline HaloMode halo_mode_that_runs(HaloMode mode) {
  return mode == HaloMode::task && max_threads() < 2 ? HaloMode::overlap : mode;
}

// x_j of a distributed kernel: an own column from x, a ghost from the halo's values.
template <class V>
struct GhostedColumns {
  const V* own;
  const V* ghost;
  Index own_columns;
  V operator()(Index j) const { return j < own_columns ? own[j] : ghost[j - own_columns]; }
};

// Interior rows a task-mode thread takes at a time (dynamic scheduling, so that the communication thread
// takes what is left when its wait ends).
inline constexpr Index kTaskModeRows = 4096;

// The distinct value(k) of the k in [0, n) where keep(k), sorted: by marks over their span when it is not
// much larger than the count of kept k (one pass; a product's columns, the planes next to a rank's block),
// else by sorting them.
template <class Value, class Keep>
std::vector<std::int64_t> sorted_distinct(std::size_t n, Value value, Keep keep) {
  std::int64_t lo = std::numeric_limits<std::int64_t>::max(), hi = -1, entries = 0;
  for (std::size_t k = 0; k < n; ++k)
    if (keep(k)) lo = std::min<std::int64_t>(lo, value(k)), hi = std::max<std::int64_t>(hi, value(k)), ++entries;
  std::vector<std::int64_t> distinct;
  if (entries == 0) return distinct;
  if (hi - lo + 1 <= 4 * entries + 4096) {
    std::vector<std::uint8_t> seen(static_cast<std::size_t>(hi - lo + 1), 0);
    for (std::size_t k = 0; k < n; ++k)
      if (keep(k)) seen[static_cast<std::size_t>(value(k) - lo)] = 1;
    for (std::int64_t g = lo; g <= hi; ++g)
      if (seen[static_cast<std::size_t>(g - lo)]) distinct.push_back(g);
    return distinct;
  }
  for (std::size_t k = 0; k < n; ++k)
    if (keep(k)) distinct.push_back(value(k));
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  return distinct;
}

// The position of a global column among the sorted ghosts: a table over their span when it is not much
// larger than their count (a product's columns, the planes next to a rank's block), a binary search otherwise.
class GhostNumbers {
 public:
  explicit GhostNumbers(const std::vector<std::int64_t>& ghosts) : ghosts_(ghosts) {
    if (ghosts.empty()) return;
    first_ = ghosts.front();
    const std::int64_t span = ghosts.back() - first_ + 1;
    if (span > 8 * static_cast<std::int64_t>(ghosts.size()) + 4096) return;
    table_.assign(static_cast<std::size_t>(span), -1);
    for (std::size_t k = 0; k < ghosts.size(); ++k) table_[static_cast<std::size_t>(ghosts[k] - first_)] = static_cast<Index>(k);
  }
  Index operator()(std::int64_t column) const {
    if (!table_.empty()) return table_[static_cast<std::size_t>(column - first_)];
    return static_cast<Index>(std::lower_bound(ghosts_.begin(), ghosts_.end(), column) - ghosts_.begin());
  }
  // The same for any column: -1 for one that is not a ghost.
  Index find(std::int64_t column) const {
    if (!table_.empty())
      return column >= first_ && column - first_ < static_cast<std::int64_t>(table_.size())
                 ? table_[static_cast<std::size_t>(column - first_)]
                 : -1;
    const auto at = std::lower_bound(ghosts_.begin(), ghosts_.end(), column);
    return at != ghosts_.end() && *at == column ? static_cast<Index>(at - ghosts_.begin()) : -1;
  }

 private:
  const std::vector<std::int64_t>& ghosts_;
  std::int64_t first_ = 0;
  std::vector<Index> table_;
};

template <class V>
class DistributedMatrix {
  template <class>
  friend class DistributedMatrix;  // a layout of another value type (the constructors below)

 public:
  DistributedMatrix() = default;
  // This rank's rows of a matrix every rank holds whole (the input, assembled on every rank), in the given
  // partitions (BlockPartition(rows, ranks) and BlockPartition(cols, ranks) by default). Collective.
  DistributedMatrix(const Communicator& comm, const CsrMatrix<V>& global)
      : DistributedMatrix(comm, global, BlockPartition(global.rows, comm.size()), BlockPartition(global.cols, comm.size())) {}
  DistributedMatrix(const Communicator& comm, const CsrMatrix<V>& global, const BlockPartition& rows,
                    const BlockPartition& columns)
      : DistributedMatrix(comm, rows, columns,
                          row_block(global, static_cast<Index>(rows.begin(comm.rank())),
                                    static_cast<Index>(rows.end(comm.rank())))) {}
  // From this rank's rows (its range of row_partition) with global column numbers, rows.cols being the
  // global column count: what the distributed setup's steps produce, in the partitions of the matrices they
  // come from. Collective.
  DistributedMatrix(const Communicator& comm, BlockPartition row_partition, BlockPartition column_partition,
                    CsrMatrix<V> rows)
      : comm_(&comm), row_partition_(std::move(row_partition)), column_partition_(std::move(column_partition)) {
    if (rows.rows != row_partition_.count(comm.rank()) || rows.cols != column_partition_.size() ||
        row_partition_.ranks() != comm.size() || column_partition_.ranks() != comm.size())
      abort_every_rank("distributed matrix: " + std::to_string(rows.rows) + " x " + std::to_string(rows.cols) +
                       " given for a range of " + std::to_string(row_partition_.count(comm.rank())) + " rows of " +
                       std::to_string(column_partition_.size()) + " columns");
    build(std::move(rows));
  }
  // The same from rows whose column j is global column columns[j] (sorted; some may be unused): what a step
  // that numbers its columns locally produces, renumbered through a table over `columns` instead of a
  // search among the global numbers. Collective.
  DistributedMatrix(const Communicator& comm, BlockPartition row_partition, BlockPartition column_partition,
                    CsrMatrix<V> rows, const std::vector<std::int64_t>& columns)
      : comm_(&comm), row_partition_(std::move(row_partition)), column_partition_(std::move(column_partition)) {
    if (rows.rows != row_partition_.count(comm.rank()) || rows.cols != static_cast<Index>(columns.size()) ||
        row_partition_.ranks() != comm.size() || column_partition_.ranks() != comm.size())
      abort_every_rank("distributed matrix: " + std::to_string(rows.rows) + " x " + std::to_string(rows.cols) +
                       " given for a range of " + std::to_string(row_partition_.count(comm.rank())) + " rows and " +
                       std::to_string(columns.size()) + " numbered columns");
    build_numbered(std::move(rows), columns);
  }
  // The same from rows already in local numbers: the own columns first, then `ghosts` (sorted global numbers).
  // Collective.
  struct LocalNumbers {};
  DistributedMatrix(const Communicator& comm, BlockPartition row_partition, BlockPartition column_partition,
                    CsrMatrix<V> rows, std::vector<std::int64_t> ghosts, LocalNumbers)
      : comm_(&comm), row_partition_(std::move(row_partition)), column_partition_(std::move(column_partition)),
        ghosts_(std::move(ghosts)) {
    if (rows.rows != row_partition_.count(comm.rank()) ||
        rows.cols != column_partition_.count(comm.rank()) + static_cast<std::int64_t>(ghosts_.size()) ||
        row_partition_.ranks() != comm.size() || column_partition_.ranks() != comm.size())
      abort_every_rank("distributed matrix: " + std::to_string(rows.rows) + " x " + std::to_string(rows.cols) +
                       " given in local numbers for a range of " + std::to_string(row_partition_.count(comm.rank())) +
                       " rows and " + std::to_string(ghosts_.size()) + " ghosts");
    renumber(std::move(rows), [](Index j) { return j; });
  }
  // The same in the default partitions, BlockPartition(global_rows, ranks) and BlockPartition(rows.cols,
  // ranks).
  DistributedMatrix(const Communicator& comm, std::int64_t global_rows, CsrMatrix<V> rows)
      : DistributedMatrix(comm, BlockPartition(global_rows, comm.size()), BlockPartition(rows.cols, comm.size()),
                          std::move(rows)) {}
  // A matrix laid out as `layout` (its rows, ghosts and halo plan) with the entries of `local`, which has
  // layout's local pattern: a product formed again into a kept pattern (distributed/spgemm/rowwise.hpp),
  // nothing renumbered or exchanged. Not collective.
  // A layout of values of another type serves as well (the tentative prolongator on its weights' layout).
  template <class W>
  DistributedMatrix(const DistributedMatrix<W>& layout, CsrMatrix<V> local)
      : DistributedMatrix(layout, std::move(local), SameColumns{}) {
    if (local_.nnz() != layout.nnz())
      abort_every_rank("distributed matrix: " + std::to_string(local_.nnz()) + " entries given for a layout of " +
                       std::to_string(layout.nnz()));
  }
  // Rows over the local columns of `layout` (its ghosts, whose halo plan serves), with its pattern or part of
  // it: a matrix derived from it entry by entry, such as its filtered copy, which drops entries. Rows that no
  // longer read a ghost are still computed after the halo arrives; `local` must add no ghost entry to the
  // layout's interior rows (their kernels read own columns only). Not collective.
  struct SameColumns {};
  template <class W>
  DistributedMatrix(const DistributedMatrix<W>& layout, CsrMatrix<V> local, SameColumns)
      : rows(layout.rows), comm_(layout.comm_), row_partition_(layout.row_partition_),
        column_partition_(layout.column_partition_), local_(std::move(local)), interior_(layout.interior_),
        boundary_(layout.boundary_), ghosts_(layout.ghosts_), halo_(layout.halo_) {
    if (local_.rows != layout.rows || local_.cols != layout.local_.cols)
      abort_every_rank("distributed matrix: " + std::to_string(local_.rows) + " x " + std::to_string(local_.cols) +
                       " given for a layout of " + std::to_string(layout.rows) + " x " +
                       std::to_string(layout.local_.cols));
  }
  // The same matrix without its values: a layout to keep (above).
  DistributedMatrix layout_only() && {
    drop_solve_copy();
    diagonal_.reset();
    Array<V>().swap(local_.val);  // freed, not only emptied
    return std::move(*this);
  }
  DistributedMatrix layout_copy() const {
    CsrMatrix<V> pattern(local_.rows, local_.cols);
    pattern.row_ptr = local_.row_ptr;
    pattern.col = local_.col;
    return DistributedMatrix(*this, std::move(pattern));
  }

  Index rows = 0;  // this rank's rows: the algorithms size their vectors by it

  const CsrMatrix<V>& local() const { return local_; }
  // The values of the local entries, for the setup's steps that rescale them (the pattern stays); a sliced
  // copy for the solve is let go of.
  Array<V>& values() {
    drop_solve_copy();
    diagonal_.reset();
    return local_.val;
  }
  Offset nnz() const { return local_.nnz(); }  // this rank's
  std::int64_t global_rows() const { return row_partition_.size(); }
  std::int64_t global_cols() const { return column_partition_.size(); }
  std::int64_t first_row() const { return row_partition_.begin(comm_->rank()); }
  Index own_columns() const { return local_.cols - static_cast<Index>(ghosts_.size()); }
  // The global numbers of the ghost columns, sorted (local column own_columns() + k is ghost k).
  const std::vector<std::int64_t>& ghost_columns() const { return ghosts_; }
  // The global number of a local column.
  std::int64_t global_column(Index j) const {
    return j < own_columns() ? column_partition_.begin(comm_->rank()) + j : ghosts_[static_cast<std::size_t>(j - own_columns())];
  }
  // This rank's rows with global column numbers (cols = the global column count).
  CsrMatrix<V> with_global_columns() const { return with_global_columns(local_); }
  // The same without the values: where this rank's entries are.
  CsrMatrix<V> global_pattern() const {
    CsrMatrix<V> pattern(rows, local_.cols);
    pattern.row_ptr = local_.row_ptr;
    pattern.col = local_.col;
    return with_global_columns(std::move(pattern));
  }
  // The same for rows in this matrix's local column numbers (a matrix derived from it, such as a subset).
  template <class W>
  CsrMatrix<W> with_global_columns(CsrMatrix<W> M) const {
    M.cols = static_cast<Index>(global_cols());
    for (Index& j : M.col) j = static_cast<Index>(global_column(j));
    return M;
  }
  // a_ii of this rank's rows (own column i is row i of a square matrix); the local columns are not sorted
  // (ghosts come after the own ones), so each row is searched, once: the setup reads a level's diagonal
  // several times (strength, smoother, eigenvalue scaling, the positivity check).
  const Vector<V>& diagonal() const {
    if (diagonal_) return *diagonal_;
    auto d = std::make_shared<Vector<V>>(static_cast<std::size_t>(rows), V(0));
#pragma omp parallel for schedule(static)
    for (Index i = 0; i < rows; ++i)
      for (Offset k = local_.row_begin(i); k < local_.row_end(i); ++k)
        if (local_.col[k] == i) {
          (*d)[i] = local_.val[k];
          break;
        }
    diagonal_ = std::move(d);
    return *diagonal_;
  }
  const BlockPartition& row_partition() const { return row_partition_; }
  const BlockPartition& column_partition() const { return column_partition_; }
  const HaloPlan& halo() const { return halo_; }
  const Communicator& communicator() const { return *comm_; }
  Index interior_rows() const { return static_cast<Index>(interior_.size()); }
  std::uint64_t bytes() const {
    return local_.bytes() + sizeof(Index) * (interior_.size() + boundary_.size()) +
           sizeof(std::int64_t) * ghosts_.size() + sizeof(V) * (ghost_.capacity() + send_buffer_.capacity()) +
           (diagonal_ ? sizeof(V) * diagonal_->size() : 0);
  }

  // For the solve: a sliced ELLPACK copy (sparse/sliced_ellpack.hpp) of the local rows' chunks of kChunk
  // rows that read no ghost, which are then multiplied in it while the halo is exchanged, the interior rows of
  // the other chunks in CSR, as before (each row's sum in the same order: the same bits). Kept beside the
  // CSR, which the setup and the boundary rows read, as the cpu backend keeps its copy of the finest matrix;
  // let go of when the values change (values(), layout_only(), drop_solve_copy()). Made only where those
  // chunks hold at least half the rows (a thin slab of a grid, or an unstructured matrix whose every chunk
  // has a boundary row, would gain little). Not collective.
  void slice_for_the_solve() const {
    constexpr Index kChunk = SlicedEllpack<V>::kChunk;
    std::vector<std::uint8_t> interior_row(static_cast<std::size_t>(rows), 1);
    for (Index i : boundary_) interior_row[static_cast<std::size_t>(i)] = 0;
    sliced_runs_.clear();
    interior_rest_.clear();
    Index sliced_rows = 0;
    for (Index first = 0; first < rows; first += kChunk) {
      const Index last = std::min(rows, first + kChunk), c = first / kChunk;
      const auto chunk = interior_row.begin() + first;
      if (!std::all_of(chunk, chunk + (last - first), [](std::uint8_t interior) { return interior != 0; })) {
        for (Index i = first; i < last; ++i)
          if (interior_row[static_cast<std::size_t>(i)]) interior_rest_.push_back(i);
        continue;
      }
      sliced_rows += last - first;
      if (!sliced_runs_.empty() && sliced_runs_.back().first + sliced_runs_.back().second == c &&
          sliced_runs_.back().second < kSlicedRunChunks)
        ++sliced_runs_.back().second;
      else
        sliced_runs_.emplace_back(c, 1);
    }
    if (2 * sliced_rows < rows) {
      drop_solve_copy();
      return;
    }
    // The copy of the interior chunks alone: the other chunks of width 0.
    std::vector<std::uint8_t> interior_chunks(static_cast<std::size_t>((rows + kChunk - 1) / kChunk), 0);
    for (const auto& [first_chunk, count] : sliced_runs_)
      std::fill_n(interior_chunks.begin() + first_chunk, count, std::uint8_t{1});
    sliced_ = std::make_shared<const SlicedEllpack<V>>(sliced_ellpack_from_csr(local_, interior_chunks));
  }
  // The solve's copy let go of (a matrix the setup keeps for a later re-setup's pattern). Not collective.
  void drop_solve_copy() const {
    sliced_.reset();
    std::vector<std::pair<Index, Index>>().swap(sliced_runs_);
    std::vector<Index>().swap(interior_rest_);
  }
  bool sliced() const { return sliced_ != nullptr; }
  std::uint64_t sliced_bytes() const {
    return sliced_ ? sliced_->bytes() + sizeof(std::pair<Index, Index>) * sliced_runs_.size() +
                         sizeof(Index) * interior_rest_.size()
                   : 0;
  }

  // kernel(rows, columns) on the interior rows and, once x's halo has arrived, on the boundary rows, the
  // exchange met as `mode` says (common/device.hpp; task mode needs a second thread, else it is naive
  // overlap); columns reads x alone on the interior rows (ArrayColumns: they read no ghost), x and the ghosts
  // on the boundary rows (GhostedColumns). The kernel computes each of its rows on its
  // own (it writes row i's outputs only): in task mode several threads call it at once, on different rows.
  // With a sliced copy (slice_for_the_solve) the interior rows are its interior chunks (SlicedRuns) and the
  // rest, a second call.
  template <class Kernel>
  void with_halo(const Vector<V>& x, HaloMode mode, Kernel&& kernel) const {
    halo_.begin(*comm_, x, ghost_, send_buffer_, requests_);
    if (halo_mode_that_runs(mode) == HaloMode::task) {
      interior_beside_the_exchange(x, kernel);
    } else {
      if (mode == HaloMode::vector) halo_.end(*comm_, requests_);
      if (sliced_) kernel(SlicedRuns<V>{sliced_.get(), sliced_runs_.data(), static_cast<Index>(sliced_runs_.size())}, ArrayColumns<V>{x.data()});
      kernel(interior_rows(0, static_cast<Index>(interior_list().size())), ArrayColumns<V>{x.data()});
      if (mode != HaloMode::vector) halo_.end(*comm_, requests_);
    }
    kernel(RowList{boundary_.data(), static_cast<Index>(boundary_.size())}, columns(x));
  }

  // A vector indexed by local column: the owners' entries of `own` (this rank's entries, one per own
  // column), the ghosts' after them. Collective: what the setup's steps read across rank boundaries.
  template <class T>
  Vector<T> with_ghosts(const Vector<T>& own) const {
    Vector<T> all(own.begin(), own.end());
    all.resize(static_cast<std::size_t>(local_.cols));
    fill_ghosts(all);
    return all;
  }
  // The transpose of fill_ghosts: values over the local columns (own entries, then the ghosts'); each
  // ghost's value is added to its owner's entry, and the own entries returned (own_columns() of them), each
  // rank's contributions added in rank order. Collective; for sums no order changes (counts, integer weights).
  template <class T>
  Vector<T> sum_at_owners(const Vector<T>& values) const {
    Vector<T> own(values.begin(), values.begin() + own_columns());
    halo_.add_to_owners(*comm_, Vector<T>(values.begin() + own_columns(), values.end()), own);
    return own;
  }
  // The same in place: values holds the own entries and room for the ghosts' (local_.cols entries), each
  // `width` consecutive values (the rows of a block of vectors, exchanged in one message per neighbour).
  template <class T>
  void fill_ghosts(Vector<T>& values, int width = 1) const {
    Vector<T> ghost, send_buffer;
    std::vector<MPI_Request> requests;
    halo_.begin(*comm_, values, ghost, send_buffer, requests, width);
    halo_.end(*comm_, requests);
    std::copy(ghost.begin(), ghost.end(), values.begin() + static_cast<std::ptrdiff_t>(own_columns()) * width);
  }

 private:
  GhostedColumns<V> columns(const Vector<V>& x) const { return {x.data(), ghost_.data(), local_.cols - halo_.ghosts()}; }

  // Task mode: the team's first thread (the one that called MPI_Init_thread, as MPI_THREAD_FUNNELED asks)
  // completes the exchange, the others take the interior rows a block at a time, and the first joins them
  // when its wait is over. The kernel's own parallel loop runs in one thread here (nested).
  template <class Kernel>
  void interior_beside_the_exchange(const Vector<V>& x, Kernel& kernel) const {
    // Tasks of about kTaskModeRows rows: the rows in CSR first, then the sliced copy's runs.
    const auto interior = static_cast<Index>(interior_list().size());
    const Index row_tasks = (interior + kTaskModeRows - 1) / kTaskModeRows;
    constexpr Index kRunsPerTask = kTaskModeRows / (kSlicedRunChunks * SlicedEllpack<V>::kChunk);
    static_assert(kRunsPerTask > 0);
    const auto runs = static_cast<Index>(sliced_runs_.size());
    const Index tasks = row_tasks + (sliced_ ? (runs + kRunsPerTask - 1) / kRunsPerTask : 0);
#pragma omp parallel
    {
      if (omp_get_thread_num() == 0) halo_.end(*comm_, requests_);
#pragma omp for schedule(dynamic, 1) nowait
      for (Index t = 0; t < tasks; ++t) {
        if (t < row_tasks) {
          const Index first = t * kTaskModeRows;
          kernel(interior_rows(first, std::min(kTaskModeRows, interior - first)), ArrayColumns<V>{x.data()});
        } else {
          const Index first = (t - row_tasks) * kRunsPerTask;
          kernel(SlicedRuns<V>{sliced_.get(), sliced_runs_.data() + first, std::min(kRunsPerTask, runs - first)},
                 ArrayColumns<V>{x.data()});
        }
      }
    }
  }
  // The interior rows the CSR kernels compute: all of them, or those outside the sliced copy's runs.
  const std::vector<Index>& interior_list() const { return sliced_ ? interior_rest_ : interior_; }
  RowList interior_rows(Index first, Index count) const { return RowList{interior_list().data() + first, count}; }

  // The local matrix and the halo from this rank's rows with global column indices.
  void build(CsrMatrix<V> own) {
    const std::int64_t own_first = column_partition_.begin(comm_->rank());
    const std::int64_t own_last = column_partition_.end(comm_->rank());
    const auto is_own = [&](std::int64_t j) { return j >= own_first && j < own_last; };
    ghosts_ = sorted_distinct(
        own.col.size(), [&](std::size_t k) { return own.col[k]; }, [&](std::size_t k) { return !is_own(own.col[k]); });
    const auto own_columns = static_cast<Index>(own_last - own_first);
    const GhostNumbers ghost_number(ghosts_);
    renumber(std::move(own), [&](Index j) {
      return is_own(j) ? static_cast<Index>(j - own_first) : own_columns + ghost_number(j);
    });
  }
  // The same from rows whose column j is global column global_of[j] (sorted): the columns used, own or ghost,
  // found by marks over them, each renumbered through a table.
  void build_numbered(CsrMatrix<V> own, const std::vector<std::int64_t>& global_of) {
    const std::int64_t own_first = column_partition_.begin(comm_->rank());
    const std::int64_t own_last = column_partition_.end(comm_->rank());
    std::vector<std::uint8_t> used(global_of.size(), 0);
    for (Index j : own.col) used[static_cast<std::size_t>(j)] = 1;
    const auto own_columns = static_cast<Index>(own_last - own_first);
    std::vector<Index> local_of(global_of.size(), -1);
    for (std::size_t k = 0; k < global_of.size(); ++k) {
      if (!used[k]) continue;
      const std::int64_t g = global_of[k];
      const bool is_own = g >= own_first && g < own_last;
      local_of[k] = is_own ? static_cast<Index>(g - own_first) : own_columns + static_cast<Index>(ghosts_.size());
      if (!is_own) ghosts_.push_back(g);
    }
    renumber(std::move(own), [&](Index j) { return local_of[static_cast<std::size_t>(j)]; });
  }
  // Takes `own` as the local matrix, its column j renamed local(j) (own columns first, then ghosts_), each row
  // sorted into interior or boundary, and plans the halo of ghosts_.
  template <class LocalColumn>
  void renumber(CsrMatrix<V> own, LocalColumn local) {
    const auto own_columns = static_cast<Index>(column_partition_.count(comm_->rank()));
    rows = own.rows;
    local_ = std::move(own);
    local_.cols = own_columns + static_cast<Index>(ghosts_.size());
    for (Index i = 0; i < rows; ++i) {
      bool reads_ghosts = false;
      for (Offset k = local_.row_begin(i); k < local_.row_end(i); ++k) {
        Index& j = local_.col[static_cast<std::size_t>(k)];
        j = local(j);
        reads_ghosts = reads_ghosts || j >= own_columns;
      }
      (reads_ghosts ? boundary_ : interior_).push_back(i);
    }
    halo_ = HaloPlan(*comm_, ghosts_, column_partition_);
  }

  const Communicator* comm_ = nullptr;
  BlockPartition row_partition_, column_partition_;
  CsrMatrix<V> local_;
  std::vector<Index> interior_, boundary_;
  std::vector<std::int64_t> ghosts_;  // the global numbers of the ghost columns, sorted
  HaloPlan halo_;
  mutable Vector<V> ghost_, send_buffer_;
  mutable std::vector<MPI_Request> requests_;
  // The solve's sliced copy (slice_for_the_solve): its runs of interior chunks, the other interior rows.
  mutable std::shared_ptr<const SlicedEllpack<V>> sliced_;
  mutable std::vector<std::pair<Index, Index>> sliced_runs_;
  mutable std::vector<Index> interior_rest_;
  mutable std::shared_ptr<const Vector<V>> diagonal_;  // once taken (diagonal()); dropped with new values
};

}  // namespace amgsolve
