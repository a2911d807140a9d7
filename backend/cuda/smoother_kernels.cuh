#pragma once
// The smoothers' passes on the device (the cuda backend's jacobi_* and chebyshev_* kernels), the same
// formulas as the cpu backend's loops (backend/cpu/cpu_backend.hpp) but not the same rounding: the device
// sums b - sum(a x) in another order (the build keeps nvcc from fusing multiply-adds: --fmad=false), so the
// tests compare to a tolerance. A step that needs A x is one SpMV with its vector work fused into the
// epilogue (DeviceOperator::apply): a Jacobi sweep reads b, x and D^-1 once and writes the new x; a Chebyshev
// step reads b, x, d and D^-1 once and writes d and the new x, where the unfused form (r = b - A x, then
// d = a d + c D^-1 r, then x += d) makes three passes.
// The new x goes to a second buffer, since other rows still read the old one.
#include "backend/cuda/vector_kernels.cuh"

namespace amgsolve::device {

// ---- epilogues and element-wise steps (V: the cycle's value type)

template <class V>
struct JacobiFromZero {  // x = omega D^-1 b (the first sweep from x = 0)
  V* x;
  const V* b;
  const V* scaled_dinv;
  __device__ void operator()(Index i) const { x[i] = scaled_dinv[i] * b[i]; }
};

template <class V>
struct JacobiSweep {  // x_next = x + omega D^-1 (b - A x)
  const V* b;
  const V* x;
  V* x_next;
  const V* scaled_dinv;
  __device__ void operator()(Index row, V ax) const { x_next[row] = x[row] + scaled_dinv[row] * (b[row] - ax); }
};

template <class V>
struct ChebyshevFromZero {  // d = D^-1 b / theta, x = d (the first step from x = 0)
  V* d;
  V* x;
  const V* b;
  const V* dinv;
  V inv_theta;
  __device__ void operator()(Index i) const {
    const V step = inv_theta * dinv[i] * b[i];
    d[i] = step;
    x[i] = step;
  }
};

template <class V>
struct ChebyshevStep {  // d = a d + c D^-1 (b - A x), x_next = x + d; with a = 0 the old d is not read
  const V* b;
  const V* x;
  V* x_next;
  V* d;
  const V* dinv;
  V a, c;
  __device__ void operator()(Index row, V ax) const {
    const V r = b[row] - ax;
    const V step = (a != V(0) ? a * d[row] : V(0)) + c * dinv[row] * r;
    d[row] = step;
    x_next[row] = x[row] + step;
  }
};

}  // namespace amgsolve::device
