#pragma once
// Element-wise and reduction kernels of the device solve: a functor applied to every row, and a sum over
// rows finished on the device.
//
// Sums are deterministic, like the CPU's deterministic_sum (common/parallel.hpp): the grid size depends on
// n only (at most kMaxReductionBlocks blocks, grid-stride), each thread adds its rows in order, each block
// adds its threads in a fixed tree, and the last block to finish (the "threadfence reduction" of the CUDA
// programming guide, section "Memory Fence Functions") adds the block sums in block order and hands the
// total to a `finalize` functor, still on the device. So a dot product and what depends on it (alpha, beta,
// the stopping test) wait for the host only when the host reads them, and the same input gives the same bits
// on every run.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "common/cuda/check.cuh"
#include "common/reduction_block.hpp"
#include "sparse/csr.hpp"

namespace amgsolve::device {

inline constexpr int kThreads = 256;             // threads per block (a multiple of the warp size)
inline constexpr int kMaxReductionBlocks = 1024; // enough to fill an H100/H200 (132 SMs x 2048 threads)

// Device memory of the reductions: one partial sum per block and the count of finished blocks (zero
// between reductions: the last block resets it).
struct ReductionScratch {
  double* partials = nullptr;  // kMaxReductionBlocks entries
  unsigned int* finished_blocks = nullptr;
};

inline int blocks_for(std::int64_t n) { return static_cast<int>((n + kThreads - 1) / kThreads); }
inline int reduction_blocks(std::int64_t n) {
  return static_cast<int>(std::clamp<std::int64_t>((n + kThreads - 1) / kThreads, 1, kMaxReductionBlocks));
}

// Sum over the block, in a fixed order; the result is valid in thread 0. Every thread of the block calls it.
__device__ inline double block_sum(double value) {
  __shared__ double warp_sums[kThreads / 32];
  for (int offset = 16; offset > 0; offset /= 2) value += __shfl_down_sync(0xffffffffu, value, offset);
  const int lane = static_cast<int>(threadIdx.x) % 32, warp = static_cast<int>(threadIdx.x) / 32;
  __syncthreads();  // a previous call may still be reading warp_sums
  if (lane == 0) warp_sums[warp] = value;
  __syncthreads();
  if (warp == 0) {
    value = lane < kThreads / 32 ? warp_sums[lane] : 0.0;
    for (int offset = 16; offset > 0; offset /= 2) value += __shfl_down_sync(0xffffffffu, value, offset);
  }
  return value;
}

// Adds this block's `value` to the reduction; the last block calls finalize(total) in one thread.
template <class Finalize>
__device__ void finish_reduction(double value, ReductionScratch scratch, const Finalize& finalize) {
  const double block_total = block_sum(value);
  __shared__ bool last_block;
  if (threadIdx.x == 0) {
    scratch.partials[blockIdx.x] = block_total;
    __threadfence();  // the partial is visible device-wide before the count says so
    last_block = atomicAdd(scratch.finished_blocks, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last_block) return;
  __threadfence();  // the other blocks' partials, published before their counts, are read after ours
  double total = 0.0;
  for (unsigned int b = threadIdx.x; b < gridDim.x; b += blockDim.x) total += __ldcg(scratch.partials + b);
  total = block_sum(total);
  if (threadIdx.x == 0) {
    finalize(total);
    *scratch.finished_blocks = 0;
  }
}

template <class F>
__global__ void for_each_row_kernel(Index n, F f) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) f(static_cast<Index>(i));
}

template <class Term, class Finalize>
__global__ void sum_rows_kernel(Index n, Term term, Finalize finalize, ReductionScratch scratch) {
  double sum = 0.0;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    sum += term(static_cast<Index>(i));
  finish_reduction(sum, scratch, finalize);
}

// The sum of term(i) over each reduction block [b kReductionBlock, (b + 1) kReductionBlock) of [0, n) into
// partials[b]: one CUDA block per reduction block, its threads striding through it in order, then
// block_sum's fixed tree, so a block's sum depends on its entries alone and not on where the block lies.
// What a rank contributes to a distributed reduction (backend/mpi/mpi_over.hpp), the host adding the
// blocks' sums exactly.
template <class Term>
__global__ void block_sums_kernel(Index n, Term term, double* partials) {
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * kReductionBlock;
  const std::int64_t end = first + kReductionBlock < n ? first + kReductionBlock : static_cast<std::int64_t>(n);
  double sum = 0.0;
  for (std::int64_t i = first + threadIdx.x; i < end; i += blockDim.x) sum += term(static_cast<Index>(i));
  sum = block_sum(sum);
  if (threadIdx.x == 0) partials[blockIdx.x] = sum;
}

inline std::int64_t reduction_block_count(std::int64_t n) { return (n + kReductionBlock - 1) / kReductionBlock; }

// partials[b] = the sum of term(i) over reduction block b (reduction_block_count(n) entries); term may also
// write (fused updates).
template <class Term>
void block_sums(Index n, const Term& term, double* partials, cudaStream_t stream) {
  const std::int64_t blocks = reduction_block_count(n);
  if (blocks == 0) return;
  block_sums_kernel<<<static_cast<unsigned int>(blocks), kThreads, 0, stream>>>(n, term, partials);
  AMGSOLVE_CUDA_CHECK_LAUNCH();  // waits too under AMGSOLVE_CUDA_SYNC_LAUNCHES
}

// f(i) for i in [0, n) (f may write anything; rows are independent).
template <class F>
void for_each_row(Index n, const F& f, cudaStream_t stream) {
  if (n <= 0) return;
  for_each_row_kernel<<<blocks_for(n), kThreads, 0, stream>>>(n, f);
  AMGSOLVE_CUDA_CHECK_LAUNCH();  // waits too under AMGSOLVE_CUDA_SYNC_LAUNCHES
}

// finalize(sum over i in [0, n) of term(i)) on the device; term may also write (fused updates). Launched
// even for n = 0, so that finalize always runs.
template <class Term, class Finalize>
void sum_rows(Index n, const Term& term, const Finalize& finalize, ReductionScratch scratch, cudaStream_t stream) {
  sum_rows_kernel<<<reduction_blocks(n), kThreads, 0, stream>>>(n, term, finalize, scratch);
  AMGSOLVE_CUDA_CHECK_LAUNCH();  // waits too under AMGSOLVE_CUDA_SYNC_LAUNCHES
}

// ---- small functors shared by several files

template <class To, class From>
struct ConvertVector {  // to[i] = from[i] (double <-> float)
  To* to;
  const From* from;
  __device__ void operator()(Index i) const { to[i] = static_cast<To>(from[i]); }
};

}  // namespace amgsolve::device
