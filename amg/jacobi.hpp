#pragma once
// Damped Jacobi smoothing: x <- x + omega D^-1 (b - A x), `sweeps` times per step, with omega =
// 4 / (3 rho(D^-1 A)) by default, the weight that damps the upper part of the spectrum of D^-1 A most
// evenly (e.g. Saad, "Iterative Methods for Sparse Linear Systems", 2nd ed., section 13.2). Each sweep
// reads the old x and writes a new one (the backend's jacobi_sweep), so the result does not depend on the
// thread count or the device's schedule.
#include <utility>

#include "amg/smoother.hpp"

namespace amgsolve {

// Diagonal: D as the backend scales by it, a vector (the pointwise diagonal) or a system's node blocks.
template <class Backend, class V, class Diagonal = typename Backend::template Vector<V>>
class JacobiSmoother final : public Smoother<Backend, V> {
 public:
  using Vec = typename Backend::template Vector<V>;
  using Mat = typename Backend::template Matrix<V>;

  // scaled_dinv: omega D^-1 (smoother_diagonal, smoother_block_diagonal).
  JacobiSmoother(const Backend& backend, const Mat& A, const SmootherSpec& spec, Diagonal scaled_dinv)
      : backend_(backend), A_(A), sweeps_(spec.sweeps), scaled_dinv_(std::move(scaled_dinv)) {}

  void smooth(const Vec& b, Vec& x, bool x_is_zero) const override {
    for (int sweep = 0; sweep < sweeps_; ++sweep) {
      if (sweep == 0 && x_is_zero) {
        backend_.jacobi_from_zero(scaled_dinv_, b, x);
        continue;
      }
      backend_.jacobi_sweep(A_, scaled_dinv_, b, x, next_);
      x.swap(next_);
    }
  }
  std::uint64_t bytes() const override { return held_bytes(scaled_dinv_) + held_bytes(next_); }

 private:
  const Backend& backend_;
  const Mat& A_;
  int sweeps_;
  Diagonal scaled_dinv_;
  mutable Vec next_;
};

}  // namespace amgsolve
