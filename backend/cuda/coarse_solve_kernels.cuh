#pragma once
// The coarsest level's direct solve on the device: x = A_c^-1 b with the dense inverse formed on the host
// (backend/cuda/coarse_solve.cpp says when that pays), one dense matrix-vector product per V-cycle,
// accumulated in double whatever the cycle's type, like the host's SparseLdlt. A small kernel of its own
// rather than cuBLAS's dgemv: linking cuBLAS maps some 150 MB of libraries into every run of a CUDA build,
// GPU or not, for one product of at most 2048 x 2048 per cycle.
#include "backend/cuda/vector_kernels.cuh"

namespace amgsolve::device {

// x = M b for the dense n x n inverse M, stored symmetric (so its rows are contiguous): one warp per row,
// the lanes reading consecutive entries, the partial sums combined by shuffles in a fixed order (the same
// result every run). A thread per row would leave most SMs idle at n <= 2048 and wait on n dependent loads.
template <class V>
__global__ void dense_product_kernel(const double* M, const V* b, V* x, Index n) {
  const std::int64_t row = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const unsigned lane = threadIdx.x % 32;
  if (row >= n) return;  // whole warps leave together: blockDim.x is a multiple of 32
  const double* m = M + row * n;
  double sum = 0.0;
  for (Index j = static_cast<Index>(lane); j < n; j += 32) sum += m[j] * static_cast<double>(b[j]);
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
  if (lane == 0) x[row] = static_cast<V>(sum);
}

template <class V>
void dense_product(const double* M, const V* b, V* x, Index n, cudaStream_t stream) {
  if (n <= 0) return;
  const std::int64_t threads = std::int64_t{n} * 32;
  dense_product_kernel<<<static_cast<unsigned>((threads + kThreads - 1) / kThreads), kThreads, 0, stream>>>(M, b, x, n);
  AMGSOLVE_CUDA_CHECK_LAUNCH();  // waits too under AMGSOLVE_CUDA_SYNC_LAUNCHES
}

}  // namespace amgsolve::device
