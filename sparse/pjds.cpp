#include "sparse/pjds.hpp"

#include <algorithm>
#include <numeric>

#include "common/error.hpp"
#include "sparse/ellpack_r.hpp"
#include "sparse/csr_ops.hpp"

namespace amgsolve {

template <class Value>
Pjds<Value> pjds_from_csr(const CsrMatrix<Value>& A, Index block_rows, bool symmetric_permutation) {
  if (symmetric_permutation && !A.is_square()) throw Error("pJDS: a symmetric permutation needs a square matrix");
  Pjds<Value> P;
  P.rows = A.rows;
  P.cols = A.cols;
  P.block_rows = block_rows;
  P.symmetric_permutation = symmetric_permutation;
  P.padded_rows = padded_row_count(A.rows, block_rows);

  // "sort": longest row first; stable, so equal lengths keep their order and the result is deterministic.
  P.permutation.resize(static_cast<std::size_t>(A.rows));
  std::iota(P.permutation.begin(), P.permutation.end(), Index{0});
  std::stable_sort(P.permutation.begin(), P.permutation.end(),
                   [&A](Index a, Index b) { return A.row_length(a) > A.row_length(b); });
  Array<Index> inverse(static_cast<std::size_t>(A.rows));
  for (Index i = 0; i < A.rows; ++i) inverse[P.permutation[i]] = i;
  P.row_length.assign(static_cast<std::size_t>(P.padded_rows), 0);
  for (Index i = 0; i < A.rows; ++i) P.row_length[i] = A.row_length(P.permutation[i]);

  // "pad": element j of the sorted rows exists for the blocks whose first (longest) row is longer than j.
  const Index width = A.rows > 0 ? P.row_length[0] : 0;
  P.col_start.assign(static_cast<std::size_t>(width) + 1, 0);
  for (Index j = 0; j < width; ++j) {
    Index rows_with_j = 0;
    for (Index block = 0; block < P.padded_rows; block += block_rows)
      if (P.row_length[block] > j) rows_with_j = block + block_rows;
    P.col_start[j + 1] = P.col_start[j] + rows_with_j;
  }
  P.col.assign(static_cast<std::size_t>(P.col_start.back()), 0);
  P.val.assign(static_cast<std::size_t>(P.col_start.back()), Value(0));
#pragma omp parallel for schedule(static)
  for (Index i = 0; i < A.rows; ++i) {
    const Index original = P.permutation[i];
    for (Offset k = A.row_begin(original); k < A.row_end(original); ++k) {
      const Index j = static_cast<Index>(k - A.row_begin(original));
      const Offset at = P.col_start[j] + i;
      P.col[at] = symmetric_permutation ? inverse[A.col[k]] : A.col[k];
      P.val[at] = A.val[k];
    }
  }
  return P;
}

template <class Value>
CsrMatrix<Value> csr_from_pjds(const Pjds<Value>& P) {
  std::vector<Triplet<Value>> t;
  for (Index i = 0; i < P.rows; ++i)
    for (Index j = 0; j < P.row_length[i]; ++j) {
      const Offset at = P.col_start[j] + i;
      const Index col = P.symmetric_permutation ? P.permutation[P.col[at]] : P.col[at];
      t.push_back({P.permutation[i], col, P.val[at]});
    }
  return csr_from_triplets(P.rows, P.cols, std::move(t));
}

template <class Value>
void spmv(const Pjds<Value>& P, const Vector<Value>& x, Vector<Value>& y) {
  y.resize(static_cast<std::size_t>(P.rows));
#pragma omp parallel for schedule(static)
  for (Index i = 0; i < P.rows; ++i) {
    Value s = 0;
    for (Index j = 0; j < P.row_length[i]; ++j) {
      const Offset at = P.col_start[j] + i;
      s += P.val[at] * x[P.col[at]];
    }
    y[i] = s;
  }
}

template <class Value>
void permute_to(const Pjds<Value>& P, const Vector<Value>& x, Vector<Value>& x_permuted) {
  x_permuted.resize(x.size());
#pragma omp parallel for schedule(static)
  for (Index i = 0; i < P.rows; ++i) x_permuted[i] = x[P.permutation[i]];
}

template <class Value>
void permute_from(const Pjds<Value>& P, const Vector<Value>& x_permuted, Vector<Value>& x) {
  x.resize(x_permuted.size());
#pragma omp parallel for schedule(static)
  for (Index i = 0; i < P.rows; ++i) x[P.permutation[i]] = x_permuted[i];
}

#define AMGSOLVE_INSTANTIATE_PJDS(V)                                                     \
  template Pjds<V> pjds_from_csr(const CsrMatrix<V>&, Index, bool);                      \
  template CsrMatrix<V> csr_from_pjds(const Pjds<V>&);                                   \
  template void spmv(const Pjds<V>&, const Vector<V>&, Vector<V>&);                      \
  template void permute_to(const Pjds<V>&, const Vector<V>&, Vector<V>&);                \
  template void permute_from(const Pjds<V>&, const Vector<V>&, Vector<V>&);
AMGSOLVE_INSTANTIATE_PJDS(double)
AMGSOLVE_INSTANTIATE_PJDS(float)

}  // namespace amgsolve
