#pragma once
// The V-cycle's smoothers on the device: the same polynomials in D^-1 A, with the same parameters
// (SmootherSpec from the level's CPU smoother) and the same rounding of the coefficients to the cycle's
// value type, as the CPU files:
//   jacobi     x <- x + omega D^-1 (b - A x), `sweeps` times per step (amg/jacobi.cpp; Saad, "Iterative
//              Methods for Sparse Linear Systems", 2nd ed., section 13.2);
//   chebyshev  the degree-k Chebyshev polynomial on [lower, upper] (amg/chebyshev.cpp; Adams, Brezina, Hu &
//              Tuminaro, J. Comput. Phys. 188, 2003; the recurrence of Saad's Algorithm 12.1 applied to
//              D^-1 A).
// Every step that needs A x is one SpMV with its vector work fused into the epilogue (DeviceOperator::apply):
// a Jacobi sweep reads b, x and D^-1 once and writes the new x; a Chebyshev step reads b, x, d and D^-1 once
// and writes d and the new x, where the unfused form (r = b - A x, then d = a d + c D^-1 r, then x += d)
// makes three passes. As on the CPU the new x goes to the second buffer, since other rows still read the
// old one; the caller's `current` index says which buffer holds x.
#include <memory>

#include "amg/smoother.hpp"
#include "solver/cuda/device_operator.cuh"

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

template <class V>
class DeviceSmoother {
 public:
  // diagonal: omega / a_ii (Jacobi) or 1 / a_ii (Chebyshev) per row (DeviceSolvePlan::Level).
  DeviceSmoother(const SmootherSpec& spec, const Vector<V>& diagonal, const DeviceContext& context)
      : spec_(spec), diagonal_(upload(diagonal)), context_(context) {}

  std::uint64_t bytes() const { return sizeof(V) * diagonal_.size(); }

  // One smoothing step for A x = b, as Smoother::smooth(b, x, x_is_zero). x[current] holds x (ignored when
  // x_is_zero), x[1 - current] is the second buffer; `current` is updated to where x ends up. d: a work
  // vector of A's size (Chebyshev's direction; free again after the step).
  void smooth(const DeviceOperator<V>& A, const V* b, V* const x[2], int& current, V* d, bool x_is_zero,
              const int* guard) const {
    if (spec_.type == SmootherType::jacobi)
      jacobi(A, b, x, current, x_is_zero, guard);
    else
      chebyshev(A, b, x, current, d, x_is_zero, guard);
  }

 private:
  void jacobi(const DeviceOperator<V>& A, const V* b, V* const x[2], int& current, bool x_is_zero,
              const int* guard) const {
    const V* scaled_dinv = raw_data(diagonal_);
    for (int sweep = 0; sweep < spec_.sweeps; ++sweep) {
      if (sweep == 0 && x_is_zero) {
        for_each_row(A.rows(), JacobiFromZero<V>{x[current], b, scaled_dinv}, context_.stream(), guard);
        continue;
      }
      A.apply(x[current], JacobiSweep<V>{b, x[current], x[1 - current], scaled_dinv}, guard);
      current = 1 - current;
    }
  }

  void chebyshev(const DeviceOperator<V>& A, const V* b, V* const x[2], int& current, V* d, bool x_is_zero,
                 const int* guard) const {
    const double theta = 0.5 * (spec_.upper + spec_.lower);
    const double delta = 0.5 * (spec_.upper - spec_.lower);
    const double sigma = theta / delta;
    double rho_old = 1.0 / sigma;
    const V* dinv = raw_data(diagonal_);
    auto step = [&](V a, V c) {
      A.apply(x[current], ChebyshevStep<V>{b, x[current], x[1 - current], d, dinv, a, c}, guard);
      current = 1 - current;
    };
    // Step 1: d = D^-1 (b - A x) / theta, x += d.
    const V inv_theta = static_cast<V>(1.0 / theta);
    if (x_is_zero)
      for_each_row(A.rows(), ChebyshevFromZero<V>{d, x[current], b, dinv, inv_theta}, context_.stream(), guard);
    else
      step(V(0), inv_theta);
    // Steps 2..k: d = rho_new rho_old d + 2 rho_new / delta D^-1 (b - A x), x += d.
    for (int k = 1; k < spec_.degree; ++k) {
      const double rho_new = 1.0 / (2.0 * sigma - rho_old);
      step(static_cast<V>(rho_new * rho_old), static_cast<V>(2.0 * rho_new / delta));
      rho_old = rho_new;
    }
  }

  SmootherSpec spec_;
  DeviceArray<V> diagonal_;
  const DeviceContext& context_;
};

}  // namespace amgsolve::device
