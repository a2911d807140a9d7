#pragma once
// The coarsest level's direct solve on the device: x = A_c^-1 b with the dense inverse that the plan formed
// on the host (solver/device_solve_plan.hpp explains why that pays for at most kMaxDenseCoarseRows rows),
// one dense matrix-vector product per V-cycle, accumulated in double whatever the cycle's type, like the
// CPU's CoarseSolver. The product is a small kernel of its own rather than cuBLAS's dgemv: linking cuBLAS
// maps some 150 MB of libraries into every run of a CUDA build, GPU or not, for one product of at most
// 2048 x 2048 per cycle.
// For a larger coarsest level the plan holds a sparse LDL^T instead, applied on the host: b comes down and x
// goes up once per V-cycle, a synchronisation the dense path avoids.
#include <memory>
#include <type_traits>

#include "amg/coarse_solver.hpp"
#include "solver/cuda/device_context.cuh"
#include "solver/device_solve_plan.hpp"

namespace amgsolve::device {

// x = M b for the dense n x n inverse M (column-major, symmetric), in double: thread i computes row i as
// sum_j M[j n + i] b[j], so at every j a warp reads consecutive addresses.
template <class V>
struct DenseProduct {
  const double* M;
  const V* b;
  V* x;
  Index n;
  __device__ void operator()(Index i) const {
    double sum = 0.0;
    for (Index j = 0; j < n; ++j) sum += M[static_cast<std::size_t>(j) * n + i] * static_cast<double>(b[j]);
    x[i] = static_cast<V>(sum);
  }
};

template <class V>
class DeviceCoarseSolve {
 public:
  DeviceCoarseSolve(const DeviceSolvePlan<V>& plan, const DeviceContext& context)
      : n_(plan.coarse_rows), host_solver_(plan.coarse_solver), context_(context) {
    x_ = DeviceArray<V>(static_cast<std::size_t>(n_));
    if (host_solver_ || n_ == 0) return;
    inverse_ = upload(plan.coarse_inverse);
  }

  Index rows() const { return n_; }
  bool on_device() const { return !host_solver_; }
  std::uint64_t bytes() const {
    return sizeof(double) * inverse_.size() + sizeof(V) * x_.size();
  }

  // x = A_c^-1 b; returns the buffer holding x (this solver's own, valid until the next call).
  const V* solve(const V* b, const int* guard) {
    if (n_ == 0) return raw_data(x_);
    if (host_solver_) {
      solve_on_host(b);
      return raw_data(x_);
    }
    for_each_row(n_, DenseProduct<V>{raw_data(inverse_), b, raw_data(x_), n_}, context_.stream(), guard);
    return raw_data(x_);
  }

 private:
  void solve_on_host(const V* b) {
    const std::size_t bytes = sizeof(V) * static_cast<std::size_t>(n_);
    host_b_.resize(static_cast<std::size_t>(n_));
    AMGSOLVE_CUDA_CHECK(cudaMemcpyAsync(host_b_.data(), b, bytes, cudaMemcpyDeviceToHost, context_.stream()));
    context_.synchronize();
    host_solver_->solve(host_b_, host_x_);
    // From pageable memory the copy has read host_x_ when the call returns; the next solve_on_host
    // synchronises the stream before host_x_ is written again anyway.
    AMGSOLVE_CUDA_CHECK(cudaMemcpyAsync(raw_data(x_), host_x_.data(), bytes, cudaMemcpyHostToDevice, context_.stream()));
  }

  Index n_;
  std::shared_ptr<const CoarseSolver<V>> host_solver_;
  const DeviceContext& context_;
  DeviceArray<double> inverse_;  // n x n, column-major (symmetric)
  DeviceArray<V> x_;
  Vector<V> host_b_, host_x_;
};

}  // namespace amgsolve::device
