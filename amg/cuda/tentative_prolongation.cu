// Tentative prolongator on the GPU, the device version of amg/tentative_prolongation.cpp and tested against
// it (tests/test_gpu_setup.cpp): Vanek, Mandel & Brezina, Computing 56, 1996, section 3, with the
// near-nullspace carried as the weights w = B^2 (1 on the finest level): T_ij = sqrt(w_i) / sqrt(w^c_j) for
// node i in aggregate j, one entry per aggregated row, w^c_j the sum of the w_i of aggregate j.
//   1. coarse weights by double atomics: the weights are integers (finest points per node) far below 2^53,
//      so every sum is exact and independent of the order the additions land in;
//   2. row offsets: an inclusive scan of 1 per aggregated node, 0 per node left out;
//   3. entries: col = aggregate id, val = sqrt(w_i) / sqrt(w^c_j) with correctly rounded square roots and
//      division (__dsqrt_rn, __ddiv_rn; IEEE, like std::sqrt and / on the CPU), then converted to Value, so
//      the values equal the CPU's bit for bit.
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

__device__ double node_weight(const double* weights, std::int64_t node) { return weights ? weights[node] : 1.0; }

// coarse_weights[a] = sum of the weights of aggregate a; row_ptr[i + 1] = 1 if node i is aggregated, else 0.
__global__ void sum_weights_kernel(Index nodes, const Index* __restrict__ id, const double* __restrict__ weights,
                                   double* __restrict__ coarse_weights, Offset* __restrict__ row_ptr) {
  const std::int64_t node = setup_thread_node();
  if (node >= nodes) return;
  const Index a = id[node];
  row_ptr[node + 1] = a != kNotAggregated ? 1 : 0;
  if (a != kNotAggregated) atomicAdd(coarse_weights + a, node_weight(weights, node));
}

template <class Value>
__global__ void fill_kernel(Index nodes, const Index* __restrict__ id, const double* __restrict__ weights,
                            const double* __restrict__ coarse_weights, const Offset* __restrict__ row_ptr,
                            Index* __restrict__ col, Value* __restrict__ val) {
  const std::int64_t node = setup_thread_node();
  if (node >= nodes) return;
  const Index a = id[node];
  if (a == kNotAggregated) return;
  const Offset at = row_ptr[node];
  col[at] = a;
  val[at] = static_cast<Value>(__ddiv_rn(__dsqrt_rn(node_weight(weights, node)), __dsqrt_rn(coarse_weights[a])));
}

}  // namespace

template <class Value>
DeviceCsr<Value> device_tentative_prolongation(const DeviceAggregates& aggregates, const double* weights,
                                              double* coarse_weights) {
  const Index n = static_cast<Index>(aggregates.id.size());
  DeviceCsr<Value> T;
  T.rows = n;
  T.cols = aggregates.count;
  T.row_ptr.resize(static_cast<std::size_t>(n) + 1);
  AMGSOLVE_CUDA_CHECK(cudaMemset(raw_data(T.row_ptr), 0, sizeof(Offset)));  // row_ptr[0] = 0
  if (aggregates.count > 0)
    AMGSOLVE_CUDA_CHECK(cudaMemset(coarse_weights, 0, static_cast<std::size_t>(aggregates.count) * sizeof(double)));
  if (n == 0) return T;

  sum_weights_kernel<<<setup_blocks(n), kSetupBlock>>>(n, raw_data(aggregates.id), weights, coarse_weights,
                                                       raw_data(T.row_ptr));
  AMGSOLVE_CUDA_CHECK_LAUNCH();
  thrust::inclusive_scan(thrust::device, T.row_ptr.begin() + 1, T.row_ptr.end(), T.row_ptr.begin() + 1);
  Offset nnz = 0;
  AMGSOLVE_CUDA_CHECK(cudaMemcpy(&nnz, raw_data(T.row_ptr) + n, sizeof(Offset), cudaMemcpyDeviceToHost));
  T.col.resize(static_cast<std::size_t>(nnz));
  T.val.resize(static_cast<std::size_t>(nnz));
  fill_kernel<Value><<<setup_blocks(n), kSetupBlock>>>(n, raw_data(aggregates.id), weights, coarse_weights,
                                                       raw_data(T.row_ptr), raw_data(T.col), raw_data(T.val));
  AMGSOLVE_CUDA_CHECK_LAUNCH();
  return T;
}

template DeviceCsr<double> device_tentative_prolongation(const DeviceAggregates&, const double*, double*);
template DeviceCsr<float> device_tentative_prolongation(const DeviceAggregates&, const double*, double*);

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
    DeviceArray<double> coarse_weights(static_cast<std::size_t>(aggregates.count));
    return to_host(device_tentative_prolongation<Value>(d, nullptr, raw_data(coarse_weights)));
  });
}

template CsrMatrix<double> gpu_tentative_prolongation(const Aggregates&);
template CsrMatrix<float> gpu_tentative_prolongation(const Aggregates&);

// ---- the cuda backend's step (amg/cuda/device_setup.hpp)

template <class Value>
DeviceCsrMatrix<Value> tentative_prolongation(const CudaBackend&, const CudaAggregates& aggregates,
                                              const DeviceVector<double>& weights, DeviceVector<double>& coarse_weights) {
  const std::size_t nodes = aggregates.device->id.size();
  if (weights.size() != 0 && weights.size() != nodes)  // as the cpu step checks
    throw Error("tentative_prolongation: " + std::to_string(weights.size()) + " weights for " + std::to_string(nodes) +
                " nodes");
  return rethrow_as_error("tentative prolongation on the GPU", [&] {
    coarse_weights.resize(static_cast<std::size_t>(aggregates.count));
    return DeviceCsrMatrix<Value>(device_tentative_prolongation<Value>(
        *aggregates.device, weights.size() == 0 ? nullptr : weights.data(), coarse_weights.data()));
  });
}

template DeviceCsrMatrix<double> tentative_prolongation(const CudaBackend&, const CudaAggregates&,
                                                        const DeviceVector<double>&, DeviceVector<double>&);
template DeviceCsrMatrix<float> tentative_prolongation(const CudaBackend&, const CudaAggregates&,
                                                       const DeviceVector<double>&, DeviceVector<double>&);

}  // namespace amgsolve
