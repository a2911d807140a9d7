#include "sparse/ellpack_r.hpp"

#include <algorithm>
#include <limits>

#include "common/error.hpp"

namespace amgsolve {

Index padded_row_count(Index rows, Index multiple) {
  const Offset padded = (static_cast<Offset>(rows) + multiple - 1) / multiple * multiple;
  if (padded > std::numeric_limits<Index>::max())
    throw Error("ELLPACK-R/pJDS: " + std::to_string(rows) + " rows padded to a multiple of " + std::to_string(multiple) +
                " exceed the 32-bit row index");
  return static_cast<Index>(padded);
}

template <class Value>
EllpackR<Value> ellpack_r_from_csr(const CsrMatrix<Value>& A, Index warp) {
  EllpackR<Value> E;
  E.rows = A.rows;
  E.cols = A.cols;
  E.padded_rows = padded_row_count(A.rows, warp);
  for (Index i = 0; i < A.rows; ++i) E.width = std::max(E.width, A.row_length(i));
  const std::size_t slots = static_cast<std::size_t>(E.width) * static_cast<std::size_t>(E.padded_rows);
  E.row_length.assign(static_cast<std::size_t>(E.padded_rows), 0);
  E.col.assign(slots, 0);
  E.val.assign(slots, Value(0));
#pragma omp parallel for schedule(static)
  for (Index i = 0; i < A.rows; ++i) {
    E.row_length[i] = A.row_length(i);
    for (Offset k = A.row_begin(i); k < A.row_end(i); ++k) {
      const std::size_t at = static_cast<std::size_t>(k - A.row_begin(i)) * E.padded_rows + i;
      E.col[at] = A.col[k];
      E.val[at] = A.val[k];
    }
  }
  return E;
}

template <class Value>
CsrMatrix<Value> csr_from_ellpack_r(const EllpackR<Value>& E) {
  CsrMatrix<Value> A(E.rows, E.cols);
  for (Index i = 0; i < E.rows; ++i) A.row_ptr[i + 1] = A.row_ptr[i] + E.row_length[i];
  A.col.resize(static_cast<std::size_t>(A.nnz()));
  A.val.resize(static_cast<std::size_t>(A.nnz()));
  for (Index i = 0; i < E.rows; ++i)
    for (Index j = 0; j < E.row_length[i]; ++j) {
      const std::size_t at = static_cast<std::size_t>(j) * E.padded_rows + i;
      A.col[A.row_begin(i) + j] = E.col[at];
      A.val[A.row_begin(i) + j] = E.val[at];
    }
  return A;
}

template <class Value>
void spmv(const EllpackR<Value>& E, const Vector<Value>& x, Vector<Value>& y) {
  y.resize(static_cast<std::size_t>(E.rows));
#pragma omp parallel for schedule(static)
  for (Index i = 0; i < E.rows; ++i) {
    Value s = 0;
    for (Index j = 0; j < E.row_length[i]; ++j) {
      const std::size_t at = static_cast<std::size_t>(j) * E.padded_rows + i;
      s += E.val[at] * x[E.col[at]];
    }
    y[i] = s;
  }
}

#define AMGSOLVE_INSTANTIATE_ELLPACK_R(V)                                             \
  template EllpackR<V> ellpack_r_from_csr(const CsrMatrix<V>&, Index);                \
  template CsrMatrix<V> csr_from_ellpack_r(const EllpackR<V>&);                       \
  template void spmv(const EllpackR<V>&, const Vector<V>&, Vector<V>&);
AMGSOLVE_INSTANTIATE_ELLPACK_R(double)
AMGSOLVE_INSTANTIATE_ELLPACK_R(float)

}  // namespace amgsolve
