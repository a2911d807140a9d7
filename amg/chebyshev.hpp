#pragma once
// Chebyshev polynomial smoothing (M. Adams, M. Brezina, J. Hu, R. Tuminaro, "Parallel multigrid
// smoothing: polynomial versus Gauss-Seidel", J. Comput. Phys. 188, 2003; the recurrence is Saad,
// "Iterative Methods for Sparse Linear Systems", 2nd ed., Algorithm 12.1, applied to D^-1 A).
//
// The error is multiplied by the degree-k Chebyshev polynomial that is smallest on [lower, upper] of
// D^-1 A, i.e. on the oscillatory modes that coarse-grid correction cannot see; chebyshev_spec
// (chebyshev.cpp) chooses the interval. Each step is one pass over A (the backend's chebyshev_step:
// d = a d + c D^-1 (b - A x), x_next = x + d), with the new x in a second buffer that is swapped in.
#include <utility>

#include "amg/smoother.hpp"

namespace amgsolve {

// Diagonal: D as the backend scales by it, a vector (the pointwise diagonal) or a system's node blocks.
template <class Backend, class V, class Diagonal = typename Backend::template Vector<V>>
class ChebyshevSmoother final : public Smoother<Backend, V> {
 public:
  using Vec = typename Backend::template Vector<V>;
  using Mat = typename Backend::template Matrix<V>;

  // dinv: D^-1 (smoother_diagonal, smoother_block_diagonal).
  ChebyshevSmoother(const Backend& backend, const Mat& A, const SmootherSpec& spec, Diagonal dinv)
      : backend_(backend), A_(A), degree_(spec.degree), upper_(spec.upper), lower_(spec.lower), dinv_(std::move(dinv)) {}

  void smooth(const Vec& b, Vec& x, bool x_is_zero) const override {
    const double theta = 0.5 * (upper_ + lower_);
    const double delta = 0.5 * (upper_ - lower_);
    const double sigma = theta / delta;
    double rho_old = 1.0 / sigma;
    backend_.resize(d_, A_.rows);

    // Step 1: d = D^-1 (b - A x) / theta, x += d.
    const V inv_theta = static_cast<V>(1.0 / theta);
    if (x_is_zero)
      backend_.chebyshev_from_zero(dinv_, b, inv_theta, d_, x);
    else
      step(b, x, V(0), inv_theta);
    // Steps 2..k: d = rho_new rho_old d + 2 rho_new / delta D^-1 (b - A x), x += d.
    for (int k = 1; k < degree_; ++k) {
      const double rho_new = 1.0 / (2.0 * sigma - rho_old);
      step(b, x, static_cast<V>(rho_new * rho_old), static_cast<V>(2.0 * rho_new / delta));
      rho_old = rho_new;
    }
  }

  std::uint64_t bytes() const override { return held_bytes(dinv_) + held_bytes(d_) + held_bytes(x_next_); }

 private:
  void step(const Vec& b, Vec& x, V a, V c) const {
    backend_.chebyshev_step(A_, dinv_, b, a, c, d_, x, x_next_);
    x.swap(x_next_);
  }

  const Backend& backend_;
  const Mat& A_;
  int degree_;
  double upper_, lower_;
  Diagonal dinv_;
  mutable Vec d_, x_next_;
};

}  // namespace amgsolve
