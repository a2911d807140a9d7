// Strength of connection on the GPU, the device version of amg/strength.cpp and tested against it
// (tests/test_gpu_setup.cpp): Vanek, Mandel & Brezina, Computing 56, 1996, eq. 3.2,
//     j is strongly connected to i  <=>  |a_ij| >= theta * sqrt(|a_ii| |a_jj|),  i != j,
// tested as a_ij^2 >= theta^2 |a_ii a_jj| in double precision, each row's entries scaled by the power of two
// that brings a_ii near 1 (no overflow of the squares), exactly as the CPU does, so both keep the same
// entries bit for bit. One thread per row:
//   1. diagonal: d_i by binary search in row i (the CPU's diagonal(), 0 where the row has none);
//   2. classify: keep[k] for every entry of row i, the row's strong count into row_ptr[i + 1];
//   3. scan row_ptr (an inclusive scan of the counts), count the weak entries (keep == 0);
//   4. fill adj with the strong columns of each row, in A's (sorted) column order.
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

// d[i] = a_ii: std::lower_bound of i in row i's sorted columns, as diagonal() in sparse/csr_ops.cpp.
template <class Value>
__global__ void diagonal_kernel(Index rows, const Offset* __restrict__ row_ptr, const Index* __restrict__ col,
                                const Value* __restrict__ val, Value* __restrict__ d) {
  const std::int64_t node = setup_thread_node();
  if (node >= rows) return;
  const Index i = static_cast<Index>(node);
  Offset low = row_ptr[i], high = row_ptr[i + 1];  // first position in [low, high) with col >= i
  while (low < high) {
    const Offset middle = low + (high - low) / 2;
    if (col[middle] < i)
      low = middle + 1;
    else
      high = middle;
  }
  d[i] = (low < row_ptr[i + 1] && col[low] == i) ? val[low] : Value(0);
}

// keep[k] and the strong count of row i (into strong[i + 1]). The products are rounded multiplications
// (__dmul_rn), never contracted into anything else, so the test is the CPU's to the last bit.
template <class Value>
__global__ void classify_kernel(Index rows, const Offset* __restrict__ row_ptr, const Index* __restrict__ col,
                                const Value* __restrict__ val, const Value* __restrict__ d, double theta2,
                                std::uint8_t* __restrict__ keep, Offset* __restrict__ strong) {
  const std::int64_t node = setup_thread_node();
  if (node >= rows) return;
  const Index i = static_cast<Index>(node);
  const double diagonal = static_cast<double>(d[i]);
  const double scale = strength_scale(diagonal);  // the CPU's formula (amg/strength_scale.hpp)
  const double d_i = __dmul_rn(scale, diagonal);
  Offset count = 0;
  for (Offset k = row_ptr[i]; k < row_ptr[i + 1]; ++k) {
    const Index j = col[k];
    const double a = __dmul_rn(scale, static_cast<double>(val[k]));
    const double d_j = __dmul_rn(scale, static_cast<double>(d[j]));
    const bool is_strong = j != i && a != 0.0 && __dmul_rn(a, a) >= __dmul_rn(theta2, fabs(__dmul_rn(d_i, d_j)));
    keep[k] = (j == i || is_strong) ? 1 : 0;
    count += is_strong ? 1 : 0;
  }
  strong[static_cast<std::int64_t>(i) + 1] = count;
}

// The strong columns of row i, in order, at adj[row_ptr[i]...].
__global__ void fill_adjacency_kernel(Index rows, const Offset* __restrict__ a_row_ptr, const Index* __restrict__ col,
                                      const std::uint8_t* __restrict__ keep, const Offset* __restrict__ g_row_ptr,
                                      Index* __restrict__ adj) {
  const std::int64_t node = setup_thread_node();
  if (node >= rows) return;
  const Index i = static_cast<Index>(node);
  Offset out = g_row_ptr[i];
  for (Offset k = a_row_ptr[i]; k < a_row_ptr[i + 1]; ++k)
    if (keep[k] && col[k] != i) adj[out++] = col[k];
}

}  // namespace

