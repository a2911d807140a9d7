#pragma once
// Galerkin coarse operator A_c = R A P with R = P^T, computed as two SpGEMMs, P^T (A P), through the
// selected backend. The transpose is formed explicitly once and kept for the V-cycle's restriction.
#include "spgemm/spgemm.hpp"

namespace amgsolve {

struct GalerkinStats {
  SpgemmStats ap;     // A * P
  SpgemmStats r_ap;   // P^T * (A P)
};

template <class Value>
CsrMatrix<Value> galerkin_product(const CsrMatrix<Value>& A, const CsrMatrix<Value>& P, const CsrMatrix<Value>& R,
                                  const SpgemmBackend& spgemm, GalerkinStats* stats = nullptr);

}  // namespace amgsolve
