// The interval of the Chebyshev smoother (amg/chebyshev.hpp): [upper / ratio, upper] of D^-1 A, with upper
// the level's estimate of rho(D^-1 A) (amg.spectral_radius) times a safety factor, capped by Gershgorin's
// bound: Lanczos approaches rho from below, Gershgorin's bound lies above it.
#include <algorithm>

#include "amg/smoother.hpp"
#include "amg/spectral_radius.hpp"

namespace amgsolve {

template <class Value>
SmootherSpec chebyshev_spec(const CsrMatrix<Value>& A, const SmootherParams& p, double rho) {
  // The safety factor covers Lanczos' underestimate; Gershgorin's bound is a true upper bound, so the
  // smaller of the two is still above lambda_max and keeps the interval tight (2 instead of 2.2 for the
  // Laplacians).
  SmootherSpec s;
  s.type = SmootherType::chebyshev;
  s.degree = p.degree;
  s.upper = std::min(p.eigenvalue_safety * rho, gershgorin_bound_dinv_a(A));
  s.lower = s.upper / p.chebyshev_ratio;
  return s;
}

template SmootherSpec chebyshev_spec(const CsrMatrix<double>&, const SmootherParams&, double);
template SmootherSpec chebyshev_spec(const CsrMatrix<float>&, const SmootherParams&, double);

}  // namespace amgsolve