template <class Value>
DeviceStrength device_strength_of_connection(const DeviceCsr<Value>& A, double theta) {
  if (A.rows != A.cols)
    throw InputError("strength of connection needs a square matrix, got " + std::to_string(A.rows) + "x" +
                     std::to_string(A.cols));
  const Index n = A.rows;
  const Offset nnz = A.nnz();
  DeviceStrength s;
  DeviceStrengthGraph& g = s.graph;
  g.nodes = n;
  g.row_ptr.resize(static_cast<std::size_t>(n) + 1);
  AMGSOLVE_CUDA_CHECK(cudaMemset(raw_data(g.row_ptr), 0, sizeof(Offset)));  // row_ptr[0] = 0
  s.keep.resize(static_cast<std::size_t>(nnz));
  if (n == 0) return s;

  DeviceArray<Value> d(static_cast<std::size_t>(n));
  diagonal_kernel<Value><<<setup_blocks(n), kSetupBlock>>>(n, raw_data(A.row_ptr), raw_data(A.col), raw_data(A.val),
                                                          raw_data(d));
  AMGSOLVE_CUDA_CHECK_LAUNCH();
  classify_kernel<Value><<<setup_blocks(n), kSetupBlock>>>(n, raw_data(A.row_ptr), raw_data(A.col), raw_data(A.val),
                                                          raw_data(d), theta * theta, raw_data(s.keep),
                                                          raw_data(g.row_ptr));
  AMGSOLVE_CUDA_CHECK_LAUNCH();
  thrust::inclusive_scan(thrust::device, g.row_ptr.begin() + 1, g.row_ptr.end(), g.row_ptr.begin() + 1);
  // Every entry with keep == 0 is an off-diagonal weak one (keep is 1 on the diagonal and on strong ones).
  s.weak_entries = static_cast<Offset>(thrust::count(thrust::device, s.keep.begin(), s.keep.end(), std::uint8_t(0)));

  Offset strong_entries = 0;
  AMGSOLVE_CUDA_CHECK(
      cudaMemcpy(&strong_entries, raw_data(g.row_ptr) + n, sizeof(Offset), cudaMemcpyDeviceToHost));
  g.adj.resize(static_cast<std::size_t>(strong_entries));
  fill_adjacency_kernel<<<setup_blocks(n), kSetupBlock>>>(n, raw_data(A.row_ptr), raw_data(A.col), raw_data(s.keep),
                                                          raw_data(g.row_ptr), raw_data(g.adj));
  AMGSOLVE_CUDA_CHECK_LAUNCH();
  return s;
}

template DeviceStrength device_strength_of_connection(const DeviceCsr<double>&, double);
template DeviceStrength device_strength_of_connection(const DeviceCsr<float>&, double);

// ---- host entry point (amg/gpu_setup.hpp)

template <class Value>
Strength gpu_strength_of_connection(const CsrMatrix<Value>& A, double theta) {
  const std::string what = "strength of connection on the GPU";
  require_gpu(what);
  return rethrow_as_error(what, [&] {
    const DeviceStrength d = device_strength_of_connection(to_device(A), theta);
    Strength s;
    s.graph = to_host(d.graph);
    download(d.keep, s.keep);
    s.weak_entries = d.weak_entries;
    return s;
  });
}

template Strength gpu_strength_of_connection(const CsrMatrix<double>&, double);
template Strength gpu_strength_of_connection(const CsrMatrix<float>&, double);

// ---- the cuda backend's step (amg/cuda/device_setup.hpp)

template <class Value>
CudaStrength strength_of_connection(const CudaBackend&, const DeviceCsrMatrix<Value>& A, double theta) {
  return rethrow_as_error("strength of connection on the GPU", [&] {
    auto strength = std::make_shared<const DeviceStrength>(device_strength_of_connection(A.arrays(), theta));
    return CudaStrength{strength, strength->weak_entries};
  });
}

std::uint64_t strength_bytes(const CudaStrength& strength) {
  if (!strength.device) return 0;
  const DeviceStrength& s = *strength.device;
  return s.keep.size() + s.graph.adj.size() * sizeof(Index) + s.graph.row_ptr.size() * sizeof(Offset);
}

template CudaStrength strength_of_connection(const CudaBackend&, const DeviceCsrMatrix<double>&, double);
template CudaStrength strength_of_connection(const CudaBackend&, const DeviceCsrMatrix<float>&, double);

}  // namespace amgsolve
