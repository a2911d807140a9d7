#pragma once
// The ELLPACK-R and pJDS SpMV kernels (M. Kreutzer et al., IPDPSW 2012, ../shared/papers/pjds-kreutzer-2011.txt,
// section II, Listings 1 and 2): one thread per row; thread i reads element j of its row at
// val[j * padded_rows + i] (ELLPACK-R) or val[col_start[j] + i] (pJDS), so a warp's loads are coalesced,
// and stops at its own row's length (the "-R").
//
// Written once as device functions over a view of the matrix, and launched with an epilogue: the kernel
// hands each row's product (A x)_i to epilogue(row, value), which stores it (y = A x), adds it (y += A x)
// or fuses the vector work that follows the product (a residual, a smoothing step, a dot product), so that
// work costs no extra pass over memory. DeviceOperator (backend/cuda/device_operator.cuh) launches them.
//
// pJDS rows are sorted; output_row(i) says which row of the result sorted row i is: the pJDS permutation
// (nullptr: the rows were in order already), so every vector stays in the original order.
#include "backend/cuda/vector_kernels.cuh"

namespace amgsolve::device {

template <class Value>
struct EllpackRView {
  Index rows = 0;
  Index padded_rows = 0;
  const Index* row_length = nullptr;
  const Index* col = nullptr;
  const Value* val = nullptr;

  __device__ Value row_product(Index i, const Value* x) const {
    Value sum = 0;
    const Index length = __ldg(row_length + i);
    for (Index j = 0; j < length; ++j) {
      const std::size_t at = static_cast<std::size_t>(j) * static_cast<std::size_t>(padded_rows) + i;
      sum += __ldg(val + at) * __ldg(x + __ldg(col + at));
    }
    return sum;
  }
  __device__ Index output_row(Index i) const { return i; }
};

template <class Value>
struct PjdsView {
  Index rows = 0;
  const Index* row_length = nullptr;
  const Offset* col_start = nullptr;
  const Index* col = nullptr;
  const Value* val = nullptr;
  const Index* row_permutation = nullptr;  // sorted row -> row of the result; nullptr: the identity

  __device__ Value row_product(Index i, const Value* x) const {
    Value sum = 0;
    const Index length = __ldg(row_length + i);
    for (Index j = 0; j < length; ++j) {
      const Offset at = __ldg(col_start + j) + i;
      sum += __ldg(val + at) * __ldg(x + __ldg(col + at));
    }
    return sum;
  }
  __device__ Index output_row(Index i) const { return row_permutation ? __ldg(row_permutation + i) : i; }
};

// epilogue(row, (A x)[row]) for every row, one thread per row.
template <class View, class Value, class Epilogue>
__global__ void spmv_epilogue_kernel(View A, const Value* x, Epilogue epilogue) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= A.rows) return;
  const Index row = static_cast<Index>(i);
  epilogue(A.output_row(row), A.row_product(row, x));
}

// The same with the epilogue's return values summed: finalize(sum over rows) on the device
// (vector_kernels.cuh). Grid-stride over rows, so the grid and the summation order depend on rows only.
template <class View, class Value, class Epilogue, class Finalize>
__global__ void spmv_sum_kernel(View A, const Value* x, Epilogue epilogue, Finalize finalize, ReductionScratch scratch) {
  double sum = 0.0;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < A.rows; i += stride) {
    const Index row = static_cast<Index>(i);
    sum += epilogue(A.output_row(row), A.row_product(row, x));
  }
  finish_reduction(sum, scratch, finalize);
}

template <class View, class Value, class Epilogue>
void launch_spmv(const View& A, const Value* x, const Epilogue& epilogue, cudaStream_t stream) {
  if (A.rows <= 0) return;
  spmv_epilogue_kernel<<<blocks_for(A.rows), kThreads, 0, stream>>>(A, x, epilogue);
  AMGSOLVE_CUDA_CHECK_LAUNCH();  // waits too under AMGSOLVE_CUDA_SYNC_LAUNCHES
}

template <class View, class Value, class Epilogue, class Finalize>
void launch_spmv_sum(const View& A, const Value* x, const Epilogue& epilogue, const Finalize& finalize,
                     ReductionScratch scratch, cudaStream_t stream) {
  spmv_sum_kernel<<<reduction_blocks(A.rows), kThreads, 0, stream>>>(A, x, epilogue, finalize, scratch);
  AMGSOLVE_CUDA_CHECK_LAUNCH();  // waits too under AMGSOLVE_CUDA_SYNC_LAUNCHES
}

// ---- the basic epilogues

template <class Value>
struct StoreProduct {  // y = A x
  Value* y;
  __device__ void operator()(Index row, Value ax) const { y[row] = ax; }
};

template <class Value>
struct AddProduct {  // y += A x
  Value* y;
  __device__ void operator()(Index row, Value ax) const { y[row] += ax; }
};

}  // namespace amgsolve::device
