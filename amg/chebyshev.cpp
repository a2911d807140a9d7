// The interval of the Chebyshev smoother (amg/chebyshev.hpp): [upper / ratio, upper] of D^-1 A, with upper
// the level's estimate of rho(D^-1 A) (amg.spectral_radius) times a safety factor, capped by Gershgorin's
// bound: Lanczos approaches rho from below, Gershgorin's bound lies above it.
#include <algorithm>

#include "amg/smoother.hpp"

namespace amgsolve {

SmootherSpec chebyshev_spec(const SmootherParams& p, double rho, double gershgorin) {
  // The safety factor covers Lanczos' underestimate; Gershgorin's bound is a true upper bound, so the
  // smaller of the two is still above lambda_max and keeps the interval tight (2 instead of 2.2 for the
  // Laplacians).
  SmootherSpec s;
  s.type = SmootherType::chebyshev;
  s.degree = p.degree;
  s.upper = std::min(p.eigenvalue_safety * rho, gershgorin);
  s.lower = s.upper / p.chebyshev_ratio;
  return s;
}

}  // namespace amgsolve
