// Chebyshev polynomial smoothing (M. Adams, M. Brezina, J. Hu, R. Tuminaro, "Parallel multigrid
// smoothing: polynomial versus Gauss-Seidel", J. Comput. Phys. 188, 2003; the recurrence is Saad,
// "Iterative Methods for Sparse Linear Systems", 2nd ed., Algorithm 12.1, applied to D^-1 A).
//
// The error is multiplied by the degree-k Chebyshev polynomial that is smallest on [lambda_max / ratio,
// lambda_max] of D^-1 A, i.e. on the oscillatory modes that coarse-grid correction cannot see.
// lambda_max is the level's estimate of rho(D^-1 A) (amg.spectral_radius) times a safety factor, capped by
// Gershgorin's bound: Lanczos approaches rho from below, Gershgorin's bound lies above it.
#include <cstdio>

#include <algorithm>

#include "amg/smoother.hpp"
#include "amg/spectral_radius.hpp"
#include "sparse/csr_ops.hpp"

namespace amgsolve {
namespace {

template <class Value>
class Chebyshev final : public Smoother<Value> {
 public:
  Chebyshev(const CsrMatrix<Value>& A, int degree, double upper, double lower)
      : A_(A), degree_(degree), upper_(upper), lower_(lower) {
    const Vector<Value> d = diagonal(A);
    dinv_.resize(d.size());
    for (std::size_t i = 0; i < d.size(); ++i) dinv_[i] = static_cast<Value>(1.0 / static_cast<double>(d[i]));
  }

  void smooth(const Vector<Value>& b, Vector<Value>& x, bool x_is_zero) const override {
    const Index n = A_.rows;
    const double theta = 0.5 * (upper_ + lower_);
    const double delta = 0.5 * (upper_ - lower_);
    const double sigma = theta / delta;
    double rho_old = 1.0 / sigma;
    d_.resize(static_cast<std::size_t>(n));

    // Step 1: d = D^-1 (b - A x) / theta, x += d.
    const Value inv_theta = static_cast<Value>(1.0 / theta);
    if (x_is_zero) {
#pragma omp parallel for schedule(static)
      for (Index i = 0; i < n; ++i) {
        d_[i] = inv_theta * dinv_[i] * b[i];
        x[i] = d_[i];
      }
    } else {
      step(b, x, Value(0), inv_theta);
    }
    // Steps 2..k: d = rho_new rho_old d + 2 rho_new / delta D^-1 (b - A x), x += d.
    for (int k = 1; k < degree_; ++k) {
      const double rho_new = 1.0 / (2.0 * sigma - rho_old);
      step(b, x, static_cast<Value>(rho_new * rho_old), static_cast<Value>(2.0 * rho_new / delta));
      rho_old = rho_new;
    }
  }

  std::string describe() const override {
    char buf[96];
    std::snprintf(buf, sizeof buf, "chebyshev(degree=%d, interval=[%.3g, %.3g])", degree_, lower_, upper_);
    return buf;
  }
  int spmvs_per_step() const override { return degree_; }
  SmootherSpec spec() const override {
    SmootherSpec s;
    s.type = SmootherType::chebyshev;
    s.degree = degree_;
    s.upper = upper_;
    s.lower = lower_;
    return s;
  }

 private:
  // d <- a d + c D^-1 (b - A x), x <- x + d in one pass over A. The row loop reads x at neighbouring
  // rows, so the new x goes to a second buffer that is swapped in; this saves the separate x += d pass
  // (three vector streams per step). With a = 0 the old d is not read (it may be uninitialised).
  void step(const Vector<Value>& b, Vector<Value>& x, Value a, Value c) const {
    const bool keep = a != Value(0);
    x_next_.resize(x.size());
#pragma omp parallel for schedule(static)
    for (Index i = 0; i < A_.rows; ++i) {
      Value r = b[i];
      for (Offset k = A_.row_begin(i); k < A_.row_end(i); ++k) r -= A_.val[k] * x[A_.col[k]];
      d_[i] = (keep ? a * d_[i] : Value(0)) + c * dinv_[i] * r;
      x_next_[i] = x[i] + d_[i];
    }
    x.swap(x_next_);
  }

  const CsrMatrix<Value>& A_;
  int degree_;
  double upper_, lower_;
  Vector<Value> dinv_;
  mutable Vector<Value> d_, x_next_;
};

}  // namespace

template <class Value>
std::unique_ptr<Smoother<Value>> make_chebyshev_smoother(const CsrMatrix<Value>& A, const SmootherParams& p,
                                                         double rho) {
  // The safety factor covers Lanczos' underestimate; Gershgorin's bound is a true upper bound, so the
  // smaller of the two is still above lambda_max and keeps the interval tight (2 instead of 2.2 for
  // the Laplacians).
  const double upper = std::min(p.eigenvalue_safety * rho, gershgorin_bound_dinv_a(A));
  return std::make_unique<Chebyshev<Value>>(A, p.degree, upper, upper / p.chebyshev_ratio);
}

template std::unique_ptr<Smoother<double>> make_chebyshev_smoother(const CsrMatrix<double>&, const SmootherParams&,
                                                                   double);
template std::unique_ptr<Smoother<float>> make_chebyshev_smoother(const CsrMatrix<float>&, const SmootherParams&,
                                                                  double);

}  // namespace amgsolve
