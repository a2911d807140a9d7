#pragma once
// Gustavson's SpGEMM (spgemm/gustavson/gustavson.cpp), one row of C: the products of row i of A with the
// rows of B it selects, summed in a dense accumulator over B's columns, then listed in column order (by a
// scan of the markers across the row's column window, or by a sort) and moved out, leaving the
// accumulator empty (kEmptySum). Variants: a narrow window accumulated without looking at the markers, R
// rows of A with the same columns at once (spgemm/gustavson/row_groups.hpp), and B with at most one entry
// per row.
#include <algorithm>
#include <cstdint>

#include "sparse/csr.hpp"
#include "spgemm/accumulator.hpp"
#include "spgemm/bitonic_sort.hpp"

namespace amgsolve::gustavson {

// The AVX-512 sorting network and marker scans, where the CPU has them.
inline const bool has_vector_kernels = vector_sort_available();

// B's rows that a row of A selects lie anywhere in B (the fine nodes of an aggregate and their
// neighbours, in P^T (AP)): the row kPrefetchDistance entries ahead is asked for while this one is
// accumulated, so its cache misses overlap the work instead of following it (a third cache line per row
// gained nothing more).
inline constexpr Offset kPrefetchDistance = 2;
template <class Value>
inline void prefetch_row(const CsrMatrix<Value>& B, Index k) {
  const Offset begin = B.row_ptr[k];
  __builtin_prefetch(B.col.data() + begin);
  __builtin_prefetch(B.val.data() + begin);
}

// What the rows of B selected by row i of A hold: their products and the window of columns they span
// (rows of B are sorted, so their first and last entries bound it).
struct RowReach {
  Offset products = 0;
  Index first = 0, last = -1;
  Index window() const { return last - first + 1; }
};
template <class Value>
inline RowReach row_reach(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B, Index i) {
  RowReach reach{0, B.cols, -1};
  for (Offset ka = A.row_begin(i); ka < A.row_end(i); ++ka) {
    const Offset begin = B.row_ptr[A.col[ka]], end = B.row_ptr[A.col[ka] + 1];
    if (begin == end) continue;
    reach.products += end - begin;
    reach.first = std::min(reach.first, B.col[begin]);
    reach.last = std::max(reach.last, B.col[end - 1]);
  }
  return reach;
}

// A row whose products fall into a window of at most kWindowPerProduct columns per product (banded
// finite-element and stencil rows, Galerkin rows that merge many products per entry) is accumulated
// without looking at the markers: every product is added into the accumulator (kept empty, kEmptySum,
// outside the current row) and stamps its column, and the stamped columns are listed by the AVX-512 scan of the
// window (about 0.1 ns a column). That saves a load per product and the branch on "is this column
// new", which mispredicts about once per new column. Past the threshold the scan of the wider window
// costs more than the branches it saves.
inline constexpr double kWindowPerProduct = 8.0;
inline bool unchecked_accumulation_pays(const RowReach& reach) {
  return has_vector_kernels &&
         static_cast<double>(reach.window()) <= kWindowPerProduct * static_cast<double>(reach.products);
}

// Adds A(i+r,k) B(k,:) for every k of row i into accumulator[R j + r], r < R: rows i .. i+R-1 of A have
// the same columns (see compute_row_group). kCheckMarker: a column's first product is stored (not
// added) and its column appended to cols (returns how many); otherwise every product is added and
// stamps marker[j] = i (returns 0).
template <int R, bool kCheckMarker, class Value>
inline Index accumulate_products(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B, Index i,
                                 Index* __restrict marker, Value* __restrict accumulator, Index* __restrict cols) {
  // Local restrict pointers: the stores into the accumulator cannot alias B, so B's arrays stay in
  // registers instead of being reloaded after every store.
  const Offset* __restrict b_begin = B.row_ptr.data();
  const Index* __restrict b_col = B.col.data();
  const Value* __restrict b_val = B.val.data();
  const Offset row_stride = R > 1 ? A.row_begin(i + 1) - A.row_begin(i) : 0;
  Index length = 0;
  const Offset ka_end = A.row_end(i);
  for (Offset ka = A.row_begin(i); ka < ka_end; ++ka) {
    const Index k = A.col[ka];
    Value a[R];
    for (int r = 0; r < R; ++r) a[r] = A.val[ka + r * row_stride];
    if (ka + kPrefetchDistance < ka_end) prefetch_row(B, A.col[ka + kPrefetchDistance]);
    for (Offset kb = b_begin[k]; kb < b_begin[k + 1]; ++kb) {
      const Index j = b_col[kb];
      Value* __restrict sums = accumulator + static_cast<std::size_t>(R) * static_cast<std::size_t>(j);
      if constexpr (kCheckMarker) {
        if (marker[j] != i) {  // a branch here measured faster than a branch-free append
          marker[j] = i;
          for (int r = 0; r < R; ++r) sums[r] = a[r] * b_val[kb];
          cols[length++] = j;
        } else {
          for (int r = 0; r < R; ++r) sums[r] += a[r] * b_val[kb];
        }
      } else {
        for (int r = 0; r < R; ++r) sums[r] += a[r] * b_val[kb];
        marker[j] = i;
      }
    }
  }
  return length;
}

// Lists the accumulated row(s) stamped i: their columns in order, by a scan of the markers across the
// window [first, first + window) or a sort of the `appended` columns the accumulation put in cols
// (0 when it put none: unchecked accumulation, always scanned), and their sums moved from the
// accumulator to vals (R rows back to back), leaving it empty (kEmptySum). Returns the length of each row. A single
// row moves its sums out in the same scan (list_marked_entries) when it was accumulated unchecked (a
// narrow window) or its columns fill at least 4 in 16 of the window; sparser windows measured faster
// with the separate gather (the power networks' rows).
template <int R, ListRoom kRoom, class Value>
inline Index list_row(Index* __restrict marker, Index i, Index first, Index window, Index appended,
                      Value* __restrict accumulator, Index* __restrict cols, Value* __restrict vals) {
  const bool scan = appended == 0 || scan_beats_sort(appended, window, has_vector_kernels);
  const bool dense = appended == 0 || 4 * static_cast<Offset>(appended) >= window;
  if (scan && dense && R == 1)  // a single row's sums lie side by side
    return list_marked_entries(marker, i, first, window, accumulator, cols, vals, true, kRoom);
  Index length = appended;
  if (scan)
    length = list_marked_columns(marker, i, first, window, cols, true, kRoom);
  else
    sort_columns(cols, static_cast<std::size_t>(length));
  for (Index p = 0; p < length; ++p) {
    Value* sums = accumulator + static_cast<std::size_t>(R) * static_cast<std::size_t>(cols[p]);
    for (int r = 0; r < R; ++r) {
      vals[r * length + p] = sums[r];
      sums[r] = kEmptySum<Value>;
    }
  }
  for (int r = 1; r < R; ++r) std::copy_n(cols, length, cols + r * length);
  return length;
}

// Rows i .. i+R-1 of C = sum_k A(i+r,k) B(k,:), accumulated, then listed in column order by a sort or by
// a scan of the markers across the row's column window (whichever scan_beats_sort expects to be
// cheaper), and written back to back from cols/vals. Returns the length of each. The accumulator is
// left empty, kEmptySum (unchecked accumulation relies on it). ListRoom::padded: cols and vals have kListPadding
// entries of room past the row's products, so the listing kernels may store whole registers (one_pass
// and one_pass_blocks, whose buffers are written in row order); numeric writes rows in place in C.
template <int R, ListRoom kRoom, class Value>
inline Index accumulate_rows(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B, Index i,
                             Index* __restrict marker, Value* __restrict accumulator, Index* __restrict cols,
                             Value* __restrict vals) {
  const RowReach reach = row_reach(A, B, i);
  if (reach.products == 0) return 0;
  if (unchecked_accumulation_pays(reach)) {
    accumulate_products<R, false>(A, B, i, marker, accumulator, cols);
    return list_row<R, kRoom>(marker, i, reach.first, reach.window(), 0, accumulator, cols, vals);
  }
  const Index appended = accumulate_products<R, true>(A, B, i, marker, accumulator, cols);
  return list_row<R, kRoom>(marker, i, reach.first, reach.window(), appended, accumulator, cols, vals);
}

// Row i of C when B has at most one entry per row: each entry of A's row lands in one column, so the
// row is accumulated in one pass over it (no window pass, no loop over B's row, no prefetch), its
// column window tracked on the way.
template <ListRoom kRoom, class Value>
inline Index accumulate_row_of_single_entries(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B, Index i,
                                              Index* __restrict marker, Value* __restrict sums,
                                              Index* __restrict cols, Value* __restrict vals) {
  const Offset* __restrict b_begin = B.row_ptr.data();
  const Index* __restrict b_col = B.col.data();
  const Value* __restrict b_val = B.val.data();
  Index length = 0, first = B.cols, last = -1;
  for (Offset ka = A.row_begin(i); ka < A.row_end(i); ++ka) {
    const Index k = A.col[ka];
    const Offset kb = b_begin[k];
    if (kb == b_begin[k + 1]) continue;
    const Index j = b_col[kb];
    const Value product = A.val[ka] * b_val[kb];
    if (marker[j] != i) {
      marker[j] = i;
      sums[j] = product;
      cols[length++] = j;
      first = std::min(first, j);
      last = std::max(last, j);
    } else {
      sums[j] += product;
    }
  }
  return length > 0 ? list_row<1, kRoom>(marker, i, first, last - first + 1, length, sums, cols, vals) : 0;
}

}  // namespace amgsolve::gustavson
