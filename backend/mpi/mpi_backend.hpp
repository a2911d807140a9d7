#pragma once
// The distributed layer of the execution axis: MPI ranks, each running its rows on a local backend (the cpu
// backend's OpenMP kernels), as AMGCL's mpi:: layer wraps a backend. Vectors are a rank's block of entries
// (distributed/partition.hpp), matrices are distributed by rows with a halo (distributed/
// distributed_matrix.hpp), and every reduction is the exact sum of the ranks' block sums, so PCG, the
// V-cycle and the smoothers, written once over a backend, give the same iterates, residual history and
// iteration count on any number of ranks as on one process.
//
// The setup is distributed too: smoothed aggregation (amg/smoothed_aggregation.hpp) runs on each rank's rows
// with this backend's sparse operations below (SpGEMM by rows or on a process grid, the transpose by an
// all-to-all) and its steps in amg/mpi/distributed_setup.hpp, and builds the same hierarchy as one process.
// A level's rows are spread in whole reduction blocks (distributed/partition.hpp), so the small coarse
// levels live on the first ranks only. The coarsest level is gathered and solved redundantly: its
// right-hand side gathered on every rank, each rank solving and keeping its part.
#include <memory>
#include <utility>

#include "backend/cpu/cpu_backend.hpp"
#include "backend/mpi/rank_vectors.hpp"
#include "common/device.hpp"
#include "distributed/communicator.hpp"
#include "distributed/distributed_matrix.hpp"
#include "distributed/partition.hpp"
#include "distributed/spgemm/rowwise.hpp"
#include "sparse/csr_ops.hpp"
#include "sparse/sparse_ldlt.hpp"
#include "sparse/spmv_format.hpp"

namespace amgsolve {

// What forms the transpose of a distributed matrix again for new values on the same pattern (a re-setup,
// MpiBackend::transpose): which of M's local entries go where, and M^T's layout.
template <class V>
struct TransposePlan {
  std::vector<Offset> sent_entries;  // M's local entries in the order they are sent, to rank 0 first
  std::vector<int> send_counts, receive_counts;
  // The ranks that send this one a part, in rank order, and each part's row_ptr over this rank's rows of
  // M^T: each row of M^T is the parts' rows in that order.
  std::vector<int> senders;
  std::vector<Array<Offset>> received_rows;
  std::shared_ptr<const DistributedMatrix<V>> layout;  // M^T without values
  std::uint64_t bytes() const {
    std::uint64_t b = sizeof(Offset) * sent_entries.size() +
                      sizeof(int) * (send_counts.size() + receive_counts.size() + senders.size());
    for (const Array<Offset>& rows : received_rows) b += sizeof(Offset) * rows.size();
    return b + (layout ? layout->bytes() : 0);
  }
};

class MpiBackend : public RankVectors<CpuBackend, MpiBackend> {  // the vectors' operations there
 public:
  static constexpr BackendKind kind = BackendKind::cpu;  // where each rank computes
  static constexpr bool records_lumped_rows = true;      // each rank its rows'
  template <class V>
  using Matrix = DistributedMatrix<V>;  // what the solve multiplies
  template <class V>
  using Csr = DistributedMatrix<V>;     // what the setup builds: the same

  // The coarsest level solved on every rank from its gathered right-hand side (rank_vectors.hpp).
  template <class V>
  class CoarseSolve : public GatheredCoarseSolve<V> {
   public:
    CoarseSolve(const MpiBackend& backend, const CsrMatrix<V>& /*A*/, std::shared_ptr<const SparseLdlt<V>> factor,
                const amgsolve::Vector<double>& /*nullspace: the factor knows it*/)
        : GatheredCoarseSolve<V>(backend.comm(), std::move(factor)) {}
  };

  explicit MpiBackend(MPI_Comm comm = MPI_COMM_WORLD) : comm_(std::make_unique<Communicator>(comm)) { use(*comm_); }

  TransferCounts transfers() const { return {}; }  // no device: the communication is in comm().stats()

  // ---- data: a rank's rows and entries of what every rank holds whole, and the whole of what is spread

  // The finest level's rows, and the vectors uploaded whole, in ranges of whole units of `unit` rows (a
  // system's: node_partition_unit, distributed/partition.hpp); before the finest matrix is distributed.
  void set_finest_unit(std::int64_t unit) { finest_unit_ = unit; }
  BlockPartition finest_partition(std::int64_t rows) const { return BlockPartition(rows, comm_->size(), finest_unit_); }

