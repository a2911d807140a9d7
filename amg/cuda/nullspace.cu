// The zero-row-sum test of amg.nullspace: auto (amg/nullspace.hpp) on the cuda backend: one max-reduction
// over the rows of |sum_j a_ij| / sum_j |a_ij|, each row summed in double in the CPU's order, the largest
// taken exactly (ties to the lower row), so the result is the CPU's.
#include <thrust/execution_policy.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/transform_reduce.h>
#include <thrust/tuple.h>

#include <cmath>

#include "amg/cuda/device_setup.hpp"
#include "backend/cuda/device_context.cuh"
#include "common/error.hpp"
#include "common/unit_scale.hpp"
#include "sparse/cuda/device_csr.cuh"

namespace amgsolve {
namespace {

using RowAndSum = thrust::tuple<double, Index>;  // (relative row sum, row)

template <class Value>
struct RelativeRowSum {
  const Offset* row_ptr;
  const Value* val;
  __device__ RowAndSum operator()(Index i) const {
    // Summed on the scale of the row's largest entry, as on the CPU (amg/nullspace.cpp): entries beyond 1e307
    // would overflow the sums to inf, and every row would look singular.
    double largest_entry = 0.0;
    for (Offset k = row_ptr[i]; k < row_ptr[i + 1]; ++k)
      largest_entry = fmax(largest_entry, fabs(static_cast<double>(val[k])));
    const double scale = unit_scale(largest_entry);
    double sum = 0.0, magnitude = 0.0;
    for (Offset k = row_ptr[i]; k < row_ptr[i + 1]; ++k) {
      sum += scale * static_cast<double>(val[k]);
      magnitude += scale * fabs(static_cast<double>(val[k]));
    }
    return {magnitude > 0 ? fabs(sum) / magnitude : 0.0, i};
  }
};

// The CPU's scan keeps row 0 and then takes a row only when its sum is larger: a NaN at row 0 is kept, a NaN
// after it never taken. As an order, so that the reduction's tree cannot change the result: a NaN at row 0
// above every number, numbers by value (ties to the lower row), a NaN elsewhere below every number.
struct Larger {
  __device__ static int rank(const RowAndSum& r) {
    return isnan(thrust::get<0>(r)) ? (thrust::get<1>(r) == 0 ? 2 : 0) : 1;
  }
  __device__ RowAndSum operator()(const RowAndSum& a, const RowAndSum& b) const {
    const int rank_a = rank(a), rank_b = rank(b);
    if (rank_a != rank_b) return rank_a > rank_b ? a : b;
    const double x = thrust::get<0>(a), y = thrust::get<0>(b);
    if (rank_a == 1 && x != y) return x > y ? a : b;
    return thrust::get<1>(a) < thrust::get<1>(b) ? a : b;
  }
};

}  // namespace

template <class Value>
RowSum largest_relative_row_sum(const CudaBackend& backend, const DeviceCsrMatrix<Value>& M) {
  const DeviceCsr<Value>& A = M.arrays();
  if (A.rows == 0) return {};
  const RowAndSum largest = rethrow_as_error("the row sums on the GPU", [&] {
    return thrust::transform_reduce(thrust::cuda::par.on(backend.context().stream()),
                                    thrust::counting_iterator<Index>(0), thrust::counting_iterator<Index>(A.rows),
                                    RelativeRowSum<Value>{raw_data(A.row_ptr), raw_data(A.val)},
                                    RowAndSum{-1.0, Index{-1}}, Larger{});
  });
  backend.count_to_host(sizeof(RowAndSum));
  return {thrust::get<1>(largest), thrust::get<0>(largest)};
}

template RowSum largest_relative_row_sum(const CudaBackend&, const DeviceCsrMatrix<double>&);
template RowSum largest_relative_row_sum(const CudaBackend&, const DeviceCsrMatrix<float>&);

NullspaceChoice resolve_nullspace(const CudaBackend& backend, const DeviceCsrMatrix<double>& A, NullspaceChoice choice) {
  if (choice == NullspaceChoice::none || A.rows == 0) return NullspaceChoice::none;  // as on the host
  // The graph's parts are counted on the host, and only for a matrix whose rows sum to zero.
  return resolve_nullspace(largest_relative_row_sum(backend, A),
                           [&] { return connected_components(*backend.host_view(A)); }, choice);
}

}  // namespace amgsolve
