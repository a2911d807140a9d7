#pragma once
// The filtered matrix A_f of smoothed aggregation (Vanek, Mandel & Brezina, Computing 56, 1996, section 3):
// the matrix whose Jacobi step smooths the tentative prolongator (amg/smoothed_prolongation.hpp), with the
// weak couplings that the strength of connection (amg/strength.hpp) found lumped into the diagonal, so that
// P does not grow along weak links.
#include <cstdint>

#include "amg/strength.hpp"
#include "sparse/csr.hpp"

namespace amgsolve {

class CpuBackend;

// The filtered matrix of smoothed aggregation: weak connections are dropped and added to the diagonal,
// weighted by the level's near-nullspace vector B (a_ii <- a_ii + sum of weak a_ij B_j / B_i), so that
// A_f B = A B and B stays in A_f's near-kernel (exactly in its kernel for a singular A): on the finest level
// B = 1 and A_f keeps A's row sums. weights holds B^2 (amg/tentative_prolongation.hpp) per column (row i's is
// column i's), empty for B = 1.
// Rows where lumping would leave less than half of a_ii (possible with positive off-diagonals, and in a row
// coupled weakly to very many others) keep their weak entries, or, for a row with no strong off-diagonal
// entry under IsolatedRows::diagonal_alone, a_ii alone.
// filtered_rows (optional): 1 for each row whose weak entries were left out, 0 for one that kept them; with
// the strength, this decides the filtered matrix's pattern (a re-setup checks that it did not change).
enum class IsolatedRows {
  // A singular matrix's (amg.nullspace constant): such a row's node is an aggregate of its own, whose B the
  // smoothed prolongator must carry exactly, which the weak entries do.
  keep_weak,
  // Otherwise: the node is in no aggregate, so P's row is zero with a_ii alone, where its weak entries would
  // fill it (a ground or hub node coupled to every other one made P's row, A P and the coarse level dense).
  diagonal_alone,
};
template <class Value>
CsrMatrix<Value> filtered_matrix(const CsrMatrix<Value>& A, const Strength& strength,
                                 const Vector<double>& weights = {}, Array<std::uint8_t>* filtered_rows = nullptr,
                                 IsolatedRows isolated = IsolatedRows::diagonal_alone);

// The setup calls it through its backend (amg/smoothed_aggregation.hpp); on the cpu backend it is the
// function above, on the cuda backend its device version (amg/cuda/filtered_matrix.cu).
template <class Value>
CsrMatrix<Value> filtered_matrix(const CpuBackend&, const CsrMatrix<Value>& A, const Strength& strength,
                                 const Vector<double>& weights, Array<std::uint8_t>* filtered_rows,
                                 IsolatedRows isolated) {
  return filtered_matrix(A, strength, weights, filtered_rows, isolated);
}

}  // namespace amgsolve
