#include "amg/smoothed_prolongation.hpp"

#include <algorithm>

#include "backend/cpu/cpu_backend.hpp"
#include "sparse/csr_ops.hpp"

namespace amgsolve {

template <class Value>
void scale_and_add_tentative(const CpuBackend&, CsrMatrix<Value>& P, const CsrMatrix<Value>& A_filtered,
                             const CsrMatrix<Value>& T, double omega) {
  const Vector<Value> d = diagonal(A_filtered);
#pragma omp parallel for schedule(static)
  for (Index i = 0; i < P.rows; ++i) {
    const Value scale = static_cast<Value>(-omega / static_cast<double>(d[i]));
    for (Offset k = P.row_begin(i); k < P.row_end(i); ++k) P.val[k] *= scale;
    for (Offset t = T.row_begin(i); t < T.row_end(i); ++t) {
      const auto first = P.col.begin() + P.row_begin(i);
      const auto last = P.col.begin() + P.row_end(i);
      const auto at = std::lower_bound(first, last, T.col[t]);
      P.val[static_cast<std::size_t>(at - P.col.begin())] += T.val[t];
    }
  }
}

template <class Value>
CsrMatrix<Value> smoothed_prolongation(const CsrMatrix<Value>& A_filtered, const CsrMatrix<Value>& T, double omega,
                                       const SpgemmBackend& spgemm, SpgemmStats* stats) {
  CsrMatrix<Value> P = spgemm.multiply(A_filtered, T, stats);
  scale_and_add_tentative(CpuBackend{}, P, A_filtered, T, omega);
  return P;
}

template void scale_and_add_tentative(const CpuBackend&, CsrMatrix<double>&, const CsrMatrix<double>&,
                                      const CsrMatrix<double>&, double);
template void scale_and_add_tentative(const CpuBackend&, CsrMatrix<float>&, const CsrMatrix<float>&,
                                      const CsrMatrix<float>&, double);
template CsrMatrix<double> smoothed_prolongation(const CsrMatrix<double>&, const CsrMatrix<double>&, double,
                                                 const SpgemmBackend&, SpgemmStats*);
template CsrMatrix<float> smoothed_prolongation(const CsrMatrix<float>&, const CsrMatrix<float>&, double,
                                                const SpgemmBackend&, SpgemmStats*);

}  // namespace amgsolve
