#pragma once
// The numeric phase of Gustavson's SpGEMM on its own (F. G. Gustavson, ACM TOMS 4(3), 1978: the second of
// the two passes): C = A * B into a pattern known in advance, kept from an earlier product of matrices with
// the same patterns. The re-setup of a hierarchy whose values change and whose patterns do not
// (Hierarchy::rebuild) forms its products this way and skips the symbolic work.
// Each entry sums its products in A's row order, as the row-wise backends do, so the values equal those of
// `gustavson` on the same operands. Rows are independent: the same result on any thread count.
#include "sparse/csr.hpp"

namespace amgsolve {

// What SpgemmStats::choice starts with for a product formed this way (the report's and the re-setup note's).
inline constexpr const char* kNumericPhaseChoice = "numeric phase into the kept pattern";

// C with the pattern's rows and columns (its values are not read) and the values of A * B; the pattern is
// copied row by row by the threads that fill the values, so C's pages are first touched in parallel.
// Throws Error when a product falls outside the pattern (the operands' patterns are not those the pattern
// was computed from). `multiplications`, if given, receives the number of scalar products.
template <class Value>
CsrMatrix<Value> numeric_product(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B, const CsrMatrix<Value>& pattern,
                                 Offset* multiplications = nullptr);
// The same with B's values apart from its pattern (B_pattern's own values are not read): B's rows put
// together from several places (a rank's own rows and the fetched ones, distributed/spgemm/rowwise.hpp).
template <class Value>
CsrMatrix<Value> numeric_product(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B_pattern, const Value* B_values,
                                 const CsrMatrix<Value>& pattern, Offset* multiplications = nullptr);

}  // namespace amgsolve
