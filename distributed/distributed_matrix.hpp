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
#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "backend/cpu/cpu_backend.hpp"
#include "distributed/communicator.hpp"
#include "distributed/halo.hpp"
#include "distributed/partition.hpp"
#include "sparse/csr.hpp"

namespace amgsolve {

// x_j of a distributed kernel: an own column from x, a ghost from the halo's values.
template <class V>
struct GhostedColumns {
  const V* own;
  const V* ghost;
  Index own_columns;
  V operator()(Index j) const { return j < own_columns ? own[j] : ghost[j - own_columns]; }
};

// How a product meets its halo exchange (Kreutzer et al. 2011, section 5): overlap computes the interior
// rows while the messages travel; vector mode waits for them first, then computes every row (the
// baseline the overlap is measured against, bench/mpi_spmv.cpp).
enum class HaloMode { overlap, vector };

template <class V>
class DistributedMatrix {
 public:
  // This rank's rows of a matrix every rank holds whole (the setup is replicated on every rank so far).
  // Collective.
  DistributedMatrix(const Communicator& comm, const CsrMatrix<V>& global)
      : comm_(&comm), row_partition_(global.rows, comm.size()), column_partition_(global.cols, comm.size()) {
    const std::int64_t first = row_partition_.begin(comm.rank());
    const std::int64_t last = row_partition_.end(comm.rank());
    std::vector<Offset> row_ptr(static_cast<std::size_t>(last - first) + 1, 0);
    for (std::int64_t i = first; i < last; ++i)
      row_ptr[static_cast<std::size_t>(i - first) + 1] = global.row_end(static_cast<Index>(i)) - global.row_begin(static_cast<Index>(first));
    const Offset begin = global.row_begin(static_cast<Index>(first));
    const Offset end = global.row_begin(static_cast<Index>(first)) + row_ptr.back();
    std::vector<std::int64_t> columns(global.col.begin() + begin, global.col.begin() + end);
    std::vector<V> values(global.val.begin() + begin, global.val.begin() + end);
    build(row_ptr, columns, values);
  }

  Index rows = 0;  // this rank's rows: the algorithms size their vectors by it

  const CsrMatrix<V>& local() const { return local_; }
  const BlockPartition& row_partition() const { return row_partition_; }
  const BlockPartition& column_partition() const { return column_partition_; }
  const HaloPlan& halo() const { return halo_; }
  const Communicator& communicator() const { return *comm_; }
  Index interior_rows() const { return static_cast<Index>(interior_.size()); }
  std::uint64_t bytes() const {
    return local_.bytes() + sizeof(Index) * (interior_.size() + boundary_.size()) +
           sizeof(V) * (ghost_.capacity() + send_buffer_.capacity());
  }

  // kernel(rows, columns) on the interior rows while x's halo is exchanged, then on the boundary rows;
  // columns reads x and the ghosts (GhostedColumns).
  template <class Kernel>
  void with_halo(const Vector<V>& x, Kernel&& kernel) const {
    halo_.begin(*comm_, x, ghost_, send_buffer_, requests_);
    if (mode_ == HaloMode::vector) halo_.end(*comm_, requests_);
    kernel(RowList{interior_.data(), static_cast<Index>(interior_.size())}, columns(x));
    if (mode_ == HaloMode::overlap) halo_.end(*comm_, requests_);
    kernel(RowList{boundary_.data(), static_cast<Index>(boundary_.size())}, columns(x));
  }
  void set_halo_mode(HaloMode mode) const { mode_ = mode; }

 private:
  GhostedColumns<V> columns(const Vector<V>& x) const { return {x.data(), ghost_.data(), local_.cols - halo_.ghosts()}; }

  // The local matrix and the halo from this rank's rows with global column indices.
  void build(const std::vector<Offset>& row_ptr, const std::vector<std::int64_t>& columns, const std::vector<V>& values) {
    const std::int64_t own_first = column_partition_.begin(comm_->rank());
    const std::int64_t own_last = column_partition_.end(comm_->rank());
    std::vector<std::int64_t> ghosts;
    for (std::int64_t j : columns)
      if (j < own_first || j >= own_last) ghosts.push_back(j);
    std::sort(ghosts.begin(), ghosts.end());
    ghosts.erase(std::unique(ghosts.begin(), ghosts.end()), ghosts.end());
    const auto own_columns = static_cast<Index>(own_last - own_first);

    rows = static_cast<Index>(row_ptr.size() - 1);
    local_ = CsrMatrix<V>(rows, own_columns + static_cast<Index>(ghosts.size()));
    local_.row_ptr.assign(row_ptr.begin(), row_ptr.end());
    local_.col.resize(columns.size());
    local_.val.assign(values.begin(), values.end());
    for (Index i = 0; i < rows; ++i) {
      bool reads_ghosts = false;
      for (Offset k = local_.row_begin(i); k < local_.row_end(i); ++k) {
        const std::int64_t j = columns[static_cast<std::size_t>(k)];
        if (j >= own_first && j < own_last) {
          local_.col[static_cast<std::size_t>(k)] = static_cast<Index>(j - own_first);
        } else {
          const auto ghost = std::lower_bound(ghosts.begin(), ghosts.end(), j) - ghosts.begin();
          local_.col[static_cast<std::size_t>(k)] = own_columns + static_cast<Index>(ghost);
          reads_ghosts = true;
        }
      }
      (reads_ghosts ? boundary_ : interior_).push_back(i);
    }
    halo_ = HaloPlan(*comm_, ghosts, column_partition_);
  }

  const Communicator* comm_;
  BlockPartition row_partition_, column_partition_;
  CsrMatrix<V> local_;
  std::vector<Index> interior_, boundary_;
  HaloPlan halo_;
  mutable Vector<V> ghost_, send_buffer_;
  mutable std::vector<MPI_Request> requests_;
  mutable HaloMode mode_ = HaloMode::overlap;
};

}  // namespace amgsolve
