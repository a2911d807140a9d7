// See numeric_product.hpp.
#include "spgemm/numeric_product.hpp"

#include <string>
#include <vector>

#include "common/error.hpp"

namespace amgsolve {

template <class Value>
void numeric_product(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B, CsrMatrix<Value>& C) {
  if (A.cols != B.rows || C.rows != A.rows || C.cols != B.cols)
    throw Error("numeric product: shapes " + std::to_string(A.rows) + "x" + std::to_string(A.cols) + " * " +
                std::to_string(B.rows) + "x" + std::to_string(B.cols) + " do not give the pattern's " +
                std::to_string(C.rows) + "x" + std::to_string(C.cols));
  C.val.resize(C.col.size());
  bool outside = false;
#pragma omp parallel reduction(|| : outside)
  {
    // A dense accumulator over B's columns; `slot` marks the columns of the current row's pattern.
    std::vector<Value> accumulator(static_cast<std::size_t>(B.cols));
    std::vector<std::uint8_t> slot(static_cast<std::size_t>(B.cols), 0);
#pragma omp for schedule(dynamic, 256)
    for (Index i = 0; i < A.rows; ++i) {
      for (Offset c = C.row_begin(i); c < C.row_end(i); ++c) {
        accumulator[C.col[c]] = Value(0);
        slot[C.col[c]] = 1;
      }
      for (Offset ka = A.row_begin(i); ka < A.row_end(i); ++ka) {
        const Index k = A.col[ka];
        const Value a = A.val[ka];
        for (Offset kb = B.row_begin(k); kb < B.row_end(k); ++kb) {
          const Index j = B.col[kb];
          outside = outside || !slot[j];
          accumulator[j] += a * B.val[kb];
        }
      }
      for (Offset c = C.row_begin(i); c < C.row_end(i); ++c) {
        C.val[c] = accumulator[C.col[c]];
        slot[C.col[c]] = 0;
      }
    }
    // A column outside the pattern was accumulated and never cleared: the result is void anyway.
  }
  if (outside) throw Error("numeric product: a product falls outside the kept pattern (the operands' patterns changed)");
}

template void numeric_product(const CsrMatrix<double>&, const CsrMatrix<double>&, CsrMatrix<double>&);
template void numeric_product(const CsrMatrix<float>&, const CsrMatrix<float>&, CsrMatrix<float>&);

}  // namespace amgsolve
