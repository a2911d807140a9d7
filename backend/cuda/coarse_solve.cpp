// The cuda backend's coarse solve (backend/cuda/cuda_backend.hpp), its host part: the coarsest matrix has at
// most amg.coarse_size rows (1000 by default), so its inverse (its pseudo-inverse, for a singular matrix) is
// formed densely here, once (sparse/sparse_ldlt.hpp: dense_inverse, Cholesky in double like the host's
// SparseLdlt), and the device applies it as one dense matrix-vector product per cycle: no host round trip,
// and at n = 1000 the product reads 8 MB, a warp per row (coarse_solve_kernels.cuh). Past
// kMaxDenseCoarseRows the n^3 host work and the n^2 device memory stop paying, and the host's sparse LDL^T is
// applied instead (coarsening that stalls above that size is rare and already slow on the CPU).
#include "backend/cuda/cuda_backend.hpp"

namespace amgsolve {

template <class V>
CudaBackend::CoarseSolve<V>::CoarseSolve(const CudaBackend& backend, const CsrMatrix<V>& coarsest,
                                         std::shared_ptr<const SparseLdlt<V>> factor,
                                         const amgsolve::Vector<double>& nullspace)
    : backend_(backend), n_(coarsest.rows) {
  if (n_ > kMaxDenseCoarseRows)
    factor_ = std::move(factor);
  else if (n_ > 0)
    inverse_ = backend.upload(dense_inverse(coarsest, nullspace));
}

template CudaBackend::CoarseSolve<double>::CoarseSolve(const CudaBackend&, const CsrMatrix<double>&,
                                                      std::shared_ptr<const SparseLdlt<double>>,
                                                      const amgsolve::Vector<double>&);
template CudaBackend::CoarseSolve<float>::CoarseSolve(const CudaBackend&, const CsrMatrix<float>&,
                                                     std::shared_ptr<const SparseLdlt<float>>,
                                                     const amgsolve::Vector<double>&);

}  // namespace amgsolve
