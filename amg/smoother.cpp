#include "amg/smoother.hpp"

#include <cstdio>

#include "common/error.hpp"

namespace amgsolve {

SmootherSpec smoother_spec(const SmootherParams& p, double rho, double gershgorin) {
  // Gauss-Seidel's, which needs the level's blocks and no estimate of rho, is gauss_seidel_spec.
  if (p.type == SmootherType::gauss_seidel) throw Error("internal: smoother_spec for gauss_seidel");
  return p.type == SmootherType::jacobi ? jacobi_spec(p, rho) : chebyshev_spec(p, rho, gershgorin);
}

double smoother_scale(const SmootherSpec& spec) { return spec.type == SmootherType::jacobi ? spec.omega : 1.0; }

std::string describe(const SmootherSpec& s) {
  char text[128];
  const char* blocks = s.nodes ? ", node blocks" : "";
  if (s.type == SmootherType::gauss_seidel) {
    std::snprintf(text, sizeof text, "gauss_seidel(symmetric, l1 hybrid in blocks of %lld %s)",
                  static_cast<long long>(s.sweep_unit), s.nodes_per_sweep_unit ? "nodes" : "rows");
    return text;
  }
  if (s.type == SmootherType::jacobi)
    std::snprintf(text, sizeof text, "jacobi(sweeps=%d, omega=%.3f%s)", s.sweeps, s.omega, blocks);
  else
    std::snprintf(text, sizeof text, "chebyshev(degree=%d, interval=[%.3g, %.3g]%s)", s.degree, s.lower, s.upper,
                  blocks);
  return text;
}

int spmvs_per_step(const SmootherSpec& s) {
  if (s.type == SmootherType::gauss_seidel) return 2;  // a forward and a backward sweep, each a product's reads
  return s.type == SmootherType::jacobi ? s.sweeps : s.degree;
}

}  // namespace amgsolve
