#pragma once
// The heap (k-way merge) SpGEMM of the `heap` backend (heap.cpp) as a plain function: the local multiply
// that distributed algorithms (Sparse SUMMA, Split-3D) call on their blocks without the registry. Its
// memory per thread is O(longest row of A), whatever B's column count, which suits the blocks' wide,
// hypersparse shapes.
#include "spgemm/spgemm.hpp"

namespace amgsolve {

// C = A * B with sorted rows; fills `stats` when given. A.cols must equal B.rows (Error otherwise).
template <class Value>
CsrMatrix<Value> heap_multiply(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B, SpgemmStats* stats = nullptr);

}  // namespace amgsolve
