// The weight of the Jacobi smoother (amg/jacobi.hpp): omega = amg.smoother.omega, or 4 / (3 rho(D^-1 A)).
#include "amg/smoother.hpp"

namespace amgsolve {

SmootherSpec jacobi_spec(const SmootherParams& p, double rho) {
  SmootherSpec s;
  s.type = SmootherType::jacobi;
  s.sweeps = p.sweeps;
  s.omega = p.omega > 0 ? p.omega : 4.0 / (3.0 * rho);
  return s;
}

}  // namespace amgsolve
