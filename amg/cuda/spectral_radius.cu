// The estimates of rho(D^-1 A) on the cuda backend (amg/spectral_radius.hpp): Gershgorin's bound as one
// max-reduction over the rows, and the Lanczos recurrence's passes, each one kernel with the arithmetic of
// the cpu backend's loop (amg/spectral_radius.cpp); the sums are the backend's deterministic reductions
// (backend/cuda/vector_kernels.cuh), in another order than the CPU's, so the estimate agrees to rounding.
#include <thrust/execution_policy.h>
#include <thrust/functional.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/transform_reduce.h>

#include <cmath>

#include "amg/cuda/device_setup.hpp"
#include "backend/cuda/device_context.cuh"
#include "backend/cuda/vector_kernels.cuh"
#include "common/cuda/check.cuh"
#include "common/hash.hpp"
#include "common/unit_scale.hpp"
#include "sparse/cuda/device_csr.cuh"

namespace amgsolve {
namespace {

template <class Value>
struct GershgorinRow {  // sum_j |a_ij| / a_ii (infinity for a non-positive a_ii)
  const Offset* row_ptr;
  const Index* col;
  const Value* val;
  __device__ double operator()(Index i) const {
    double diag = 0.0;
    for (Offset k = row_ptr[i]; k < row_ptr[i + 1]; ++k)
      if (col[k] == i) diag = static_cast<double>(val[k]);
    // The row summed on the diagonal's scale, as on the CPU (gershgorin_bound_dinv_a): entries beyond 1e307
    // would overflow the sum to inf.
    const double scale = unit_scale(diag);
    double row = 0.0;
    for (Offset k = row_ptr[i]; k < row_ptr[i + 1]; ++k) row += scale * fabs(static_cast<double>(val[k]));
    // A NaN row counts as 0: the CPU's std::max(bound, NaN) keeps the bound, where thrust::maximum would keep
    // or drop the NaN by its place in the reduction tree.
    const double bound = diag > 0 ? row / (scale * diag) : INFINITY;
    return isnan(bound) ? 0.0 : bound;
  }
};

template <class Value>
struct InverseSqrtDiagonal {
  const Offset* row_ptr;
  const Index* col;
  const Value* val;
  double* scale;
  __device__ void operator()(Index i) const {
    scale[i] = 1.0 / sqrt(static_cast<double>(diagonal_entry(row_ptr, col, val, i)));
  }
};

struct SeededEntry {
  std::uint64_t seed;
  double* v;
  __device__ void operator()(Index i) const { v[i] = seeded_uniform(seed, static_cast<std::uint64_t>(i)) - 0.5; }
};

struct Rescale {  // v = src / divisor
  const double* src;
  double divisor;
  double* v;
  __device__ void operator()(Index i) const { v[i] = src[i] / divisor; }
};

template <class Value>
struct LanczosProduct {  // w = scale (A (scale v)) - beta v_prev, summing w^T v
  const Offset* row_ptr;
  const Index* col;
  const Value* val;
  const double* scale;
  double beta;
  const double* v_prev;
  const double* v;
  double* w;
  __device__ double operator()(Index i) const {
    double s = 0.0;
    for (Offset k = row_ptr[i]; k < row_ptr[i + 1]; ++k) {
      const Index j = col[k];
      s += double(val[k]) * (scale[j] * v[j]);
    }
    const double wi = scale[i] * s - beta * v_prev[i];
    w[i] = wi;
    return wi * v[i];
  }
};

struct Orthogonalize {  // w -= alpha v, summing w^T w
  double alpha;
  const double* v;
  double* w;
  __device__ double operator()(Index i) const {
    const double wi = w[i] - alpha * v[i];
    w[i] = wi;
    return wi * wi;
  }
};

struct StoreTotal {
  double* slot;
  __device__ void operator()(double total) const { *slot = total; }
};

}  // namespace

template <class Value>
double gershgorin_bound_dinv_a(const CudaBackend& backend, const DeviceCsrMatrix<Value>& M) {
  const DeviceCsr<Value>& A = M.arrays();
  if (A.rows == 0) return 0.0;
  const double bound = rethrow_as_error("Gershgorin's bound on the GPU", [&] {
    return thrust::transform_reduce(thrust::cuda::par.on(backend.context().stream()), thrust::counting_iterator<Index>(0),
                                    thrust::counting_iterator<Index>(A.rows),
                                    GershgorinRow<Value>{raw_data(A.row_ptr), raw_data(A.col), raw_data(A.val)}, 0.0,
                                    thrust::maximum<double>());
  });
  backend.count_to_host(sizeof(double));
  return bound;
}

template <class Value>
DeviceVector<double> inverse_sqrt_diagonal(const CudaBackend& backend, const DeviceCsrMatrix<Value>& M) {
  const DeviceCsr<Value>& A = M.arrays();
  DeviceVector<double> scale(static_cast<std::size_t>(A.rows));
  device::for_each_row(A.rows, InverseSqrtDiagonal<Value>{raw_data(A.row_ptr), raw_data(A.col), raw_data(A.val), scale.data()},
                       backend.context().stream());
  return scale;
}

DeviceVector<double> seeded_vector(const CudaBackend& backend, Index n, std::uint64_t seed) {
  DeviceVector<double> v(static_cast<std::size_t>(n));
  device::for_each_row(n, SeededEntry{seed, v.data()}, backend.context().stream());
  return v;
}

void lanczos_rescale(const CudaBackend& backend, const DeviceVector<double>& src, double divisor, DeviceVector<double>& v) {
  device::for_each_row(static_cast<Index>(v.size()), Rescale{src.data(), divisor, v.data()}, backend.context().stream());
}

// The cpu's scratch for D^-1/2 v is not used here: each thread gathers its row's scale_j v_j itself.
template <class Value>
double lanczos_product(const CudaBackend& backend, const DeviceCsrMatrix<Value>& M, const DeviceVector<double>& scale,
                       double beta, const DeviceVector<double>& v_prev, const DeviceVector<double>& v,
                       DeviceVector<double>& w, DeviceVector<double>& /*scaled*/, std::int64_t /*block*/) {
  const DeviceCsr<Value>& A = M.arrays();
  device::sum_rows(A.rows,
                   LanczosProduct<Value>{raw_data(A.row_ptr), raw_data(A.col), raw_data(A.val), scale.data(), beta,
                                         v_prev.data(), v.data(), w.data()},
                   StoreTotal{backend.result_slot()}, backend.context().reduction(), backend.context().stream());
  return backend.read_result();
}

double lanczos_orthogonalize(const CudaBackend& backend, double alpha, const DeviceVector<double>& v,
                             DeviceVector<double>& w, std::int64_t /*block*/) {
  device::sum_rows(static_cast<Index>(w.size()), Orthogonalize{alpha, v.data(), w.data()},
                   StoreTotal{backend.result_slot()}, backend.context().reduction(), backend.context().stream());
  return backend.read_result();
}

#define AMGSOLVE_CUDA_SPECTRAL_RADIUS(V)                                                                             \
  template double gershgorin_bound_dinv_a(const CudaBackend&, const DeviceCsrMatrix<V>&);                            \
  template DeviceVector<double> inverse_sqrt_diagonal(const CudaBackend&, const DeviceCsrMatrix<V>&);                \
  template double lanczos_product(const CudaBackend&, const DeviceCsrMatrix<V>&, const DeviceVector<double>&, double, \
                                  const DeviceVector<double>&, const DeviceVector<double>&, DeviceVector<double>&,  \
                                  DeviceVector<double>&, std::int64_t);
AMGSOLVE_CUDA_SPECTRAL_RADIUS(double)
AMGSOLVE_CUDA_SPECTRAL_RADIUS(float)
#undef AMGSOLVE_CUDA_SPECTRAL_RADIUS

}  // namespace amgsolve
