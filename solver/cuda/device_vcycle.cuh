#pragma once
// The AMG V-cycle on the device: AmgHierarchy::cycle() (amg/hierarchy.cpp) step for step, on the operators
// of a DeviceSolvePlan in their working bases. On level l, from x = 0:
//   pre_smooth steps (the first from x = 0; none: x = 0),
//   r = b - A x                  one fused SpMV,
//   b_{l+1} = R r                R = P^T, stored,
//   x_{l+1} = cycle(l + 1),      the coarsest: the direct solve (device_coarse_solve.cuh),
//   x += P x_{l+1}               one SpMV adding into x,
//   post_smooth steps.
// Every launch goes into the context's stream and is guarded (vector_kernels.cuh), so a cycle that the
// iteration enqueued ahead of its stopping test costs only empty launches (csr: cuSPARSE still runs).
#include <memory>
#include <vector>

#include "solver/cuda/device_coarse_solve.cuh"
#include "solver/cuda/device_operator.cuh"
#include "solver/cuda/device_smoother.cuh"
#include "solver/device_solve_plan.hpp"

namespace amgsolve::device {

template <class V>
class DeviceVcycle {
 public:
  // level0_matrix: the fine operator when the plan says level 0 of the cycle is the PCG matrix itself
  // (plan.cycle_uses_fine_matrix, double cycles only), else nullptr and the cycle uploads its own.
  DeviceVcycle(const DeviceSolvePlan<V>& plan, const DeviceOperator<V>* level0_matrix, const DeviceContext& context);
  ~DeviceVcycle();
  DeviceVcycle(const DeviceVcycle&) = delete;
  DeviceVcycle& operator=(const DeviceVcycle&) = delete;

  // z = M^-1 b: one V-cycle from zero for level 0's b (device, working basis, not modified). Returns the
  // device buffer that holds z: the cycle's own, overwritten by the next apply().
  const V* apply(const V* b, const int* guard);

  std::size_t levels() const { return levels_.size() + 1; }
  std::uint64_t bytes() const;

 private:
  struct Level {
    std::unique_ptr<DeviceOperator<V>> own_A;
    const DeviceOperator<V>* A = nullptr;  // own_A, or the fine operator
    std::unique_ptr<DeviceOperator<V>> P, R;
    std::unique_ptr<DeviceSmoother<V>> smoother;
    DeviceArray<V> b;     // right-hand side (levels below 0)
    DeviceArray<V> x[2];  // the iterate and the smoothers' second buffer
    DeviceArray<V> work;  // the residual, and the Chebyshev direction during a smoothing step
  };

  const V* cycle(std::size_t l, const V* b, const int* guard);
  V* coarser_rhs(std::size_t l);

  const DeviceContext& context_;
  int pre_smooth_ = 1, post_smooth_ = 1;
  std::vector<Level> levels_;  // all but the coarsest
  std::unique_ptr<DeviceCoarseSolve<V>> coarse_;
  DeviceArray<V> coarse_b_;
};

}  // namespace amgsolve::device
