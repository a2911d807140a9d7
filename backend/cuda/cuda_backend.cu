// The cuda backend's operations (backend/cuda/cuda_backend.hpp): each one kernel (or a cuSPARSE call, or a
// copy) in the backend's stream; the reductions end in a device slot that read_result() brings to the host.
#include <cmath>

#include "backend/cuda/coarse_solve_kernels.cuh"
#include "backend/cuda/cuda_backend.hpp"
#include "backend/cuda/device_context.cuh"
#include "backend/cuda/device_operator.cuh"
#include "backend/cuda/smoother_kernels.cuh"
#include "common/device.hpp"

namespace amgsolve {
namespace device {
namespace {

struct StoreTotal {  // the reductions' finalize: the sum into the backend's result slot
  double* slot;
  __device__ void operator()(double total) const { *slot = total; }
};

template <class V>
struct DotTerm {
  const V* a;
  const V* b;
  __device__ double operator()(Index i) const { return double(a[i]) * double(b[i]); }
};

template <class V>
struct Entry {
  const V* v;
  __device__ double operator()(Index i) const { return double(v[i]); }
};

template <class V>
struct SubtractMean {  // v -= (the sum in the result slot) / n, on the device: no round trip to the host
  V* v;
  const double* total;
  Index n;
  __device__ void operator()(Index i) const { v[i] -= static_cast<V>(*total / n); }
};

template <class V>
struct AddVector {  // x += y
  const V* y;
  V* x;
  __device__ void operator()(Index i) const { x[i] += y[i]; }
};

template <class V>
struct SubtractValue {  // v -= s
  V* v;
  V s;
  __device__ void operator()(Index i) const { v[i] -= s; }
};

template <class V>
struct Gather {  // out[k] = x[indices[k]]
  const V* x;
  const Index* indices;
  V* out;
  __device__ void operator()(Index k) const { out[k] = x[indices[k]]; }
};

template <class V>
struct Xpby {  // p = z + beta p
  const V* z;
  V beta;
  V* p;
  __device__ void operator()(Index i) const { p[i] = z[i] + beta * p[i]; }
};

template <class V>
struct Residual {  // r = b - A x
  const V* b;
  V* r;
  __device__ void operator()(Index row, V ax) const { r[row] = b[row] - ax; }
};

template <class V>
struct SpmvDot {  // q = A p, summing p^T q
  const V* p;
  V* q;
  __device__ double operator()(Index row, V ap) const {
    q[row] = ap;
    return double(p[row]) * double(ap);
  }
};

template <class V>
struct CgUpdate {  // x += alpha p, r -= alpha q, summing r^T r
  V alpha;
  const V* p;
  const V* q;
  V* x;
  V* r;
  __device__ double operator()(Index i) const {
    x[i] += alpha * p[i];
    r[i] -= alpha * q[i];
    return double(r[i]) * double(r[i]);
  }
};

}  // namespace
}  // namespace device

using namespace device;

CudaBackend::CudaBackend(int rank_on_node) {
  require_gpu("the cuda backend");
  try {
    rethrow_as_error("the cuda backend", [&] {
      if (rank_on_node >= 0) {
        int devices = 0;
        AMGSOLVE_CUDA_CHECK(cudaGetDeviceCount(&devices));
        AMGSOLVE_CUDA_CHECK(cudaSetDevice(rank_on_node % devices));  // require_gpu saw at least one
      }
      context_ = std::make_unique<DeviceContext>(/*need_cusparse=*/true);
      AMGSOLVE_CUDA_CHECK(cudaMalloc(&device_result_, sizeof(double)));
      AMGSOLVE_CUDA_CHECK(cudaMallocHost(&host_result_, sizeof(double)));
    });
  } catch (...) {
    release();  // the destructor does not run for a constructor that throws
    throw;
  }
}

CudaBackend::~CudaBackend() { release(); }

void CudaBackend::release() noexcept {
  if (context_) cudaStreamSynchronize(context_->stream());  // no checks: called from the destructor
  if (device_result_) cudaFree(device_result_);
  if (host_result_) cudaFreeHost(host_result_);
  device_result_ = nullptr;
  host_result_ = nullptr;
}

void CudaBackend::count_to_device(std::uint64_t bytes) const {
  transfers_.to_device += bytes;
  ++transfers_.messages;
}

void CudaBackend::count_to_host(std::uint64_t bytes) const {
  transfers_.to_host += bytes;
  ++transfers_.messages;
}

void CudaBackend::wait_for_device() const { AMGSOLVE_CUDA_CHECK(cudaDeviceSynchronize()); }

double CudaBackend::read_result() const {
  AMGSOLVE_CUDA_CHECK(
      cudaMemcpyAsync(host_result_, device_result_, sizeof(double), cudaMemcpyDeviceToHost, context_->stream()));
  context_->synchronize();
  count_to_host(sizeof(double));
  return *host_result_;
}

// ---- moving data

template <class V>
DeviceVector<V> CudaBackend::upload(const amgsolve::Vector<V>& host) const {
  DeviceVector<V> v;
  upload(host, v);
  return v;
}

template <class V>
void CudaBackend::upload(const amgsolve::Vector<V>& host, DeviceVector<V>& into) const {
  into.resize(host.size());  // no allocation when the size is already right (the coarse solve's every cycle)
  const std::size_t bytes = sizeof(V) * host.size();
  if (bytes) {
    AMGSOLVE_CUDA_CHECK(cudaMemcpyAsync(into.data(), host.data(), bytes, cudaMemcpyHostToDevice, context_->stream()));
    context_->synchronize();  // the host vector may change as soon as this returns
  }
  count_to_device(bytes);
}

template <class V>
void CudaBackend::download(const DeviceVector<V>& from, amgsolve::Vector<V>& host) const {
  host.resize(from.size());
  const std::size_t bytes = sizeof(V) * from.size();
  if (bytes)
    AMGSOLVE_CUDA_CHECK(cudaMemcpyAsync(host.data(), from.data(), bytes, cudaMemcpyDeviceToHost, context_->stream()));
  context_->synchronize();
  count_to_host(bytes);
}

// ---- vectors

template <class V>
void CudaBackend::zero(DeviceVector<V>& v, Index n) const {
  v.resize(static_cast<std::size_t>(n));
  if (n > 0) AMGSOLVE_CUDA_CHECK(cudaMemsetAsync(v.data(), 0, sizeof(V) * v.size(), context_->stream()));
}

template <class V>
void CudaBackend::copy(const DeviceVector<V>& from, DeviceVector<V>& to) const {
  to.resize(from.size());
  if (!from.empty())
    AMGSOLVE_CUDA_CHECK(
        cudaMemcpyAsync(to.data(), from.data(), sizeof(V) * from.size(), cudaMemcpyDeviceToDevice, context_->stream()));
}

template <class To, class From>
void CudaBackend::convert(const DeviceVector<From>& from, DeviceVector<To>& to) const {
  to.resize(from.size());
  for_each_row(static_cast<Index>(from.size()), ConvertVector<To, From>{to.data(), from.data()}, context_->stream());
}

template <class V>
double CudaBackend::dot(const DeviceVector<V>& a, const DeviceVector<V>& b) const {
  sum_rows(static_cast<Index>(a.size()), DotTerm<V>{a.data(), b.data()}, StoreTotal{device_result_},
           context_->reduction(), context_->stream());
  return read_result();
}

template <class V>
double CudaBackend::norm2(const DeviceVector<V>& v) const {
  return std::sqrt(dot(v, v));
}

template <class V>
double CudaBackend::sum(const DeviceVector<V>& v) const {
  sum_rows(static_cast<Index>(v.size()), Entry<V>{v.data()}, StoreTotal{device_result_}, context_->reduction(),
           context_->stream());
  return read_result();
}

template <class V>
void CudaBackend::remove_mean(DeviceVector<V>& v) const {
  const Index n = static_cast<Index>(v.size());
  if (n == 0) return;
  sum_rows(n, Entry<V>{v.data()}, StoreTotal{device_result_}, context_->reduction(), context_->stream());
  for_each_row(n, SubtractMean<V>{v.data(), device_result_, n}, context_->stream());
}

template <class V>
void CudaBackend::add(const DeviceVector<V>& y, DeviceVector<V>& x) const {
  for_each_row(static_cast<Index>(x.size()), AddVector<V>{y.data(), x.data()}, context_->stream());
}

template <class V>
void CudaBackend::xpby(const DeviceVector<V>& z, V beta, DeviceVector<V>& p) const {
  for_each_row(static_cast<Index>(p.size()), Xpby<V>{z.data(), beta, p.data()}, context_->stream());
}

template <class V>
void CudaBackend::subtract(V s, DeviceVector<V>& v) const {
  for_each_row(static_cast<Index>(v.size()), SubtractValue<V>{v.data(), s}, context_->stream());
}

// ---- the distributed layer's parts

template <class Term>
ExactSum CudaBackend::exact_block_sums(Index n, const Term& term) const {
  block_sums_.resize(static_cast<std::size_t>(reduction_block_count(n)));
  block_sums(n, term, block_sums_.data(), context_->stream());
  download(block_sums_, host_block_sums_);  // waits for the stream
  ExactSum total;
  for (const double s : host_block_sums_) total.add(s);
  return total;
}

template <class V>
ExactSum CudaBackend::dot_partial(const DeviceVector<V>& a, const DeviceVector<V>& b) const {
  return exact_block_sums(static_cast<Index>(a.size()), DotTerm<V>{a.data(), b.data()});
}

template <class V>
ExactSum CudaBackend::sum_partial(const DeviceVector<V>& v) const {
  return exact_block_sums(static_cast<Index>(v.size()), Entry<V>{v.data()});
}

template <class V>
ExactSum CudaBackend::cg_update_partial(V alpha, const DeviceVector<V>& p, const DeviceVector<V>& q,
                                       DeviceVector<V>& x, DeviceVector<V>& r) const {
  return exact_block_sums(static_cast<Index>(x.size()), CgUpdate<V>{alpha, p.data(), q.data(), x.data(), r.data()});
}

template <class V>
void CudaBackend::gather(const DeviceVector<V>& x, const DeviceVector<Index>& indices, DeviceVector<V>& out) const {
  out.resize(indices.size());
  for_each_row(static_cast<Index>(indices.size()), Gather<V>{x.data(), indices.data(), out.data()}, context_->stream());
}

template <class V>
void CudaBackend::extend(const DeviceVector<V>& own, const amgsolve::Vector<V>& tail, DeviceVector<V>& extended) const {
  extended.resize(own.size() + tail.size());  // the same size every product of one matrix: allocated once
  if (!own.empty())
    AMGSOLVE_CUDA_CHECK(cudaMemcpyAsync(extended.data(), own.data(), sizeof(V) * own.size(), cudaMemcpyDeviceToDevice,
                                        context_->stream()));
  const std::size_t bytes = sizeof(V) * tail.size();
  if (bytes) {
    AMGSOLVE_CUDA_CHECK(cudaMemcpyAsync(extended.data() + own.size(), tail.data(), bytes, cudaMemcpyHostToDevice,
                                        context_->stream()));
    context_->synchronize();  // the host buffer takes the next exchange's ghosts
  }
  count_to_device(bytes);
}

// ---- products

template <class V>
void CudaBackend::spmv(const DeviceMatrix<V>& A, const DeviceVector<V>& x, DeviceVector<V>& y) const {
  y.resize(static_cast<std::size_t>(A.rows));
  A.op().multiply(x.data(), y.data());
}

template <class V>
void CudaBackend::spmv_add(const DeviceMatrix<V>& A, const DeviceVector<V>& x, DeviceVector<V>& y) const {
  A.op().multiply_add(x.data(), y.data());
}

template <class V>
void CudaBackend::residual(const DeviceMatrix<V>& A, const DeviceVector<V>& x, const DeviceVector<V>& b,
                           DeviceVector<V>& r) const {
  r.resize(static_cast<std::size_t>(A.rows));
  A.op().apply(x.data(), Residual<V>{b.data(), r.data()});
}

template <class V>
double CudaBackend::spmv_dot(const DeviceMatrix<V>& A, const DeviceVector<V>& p, DeviceVector<V>& q) const {
  q.resize(static_cast<std::size_t>(A.rows));
  A.op().apply_sum(p.data(), SpmvDot<V>{p.data(), q.data()}, StoreTotal{device_result_});
  return read_result();
}

template <class V>
double CudaBackend::cg_update(V alpha, const DeviceVector<V>& p, const DeviceVector<V>& q, DeviceVector<V>& x,
                              DeviceVector<V>& r) const {
  sum_rows(static_cast<Index>(x.size()), CgUpdate<V>{alpha, p.data(), q.data(), x.data(), r.data()},
           StoreTotal{device_result_}, context_->reduction(), context_->stream());
  return read_result();
}

// ---- the smoothers' passes

template <class V>
void CudaBackend::jacobi_from_zero(const DeviceVector<V>& scaled_dinv, const DeviceVector<V>& b,
                                   DeviceVector<V>& x) const {
  for_each_row(static_cast<Index>(x.size()), JacobiFromZero<V>{x.data(), b.data(), scaled_dinv.data()},
               context_->stream());
}

template <class V>
void CudaBackend::jacobi_sweep(const DeviceMatrix<V>& A, const DeviceVector<V>& scaled_dinv, const DeviceVector<V>& b,
                               const DeviceVector<V>& x, DeviceVector<V>& x_next) const {
  x_next.resize(static_cast<std::size_t>(A.rows));  // x may be longer: own entries, then ghosts
  A.op().apply(x.data(), JacobiSweep<V>{b.data(), x.data(), x_next.data(), scaled_dinv.data()});
}

template <class V>
void CudaBackend::chebyshev_from_zero(const DeviceVector<V>& dinv, const DeviceVector<V>& b, V inv_theta,
                                      DeviceVector<V>& d, DeviceVector<V>& x) const {
  for_each_row(static_cast<Index>(x.size()), ChebyshevFromZero<V>{d.data(), x.data(), b.data(), dinv.data(), inv_theta},
               context_->stream());
}

template <class V>
void CudaBackend::chebyshev_step(const DeviceMatrix<V>& A, const DeviceVector<V>& dinv, const DeviceVector<V>& b, V a,
                                 V c, DeviceVector<V>& d, const DeviceVector<V>& x, DeviceVector<V>& x_next) const {
  x_next.resize(static_cast<std::size_t>(A.rows));  // as in jacobi_sweep
  A.op().apply(x.data(), ChebyshevStep<V>{b.data(), x.data(), x_next.data(), d.data(), dinv.data(), a, c});
}

// ---- the coarse solve's product (its constructor, host work, is in coarse_solve.cpp)

template <class V>
void CudaBackend::CoarseSolve<V>::solve(const DeviceVector<V>& b, DeviceVector<V>& x) const {
  x.resize(static_cast<std::size_t>(n_));
  if (n_ == 0) return;
  if (!factor_) {
    dense_product(inverse_.data(), b.data(), x.data(), n_, backend_.context().stream());
    return;
  }
  backend_.download(b, host_b_);
  factor_->solve(host_b_, host_x_);
  backend_.upload(host_x_, x);
}

// ---- instantiations: the algorithms use double and float

#define AMGSOLVE_CUDA_BACKEND_INSTANTIATE(V)                                                                           \
  template DeviceVector<V> CudaBackend::upload(const amgsolve::Vector<V>&) const;                                    \
  template void CudaBackend::upload(const amgsolve::Vector<V>&, DeviceVector<V>&) const;                             \
  template void CudaBackend::download(const DeviceVector<V>&, amgsolve::Vector<V>&) const;                           \
  template void CudaBackend::zero(DeviceVector<V>&, Index) const;                                                    \
  template void CudaBackend::copy(const DeviceVector<V>&, DeviceVector<V>&) const;                                   \
  template double CudaBackend::dot(const DeviceVector<V>&, const DeviceVector<V>&) const;                            \
  template double CudaBackend::norm2(const DeviceVector<V>&) const;                                                  \
  template double CudaBackend::sum(const DeviceVector<V>&) const;                                                    \
  template void CudaBackend::remove_mean(DeviceVector<V>&) const;                                                    \
  template void CudaBackend::add(const DeviceVector<V>&, DeviceVector<V>&) const;                                    \
  template void CudaBackend::xpby(const DeviceVector<V>&, V, DeviceVector<V>&) const;                                \
  template void CudaBackend::subtract(V, DeviceVector<V>&) const;                                                    \
  template ExactSum CudaBackend::dot_partial(const DeviceVector<V>&, const DeviceVector<V>&) const;                  \
  template ExactSum CudaBackend::sum_partial(const DeviceVector<V>&) const;                                          \
  template ExactSum CudaBackend::cg_update_partial(V, const DeviceVector<V>&, const DeviceVector<V>&,                \
                                                   DeviceVector<V>&, DeviceVector<V>&) const;                       \
  template void CudaBackend::gather(const DeviceVector<V>&, const DeviceVector<Index>&, DeviceVector<V>&) const;     \
  template void CudaBackend::extend(const DeviceVector<V>&, const amgsolve::Vector<V>&, DeviceVector<V>&) const;     \
  template void CudaBackend::spmv(const DeviceMatrix<V>&, const DeviceVector<V>&, DeviceVector<V>&) const;           \
  template void CudaBackend::spmv_add(const DeviceMatrix<V>&, const DeviceVector<V>&, DeviceVector<V>&) const;       \
  template void CudaBackend::residual(const DeviceMatrix<V>&, const DeviceVector<V>&, const DeviceVector<V>&,        \
                                      DeviceVector<V>&) const;                                                       \
  template double CudaBackend::spmv_dot(const DeviceMatrix<V>&, const DeviceVector<V>&, DeviceVector<V>&) const;     \
  template double CudaBackend::cg_update(V, const DeviceVector<V>&, const DeviceVector<V>&, DeviceVector<V>&,        \
                                         DeviceVector<V>&) const;                                                    \
  template void CudaBackend::jacobi_from_zero(const DeviceVector<V>&, const DeviceVector<V>&, DeviceVector<V>&)      \
      const;                                                                                                         \
  template void CudaBackend::jacobi_sweep(const DeviceMatrix<V>&, const DeviceVector<V>&, const DeviceVector<V>&,    \
                                          const DeviceVector<V>&, DeviceVector<V>&) const;                           \
  template void CudaBackend::chebyshev_from_zero(const DeviceVector<V>&, const DeviceVector<V>&, V, DeviceVector<V>&, \
                                                 DeviceVector<V>&) const;                                            \
  template void CudaBackend::chebyshev_step(const DeviceMatrix<V>&, const DeviceVector<V>&, const DeviceVector<V>&,  \
                                            V, V, DeviceVector<V>&, const DeviceVector<V>&, DeviceVector<V>&) const; \
  template void CudaBackend::CoarseSolve<V>::solve(const DeviceVector<V>&, DeviceVector<V>&) const;

AMGSOLVE_CUDA_BACKEND_INSTANTIATE(double)
AMGSOLVE_CUDA_BACKEND_INSTANTIATE(float)
#undef AMGSOLVE_CUDA_BACKEND_INSTANTIATE

template DeviceVector<Index> CudaBackend::upload(const amgsolve::Vector<Index>&) const;  // a halo's sent indices
template void CudaBackend::upload(const amgsolve::Vector<Index>&, DeviceVector<Index>&) const;
template void CudaBackend::convert(const DeviceVector<double>&, DeviceVector<float>&) const;
template void CudaBackend::convert(const DeviceVector<float>&, DeviceVector<double>&) const;

}  // namespace amgsolve