  // This rank's rows of a matrix every rank holds whole, a square one in the finest level's partition
  // (set_finest_unit). Collective.
  template <class V>
  std::shared_ptr<const Csr<V>> csr(std::shared_ptr<const CsrMatrix<V>> whole) const {
    if (!whole->is_square()) return std::make_shared<const Csr<V>>(*comm_, *whole);
    const BlockPartition rows = finest_partition(whole->rows);
    return std::make_shared<const Csr<V>>(*comm_, *whole, rows, rows);
  }
  template <class V>
  std::shared_ptr<const Matrix<V>> matrix(std::shared_ptr<const CsrMatrix<V>> whole, SpmvFormat format) const {
    return matrix(csr(std::move(whole)), format);
  }
  // Each rank multiplies its rows in CSR, a level matrix's interior chunks in a sliced ELLPACK copy where the
  // cpu backend would keep one beside the CSR (the padding at most kSlicedPaddingBesideCsr;
  // DistributedMatrix::slice_for_the_solve). P and R (other row and column partitions) stay in CSR: a copy
  // beside their CSR would pay for its padding (20-50%) with memory.
  template <class V>
  std::shared_ptr<const Matrix<V>> matrix(std::shared_ptr<const Csr<V>> M, SpmvFormat format) const {
    if (format != SpmvFormat::csr && M->row_partition() == M->column_partition() && M->rows >= SlicedEllpack<V>::kChunk &&
        sliced_ellpack_vector_units() && !M->sliced() && sliced_ellpack_padding(M->local()) <= kSlicedPaddingBesideCsr)
      M->slice_for_the_solve();
    return M;
  }
  // The whole matrix, on every rank (the coarsest level's factorisation, the SpGEMM comparison). Collective.
  template <class V>
  std::shared_ptr<const CsrMatrix<V>> host_view(const Csr<V>& M) const;
  template <class To, class From>
  std::shared_ptr<const Csr<To>> cast(const Csr<From>& M) const {
    return std::make_shared<const Csr<To>>(M, cast_values<To>(M.local()));  // M's layout: nothing exchanged
  }
  // The setup's counts are global: every rank takes the same decisions.
  template <class V>
  std::int64_t global_rows(const Csr<V>& M) const {
    return M.global_rows();
  }
  template <class V>
  std::int64_t global_nnz(const Csr<V>& M) const {
    return comm_->sum(static_cast<std::int64_t>(M.nnz()));
  }
  template <class V>
  Vector<V> upload(const amgsolve::Vector<V>& global) const {
    const BlockPartition partition = finest_partition(static_cast<std::int64_t>(global.size()));
    const auto first = global.begin() + partition.begin(comm_->rank());
    return Vector<V>(first, first + partition.count(comm_->rank()));
  }
  // The whole vector, on every rank.
  template <class V>
  void download(const Vector<V>& local, amgsolve::Vector<V>& global) const {
    comm_->allgather(local, comm_->partition_of(static_cast<std::int64_t>(local.size())), global);
  }
  // What the solve holds of a matrix beyond the hierarchy: its sliced copy, if any (the rows themselves are
  // the hierarchy's, counted there, as the cpu backend's CSR is).
  template <class V>
  std::uint64_t bytes(const Matrix<V>& A) const {
    return A.sliced_bytes();
  }
  // numerator / a_ii for this rank's rows, computed in double and rounded to V (as the cpu backend does).
  template <class V>
  Vector<V> smoother_diagonal(const Csr<V>& A, double numerator) const {
    return CpuBackend::scaled_inverse(A.diagonal(), numerator);
  }
  // numerator A_II^-1 for this rank's nodes (a system's, whole on each rank: their blocks are in the own
  // columns, numbered as the rows).
  template <class V>
  BlockDiagonal<V> smoother_block_diagonal(const Csr<V>& A, std::shared_ptr<const Array<Index>> nodes,
                                           double numerator) const {
    return local_.smoother_block_diagonal(A.local(), std::move(nodes), numerator);
  }

  // ---- products: the rows that need no ghost while the halo is exchanged, then the others

  template <class V>
  void spmv(const Matrix<V>& A, const Vector<V>& x, Vector<V>& y) const {
    y.resize(static_cast<std::size_t>(A.rows));
    A.with_halo(x, halo_mode_,
                [&](const auto& rows, const auto& columns) { local_.spmv_rows(A.local(), rows, columns, y); });
  }
  template <class V>
  void spmv_add(const Matrix<V>& A, const Vector<V>& x, Vector<V>& y) const {
    A.with_halo(x, halo_mode_,
                [&](const auto& rows, const auto& columns) { local_.spmv_add_rows(A.local(), rows, columns, y); });
  }
  template <class V>
  void residual(const Matrix<V>& A, const Vector<V>& x, const Vector<V>& b, Vector<V>& r) const {
    r.resize(static_cast<std::size_t>(A.rows));
    A.with_halo(x, halo_mode_, [&](const auto& rows, const auto& columns) {
      local_.residual_rows(A.local(), rows, columns, b, r);
    });
  }

