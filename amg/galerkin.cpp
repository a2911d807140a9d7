#include "amg/galerkin.hpp"

namespace amgsolve {

template <class Value>
CsrMatrix<Value> galerkin_product(const CsrMatrix<Value>& A, const CsrMatrix<Value>& P, const CsrMatrix<Value>& R,
                                  const SpgemmBackend& spgemm, GalerkinStats* stats) {
  GalerkinStats local;
  GalerkinStats& s = stats ? *stats : local;
  const CsrMatrix<Value> AP = spgemm.multiply(A, P, &s.ap);
  return spgemm.multiply(R, AP, &s.r_ap);
}

template CsrMatrix<double> galerkin_product(const CsrMatrix<double>&, const CsrMatrix<double>&,
                                            const CsrMatrix<double>&, const SpgemmBackend&, GalerkinStats*);
template CsrMatrix<float> galerkin_product(const CsrMatrix<float>&, const CsrMatrix<float>&, const CsrMatrix<float>&,
                                           const SpgemmBackend&, GalerkinStats*);

}  // namespace amgsolve
