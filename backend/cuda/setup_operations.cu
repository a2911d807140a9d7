// The cuda backend's sparse operations for the setup (backend/cuda/cuda_backend.hpp): device CSR matrices in
// and out, copies to and from the host only where the caller asks for the host (csr, host_view) or for a
// result of a few numbers (a diagonal check, the format costs), each counted in transfers().
#include <thrust/binary_search.h>
#include <thrust/copy.h>
#include <thrust/equal.h>
#include <thrust/execution_policy.h>
#include <thrust/extrema.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/zip_iterator.h>
#include <thrust/sort.h>
#include <thrust/transform.h>
#include <thrust/transform_reduce.h>

#include <climits>

#include "backend/cuda/cuda_backend.hpp"
#include "backend/cuda/device_context.cuh"
#include "backend/cuda/device_operator.cuh"
#include "backend/cuda/format_conversion.cuh"
#include "sparse/cuda/device_csr.cuh"
#include "sparse/spmv_format.hpp"
#include "spgemm/cuda/gpu_backend.cuh"

namespace amgsolve {
namespace device {
namespace {

template <class Value>
struct FirstNonPositiveDiagonal {  // the smallest row whose a_ii is not > 0, by atomicMin
  const Offset* row_ptr;
  const Index* col;
  const Value* val;
  int* first;
  __device__ void operator()(Index i) const {
    if (!(diagonal_entry(row_ptr, col, val, i) > Value(0))) atomicMin(first, i);
  }
};

template <class Value>
struct StoreDiagonal {  // one thread: a_ii of `row` into the result slot
  const Offset* row_ptr;
  const Index* col;
  const Value* val;
  Index row;
  double* slot;
  __device__ void operator()(Index) const { *slot = static_cast<double>(diagonal_entry(row_ptr, col, val, row)); }
};

template <class Value>
struct ScaledInverseDiagonal {  // out[i] = numerator / a_ii, in double, rounded to Value
  const Offset* row_ptr;
  const Index* col;
  const Value* val;
  double numerator;
  Value* out;
  __device__ void operator()(Index i) const {
    out[i] = static_cast<Value>(numerator / static_cast<double>(diagonal_entry(row_ptr, col, val, i)));
  }
};

struct ExpandRows {  // row[k] = i for every entry k of row i
  const Offset* row_ptr;
  Index* row;
  __device__ void operator()(Index i) const {
    for (Offset k = row_ptr[i]; k < row_ptr[i + 1]; ++k) row[k] = i;
  }
};

template <class To, class From>
struct CastValue {
  __device__ To operator()(From v) const { return static_cast<To>(v); }
};

struct GroupMaximum {  // the longest of rows [g * group, (g + 1) * group)
  const Index* length;
  Index rows, group;
  __device__ std::uint64_t operator()(Index g) const {
    Index most = 0;
    const Index first = g * group;
    const auto last = static_cast<Index>(min(static_cast<std::int64_t>(first) + group, static_cast<std::int64_t>(rows)));
    for (Index i = first; i < last; ++i) most = max(most, length[i]);
    return static_cast<std::uint64_t>(most);
  }
};

// Sum over the aligned groups of `group` rows of their longest row.
std::uint64_t sum_of_group_maxima(const DeviceArray<Index>& length, Index rows, Index group, cudaStream_t stream) {
  const auto groups = static_cast<Index>((static_cast<std::int64_t>(rows) + group - 1) / group);
  return thrust::transform_reduce(thrust::cuda::par.on(stream), thrust::counting_iterator<Index>(0),
                                  thrust::counting_iterator<Index>(groups), GroupMaximum{raw_data(length), rows, group},
                                  std::uint64_t{0}, thrust::plus<std::uint64_t>());
}

}  // namespace
}  // namespace device

using namespace device;

// ---- moving data

template <class V>
std::shared_ptr<const DeviceCsrMatrix<V>> CudaBackend::csr(std::shared_ptr<const CsrMatrix<V>> host) const {
  count_to_device(host->bytes());
  return rethrow_as_error("copying a matrix to the GPU",
                          [&] { return std::make_shared<const DeviceCsrMatrix<V>>(to_device(*host)); });
}

template <class V>
std::shared_ptr<const CsrMatrix<V>> CudaBackend::host_view(const DeviceCsrMatrix<V>& M) const {
  count_to_host(M.bytes());
  return rethrow_as_error("copying a matrix from the GPU",
                          [&] { return std::make_shared<const CsrMatrix<V>>(to_host(M.arrays())); });
}

template <class V>
std::shared_ptr<const DeviceMatrix<V>> CudaBackend::matrix(std::shared_ptr<const DeviceCsrMatrix<V>> M,
                                                           SpmvFormat format) const {
  return std::make_shared<const DeviceMatrix<V>>(*this, *M, format);
}

template <class To, class From>
std::shared_ptr<const DeviceCsrMatrix<To>> CudaBackend::cast(const DeviceCsrMatrix<From>& M) const {
  return rethrow_as_error("converting a matrix on the GPU", [&] {
    const DeviceCsr<From>& from = M.arrays();
    DeviceCsr<To> to;
    to.rows = from.rows;
    to.cols = from.cols;
    to.row_ptr = from.row_ptr;
    to.col = from.col;
    to.val = DeviceArray<To>(from.val.size());
    thrust::transform(thrust::cuda::par.on(context_->stream()), from.val.begin(), from.val.end(), to.val.begin(),
                      CastValue<To, From>{});
    return std::make_shared<const DeviceCsrMatrix<To>>(std::move(to));
  });
}

// ---- the setup's sparse operations

template <class V>
DeviceCsrMatrix<V> CudaBackend::multiply(const SpgemmBackend& spgemm, const DeviceCsrMatrix<V>& A,
                                         const DeviceCsrMatrix<V>& B, SpgemmStats* stats) const {
  const auto* on_device = dynamic_cast<const DeviceSpgemm*>(&spgemm);
  if (!on_device) throw InputError("SpGEMM backend '" + spgemm.name() + "' cannot multiply matrices on the GPU");
  SpgemmStats local;
  // The SpGEMM backends run on the legacy default stream, which the blocking context stream is ordered
  // with; the synchronisation makes what this one queued done before a backend reads it, whatever its stream.
  context_->synchronize();
  DeviceCsrMatrix<V> C(on_device->multiply_on_device(A.arrays(), B.arrays(), stats ? *stats : local));
  // Every backend reads at least C's size back to allocate it; their other small reads (bin counts, scan
  // totals) are not counted, so setup.transfers' messages are a lower bound.
  count_to_host(sizeof(Offset));
  return C;
}

template <class V>
DeviceCsrMatrix<V> CudaBackend::transpose(const DeviceCsrMatrix<V>& M) const {
  return rethrow_as_error("transposing a matrix on the GPU", [&] {
    const DeviceCsr<V>& A = M.arrays();
    const cudaStream_t stream = context_->stream();
    const auto policy = thrust::cuda::par.on(stream);
    // Every entry as (column, row, value); sorted stably by column, the rows of each column stay in order,
    // so the transpose's rows come out sorted.
    DeviceArray<Index> row(A.col.size()), col = A.col;
    DeviceArray<V> val = A.val;
    for_each_row(A.rows, ExpandRows{raw_data(A.row_ptr), raw_data(row)}, stream);
    thrust::stable_sort_by_key(policy, col.begin(), col.end(),
                               thrust::make_zip_iterator(thrust::make_tuple(row.begin(), val.begin())));
    DeviceCsr<V> T;
    T.rows = A.cols;
    T.cols = A.rows;
    T.row_ptr = DeviceArray<Offset>(static_cast<std::size_t>(A.cols) + 1);
    thrust::lower_bound(policy, col.begin(), col.end(), thrust::counting_iterator<std::int64_t>(0),
                        thrust::counting_iterator<std::int64_t>(std::int64_t{A.cols} + 1), T.row_ptr.begin());
    T.col = std::move(row);
    T.val = std::move(val);
    return DeviceCsrMatrix<V>(std::move(T));
  });
}

template <class V>
void CudaBackend::require_positive_diagonal(const DeviceCsrMatrix<V>& M, int level) const {
  const DeviceCsr<V>& A = M.arrays();
  const cudaStream_t stream = context_->stream();
  DeviceArray<int> first(1, INT_MAX);
  for_each_row(A.rows, FirstNonPositiveDiagonal<V>{raw_data(A.row_ptr), raw_data(A.col), raw_data(A.val), raw_data(first)},
               stream);
  int row = INT_MAX;
  AMGSOLVE_CUDA_CHECK(cudaMemcpyAsync(&row, raw_data(first), sizeof(int), cudaMemcpyDeviceToHost, stream));
  context_->synchronize();
  count_to_host(sizeof(int));
  if (row == INT_MAX) return;
  for_each_row(1, StoreDiagonal<V>{raw_data(A.row_ptr), raw_data(A.col), raw_data(A.val), row, device_result_}, stream);
  throw NumericalError("AMG level " + std::to_string(level) + ": diagonal entry " + std::to_string(row + 1) + " is " +
                       format_number(read_result()) + ", so the input matrix is not positive definite");
}

template <class V>
bool CudaBackend::same_pattern(const DeviceCsrMatrix<V>& M, const DeviceCsrMatrix<V>& N) const {
  const DeviceCsr<V>& A = M.arrays();
  const DeviceCsr<V>& B = N.arrays();
  if (A.rows != B.rows || A.cols != B.cols || A.nnz() != B.nnz() || A.row_ptr.size() != B.row_ptr.size()) return false;
  return rethrow_as_error("comparing two patterns on the GPU", [&] {
    const auto policy = thrust::cuda::par.on(context_->stream());
    count_to_host(sizeof(bool));
    if (!thrust::equal(policy, A.row_ptr.begin(), A.row_ptr.end(), B.row_ptr.begin())) return false;
    count_to_host(sizeof(bool));
    return thrust::equal(policy, A.col.begin(), A.col.end(), B.col.begin());
  });
}

template <class V>
DeviceVector<V> CudaBackend::smoother_diagonal(const DeviceCsrMatrix<V>& M, double numerator) const {
  const DeviceCsr<V>& A = M.arrays();
  DeviceVector<V> out(static_cast<std::size_t>(A.rows));
  for_each_row(A.rows,
               ScaledInverseDiagonal<V>{raw_data(A.row_ptr), raw_data(A.col), raw_data(A.val), numerator, out.data()},
               context_->stream());
  return out;
}

template <class V>
std::vector<FormatCost> CudaBackend::format_costs(const DeviceCsrMatrix<V>& M) const {
  return rethrow_as_error("the SpMV formats' model on the GPU", [&] {
    const DeviceCsr<V>& A = M.arrays();
    const cudaStream_t stream = context_->stream();
    DeviceArray<Index> length = row_lengths(raw_data(A.row_ptr), A.rows, A.rows, stream);
    RowLengthProfile profile;
    profile.rows = A.rows;
    profile.cols = A.cols;
    profile.nnz = A.nnz();
    for (int g = 0; g < 3; ++g) profile.group_max_sum[g] = sum_of_group_maxima(length, A.rows, kProfileGroups[g], stream);
    thrust::sort(thrust::cuda::par.on(stream), length.begin(), length.end(), thrust::greater<Index>());
    for (int g = 0; g < 3; ++g)
      profile.sorted_group_max_sum[g] = sum_of_group_maxima(length, A.rows, kProfileGroups[g], stream);
    if (A.rows > 0)
      AMGSOLVE_CUDA_CHECK(cudaMemcpyAsync(&profile.width, raw_data(length), sizeof(Index), cudaMemcpyDeviceToHost, stream));
    context_->synchronize();
    // Six reductions (each a read of its total) and the width.
    for (int read = 0; read < 7; ++read) count_to_host(sizeof(Offset));
    return spmv_format_costs(profile, sizeof(V));
  });
}

#define AMGSOLVE_CUDA_SETUP_INSTANTIATE(V)                                                                           \
  template std::shared_ptr<const DeviceCsrMatrix<V>> CudaBackend::csr(std::shared_ptr<const CsrMatrix<V>>) const;    \
  template std::shared_ptr<const CsrMatrix<V>> CudaBackend::host_view(const DeviceCsrMatrix<V>&) const;              \
  template std::shared_ptr<const DeviceMatrix<V>> CudaBackend::matrix(std::shared_ptr<const DeviceCsrMatrix<V>>,     \
                                                                      SpmvFormat) const;                             \
  template DeviceCsrMatrix<V> CudaBackend::multiply(const SpgemmBackend&, const DeviceCsrMatrix<V>&,                 \
                                                    const DeviceCsrMatrix<V>&, SpgemmStats*) const;                  \
  template DeviceCsrMatrix<V> CudaBackend::transpose(const DeviceCsrMatrix<V>&) const;                               \
  template void CudaBackend::require_positive_diagonal(const DeviceCsrMatrix<V>&, int) const;                        \
  template bool CudaBackend::same_pattern(const DeviceCsrMatrix<V>&, const DeviceCsrMatrix<V>&) const;              \
  template DeviceVector<V> CudaBackend::smoother_diagonal(const DeviceCsrMatrix<V>&, double) const;                  \
  template std::vector<FormatCost> CudaBackend::format_costs(const DeviceCsrMatrix<V>&) const;
AMGSOLVE_CUDA_SETUP_INSTANTIATE(double)
AMGSOLVE_CUDA_SETUP_INSTANTIATE(float)
#undef AMGSOLVE_CUDA_SETUP_INSTANTIATE

template std::shared_ptr<const DeviceCsrMatrix<float>> CudaBackend::cast(const DeviceCsrMatrix<double>&) const;
template std::shared_ptr<const DeviceCsrMatrix<double>> CudaBackend::cast(const DeviceCsrMatrix<float>&) const;

}  // namespace amgsolve
