// The weight of the Jacobi smoother (amg/jacobi.hpp): omega = amg.smoother.omega, or 4 / (3 rho(D^-1 A)).
#include "amg/smoother.hpp"

#include <string>

#include "common/error.hpp"

namespace amgsolve {

SmootherSpec jacobi_spec(const SmootherParams& p, double rho) {
  SmootherSpec s;
  s.type = SmootherType::jacobi;
  s.sweeps = p.sweeps;
  s.omega = p.omega > 0 ? p.omega : 4.0 / (3.0 * rho);
  return s;
}

// Damped Jacobi converges (and the V-cycle it smooths stays positive definite) only for omega rho(D^-1 A)
// < 2. The Lanczos estimate is below the true radius, so omega times it >= 2 proves divergence: an error
// that names the key, where PCG would only break down on "a preconditioner not positive definite".
void require_jacobi_converges(const SmootherParams& p, SpectralRadius estimate, double rho, int level) {
  // Gershgorin's bound is above the radius: omega times it at 2 or more proves nothing.
  if (estimate != SpectralRadius::lanczos) return;
  if (p.type != SmootherType::jacobi || p.omega <= 0 || p.omega * rho < 2.0) return;
  throw InputError("amg.smoother.omega = " + format_number(p.omega) + " makes damped Jacobi diverge on level " +
                   std::to_string(level) + ", where rho(D^-1 A) is at least " + format_number(rho) +
                   ": omega must be below 2 / rho = " + format_number(2.0 / rho) +
                   " (omega 0 chooses 4 / (3 rho) on each level)");
}

}  // namespace amgsolve
