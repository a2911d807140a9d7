#include "amg/strength.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "amg/strength_scale.hpp"
#include "common/error.hpp"
#include "common/parallel.hpp"
#include "sparse/csr_ops.hpp"

namespace amgsolve {

namespace {

// The adjacency of rows [begin, end) from slot `out` on, where every off-diagonal entry is strong.
template <class Value>
void strong_neighbours_of_all(const CsrMatrix<Value>& A, Index begin, Index end, Offset out, StrengthGraph& g) {
  for (Index i = begin; i < end; ++i) {
    for (Offset k = A.row_begin(i); k < A.row_end(i); ++k)
      if (A.col[k] != i) g.adj[out++] = A.col[k];
    g.row_ptr[i + 1] = out;
  }
}

// The same where some are weak (`keep`): strong and weak entries alternate unpredictably, so rather than
// branch on each, every column is written where the next strong one goes and the cursor moves past strong
// ones only. Slots from `last` on are the next block's: those writes go to a spare instead.
template <class Value>
void strong_neighbours_by_keep(const CsrMatrix<Value>& A, const Array<std::uint8_t>& keep, Index begin, Index end,
                               Offset out, Offset last, StrengthGraph& g) {
  Index spare = 0;
  for (Index i = begin; i < end; ++i) {
    for (Offset k = A.row_begin(i); k < A.row_end(i); ++k) {
      const Index j = A.col[k];
      *(out < last ? &g.adj[out] : &spare) = j;
      out += keep[k] & (j != i);
    }
    g.row_ptr[i + 1] = out;
  }
}

// The test of eq. 3.2 for a_ij and a_jj on row i's scale (scale = strength_scale(a_ii), scaled_d_i = scale a_ii:
// the squares neither overflow nor underflow).
inline bool strong_coupling(double a_ij, double scale, double scaled_d_i, double d_j, double theta2) {
  const double a = scale * a_ij;
  // Bitwise, not short-circuit: on coarse levels strong and weak entries alternate unpredictably.
  return (a != 0.0) & (a * a >= theta2 * std::abs(scaled_d_i * (scale * d_j)));
}

// Row i's stored diagonal entry (0 where none is stored).
template <class Value>
double stored_diagonal(const CsrMatrix<Value>& A, Index i) {
  for (Offset k = A.row_begin(i); k < A.row_end(i); ++k)
    if (A.col[k] == i) return static_cast<double>(A.val[k]);
  return 0.0;
}

}  // namespace


template <class Value>
Strength strength_of_connection(const CsrMatrix<Value>& A, double theta) {
  return strength_of_connection(A, theta, diagonal(A));
}

template <class Value>
Strength strength_of_connection(const CsrMatrix<Value>& A, double theta, const Vector<Value>& d) {
  Strength s;
  s.keep.resize(static_cast<std::size_t>(A.nnz()));
  StrengthGraph& g = s.graph;
  g.nodes = A.rows;
  g.row_ptr.resize(static_cast<std::size_t>(A.rows) + 1);
  g.row_ptr[0] = 0;
  const double theta2 = theta * theta;
  // Each thread classifies a block of rows and counts its strong entries; the blocks' counts then place every
  // block's adjacency, which the same thread writes with its rows' offsets (no serial scan of the rows). The
  // adjacency is allocated between the two regions, on this thread: glibc gives memory allocated on another
  // thread from another arena, where the later setup's arrays would not reuse it once freed.
  std::vector<Offset> block_start(static_cast<std::size_t>(max_threads()) + 1, 0);
  std::vector<Offset> block_weak(static_cast<std::size_t>(max_threads()), 0);
  int team = 1;
  const auto block_rows = [&](int block) {
    const auto [begin, end] = static_block(A.rows, block, team);
    return std::pair{static_cast<Index>(begin), static_cast<Index>(end)};
  };
#pragma omp parallel
  {
#pragma omp single
    team = omp_get_num_threads();
    const int t = omp_get_thread_num();
    const auto [begin, end] = block_rows(t);
    Offset strong_in_block = 0, weak_in_block = 0;
    for (Index i = begin; i < end; ++i) {
      const double scale = strength_scale(double(d[i]));
      const double d_i = scale * double(d[i]);
      for (Offset k = A.row_begin(i); k < A.row_end(i); ++k) {
        const Index j = A.col[k];
        if (j == i) {
          s.keep[k] = 1;
          continue;
        }
        const bool is_strong = strong_coupling(static_cast<double>(A.val[k]), scale, d_i, double(d[j]), theta2);
        s.keep[k] = is_strong;
        strong_in_block += is_strong;
        weak_in_block += !is_strong;
      }
    }
    block_start[static_cast<std::size_t>(t) + 1] = strong_in_block;
    block_weak[static_cast<std::size_t>(t)] = weak_in_block;
  }
  for (int b = 0; b < team; ++b) block_start[b + 1] += block_start[b];
  g.adj.resize(static_cast<std::size_t>(block_start[team]));
#pragma omp parallel num_threads(team)
  for (int block = omp_get_thread_num(); block < team; block += omp_get_num_threads()) {
    const auto [begin, end] = block_rows(block);
    if (block_weak[block] == 0)
      strong_neighbours_of_all(A, begin, end, block_start[block], g);
    else
      strong_neighbours_by_keep(A, s.keep, begin, end, block_start[block], block_start[block + 1], g);
  }
  Offset weak = 0;
  for (int b = 0; b < team; ++b) weak += block_weak[b];
  s.weak_entries = weak;
  return s;
}

template <class Value>
DriftCount strength_drift_count(const CsrMatrix<Value>& rows, double theta, const Strength& kept,
                                std::int64_t first_row, std::int64_t stride, const Vector<Value>& column_diagonal) {
  if (kept.keep.size() != static_cast<std::size_t>(rows.nnz()))
    throw Error("the matrix's pattern is not the one its setup classified (" + std::to_string(rows.nnz()) +
                " entries against " + std::to_string(kept.keep.size()) +
                "): a re-setup needs that pattern (changed in place, the matrix cannot show its old one)");
  // a_jj from the given diagonal, or (one process) from row j itself: only the sampled rows' columns are read.
  const auto diagonal_of = [&](Index j) {
    return column_diagonal.empty() ? stored_diagonal(rows, j) : static_cast<double>(column_diagonal[j]);
  };
  const double theta2 = theta * theta;
  const std::int64_t first_sampled = (first_row + stride - 1) / stride * stride - first_row;
  DriftCount count;
  Offset couplings = 0, changed = 0;
#pragma omp parallel for schedule(static) reduction(+ : couplings, changed)
  for (std::int64_t r = first_sampled; r < rows.rows; r += stride) {
    const auto i = static_cast<Index>(r);
    const double scale = strength_scale(diagonal_of(i));
    const double d_i = scale * diagonal_of(i);
    for (Offset k = rows.row_begin(i); k < rows.row_end(i); ++k) {
      const Index j = rows.col[k];
      if (j == i) continue;
      ++couplings;
      const bool strong = strong_coupling(static_cast<double>(rows.val[k]), scale, d_i, diagonal_of(j), theta2);
      changed += strong != (kept.keep[k] != 0);
    }
  }
  count.couplings = couplings;
  count.changed = changed;
  return count;
}

template <class Value>
double strength_drift(const CsrMatrix<Value>& A, double theta, const Strength& kept, Index sampled_rows) {
  return strength_drift_count(A, theta, kept, 0, drift_stride(A.rows, sampled_rows), Vector<Value>{}).share();
}

template Strength strength_of_connection(const CsrMatrix<double>&, double);
template Strength strength_of_connection(const CsrMatrix<float>&, double);
template Strength strength_of_connection(const CsrMatrix<double>&, double, const Vector<double>&);
template Strength strength_of_connection(const CsrMatrix<float>&, double, const Vector<float>&);
template double strength_drift(const CsrMatrix<double>&, double, const Strength&, Index);
template double strength_drift(const CsrMatrix<float>&, double, const Strength&, Index);
template DriftCount strength_drift_count(const CsrMatrix<double>&, double, const Strength&, std::int64_t,
                                         std::int64_t, const Vector<double>&);
template DriftCount strength_drift_count(const CsrMatrix<float>&, double, const Strength&, std::int64_t, std::int64_t,
                                         const Vector<float>&);

}  // namespace amgsolve
