#include "amg/smoother.hpp"

namespace amgsolve {

template <class Value>
std::unique_ptr<Smoother<Value>> make_smoother(const CsrMatrix<Value>& A, const SmootherParams& p, double rho) {
  switch (p.type) {
    case SmootherType::jacobi: return make_jacobi_smoother(A, p, rho);
    case SmootherType::chebyshev: return make_chebyshev_smoother(A, p, rho);
  }
  return nullptr;
}

template std::unique_ptr<Smoother<double>> make_smoother(const CsrMatrix<double>&, const SmootherParams&, double);
template std::unique_ptr<Smoother<float>> make_smoother(const CsrMatrix<float>&, const SmootherParams&, double);

}  // namespace amgsolve
