#pragma once
// The Robin (partial-current) boundary condition of the diffusion approximation at a refractive-index
// mismatch, Phi + 2 A D dPhi/dn = 0, and its factor A, after Haskell et al., "Boundary conditions for the
// diffusion equation in radiative transfer", J. Opt. Soc. Am. A 11 (1994) 2727, section 2.
//
// Light leaving the tissue at angle theta to the normal is reflected back with Fresnel's reflectance
// R_F(theta) (1 beyond the critical angle). Weighting it by the angular distribution of the diffuse
// radiance gives two moments,
//   R_phi = int_0^pi/2 2 sin(t) cos(t) R_F(t) dt,     R_j = int_0^pi/2 3 sin(t) cos(t)^2 R_F(t) dt,
// and the exact factor A = (1 + R_j) / (1 - R_phi), i.e. A = (1 + R_eff) / (1 - R_eff) with
// R_eff = (R_phi + R_j) / (2 - R_phi + R_j). At n = 1.4 this is A = 2.95, at n = 1 exactly 1.
//
// Many codes (NIRFAST among them) instead use Groenhuis et al.'s polynomial fit, Appl. Opt. 22 (1983)
// 2456, to Egan and Hilgeman's reflectance data, R = -1.440 n^-2 + 0.710 n^-1 + 0.668 + 0.0636 n, as if it
// were R_eff. It follows R_phi, not R_eff, and so gives A about 10 % above the exact value (3.25 at
// n = 1.4, and 1.0032 at n = 1, where the fit does not reach zero). It is offered for comparison with
// those codes.
#include <string_view>

namespace amgsolve {

enum class ReflectionModel {
  exact,      // Haskell et al.'s integrals of the Fresnel reflectance
  groenhuis,  // the polynomial fit, taken as R_eff
};

// Fresnel reflectance, unpolarised, of light inside the tissue meeting the surface at `theta` (radians)
// for the relative index n = n_tissue / n_outside >= 1.
double fresnel_reflectance(double n, double theta);

// The moments R_phi and R_j above (Gauss-Legendre over [0, critical angle] after a substitution that
// smooths the corner there, closed form beyond it).
struct ReflectionMoments {
  double r_phi = 0;
  double r_j = 0;
};
ReflectionMoments reflection_moments(double n);

// A for the relative refractive index n >= 1 (InputError below 1).
double robin_factor(double n, ReflectionModel model = ReflectionModel::exact);

const char* reflection_model_name(ReflectionModel model);

}  // namespace amgsolve
