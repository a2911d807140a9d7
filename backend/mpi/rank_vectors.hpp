#pragma once
// What both layers over MPI ranks (backend/mpi/mpi_backend.hpp, backend/mpi/mpi_over.hpp) do alike with
// vectors: each rank holds its block of entries (distributed/partition.hpp) on its local backend, element-wise
// operations stay local, and every reduction is the exact sum over the ranks of the local backend's sums of
// the fixed reduction blocks (common/exact_sum.hpp), so it equals the single-process one for any rank count.
// A local backend provides, beyond the Backend concept, dot_partial, sum_partial, cg_update_partial (those
// exact block sums) and subtract. Layer is the layer itself (its spmv, for spmv_dot).
#include <cmath>
#include <cstdint>
#include <memory>
#include <utility>

#include "distributed/communicator.hpp"
#include "sparse/sparse_ldlt.hpp"

namespace amgsolve {

// The coarsest level solved on every rank, on the host, from the right-hand side gathered from the ranks'
// blocks (the level is small: at most amg.coarse_size rows, or a level gathered early), each rank keeping
// its block of the solution. Both layers' CoarseSolve: the mpi backend's holds its vectors on the host
// already, MpiOver moves them from and to its local backend around this.
template <class V>
class GatheredCoarseSolve {
 public:
  GatheredCoarseSolve(const Communicator& comm, std::shared_ptr<const SparseLdlt<V>> factor)
      : comm_(comm), factor_(std::move(factor)) {}
  // b: this rank's entries of the right-hand side; x: its entries of the solution. Collective.
  void solve(const Vector<V>& b, Vector<V>& x) const {
    if (partition_.ranks() == 0) partition_ = comm_.partition_of(static_cast<std::int64_t>(b.size()));
    comm_.allgather(b, partition_, b_global_);
    factor_->solve(b_global_, x_global_);
    const auto first = x_global_.begin() + partition_.begin(comm_.rank());
    x.assign(first, first + partition_.count(comm_.rank()));
  }
  std::uint64_t bytes() const { return sizeof(V) * (b_global_.capacity() + x_global_.capacity()); }

 private:
  const Communicator& comm_;          // the layer's, which outlives the hierarchy's solves
  mutable BlockPartition partition_;  // the level's, from the ranks' counts at the first solve (collective)
  std::shared_ptr<const SparseLdlt<V>> factor_;
  mutable Vector<V> b_global_, x_global_;
};

template <class Local, class Layer>
class RankVectors {
 public:
  template <class V>
  using Vector = typename Local::template Vector<V>;  // this rank's entries

  const Communicator& comm() const { return *communicator_; }
  const Local& local() const { return local_; }

  template <class V>
  void resize(Vector<V>& v, Index n) const { local_.resize(v, n); }
  template <class V>
  void zero(Vector<V>& v, Index n) const { local_.zero(v, n); }
  template <class V>
  void copy(const Vector<V>& from, Vector<V>& to) const { local_.copy(from, to); }
  template <class To, class From>
  void convert(const Vector<From>& from, Vector<To>& to) const { local_.convert(from, to); }
  template <class V>
  void add(const Vector<V>& y, Vector<V>& x) const { local_.add(y, x); }
  template <class V>
  void xpby(const Vector<V>& z, V beta, Vector<V>& p) const { local_.xpby(z, beta, p); }

  // A vector of this rank's entries (its rows of the level, the caller's own block) onto the local backend,
  // and back: no rank sees another's (the whole-vector upload and download are each layer's own).
  template <class V>
  Vector<V> upload_rows(const amgsolve::Vector<V>& mine) const { return local_.upload(mine); }
  template <class V>
  void download_rows(const Vector<V>& local, amgsolve::Vector<V>& mine) const { local_.download(local, mine); }

  template <class V>
  double dot(const Vector<V>& a, const Vector<V>& b) const { return communicator_->sum(local_.dot_partial(a, b)); }
  template <class V>
  double norm2(const Vector<V>& v) const { return std::sqrt(dot(v, v)); }
  template <class V>
  double sum(const Vector<V>& v) const { return communicator_->sum(local_.sum_partial(v)); }
  template <class V>
  void remove_mean(Vector<V>& v) const {
    const std::int64_t n = communicator_->sum(static_cast<std::int64_t>(v.size()));
    const double total = sum(v);
    if (n > 0) local_.subtract(static_cast<V>(total / static_cast<double>(n)), v);
  }
  // x += alpha p, r -= alpha q; returns r^T r.
  template <class V>
  double cg_update(V alpha, const Vector<V>& p, const Vector<V>& q, Vector<V>& x, Vector<V>& r) const {
    return communicator_->sum(local_.cg_update_partial(alpha, p, q, x, r));
  }

  // q = A p; returns p^T q: the product, then the dot product over the global blocks (a fused pass would sum
  // by the rank's rows instead).
  template <class Matrix, class V>
  double spmv_dot(const Matrix& A, const Vector<V>& p, Vector<V>& q) const {
    static_cast<const Layer&>(*this).spmv(A, p, q);
    return dot(p, q);
  }

  // The smoothers' passes that read no matrix.
  template <class V>
  void jacobi_from_zero(const Vector<V>& scaled_dinv, const Vector<V>& b, Vector<V>& x) const {
    local_.jacobi_from_zero(scaled_dinv, b, x);
  }
  template <class V>
  void chebyshev_from_zero(const Vector<V>& dinv, const Vector<V>& b, V inv_theta, Vector<V>& d, Vector<V>& x) const {
    local_.chebyshev_from_zero(dinv, b, inv_theta, d, x);
  }

 protected:
  // make_local(): the local backend, made in place (a GPU's backend can be neither copied nor moved).
  template <class MakeLocal>
  explicit RankVectors(MakeLocal&& make_local) : local_(make_local()) {}
  RankVectors() = default;
  // The layer's communicator, which outlives it (set once, by the layer's constructor).
  void use(const Communicator& comm) { communicator_ = &comm; }

  Local local_;

 private:
  const Communicator* communicator_ = nullptr;
};

}  // namespace amgsolve
