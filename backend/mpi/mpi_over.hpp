#pragma once
// The distributed solve over a local backend: MPI ranks, each multiplying its rows on a backend of its own
// (its GPU, with the cuda backend), as AMGCL's mpi:: layer wraps any backend and Ginkgo's distributed matrix
// sits on an executor. The setup is the mpi backend's (backend/mpi/mpi_backend.hpp: each rank's rows on its
// CPU cores); the levels it builds, distributed by rows with a halo, are copied to the local backend once,
// and PCG, the V-cycle and the smoothers (written once over a backend) run here unchanged.
//
// A product exchanges the halo first (Kreutzer et al. 2011, section 5, "vector mode"): the entries other
// ranks read are gathered on the local backend and come to the host, go out over MPI, and the ghost values
// that arrive are placed after this rank's entries in an extended vector [own | ghosts], the numbering of
// the local matrix's columns (distributed/distributed_matrix.hpp). The local kernel then multiplies as on
// one process, each row's entries in global column order. Reductions add the local backend's sums of the
// fixed reduction blocks exactly (common/exact_sum.hpp); a rank's range starts on such a block
// (distributed/partition.hpp). Over the cpu backend, then, every iterate equals the single-process one bit
// for bit (tests/test_mpi.cpp); over the cuda backend, wherever its kernels form each row's sum and each
// block's sum from that row and block alone, the residual history is the same on any number of ranks.
#include <mpi.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "backend/cpu/cpu_backend.hpp"
#include "backend/mpi/rank_vectors.hpp"
#include "common/device.hpp"
#include "distributed/communicator.hpp"
#include "distributed/distributed_matrix.hpp"
#include "distributed/halo.hpp"
#include "distributed/partition.hpp"
#include "sparse/sparse_ldlt.hpp"
#include "sparse/spmv_format.hpp"

namespace amgsolve {

// A distributed matrix as the layer multiplies it: this rank's rows on the local backend, its columns the own
// ones then the ghosts, with the halo plan and the exchange's buffers (one product at a time per matrix).
template <class Local, class V>
struct DistributedOperator {
  Index rows = 0;
  std::shared_ptr<const typename Local::template Matrix<V>> local;
  HaloPlan halo;
  typename Local::template Vector<Index> sent;  // the own entries other ranks read, on the local backend
  mutable typename Local::template Vector<V> send, extended;
  mutable amgsolve::Vector<V> send_host, ghost_host;
  mutable std::vector<MPI_Request> requests;

  bool exchanges() const { return halo.ghosts() > 0 || halo.sent_entries() > 0; }
};

template <class Local>
class MpiOver : public RankVectors<Local, MpiOver<Local>> {  // the vectors' operations there
 public:
  static constexpr BackendKind kind = Local::kind;
  template <class V>
  using Vector = typename Local::template Vector<V>;  // this rank's entries
  using RankVectors<Local, MpiOver<Local>>::comm;
  template <class V>
  using Matrix = DistributedOperator<Local, V>;
  template <class V>
  using Csr = DistributedMatrix<V>;  // what the layer is built from: the mpi backend's setup

  // The coarsest level solved on every rank from its gathered right-hand side, on the host
  // (rank_vectors.hpp), this rank's block of the right-hand side taken from the local backend and its block
  // of the solution placed there.
  template <class V>
  class CoarseSolve {
   public:
    CoarseSolve(const MpiOver& backend, const CsrMatrix<V>& /*A*/, std::shared_ptr<const SparseLdlt<V>> factor,
                const amgsolve::Vector<double>& /*nullspace: the factor knows it*/)
        : backend_(backend), gathered_(backend.comm(), std::move(factor)) {}
    void solve(const Vector<V>& b, Vector<V>& x) const {
      backend_.local().download(b, b_host_);
      gathered_.solve(b_host_, x_host_);
      backend_.local().upload(x_host_, x);
    }
    std::uint64_t bytes() const { return gathered_.bytes(); }

   private:
    const MpiOver& backend_;
    GatheredCoarseSolve<V> gathered_;
    mutable amgsolve::Vector<V> b_host_, x_host_;
  };

  // comm: the setup's communicator (it outlives this layer). With the cuda backend each rank takes a GPU of
  // its node by its rank there.
  explicit MpiOver(const Communicator& comm)
      : RankVectors<Local, MpiOver<Local>>([&] { return make_local(comm); }) {
    this->use(comm);
  }

  TransferCounts transfers() const { return local_.transfers(); }
  HaloMode halo_mode() const { return HaloMode::vector; }

  // ---- data