  // ---- the smoothers' passes that read a matrix

  template <class V>
  void jacobi_sweep(const Matrix<V>& A, const Vector<V>& scaled_dinv, const Vector<V>& b, const Vector<V>& x,
                    Vector<V>& x_next) const {
    x_next.resize(x.size());
    A.with_halo(x, halo_mode_, [&](const auto& rows, const auto& columns) {
      local_.jacobi_sweep_rows(A.local(), rows, columns, scaled_dinv, b, x, x_next);
    });
  }
  template <class V>
  void chebyshev_step(const Matrix<V>& A, const Vector<V>& dinv, const Vector<V>& b, V a, V c, Vector<V>& d,
                      const Vector<V>& x, Vector<V>& x_next) const {
    x_next.resize(x.size());
    A.with_halo(x, halo_mode_, [&](const auto& rows, const auto& columns) {
      local_.chebyshev_step_rows(A.local(), rows, columns, dinv, b, a, c, d, x, x_next);
    });
  }

  // l1 hybrid Gauss-Seidel on the rank's rows (amg/gauss_seidel.hpp): its blocks are the level's reduction
  // blocks, which a rank holds whole, and the ghosts lie outside every block, read as they were before the
  // sweep, so a sweep is one process's on any rank count.
  template <class V>
  Vector<V> l1_gauss_seidel_inverse_diagonal(const Matrix<V>& A, const Array<Index>& blocks) const {
    return local_.l1_gauss_seidel_inverse_diagonal(A.local(), blocks);
  }
  template <class V>
  void gauss_seidel_sweep(const Matrix<V>& A, const Array<Index>& blocks, const Vector<V>& inverse_diagonal,
                          const Vector<V>& b, Vector<V>& x, Vector<V>& before, SweepDirection direction) const {
    before = A.with_ghosts(x);
    local_.gauss_seidel_sweep_from(A.local(), blocks, inverse_diagonal, b, x, before, direction);
  }

  // The same with a system's node blocks: the residual with the halo, then the rank's nodes.
  using RankVectors<CpuBackend, MpiBackend>::jacobi_from_zero;
  using RankVectors<CpuBackend, MpiBackend>::chebyshev_from_zero;
  template <class V>
  void jacobi_from_zero(const BlockDiagonal<V>& scaled_dinv, const Vector<V>& b, Vector<V>& x) const {
    local_.jacobi_from_zero(scaled_dinv, b, x);
  }
  template <class V>
  void jacobi_sweep(const Matrix<V>& A, const BlockDiagonal<V>& scaled_dinv, const Vector<V>& b, const Vector<V>& x,
                    Vector<V>& x_next) const {
    residual(A, x, b, x_next);
    CpuBackend::block_jacobi_update(scaled_dinv, x, x_next);
  }
  template <class V>
  void chebyshev_from_zero(const BlockDiagonal<V>& dinv, const Vector<V>& b, V inv_theta, Vector<V>& d,
                           Vector<V>& x) const {
    local_.chebyshev_from_zero(dinv, b, inv_theta, d, x);
  }
  template <class V>
  void chebyshev_step(const Matrix<V>& A, const BlockDiagonal<V>& dinv, const Vector<V>& b, V a, V c, Vector<V>& d,
                      const Vector<V>& x, Vector<V>& x_next) const {
    residual(A, x, b, x_next);
    CpuBackend::block_chebyshev_update(dinv, a, c, d, x, x_next);
  }

  // ---- the setup's sparse operations (smoothed aggregation's own steps are in amg/mpi/)

