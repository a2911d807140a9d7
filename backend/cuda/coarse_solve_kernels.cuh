#pragma once
// The coarsest level's direct solve on the device: x = A_c^-1 b with the dense inverse formed on the host
// (backend/cuda/coarse_solve.cpp says when that pays), one dense matrix-vector product per V-cycle,
// accumulated in double whatever the cycle's type, like the host's SparseLdlt. A small kernel of its own
// rather than cuBLAS's dgemv: linking cuBLAS maps some 150 MB of libraries into every run of a CUDA build,
// GPU or not, for one product of at most 2048 x 2048 per cycle.
#include "backend/cuda/vector_kernels.cuh"

namespace amgsolve::device {

// x = M b for the dense n x n inverse M (column-major, symmetric), in double: thread i computes row i as
// sum_j M[j n + i] b[j], so at every j a warp reads consecutive addresses.
template <class V>
struct DenseProduct {
  const double* M;
  const V* b;
  V* x;
  Index n;
  __device__ void operator()(Index i) const {
    double sum = 0.0;
    for (Index j = 0; j < n; ++j) sum += M[static_cast<std::size_t>(j) * n + i] * static_cast<double>(b[j]);
    x[i] = static_cast<V>(sum);
  }
};

}  // namespace amgsolve::device
