#pragma once
// The heap (k-way merge) SpGEMM of the `heap` backend (heap.cpp) as a plain function, for a caller without
// the registry. Its memory per thread is O(longest row of A), whatever B's column count, which suits wide,
// hypersparse blocks. (The distributed algorithms multiply their blocks with `auto`, `rowwise` its rows with
// `gustavson`.)
#include "spgemm/spgemm.hpp"

namespace amgsolve {

// C = A * B with sorted rows; fills `stats` when given. A.cols must equal B.rows (Error otherwise).
template <class Value>
CsrMatrix<Value> heap_multiply(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B, SpgemmStats* stats = nullptr);

}  // namespace amgsolve
