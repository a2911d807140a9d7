#pragma once
// The coarsest level's direct solve on the device: x = A_c^-1 b with the dense inverse that the plan formed
// on the host (solver/device_solve_plan.hpp explains why that pays for at most kMaxDenseCoarseRows rows),
// one cuBLAS dgemv per V-cycle. In double whatever the cycle's type, like the CPU's CoarseSolver: a float
// cycle converts b up and x down around the product (two small kernels on coarse-sized vectors).
// For a larger coarsest level the plan holds a sparse LDL^T instead, applied on the host: b comes down and x
// goes up once per V-cycle, a synchronisation the dense path avoids.
#include <memory>
#include <type_traits>

#include "amg/coarse_solver.hpp"
#include "solver/cuda/device_context.cuh"
#include "solver/device_solve_plan.hpp"

namespace amgsolve::device {

template <class V>
class DeviceCoarseSolve {
 public:
  DeviceCoarseSolve(const DeviceSolvePlan<V>& plan, const DeviceContext& context)
      : n_(plan.coarse_rows), host_solver_(plan.coarse_solver), context_(context) {
    x_ = DeviceArray<V>(static_cast<std::size_t>(n_));
    if (host_solver_ || n_ == 0) return;
    inverse_ = upload(plan.coarse_inverse);
    if constexpr (!std::is_same_v<V, double>) {
      b_double_ = DeviceArray<double>(static_cast<std::size_t>(n_));
      x_double_ = DeviceArray<double>(static_cast<std::size_t>(n_));
    }
  }

  Index rows() const { return n_; }
  bool on_device() const { return !host_solver_; }
  std::uint64_t bytes() const {
    return sizeof(double) * (inverse_.size() + b_double_.size() + x_double_.size()) + sizeof(V) * x_.size();
  }

  // x = A_c^-1 b; returns the buffer holding x (this solver's own, valid until the next call).
  const V* solve(const V* b, const int* guard) {
    if (n_ == 0) return raw_data(x_);
    if (host_solver_) {
      solve_on_host(b);
      return raw_data(x_);
    }
    const double one = 1.0, zero = 0.0;
    if constexpr (std::is_same_v<V, double>) {
      AMGSOLVE_DEVICE_CUBLAS_CHECK(cublasDgemv(context_.cublas(), CUBLAS_OP_N, n_, n_, &one, raw_data(inverse_), n_, b,
                                               1, &zero, raw_data(x_), 1));
    } else {
      for_each_row(n_, ConvertVector<double, V>{raw_data(b_double_), b}, context_.stream(), guard);
      AMGSOLVE_DEVICE_CUBLAS_CHECK(cublasDgemv(context_.cublas(), CUBLAS_OP_N, n_, n_, &one, raw_data(inverse_), n_,
                                               raw_data(b_double_), 1, &zero, raw_data(x_double_), 1));
      for_each_row(n_, ConvertVector<V, double>{raw_data(x_), raw_data(x_double_)}, context_.stream(), guard);
    }
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
  DeviceArray<double> b_double_, x_double_;
  DeviceArray<V> x_;
  Vector<V> host_b_, host_x_;
};

}  // namespace amgsolve::device
