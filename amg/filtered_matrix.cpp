#include "amg/filtered_matrix.hpp"

#include <cmath>
#include <vector>

namespace amgsolve {

namespace {

// B_j / B_i from the weights B^2: sqrt(w_j) / sqrt(w_i), correctly rounded (the GPU computes the same).
template <class Value>
Value nullspace_ratio(const Vector<double>& weights, Index j, Index i) {
  return static_cast<Value>(std::sqrt(weights[static_cast<std::size_t>(j)]) /
                            std::sqrt(weights[static_cast<std::size_t>(i)]));
}

template <class Value>
Value diagonal_entry(const CsrMatrix<Value>& A, Index i) {
  for (Offset k = A.row_begin(i); k < A.row_end(i); ++k)
    if (A.col[k] == i) return A.val[k];
  return Value(0);
}

}  // namespace

template <class Value>
CsrMatrix<Value> filtered_matrix(const CsrMatrix<Value>& A, const Strength& strength, const Vector<double>& weights,
                                 Array<std::uint8_t>* filtered_rows, IsolatedRows isolated) {
  // The weak entries of row i lumped along B, and whether the row is filtered at all: lumping keeps A B, but
  // with positive off-diagonals it can shrink the diagonal towards zero or below (and to exactly zero for a
  // row with no strong entry of a singular matrix), and D_f^-1 would blow up the prolongator smoothing;
  // such rows keep their weak entries instead, which keeps A B too, or (IsolatedRows) a_ii alone.
  // Without weights by a select rather than a branch: on coarse levels strong and weak entries alternate
  // unpredictably (adding +0 for a strong one leaves the sum as it is).
  const auto lumped_weak = [&](Index i) {
    Value lumped = 0;
    if (weights.empty()) {
      for (Offset k = A.row_begin(i); k < A.row_end(i); ++k) lumped += strength.keep[k] ? Value(0) : A.val[k];
    } else {
      for (Offset k = A.row_begin(i); k < A.row_end(i); ++k)
        if (!strength.keep[k]) lumped += A.val[k] * nullspace_ratio<Value>(weights, A.col[k], i);
    }
    return lumped;
  };
  // lumped[i]: what row i's diagonal gains (0 for a row left with a_ii alone); filtered[i]: whether its weak
  // entries are left out.
  std::vector<Value> lumped(static_cast<std::size_t>(A.rows));
  Array<std::uint8_t> filtered(static_cast<std::size_t>(A.rows));
  CsrMatrix<Value> F(A.rows, A.cols);
#pragma omp parallel for schedule(static)
  for (Index i = 0; i < A.rows; ++i) {
    lumped[i] = lumped_weak(i);
    const Value diagonal = diagonal_entry(A, i);
    filtered[i] = diagonal + lumped[i] >= Value(0.5) * diagonal;
    if (!filtered[i]) {
      lumped[i] = Value(0);  // the row keeps its weak entries, or a_ii alone
      // No strong off-diagonal entry: no neighbour in the strength graph.
      filtered[i] = isolated == IsolatedRows::diagonal_alone && strength.graph.degree(i) == 0;
    }
    Offset kept = 0;
    for (Offset k = A.row_begin(i); k < A.row_end(i); ++k) kept += filtered[i] ? strength.keep[k] : 1;
    F.row_ptr[i + 1] = kept;
  }
  for (Index i = 0; i < A.rows; ++i) F.row_ptr[i + 1] += F.row_ptr[i];
  F.col.resize(static_cast<std::size_t>(F.nnz()));
  F.val.resize(static_cast<std::size_t>(F.nnz()));
  // Each entry written where the next kept one goes, the cursor moved past kept ones only (no branch on the
  // classification); the row's last writes beyond its end go to a spare (the next row may be another thread's).
#pragma omp parallel for schedule(static)
  for (Index i = 0; i < A.rows; ++i) {
    Offset out = F.row_ptr[i];
    const Offset end = F.row_ptr[i + 1];
    const std::uint8_t keeps_all = filtered[i] ? 0 : 1;
    Index spare_col = 0;
    Value spare_val = 0;
    for (Offset k = A.row_begin(i); k < A.row_end(i); ++k) {
      const bool inside = out < end;
      *(inside ? &F.col[out] : &spare_col) = A.col[k];
      *(inside ? &F.val[out] : &spare_val) = A.val[k] + (A.col[k] == i ? lumped[i] : Value(0));
      out += keeps_all | strength.keep[k];
    }
  }
  if (filtered_rows) *filtered_rows = std::move(filtered);
  return F;
}

template CsrMatrix<double> filtered_matrix(const CsrMatrix<double>&, const Strength&, const Vector<double>&,
                                           Array<std::uint8_t>*, IsolatedRows);
template CsrMatrix<float> filtered_matrix(const CsrMatrix<float>&, const Strength&, const Vector<double>&,
                                          Array<std::uint8_t>*, IsolatedRows);

}  // namespace amgsolve
