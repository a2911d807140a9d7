#pragma once
// Padded jagged diagonals storage, pJDS (M. Kreutzer, G. Hager, G. Wellein, H. Fehske, A. Basermann,
// A. R. Bishop, IPDPSW 2012, ../shared/papers/pjds-kreutzer-2011.txt, section II, Fig. 1 and Listing 2).
//
// Starting from ELLPACK: the rows are sorted by length, longest first; blocks of block_rows consecutive
// (sorted) rows are padded only to the longest row of their block; column j of the resulting jagged
// array starts at col_start[j], so element j of sorted row i is at val[col_start[j] + i]. Because the
// rows are sorted, the rows that still have an element j form a prefix, and most of ELLPACK's padding
// disappears. No matrix-dependent tuning: block_rows is the warp size.
//
// The solve keeps vectors in their own order: the column indices stay the matrix's, and the GPU kernel
// writes sorted row i's result to row permutation[i] (backend/cuda/format_conversion.cuh). The paper's
// alternative, a symmetric permutation (square matrices: the columns relabelled too, so a Krylov solve could
// work on permuted vectors, permute_to / permute_from), is kept as an option the format tests compare.
#include "sparse/csr.hpp"

namespace amgsolve {

template <class Value>
struct Pjds {
  Index rows = 0, cols = 0;
  Index padded_rows = 0;       // rows rounded up to a multiple of block_rows
  Index block_rows = 32;
  bool symmetric_permutation = false;  // columns relabelled with the row permutation
  Array<Index> permutation;    // sorted position -> original row
  Array<Index> row_length;     // per sorted row (padded_rows entries)
  Array<Offset> col_start;     // width + 1 offsets into col/val
  Array<Index> col;
  Array<Value> val;

  Index width() const { return static_cast<Index>(col_start.size()) - 1; }
  std::uint64_t bytes() const {
    return permutation.size() * sizeof(Index) + row_length.size() * sizeof(Index) + col_start.size() * sizeof(Offset) +
           col.size() * sizeof(Index) + val.size() * sizeof(Value);
  }
};

// symmetric_permutation requires a square matrix.
template <class Value>
Pjds<Value> pjds_from_csr(const CsrMatrix<Value>& A, Index block_rows = 32, bool symmetric_permutation = false);

// The original (unpermuted) matrix.
template <class Value>
CsrMatrix<Value> csr_from_pjds(const Pjds<Value>& P);

// y_p = P x_p in the permuted basis (Listing 2 of the paper): y_p[i] = (A x)[permutation[i]], where x_p is
// x permuted (symmetric) or the original x (row permutation only).
template <class Value>
void spmv(const Pjds<Value>& P, const Vector<Value>& x, Vector<Value>& y);

// x_p[i] = x[permutation[i]] and back.
template <class Value>
void permute_to(const Pjds<Value>& P, const Vector<Value>& x, Vector<Value>& x_permuted);
template <class Value>
void permute_from(const Pjds<Value>& P, const Vector<Value>& x_permuted, Vector<Value>& x);

}  // namespace amgsolve