  // A setup's distributed matrix on the local backend (its CSR rows copied or, on the cpu, shared).
  template <class V>
  std::shared_ptr<const Matrix<V>> matrix(std::shared_ptr<const Csr<V>> M, SpmvFormat format) const {
    auto op = std::make_shared<Matrix<V>>();
    op->rows = M->rows;
    op->halo = M->halo();
    op->sent = local_.upload(amgsolve::Vector<Index>(op->halo.sent_indices().begin(), op->halo.sent_indices().end()));
    const std::shared_ptr<const CsrMatrix<V>> rows(M, &M->local());  // keeps M while the local backend reads it
    op->local = local_.matrix(rows, format);
    return op;
  }
  // This rank's rows of a matrix every rank holds whole. Collective.
  template <class V>
  std::shared_ptr<const Matrix<V>> matrix(std::shared_ptr<const CsrMatrix<V>> whole, SpmvFormat format) const {
    return matrix(std::make_shared<const Csr<V>>(comm(), *whole), format);
  }
  template <class V>
  Vector<V> upload(const amgsolve::Vector<V>& global) const {
    const BlockPartition partition(static_cast<std::int64_t>(global.size()), comm().size());
    const auto first = global.begin() + partition.begin(comm().rank());
    return local_.upload(amgsolve::Vector<V>(first, first + partition.count(comm().rank())));
  }
  // The whole vector, on every rank.
  template <class V>
  void download(const Vector<V>& local, amgsolve::Vector<V>& global) const {
    amgsolve::Vector<V> mine;
    local_.download(local, mine);
    comm().allgather(mine, comm().partition_of(static_cast<std::int64_t>(mine.size())), global);
  }
  template <class V>
  std::uint64_t bytes(const Matrix<V>& A) const {
    // the local rows, the sent indices, and the exchange's buffers on the local backend and the host
    return local_.bytes(*A.local) + sizeof(Index) * A.halo.sent_entries() +
           sizeof(V) * (A.extended.size() + A.send.size() + A.halo.ghosts() + A.halo.sent_entries());
  }
  // numerator / a_ii for this rank's rows, computed on the host as the mpi backend does, then placed.
  template <class V>
  Vector<V> smoother_diagonal(const Csr<V>& A, double numerator) const {
    return local_.upload(CpuBackend::scaled_inverse(A.diagonal(), numerator));
  }

  // ---- products: the halo first, then the local kernel on [own | ghosts]

  template <class V>
  void spmv(const Matrix<V>& A, const Vector<V>& x, Vector<V>& y) const {
    local_.spmv(*A.local, with_ghosts(A, x), y);
  }
  template <class V>
  void spmv_add(const Matrix<V>& A, const Vector<V>& x, Vector<V>& y) const {
    local_.spmv_add(*A.local, with_ghosts(A, x), y);
  }
  template <class V>
  void residual(const Matrix<V>& A, const Vector<V>& x, const Vector<V>& b, Vector<V>& r) const {
    local_.residual(*A.local, with_ghosts(A, x), b, r);
  }

  // ---- the smoothers' passes that read a matrix: the local kernels read row i's own x_i from the extended
  // vector's front

  template <class V>
  void jacobi_sweep(const Matrix<V>& A, const Vector<V>& scaled_dinv, const Vector<V>& b, const Vector<V>& x,
                    Vector<V>& x_next) const {
    local_.jacobi_sweep(*A.local, scaled_dinv, b, with_ghosts(A, x), x_next);
  }
  template <class V>
  void chebyshev_step(const Matrix<V>& A, const Vector<V>& dinv, const Vector<V>& b, V a, V c, Vector<V>& d,
                      const Vector<V>& x, Vector<V>& x_next) const {
    local_.chebyshev_step(*A.local, dinv, b, a, c, d, with_ghosts(A, x), x_next);
  }

 private:
  static Local make_local(const Communicator& comm) {
    if constexpr (std::is_constructible_v<Local, int>)
      return Local(comm.rank_on_node());  // a GPU of this node, by the rank's place on it
    else
      return Local();
  }

  // [x | the ghosts A's rows read], or x itself where this rank neither reads nor sends any. Collective
  // over the ranks A's halo names.
  template <class V>
  const Vector<V>& with_ghosts(const Matrix<V>& A, const Vector<V>& x) const {
    if (!A.exchanges()) return x;
    local_.gather(x, A.sent, A.send);
    local_.download(A.send, A.send_host);  // waits for what the local backend queued before
    A.halo.begin_packed(comm(), A.send_host, A.ghost_host, A.requests);
    A.halo.end(comm(), A.requests);
    if (A.halo.ghosts() == 0) return x;  // this rank only sends: its rows read no other rank's entries
    local_.extend(x, A.ghost_host, A.extended);
    return A.extended;
  }

  using RankVectors<Local, MpiOver<Local>>::local_;
};

}  // namespace amgsolve
