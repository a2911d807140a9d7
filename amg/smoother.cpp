#include "amg/smoother.hpp"

#include <cstdio>

#include "sparse/csr_ops.hpp"

namespace amgsolve {

template <class Value>
SmootherSpec smoother_spec(const CsrMatrix<Value>& A, const SmootherParams& p, double rho) {
  return p.type == SmootherType::jacobi ? jacobi_spec(p, rho) : chebyshev_spec(A, p, rho);
}

template <class Value>
Vector<Value> smoother_diagonal(const CsrMatrix<Value>& A, const SmootherSpec& spec) {
  const Vector<Value> d = diagonal(A);
  const double numerator = spec.type == SmootherType::jacobi ? spec.omega : 1.0;
  Vector<Value> scaled(d.size());
  for (std::size_t i = 0; i < d.size(); ++i) scaled[i] = static_cast<Value>(numerator / static_cast<double>(d[i]));
  return scaled;
}

std::string describe(const SmootherSpec& s) {
  char text[96];
  if (s.type == SmootherType::jacobi)
    std::snprintf(text, sizeof text, "jacobi(sweeps=%d, omega=%.3f)", s.sweeps, s.omega);
  else
    std::snprintf(text, sizeof text, "chebyshev(degree=%d, interval=[%.3g, %.3g])", s.degree, s.lower, s.upper);
  return text;
}

int spmvs_per_step(const SmootherSpec& s) { return s.type == SmootherType::jacobi ? s.sweeps : s.degree; }

template SmootherSpec smoother_spec(const CsrMatrix<double>&, const SmootherParams&, double);
template SmootherSpec smoother_spec(const CsrMatrix<float>&, const SmootherParams&, double);
template Vector<double> smoother_diagonal(const CsrMatrix<double>&, const SmootherSpec&);
template Vector<float> smoother_diagonal(const CsrMatrix<float>&, const SmootherSpec&);

}  // namespace amgsolve
