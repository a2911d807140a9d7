// The cuda backend's coarse solve (backend/cuda/cuda_backend.hpp), its host part: the coarsest matrix has at
// most amg.coarse_size rows (1000 by default), so its inverse is formed densely here, once (Cholesky, in
// double like the host's SparseLdlt), and the device applies it as one dense matrix-vector product per cycle:
// no host round trip, and at n = 1000 the product reads 8 MB, a warp per row (coarse_solve_kernels.cuh). Past
// kMaxDenseCoarseRows the n^3 host work and the n^2 device memory stop paying, and the host's sparse LDL^T is
// applied instead (coarsening that stalls above that size is rare and already slow on the CPU).
#include <Eigen/Cholesky>
#include <Eigen/Dense>

#include <string>

#include "backend/cuda/cuda_backend.hpp"
#include "common/error.hpp"

namespace amgsolve {
namespace {

// The dense inverse of an SPD matrix by Cholesky in double, made exactly symmetric ((M + M^T) / 2, M is
// symmetric up to rounding) so that the device reads its rows contiguously.
template <class V>
Vector<double> dense_inverse(const CsrMatrix<V>& C) {
  const Eigen::Index n = C.rows;
  Eigen::MatrixXd dense = Eigen::MatrixXd::Zero(n, n);
  for (Index i = 0; i < C.rows; ++i)
    for (Offset k = C.row_begin(i); k < C.row_end(i); ++k) dense(i, C.col[k]) = static_cast<double>(C.val[k]);
  const Eigen::LLT<Eigen::MatrixXd> cholesky(dense);
  if (cholesky.info() != Eigen::Success)
    throw NumericalError("the coarsest-level matrix (" + std::to_string(C.rows) +
                         " rows) is not positive definite: the input matrix is not SPD");
  const Eigen::MatrixXd solved = cholesky.solve(Eigen::MatrixXd::Identity(n, n));
  const Eigen::MatrixXd inverse = 0.5 * (solved + solved.transpose());
  return Vector<double>(inverse.data(), inverse.data() + inverse.size());
}

}  // namespace

template <class V>
CudaBackend::CoarseSolve<V>::CoarseSolve(const CudaBackend& backend, const CsrMatrix<V>& coarsest,
                                         std::shared_ptr<const SparseLdlt<V>> factor)
    : backend_(backend), n_(coarsest.rows) {
  if (n_ > kMaxDenseCoarseRows)
    factor_ = std::move(factor);
  else if (n_ > 0)
    inverse_ = backend.upload(dense_inverse(coarsest));
}

template CudaBackend::CoarseSolve<double>::CoarseSolve(const CudaBackend&, const CsrMatrix<double>&,
                                                      std::shared_ptr<const SparseLdlt<double>>);
template CudaBackend::CoarseSolve<float>::CoarseSolve(const CudaBackend&, const CsrMatrix<float>&,
                                                     std::shared_ptr<const SparseLdlt<float>>);

}  // namespace amgsolve
