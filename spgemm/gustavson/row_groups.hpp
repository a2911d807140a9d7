#pragma once
// Gustavson's SpGEMM (spgemm/gustavson/gustavson.cpp): how a product's rows are computed, decided once
// per product. Rows of A with the same columns (node blocks) are taken in groups and computed together;
// a B with one entry per row takes its own row kernel; every thread holds a workspace of accumulators for
// that layout. Rows and groups are fixed by A alone, so the result never depends on the thread count.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "sparse/csr.hpp"
#include "spgemm/accumulator.hpp"
#include "spgemm/gustavson/accumulate_row.hpp"

namespace amgsolve::gustavson {

// Rows of A with the same columns (the unknowns of one mesh node in finite-element matrices with several
// per node: PETSc's "inodes") give rows of C with the same columns, computed together: each row of B
// read, and each column looked up, once for all of them. Groups of R rows start at multiples of R only,
// so which rows group never depends on how the rows are split among threads.
inline constexpr int kMaxGroup = 3;
// Whether rows i .. i + rows - 1 of A have the same columns.
template <class Value>
inline bool rows_share_columns(const CsrMatrix<Value>& A, Index i, Index rows) {
  const Offset length = A.row_length(i);
  if (length == 0) return false;
  const Index* cols = A.col.data() + A.row_begin(i);
  for (Index r = 1; r < rows; ++r) {
    if (A.row_length(i + r) != length) return false;
    const Index* other = A.col.data() + A.row_begin(i + r);
    for (Offset e = 0; e < length; ++e)  // inline: most unequal rows differ in their first column
      if (cols[e] != other[e]) return false;
  }
  return true;
}

// The group size for A: the R in 2..kMaxGroup whose groups save the most work (R - 1 of every R rows'
// passes over B) in a sample of up to kSampledGroups groups spread over A, provided a quarter of the
// sampled groups share their columns; otherwise 1. Matrices without node blocks then cost nothing more
// per row. 2 unknowns per node give 2; 3 (3-D elasticity) and 6 (shells) give 3: with pairs alone, a
// third of the rows of a 3-unknown matrix were left out (pairs straddling two nodes). The sample is
// small because the smallest products notice its cost (docs/BENCHMARKS.md, "Gustavson and the shared
// kernels").
inline constexpr Index kSampledGroups = 64;
template <class Value>
inline int group_size(const CsrMatrix<Value>& A) {
  int best = 1;
  double best_saving = 0;
  for (int R = 2; R <= kMaxGroup; ++R) {
    const Index candidates = A.rows / R, samples = std::min<Index>(candidates, kSampledGroups);
    Index grouped = 0;
    for (Index s = 0; s < samples; ++s) {
      const auto g = static_cast<Index>(static_cast<std::int64_t>(candidates) * s / samples);
      grouped += rows_share_columns(A, R * g, R);
    }
    if (samples == 0 || 4 * grouped < samples) continue;
    const double saving = static_cast<double>(grouped) / static_cast<double>(samples) * (R - 1) / R;
    if (saving > best_saving) best = R, best_saving = saving;
  }
  return best;
}

// Whether every row of B has at most one entry: an aggregation or injection, such as smoothed
// aggregation's tentative prolongator, whose product with A (the prolongator smoothing) merges A's
// columns into aggregates.
template <class Value>
inline bool single_entry_rows(const CsrMatrix<Value>& B) {
  if (B.nnz() > B.rows) return false;
  for (Index k = 0; k < B.rows; ++k)
    if (B.row_length(k) > 1) return false;
  return true;
}

// How a product's rows are computed, decided once per product (row_layout): in groups of `group` rows
// of A (node blocks, group_size), and when rows are single, through B's single entries.
struct RowLayout {
  int group = 1;
  bool single_entry_rows = false;  // B has at most one entry per row
};
template <class Value>
inline RowLayout row_layout(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B) {
  const int group = group_size(A);
  return {group, group == 1 && single_entry_rows(B)};
}

// A thread's accumulators: the markers, one sum per column, and `group` per column for row groups
// (only when the product groups rows).
template <class Value>
struct Workspace {
  Workspace(Index columns, RowLayout layout)
      : group(layout.group),
        single_entry_rows(layout.single_entry_rows),
        marker(static_cast<std::size_t>(columns), -1),
        sums(static_cast<std::size_t>(columns), kEmptySum<Value>),
        group_sums(group > 1 ? static_cast<std::size_t>(group) * static_cast<std::size_t>(columns) : 0,
                   kEmptySum<Value>) {}
  int group;
  bool single_entry_rows;
  std::vector<Index> marker;
  std::vector<Value> sums, group_sums;
  std::uint64_t bytes() const {
    return marker.capacity() * sizeof(Index) + (sums.capacity() + group_sums.capacity()) * sizeof(Value);
  }
  static std::uint64_t bytes_per_column(RowLayout layout) {
    return sizeof(Index) + sizeof(Value) * (1 + (layout.group > 1 ? static_cast<std::uint64_t>(layout.group) : 0));
  }
};

inline Index row_groups(Index rows, int group) { return static_cast<Index>((Offset{rows} + group - 1) / group); }
inline Index rows_in_group(Index rows, int group, Index g) { return std::min<Index>(group, rows - group * g); }

template <ListRoom kRoom, class Value>
[[gnu::noinline]] Offset compute_node_group(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B, Index g,
                                                   Workspace<Value>& ws, Index* cols, Value* vals,
                                                   Index lengths[kMaxGroup]) {
  const Index i = ws.group * g, rows = rows_in_group(A.rows, ws.group, g);
  Index* marker = ws.marker.data();
  if (rows > 1 && rows_share_columns(A, i, rows)) {
    Value* sums = ws.group_sums.data();
    const Index length = rows == 2 ? accumulate_rows<2, kRoom>(A, B, i, marker, sums, cols, vals)
                                   : accumulate_rows<3, kRoom>(A, B, i, marker, sums, cols, vals);
    std::fill_n(lengths, rows, length);
    return static_cast<Offset>(rows) * length;
  }
  Offset end = 0;
  for (Index r = 0; r < rows; ++r) {
    lengths[r] = accumulate_rows<1, kRoom>(A, B, i + r, marker, ws.sums.data(), cols + end, vals + end);
    end += lengths[r];
  }
  return end;
}

// Rows group*g .. (the group, or what is left of A) of C, back to back from cols/vals; their lengths into
// lengths[]. Returns the entries written.
template <ListRoom kRoom, class Value>
inline Offset compute_row_group(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B, Index g,
                                Workspace<Value>& ws, Index* cols, Value* vals, Index lengths[kMaxGroup]) {
  if (ws.group > 1) return compute_node_group<kRoom>(A, B, g, ws, cols, vals, lengths);
  if (ws.single_entry_rows) {
    lengths[0] = accumulate_row_of_single_entries<kRoom>(A, B, g, ws.marker.data(), ws.sums.data(), cols, vals);
    return lengths[0];
  }
  // No node blocks: the common case, inlined into the loops over rows as it was before groups (every
  // row through the group code slowed small products down).
  lengths[0] = accumulate_rows<1, kRoom>(A, B, g, ws.marker.data(), ws.sums.data(), cols, vals);
  return lengths[0];
}

// Stores the lengths of group g's rows as C.row_ptr[first row + 1 ..], which allocate_product or a prefix
// sum turns into offsets.
template <class Value>
inline void set_row_lengths(CsrMatrix<Value>& C, int group, Index g, const Index* lengths) {
  const Index first = group * g, rows = rows_in_group(C.rows, group, g);
  for (Index r = 0; r < rows; ++r) C.row_ptr[static_cast<std::size_t>(first + r) + 1] = lengths[r];
}

}  // namespace amgsolve::gustavson
