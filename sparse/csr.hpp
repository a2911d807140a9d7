#pragma once
// Compressed sparse row matrix, the one sparse type every part of amgsolve shares.
//
// Index widths are chosen for scale: 32-bit column indices (matrices up to 2^31 - 1 rows/columns,
// half the index traffic of 64-bit) and 64-bit row offsets, nnz and flop counts, so products and
// hierarchies past 2^31 nonzeros need no rewrite. The value type is a template parameter; double and
// float are instantiated (float for mixed-precision cycles).
#include <cstdint>
#include <vector>

#include "common/allocator.hpp"

namespace amgsolve {

using Index = std::int32_t;   // row / column index
using Offset = std::int64_t;  // position in col/val, nnz, flop counts

template <class Value>
struct CsrMatrix {
  using value_type = Value;

  Index rows = 0;
  Index cols = 0;
  Array<Offset> row_ptr = {0};  // rows + 1 entries, row_ptr[0] = 0
  Array<Index> col;             // column indices, sorted and unique within each row
  Array<Value> val;

  CsrMatrix() = default;
  CsrMatrix(Index r, Index c) : rows(r), cols(c), row_ptr(static_cast<std::size_t>(r) + 1, 0) {}

  Offset nnz() const { return row_ptr.empty() ? 0 : row_ptr.back(); }
  Offset row_begin(Index i) const { return row_ptr[static_cast<std::size_t>(i)]; }
  Offset row_end(Index i) const { return row_ptr[static_cast<std::size_t>(i) + 1]; }
  Index row_length(Index i) const { return static_cast<Index>(row_end(i) - row_begin(i)); }
  bool is_square() const { return rows == cols; }
  // The same shape and stored positions as M (whatever either's values).
  template <class Other>
  bool same_pattern(const Other& M) const {
    return rows == M.rows && cols == M.cols && row_ptr == M.row_ptr && col == M.col;
  }

  // Bytes held by the three arrays (for memory reports).
  std::uint64_t bytes() const {
    return row_ptr.size() * sizeof(Offset) + col.size() * sizeof(Index) + val.size() * sizeof(Value);
  }
};

// Row lengths to row offsets: C.row_ptr[i + 1] holds the length of row i (e.g. after the symbolic phase
// of a product, or the counting pass of an assembly); turn the lengths into offsets and size C.col and
// C.val for the filling pass (their contents are left uninitialised).
template <class Value>
void offsets_from_row_lengths(CsrMatrix<Value>& C) {
  for (Index i = 0; i < C.rows; ++i) C.row_ptr[i + 1] += C.row_ptr[i];
}

template <class Value>
void allocate_from_row_lengths(CsrMatrix<Value>& C) {
  offsets_from_row_lengths(C);
  C.col.resize(static_cast<std::size_t>(C.nnz()));
  C.val.resize(static_cast<std::size_t>(C.nnz()));
}

// Rows [first, last) of A as a matrix of their own, with A's columns (a rank's block of a distributed matrix).
template <class Value>
CsrMatrix<Value> row_block(const CsrMatrix<Value>& A, Index first, Index last) {
  CsrMatrix<Value> block(last - first, A.cols);
  const Offset base = A.row_begin(first), end = A.row_begin(last);
  for (Index i = first; i < last; ++i) block.row_ptr[static_cast<std::size_t>(i - first) + 1] = A.row_end(i) - base;
  block.col.assign(A.col.begin() + base, A.col.begin() + end);
  block.val.assign(A.val.begin() + base, A.val.begin() + end);
  return block;
}

// Dense vector type used by solvers and smoothers.
template <class Value>
using Vector = Array<Value>;

}  // namespace amgsolve
