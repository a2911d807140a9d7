// Tentative prolongator on the GPU, the device version of amg/tentative_prolongation.cpp and tested against
// it (tests/test_gpu_setup.cpp): Vanek, Mandel & Brezina, Computing 56, 1996, section 3, for the constant
// near-nullspace: T_ij = 1 / sqrt(|aggregate j|) for node i in aggregate j, one entry per aggregated row.
//   1. aggregate sizes by integer atomics (exact, so independent of the order they land in);
//   2. row offsets: an inclusive scan of 1 per aggregated node, 0 per node left out;
//   3. entries: col = aggregate id, val = 1 / sqrt(size) with correctly rounded double division and square
//      root (__ddiv_rn, __dsqrt_rn; IEEE, like std::sqrt and / on the CPU), then converted to Value, so the
//      values equal the CPU's bit for bit.
#include <thrust/execution_policy.h>
#include <thrust/scan.h>

#include <string>

#include "amg/cuda/device_setup.hpp"
#include "amg/cuda/setup.cuh"
#include "amg/gpu_setup.hpp"
#include "common/cuda/check.cuh"
#include "common/device.hpp"
#include "common/error.hpp"

namespace amgsolve {
namespace {

// size[a] = members of aggregate a; row_ptr[i + 1] = 1 if node i is aggregated, else 0.
__global__ void count_members_kernel(Index nodes, const Index* __restrict__ id, Index* __restrict__ size,
                                     Offset* __restrict__ row_ptr) {
  const std::int64_t node = setup_thread_node();
  if (node >= nodes) return;
  const Index a = id[node];
  row_ptr[node + 1] = a != kNotAggregated ? 1 : 0;
  if (a != kNotAggregated) atomicAdd(size + a, 1);
}

template <class Value>
__global__ void fill_kernel(Index nodes, const Index* __restrict__ id, const Index* __restrict__ size,
                            const Offset* __restrict__ row_ptr, Index* __restrict__ col, Value* __restrict__ val) {
  const std::int64_t node = setup_thread_node();
  if (node >= nodes) return;
  const Index a = id[node];
  if (a == kNotAggregated) return;
  const Offset at = row_ptr[node];
  col[at] = a;
  val[at] = static_cast<Value>(__ddiv_rn(1.0, __dsqrt_rn(static_cast<double>(size[a]))));
}

}  // namespace

template <class Value>
DeviceCsr<Value> device_tentative_prolongation(const DeviceAggregates& aggregates) {
  const Index n = static_cast<Index>(aggregates.id.size());
  DeviceCsr<Value> T;
  T.rows = n;
  T.cols = aggregates.count;
  T.row_ptr.resize(static_cast<std::size_t>(n) + 1);
  AMGSOLVE_CUDA_CHECK(cudaMemset(raw_data(T.row_ptr), 0, sizeof(Offset)));  // row_ptr[0] = 0
  if (n == 0) return T;

  DeviceArray<Index> size(static_cast<std::size_t>(aggregates.count));
  if (aggregates.count > 0)
    AMGSOLVE_CUDA_CHECK(cudaMemset(raw_data(size), 0, size.size() * sizeof(Index)));
  count_members_kernel<<<setup_blocks(n), kSetupBlock>>>(n, raw_data(aggregates.id), raw_data(size),
                                                         raw_data(T.row_ptr));
  AMGSOLVE_CUDA_CHECK_LAUNCH();
  thrust::inclusive_scan(thrust::device, T.row_ptr.begin() + 1, T.row_ptr.end(), T.row_ptr.begin() + 1);
  Offset nnz = 0;
  AMGSOLVE_CUDA_CHECK(cudaMemcpy(&nnz, raw_data(T.row_ptr) + n, sizeof(Offset), cudaMemcpyDeviceToHost));
  T.col.resize(static_cast<std::size_t>(nnz));
  T.val.resize(static_cast<std::size_t>(nnz));
  fill_kernel<Value><<<setup_blocks(n), kSetupBlock>>>(n, raw_data(aggregates.id), raw_data(size),
                                                       raw_data(T.row_ptr), raw_data(T.col), raw_data(T.val));
  AMGSOLVE_CUDA_CHECK_LAUNCH();
  return T;
}

template DeviceCsr<double> device_tentative_prolongation(const DeviceAggregates&);
template DeviceCsr<float> device_tentative_prolongation(const DeviceAggregates&);

// ---- host entry point (amg/gpu_setup.hpp)

template <class Value>
CsrMatrix<Value> gpu_tentative_prolongation(const Aggregates& aggregates) {
  const std::string what = "tentative prolongation on the GPU";
  require_gpu(what);
  // An id out of range would make the kernels write out of bounds (and spoil the CUDA context).
  bool valid = aggregates.count >= 0;
  for (std::size_t i = 0; valid && i < aggregates.id.size(); ++i)
    valid = aggregates.id[i] == kNotAggregated || (aggregates.id[i] >= 0 && aggregates.id[i] < aggregates.count);
  if (!valid) throw InputError(what + ": aggregate ids must lie in [0, count) or be kNotAggregated");
  return rethrow_as_error(what, [&] {
    DeviceAggregates d;
    d.count = aggregates.count;
    d.id = upload(aggregates.id);  // the roots are not needed
    return to_host(device_tentative_prolongation<Value>(d));
  });
}

template CsrMatrix<double> gpu_tentative_prolongation(const Aggregates&);
template CsrMatrix<float> gpu_tentative_prolongation(const Aggregates&);

// ---- the cuda backend's step (amg/cuda/device_setup.hpp)

template <class Value>
DeviceCsrMatrix<Value> tentative_prolongation(const CudaBackend&, const CudaAggregates& aggregates) {
  return rethrow_as_error("tentative prolongation on the GPU", [&] {
    return DeviceCsrMatrix<Value>(device_tentative_prolongation<Value>(*aggregates.device));
  });
}

template DeviceCsrMatrix<double> tentative_prolongation(const CudaBackend&, const CudaAggregates&);
template DeviceCsrMatrix<float> tentative_prolongation(const CudaBackend&, const CudaAggregates&);

}  // namespace amgsolve
