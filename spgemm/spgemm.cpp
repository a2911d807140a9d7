#include "spgemm/spgemm.hpp"

#include "common/error.hpp"

namespace amgsolve {

namespace {

template <class Value>
void check_shapes(const SpgemmBackend& backend, const CsrMatrix<Value>& A, const CsrMatrix<Value>& B) {
  if (A.cols != B.rows)
    throw Error("SpGEMM shape mismatch: A is " + std::to_string(A.rows) + "x" + std::to_string(A.cols) + ", B is " +
                std::to_string(B.rows) + "x" + std::to_string(B.cols));
  if (!backend.available())
    throw Error("SpGEMM backend '" + backend.name() + "' cannot run here: " + backend.unavailable_reason());
}

}  // namespace

CsrMatrix<double> SpgemmBackend::multiply(const CsrMatrix<double>& A, const CsrMatrix<double>& B,
                                          SpgemmStats* stats) const {
  check_shapes(*this, A, B);
  SpgemmStats local;
  return compute(A, B, stats ? *stats : local);
}

CsrMatrix<float> SpgemmBackend::multiply(const CsrMatrix<float>& A, const CsrMatrix<float>& B,
                                         SpgemmStats* stats) const {
  check_shapes(*this, A, B);
  SpgemmStats local;
  return compute(A, B, stats ? *stats : local);
}

template <class Value>
Offset spgemm_multiplications(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B) {
  Offset total = 0;
#pragma omp parallel for schedule(static) reduction(+ : total)
  for (Index i = 0; i < A.rows; ++i) total += row_multiplications(A, B, i);
  return total;
}

template Offset spgemm_multiplications(const CsrMatrix<double>&, const CsrMatrix<double>&);
template Offset spgemm_multiplications(const CsrMatrix<float>&, const CsrMatrix<float>&);

}  // namespace amgsolve
