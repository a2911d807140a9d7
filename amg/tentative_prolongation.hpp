#pragma once
// Tentative prolongator of smoothed aggregation for the constant near-nullspace
// (Vanek, Mandel & Brezina, Computing 56, 1996, section 3): column j is the indicator of aggregate j
// normalised to unit length, T_ij = 1 / sqrt(|aggregate j|) for i in aggregate j. Its columns are
// orthonormal (T^T T = I) and the constant vector lies in its range on every aggregated node.
#include "amg/mis2_aggregation.hpp"
#include "sparse/csr.hpp"

namespace amgsolve {

template <class Value>
CsrMatrix<Value> tentative_prolongation(const Aggregates& aggregates);

// Through the setup's backend (amg/smoothed_aggregation.hpp).
template <class Value>
CsrMatrix<Value> tentative_prolongation(const CpuBackend&, const Aggregates& aggregates) {
  return tentative_prolongation<Value>(aggregates);
}

}  // namespace amgsolve
