// The filtered matrix on the GPU, the device version of amg/filtered_matrix.cpp and tested against it
// (tests/test_gpu_setup.cpp): weak couplings lumped into the diagonal along the near-nullspace vector B
// (Vanek, Mandel & Brezina, Computing 56, 1996, section 3), with the same arithmetic in the same order as
// the CPU, so both give the same bits. One thread per row: count the kept entries, scan, fill.
#include <thrust/count.h>
#include <thrust/execution_policy.h>
#include <thrust/scan.h>

#include <string>

#include "amg/cuda/device_setup.hpp"
#include "amg/cuda/setup.cuh"
#include "amg/gpu_setup.hpp"
#include "amg/strength_scale.hpp"
#include "backend/cuda/device_context.cuh"
#include "backend/cuda/vector_kernels.cuh"
#include "common/cuda/check.cuh"
#include "common/device.hpp"
#include "common/error.hpp"

namespace amgsolve {

namespace {

// Row i's weak entries lumped along B and whether the row leaves them out (amg/filtered_matrix.cpp:
// the same arithmetic in the same order): a row whose lumping would leave less than half of a_ii keeps its
// weak entries, or under IsolatedRows::diagonal_alone, if it has no strong off-diagonal entry, a_ii alone.
// The weak entries are weighted by B_j / B_i on the coarse levels (weights: B^2, null for B = 1).
template <class Value>
struct RowFilter {
  const Offset* row_ptr;
  const Index* col;
  const Value* val;
  const std::uint8_t* keep;
  const Offset* strong_row_ptr;  // the strength graph's: row i's strong off-diagonal entries
  const double* weights;
  bool diagonal_alone;  // IsolatedRows::diagonal_alone
  __device__ Value weak_sum(Index i) const {
    Value sum = 0;
    for (Offset k = row_ptr[i]; k < row_ptr[i + 1]; ++k)
      if (!keep[k])
        sum += weights ? val[k] * static_cast<Value>(__ddiv_rn(__dsqrt_rn(weights[col[k]]), __dsqrt_rn(weights[i])))
                       : val[k];
    return sum;
  }
  __device__ bool lumps(Index i, Value lumped) const {
    Value diagonal = 0;
    for (Offset k = row_ptr[i]; k < row_ptr[i + 1]; ++k)
      if (col[k] == i) diagonal = val[k];
    return diagonal + lumped >= Value(0.5) * diagonal;
  }
  // What row i's diagonal gains (0 where the row does not lump), and whether its weak entries are left out.
  __device__ bool filtered(Index i, Value& lumped) const {
    lumped = weak_sum(i);
    if (lumps(i, lumped)) return true;
    lumped = Value(0);
    return diagonal_alone && strong_row_ptr[i + 1] == strong_row_ptr[i];  // no neighbour in the strength graph
  }
};

template <class Value>
struct CountKept {  // kept[i + 1] = entries of row i in the filtered matrix
  RowFilter<Value> row;
  Offset* kept;
  __device__ void operator()(Index i) const {
    Value lumped;
    const bool filtered = row.filtered(i, lumped);
    Offset count = 0;
    for (Offset k = row.row_ptr[i]; k < row.row_ptr[i + 1]; ++k) count += filtered ? row.keep[k] : 1;
    kept[i + 1] = count;
  }
};

template <class Value>
struct FillFiltered {  // row i of the filtered matrix
  RowFilter<Value> row;
  const Offset* f_row_ptr;
  Index* f_col;
  Value* f_val;
  __device__ void operator()(Index i) const {
    Value lumped;
    const bool filtered = row.filtered(i, lumped);
    Offset out = f_row_ptr[i];
    for (Offset k = row.row_ptr[i]; k < row.row_ptr[i + 1]; ++k) {
      if (filtered && !row.keep[k]) continue;
      f_col[out] = row.col[k];
      f_val[out++] = row.val[k] + (row.col[k] == i ? lumped : Value(0));
    }
  }
};

}  // namespace

template <class Value>
DeviceCsrMatrix<Value> filtered_matrix(const CudaBackend& backend, const DeviceCsrMatrix<Value>& M,
                                       const CudaStrength& strength, const DeviceVector<double>& weights,
                                       IsolatedRows isolated) {
  return rethrow_as_error("the filtered matrix on the GPU", [&] {
    const DeviceCsr<Value>& A = M.arrays();
    const cudaStream_t stream = backend.context().stream();
    DeviceCsr<Value> F;
    F.rows = A.rows;
    F.cols = A.cols;
    F.row_ptr = DeviceArray<Offset>(static_cast<std::size_t>(A.rows) + 1, Offset{0});
    const RowFilter<Value> row{raw_data(A.row_ptr), raw_data(A.col), raw_data(A.val), raw_data(strength.device->keep),
                               raw_data(strength.device->graph.row_ptr), weights.size() == 0 ? nullptr : weights.data(),
                               isolated == IsolatedRows::diagonal_alone};
    device::for_each_row(A.rows, CountKept<Value>{row, raw_data(F.row_ptr)}, stream);
    thrust::inclusive_scan(thrust::cuda::par.on(stream), F.row_ptr.begin() + 1, F.row_ptr.end(), F.row_ptr.begin() + 1);
    Offset nnz = 0;
    AMGSOLVE_CUDA_CHECK(cudaMemcpyAsync(&nnz, raw_data(F.row_ptr) + A.rows, sizeof(Offset), cudaMemcpyDeviceToHost, stream));
    backend.context().synchronize();
    backend.count_to_host(sizeof(Offset));
    F.col = DeviceArray<Index>(static_cast<std::size_t>(nnz));
    F.val = DeviceArray<Value>(static_cast<std::size_t>(nnz));
    device::for_each_row(A.rows,
                         FillFiltered<Value>{row, raw_data(F.row_ptr), raw_data(F.col), raw_data(F.val)},
                         stream);
    return DeviceCsrMatrix<Value>(std::move(F));
  });
}

template DeviceCsrMatrix<double> filtered_matrix(const CudaBackend&, const DeviceCsrMatrix<double>&,
                                                 const CudaStrength&, const DeviceVector<double>&, IsolatedRows);
template DeviceCsrMatrix<float> filtered_matrix(const CudaBackend&, const DeviceCsrMatrix<float>&, const CudaStrength&,
                                                const DeviceVector<double>&, IsolatedRows);

}  // namespace amgsolve