  // C = A B: with a local SpGEMM backend, this rank's rows after fetching the B rows they reference
  // (rowwise); with a distributed one, its own algorithm. The stats are the ranks' together.
  template <class V>
  Csr<V> multiply(const SpgemmBackend& spgemm, const Csr<V>& A, const Csr<V>& B, SpgemmStats* stats) const;
  // A re-setup's products on kept patterns (amg/kept_structure.hpp), for a SpGEMM that sums in A's row
  // order: what of C = X Y to keep (the rowwise product's fetch plan and C's layout,
  // distributed/spgemm/rowwise.hpp); for a product into a matrix the hierarchy holds, the plan alone, and
  // the pattern that plan and the held matrix make; and X Y by the plan: Y's values fetched, the numeric
  // phase alone into C's local pattern, C in the kept layout. Collective.
  template <class V>
  using ProductPattern = RowwisePattern<V>;
  template <class V>
  RowwisePattern<V> product_pattern(const Csr<V>& X, const Csr<V>& Y, Csr<V>&& C) const {
    RowwisePattern<V> kept = held_product_pattern(X, Y, C);
    kept.layout = std::make_shared<const Csr<V>>(std::move(C).layout_only());
    return kept;
  }
  template <class V>
  RowwisePattern<V> held_product_pattern(const Csr<V>& X, const Csr<V>& Y, const Csr<V>& C) const {
    return {std::make_shared<const RowFetchPlan<V>>(rowwise_fetch_plan(X, Y, C, comm_->stats().halo_bytes)), nullptr};
  }
  template <class V>
  std::shared_ptr<const RowwisePattern<V>> pattern_of(std::shared_ptr<const Csr<V>> M, const RowwisePattern<V>& kept) const {
    return std::make_shared<const RowwisePattern<V>>(RowwisePattern<V>{kept.fetch, std::move(M)});
  }
  template <class V>
  Csr<V> multiply_into(const SpgemmBackend& spgemm, const Csr<V>& X, const Csr<V>& Y, const RowwisePattern<V>& pattern,
                       SpgemmStats& stats) const;
  // M^T: each entry sent to the owner of its column, the rows put together in rank order. Collective.
  template <class V>
  Csr<V> transpose(const Csr<V>& M) const;
  // A re-setup's transpose of a matrix on a kept pattern: the same, recording in `plan` what forms it again
  // for new values; and M^T formed again by a plan: M's values sent in the kept order, in one all-to-all,
  // put into M^T's kept rows, which take the kept layout. Collective.
  template <class V>
  using TransposePattern = TransposePlan<V>;
  template <class V>
  Csr<V> transpose_kept(const Csr<V>& M, TransposePlan<V>& plan) const;
  template <class V>
  Csr<V> transpose(const Csr<V>& M, const TransposePlan<V>& plan) const;
  // The first non-positive diagonal entry on any rank, the same error on every rank.
  template <class V>
  void require_positive_diagonal(const Csr<V>& A, int level) const;
  // Whether `mine` holds on every rank. Collective.
  bool everywhere(bool mine) const { return comm_->min(mine ? 1 : 0) == 1; }
  // Whether A and B hold entries at the same places, on every rank. Collective.
  template <class V>
  bool same_pattern(const Csr<V>& A, const Csr<V>& B) const {
    // Local column numbers name the ghosts by their place in each matrix's own ghost list: compare those too.
    const bool mine = A.global_rows() == B.global_rows() && A.local().same_pattern(B.local()) &&
                      A.ghost_columns() == B.ghost_columns();
    return everywhere(mine);
  }
  template <class V>
  std::vector<FormatCost> format_costs(const Csr<V>& M) const {
    return spmv_format_costs(M.local());  // this rank's rows (the cpu multiplies CSR anyway)
  }

  // How the products meet their halo exchange (solver.halo_exchange): naive overlap unless set.
  void set_halo_mode(HaloMode mode) { halo_mode_ = mode; }
  // The mode the products run (halo_mode_that_runs), for the report.
  HaloMode halo_mode() const { return halo_mode_that_runs(halo_mode_); }

 private:
  // transpose, recording its plan where `plan` is given
  template <class V>
  Csr<V> transpose_recording(const Csr<V>& M, TransposePlan<V>* plan) const;
  template <class V>
  void record_transpose(const Csr<V>& M, const CsrMatrix<V>& T, const std::vector<CsrMatrix<V>>& received,
                        TransposePlan<V>& plan) const;
  // M^T's ghosts, the other ranks' parts' columns; its rows in local numbers from M's local transpose T
  // and those parts.
  template <class V>
  std::vector<std::int64_t> ghosts_of_transposed(const std::vector<CsrMatrix<V>>& received) const;
  template <class V>
  CsrMatrix<V> rows_of_transposed(const Csr<V>& M, const CsrMatrix<V>& T, const std::vector<CsrMatrix<V>>& received,
                                  const std::vector<std::int64_t>& ghosts) const;

  std::unique_ptr<Communicator> comm_;  // on the heap: matrices and coarse solves refer to it
  HaloMode halo_mode_ = HaloMode::overlap;
  std::int64_t finest_unit_ = kReductionBlock;
};

}  // namespace amgsolve
