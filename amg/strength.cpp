#include "amg/strength.hpp"

#include <cmath>

#include "sparse/csr_ops.hpp"

namespace amgsolve {

template <class Value>
Strength strength_of_connection(const CsrMatrix<Value>& A, double theta) {
  const Vector<Value> d = diagonal(A);
  Strength s;
  s.keep.resize(static_cast<std::size_t>(A.nnz()));
  Array<Offset> degree(static_cast<std::size_t>(A.rows) + 1, 0);
  const double theta2 = theta * theta;
  Offset weak = 0;
#pragma omp parallel for schedule(static) reduction(+ : weak)
  for (Index i = 0; i < A.rows; ++i) {
    Offset strong = 0;
    for (Offset k = A.row_begin(i); k < A.row_end(i); ++k) {
      const Index j = A.col[k];
      const double a = static_cast<double>(A.val[k]);
      const bool is_strong = j != i && a != 0.0 && a * a >= theta2 * std::abs(double(d[i]) * double(d[j]));
      s.keep[k] = (j == i || is_strong) ? 1 : 0;
      strong += is_strong ? 1 : 0;
      weak += (j != i && !is_strong) ? 1 : 0;
    }
    degree[static_cast<std::size_t>(i) + 1] = strong;
  }
  s.weak_entries = weak;
  for (Index i = 0; i < A.rows; ++i) degree[i + 1] += degree[i];

  StrengthGraph& g = s.graph;
  g.nodes = A.rows;
  g.row_ptr = std::move(degree);
  g.adj.resize(static_cast<std::size_t>(g.row_ptr.back()));
#pragma omp parallel for schedule(static)
  for (Index i = 0; i < A.rows; ++i) {
    Offset out = g.row_ptr[i];
    for (Offset k = A.row_begin(i); k < A.row_end(i); ++k)
      if (s.keep[k] && A.col[k] != i) g.adj[out++] = A.col[k];
  }
  return s;
}

template <class Value>
CsrMatrix<Value> filtered_matrix(const CsrMatrix<Value>& A, const Strength& strength) {
  CsrMatrix<Value> F(A.rows, A.cols);
  for (Index i = 0; i < A.rows; ++i) {
    Offset kept = 0;
    for (Offset k = A.row_begin(i); k < A.row_end(i); ++k) kept += strength.keep[k];
    F.row_ptr[i + 1] = F.row_ptr[i] + kept;
  }
  F.col.resize(static_cast<std::size_t>(F.nnz()));
  F.val.resize(static_cast<std::size_t>(F.nnz()));
#pragma omp parallel for schedule(static)
  for (Index i = 0; i < A.rows; ++i) {
    Offset out = F.row_ptr[i];
    Value lumped = 0;
    Offset diagonal_at = -1;
    for (Offset k = A.row_begin(i); k < A.row_end(i); ++k) {
      if (!strength.keep[k]) {
        lumped += A.val[k];
        continue;
      }
      if (A.col[k] == i) diagonal_at = out;
      F.col[out] = A.col[k];
      F.val[out++] = A.val[k];
    }
    // Lumping keeps row sums, but for matrices with positive off-diagonals it can shrink the diagonal
    // towards zero or below; then D_f^-1 would blow up the prolongator smoothing. Such rows keep a_ii.
    if (diagonal_at >= 0 && F.val[diagonal_at] + lumped >= Value(0.5) * F.val[diagonal_at])
      F.val[diagonal_at] += lumped;
  }
  return F;
}

template Strength strength_of_connection(const CsrMatrix<double>&, double);
template Strength strength_of_connection(const CsrMatrix<float>&, double);
template CsrMatrix<double> filtered_matrix(const CsrMatrix<double>&, const Strength&);
template CsrMatrix<float> filtered_matrix(const CsrMatrix<float>&, const Strength&);

}  // namespace amgsolve
