#pragma once
// The tests' SpGEMM oracle: Gustavson's row-by-row product as textbooks write it (F. G. Gustavson, "Two fast
// algorithms for sparse matrices: multiplication and permuted transposition", ACM TOMS 4, 1978), with no
// tuning at all. For each row i of A, the rows of B that it selects are scaled and summed into a dense
// accumulator over all of C's columns, in the order of A's columns; the columns touched are then sorted.
// Summing in that order is also what every CPU backend does, so their values equal these bit for bit.
#include <algorithm>
#include <vector>

#include "sparse/csr.hpp"

namespace amgsolve::test {

template <class Value>
CsrMatrix<Value> textbook_gustavson(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B) {
  CsrMatrix<Value> C(A.rows, B.cols);
  std::vector<Value> accumulator(static_cast<std::size_t>(B.cols), Value(0));
  std::vector<bool> touched(static_cast<std::size_t>(B.cols), false);
  std::vector<Index> columns;
  for (Index i = 0; i < A.rows; ++i) {
    columns.clear();
    for (Offset ka = A.row_begin(i); ka < A.row_end(i); ++ka) {
      const Index k = A.col[ka];
      for (Offset kb = B.row_begin(k); kb < B.row_end(k); ++kb) {
        const Index j = B.col[kb];
        if (!touched[j]) {  // the first product is stored, so a sum of -0.0 products is -0.0
          touched[j] = true;
          columns.push_back(j);
          accumulator[j] = A.val[ka] * B.val[kb];
        } else {
          accumulator[j] += A.val[ka] * B.val[kb];
        }
      }
    }
    std::sort(columns.begin(), columns.end());
    for (const Index j : columns) {
      C.col.push_back(j);
      C.val.push_back(accumulator[j]);
      accumulator[j] = Value(0);
      touched[j] = false;
    }
    C.row_ptr[static_cast<std::size_t>(i) + 1] = static_cast<Offset>(C.col.size());
  }
  return C;
}

}  // namespace amgsolve::test
