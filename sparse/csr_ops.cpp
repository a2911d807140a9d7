#include "sparse/csr_ops.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <cmath>

#include "common/error.hpp"
#include "common/parallel.hpp"

namespace amgsolve {

template <class Value>
CsrMatrix<Value> csr_from_triplets(Index rows, Index cols, std::vector<Triplet<Value>> triplets,
                                   std::pair<Index, Index>* first_duplicate) {
  std::sort(triplets.begin(), triplets.end(),
            [](const auto& a, const auto& b) { return a.row != b.row ? a.row < b.row : a.col < b.col; });
  CsrMatrix<Value> A(rows, cols);
  A.col.reserve(triplets.size());
  A.val.reserve(triplets.size());
  bool duplicate_seen = false;
  for (std::size_t k = 0; k < triplets.size(); ++k) {
    const auto& t = triplets[k];
    const bool duplicate = k > 0 && triplets[k - 1].row == t.row && triplets[k - 1].col == t.col;
    if (duplicate) {
      A.val.back() += t.value;
      if (first_duplicate && !duplicate_seen) *first_duplicate = {t.row, t.col};
      duplicate_seen = true;
      continue;
    }
    A.col.push_back(t.col);
    A.val.push_back(t.value);
    ++A.row_ptr[static_cast<std::size_t>(t.row) + 1];
  }
  for (Index i = 0; i < rows; ++i) A.row_ptr[i + 1] += A.row_ptr[i];
  return A;
}

// Parallel transpose: each thread counts the columns of its own contiguous block of rows, a prefix sum
// over (column, thread) gives every thread a private write cursor per column, and the scatter keeps rows
// in increasing order inside each column. The output is identical for any thread count.
template <class Value>
CsrMatrix<Value> transpose(const CsrMatrix<Value>& A) {
  CsrMatrix<Value> T(A.cols, A.rows);
  T.col.resize(static_cast<std::size_t>(A.nnz()));
  T.val.resize(static_cast<std::size_t>(A.nnz()));
  // Per-thread cursors cost threads x cols offsets: keep that below the size of the matrix itself.
  const std::int64_t by_rows = A.rows / 4096 + 1;
  const std::int64_t by_memory = A.nnz() / std::max<Index>(A.cols, 1) + 1;
  const int threads = static_cast<int>(std::max<std::int64_t>(1, std::min({std::int64_t{max_threads()}, by_rows, by_memory})));
  const std::size_t ncols = static_cast<std::size_t>(A.cols);
  // Allocated before the region, where running out of memory is an exception the caller can catch (inside,
  // it would end the process); the team that starts is at most `threads` strong.
  Array<Offset> cursor(static_cast<std::size_t>(threads) * ncols, 0);
  int team = 1;

#pragma omp parallel num_threads(threads)
  {
    // OpenMP may start fewer threads than asked for: split the rows by the team actually running.
#pragma omp single
    team = omp_get_num_threads();
    const int t = omp_get_thread_num();
    const auto [first_row, end_row] = static_block(A.rows, t, team);
    const auto begin = static_cast<Index>(first_row), end = static_cast<Index>(end_row);
    Offset* count = cursor.data() + static_cast<std::size_t>(t) * ncols;
    for (Offset k = A.row_begin(begin); k < A.row_begin(end); ++k) ++count[A.col[k]];
#pragma omp barrier
#pragma omp single
    {
      Offset running = 0;
      for (std::size_t c = 0; c < ncols; ++c) {
        T.row_ptr[c] = running;
        for (int s = 0; s < team; ++s) {
          Offset& slot = cursor[static_cast<std::size_t>(s) * ncols + c];
          const Offset n = slot;
          slot = running;
          running += n;
        }
      }
      T.row_ptr[ncols] = running;
    }
    for (Index i = begin; i < end; ++i) {
      for (Offset k = A.row_begin(i); k < A.row_end(i); ++k) {
        const Offset dst = count[A.col[k]]++;
        T.col[dst] = i;
        T.val[dst] = A.val[k];
      }
    }
  }
  return T;
}

template <class Value>
void spmv(const CsrMatrix<Value>& A, const Vector<Value>& x, Vector<Value>& y) {
  y.resize(static_cast<std::size_t>(A.rows));
  const Offset* __restrict rp = A.row_ptr.data();
  const Index* __restrict ci = A.col.data();
  const Value* __restrict av = A.val.data();
  const Value* __restrict xv = x.data();
  Value* __restrict yv = y.data();
#pragma omp parallel for schedule(static)
  for (Index i = 0; i < A.rows; ++i) {
    Value s = 0;
    for (Offset k = rp[i]; k < rp[i + 1]; ++k) s += av[k] * xv[ci[k]];
    yv[i] = s;
  }
}

template <class Value>
void residual(const CsrMatrix<Value>& A, const Vector<Value>& x, const Vector<Value>& b, Vector<Value>& r) {
  r.resize(static_cast<std::size_t>(A.rows));
  const Offset* __restrict rp = A.row_ptr.data();
  const Index* __restrict ci = A.col.data();
  const Value* __restrict av = A.val.data();
  const Value* __restrict xv = x.data();
  const Value* __restrict bv = b.data();
  Value* __restrict rv = r.data();
#pragma omp parallel for schedule(static)
  for (Index i = 0; i < A.rows; ++i) {
    Value s = bv[i];
    for (Offset k = rp[i]; k < rp[i + 1]; ++k) s -= av[k] * xv[ci[k]];
    rv[i] = s;
  }
}

namespace {

// Stored value at (row, column) of M (rows sorted), 0 where nothing is stored.
template <class Value>
double stored_or_zero(const CsrMatrix<Value>& M, Index row, Index column) {
  const auto first = M.col.begin() + M.row_begin(row), last = M.col.begin() + M.row_end(row);
  const auto at = std::lower_bound(first, last, column);
  return at != last && *at == column ? static_cast<double>(M.val[static_cast<std::size_t>(at - M.col.begin())]) : 0.0;
}

// Entry (i, first_row + i) of M's rows i < count, in M's precision. Rows of up to kScannedRow entries are
// scanned without a branch per entry (a binary search mispredicts about twice a row on stencil rows).
template <class Value>
Vector<Value> diagonal_of_rows(const CsrMatrix<Value>& M, Index first_row, Index count) {
  constexpr Offset kScannedRow = 32;
  Vector<Value> d(static_cast<std::size_t>(count));
#pragma omp parallel for schedule(static)
  for (Index i = 0; i < count; ++i) {
    const Offset begin = M.row_begin(i), end = M.row_end(i);
    if (end - begin > kScannedRow) {
      d[i] = static_cast<Value>(stored_or_zero(M, i, first_row + i));
      continue;
    }
    Offset at = -1;
    for (Offset k = begin; k < end; ++k) at = M.col[k] == first_row + i ? k : at;
    d[i] = at >= 0 ? M.val[at] : Value(0);
  }
  return d;
}

}  // namespace

template <class Value>
Vector<Value> diagonal(const CsrMatrix<Value>& A) {
  return diagonal_of_rows(A, 0, std::min(A.rows, A.cols));
}

template <class Value>
Vector<Value> diagonal(const CsrMatrix<Value>& rows, Index first_row) {
  return diagonal_of_rows(rows, first_row, rows.rows);
}

template <class Value>
bool is_valid_csr(const CsrMatrix<Value>& A) {
  return csr_structure_problem(A).empty();
}

namespace {

// Whether row i (whose row_ptr bounds are in order) has its columns in range and strictly increasing and
// finite values.
template <class Value>
bool row_is_valid(const CsrMatrix<Value>& A, Index i) {
  bool valid = true;
  Index previous = -1;
  for (Offset k = A.row_begin(i); k < A.row_end(i); ++k) {
    valid &= A.col[k] > previous && A.col[k] < A.cols && std::isfinite(A.val[k]);
    previous = A.col[k];
  }
  return valid;
}

// What is wrong with row i, or "".
template <class Value>
std::string row_problem(const CsrMatrix<Value>& A, Index i, int first_index) {
  const std::string row = "row " + std::to_string(i + first_index);
  for (Offset k = A.row_begin(i); k < A.row_end(i); ++k) {
    if (A.col[k] < 0 || A.col[k] >= A.cols)
      return row + " has column " + std::to_string(A.col[k] + first_index) + ", outside the matrix's " +
             std::to_string(A.cols) + " columns";
    if (k > A.row_begin(i) && A.col[k - 1] >= A.col[k])
      return row + "'s columns are not strictly increasing (sort each row's columns and sum duplicates)";
    if (!std::isfinite(A.val[k]))
      return row + " has a value that is not finite in column " + std::to_string(A.col[k] + first_index);
  }
  return "";
}

}  // namespace

template <class Value>
std::string csr_structure_problem(const CsrMatrix<Value>& A, int first_index) {
  if (A.rows < 0 || A.cols < 0)
    return "a negative size (" + std::to_string(A.rows) + " rows, " + std::to_string(A.cols) + " columns)";
  if (A.row_ptr.size() != static_cast<std::size_t>(A.rows) + 1)
    return "row_ptr has " + std::to_string(A.row_ptr.size()) + " entries for " + std::to_string(A.rows) +
           " rows (rows + 1 are needed)";
  if (A.row_ptr[0] != 0) return "row_ptr starts at " + std::to_string(A.row_ptr[0]) + ", not 0";
  for (Index i = 0; i < A.rows; ++i)  // before any row is read: its bounds must be in order
    if (A.row_end(i) < A.row_begin(i))
      return "row_ptr decreases at row " + std::to_string(i + first_index);
  if (A.col.size() != static_cast<std::size_t>(A.nnz()) || A.val.size() != A.col.size())
    return "row_ptr ends at " + std::to_string(A.nnz()) + " entries, but there are " + std::to_string(A.col.size()) +
           " column indices and " + std::to_string(A.val.size()) + " values";
  Index first_bad = A.rows;  // the first row at fault, whatever the thread count
#pragma omp parallel for schedule(static) reduction(min : first_bad)
  for (Index i = 0; i < A.rows; ++i)
    if (i < first_bad && !row_is_valid(A, i)) first_bad = i;
  return first_bad < A.rows ? row_problem(A, first_bad, first_index) : "";
}

namespace {

// Whether `a` is a worse asymmetry than `b`: larger, or as large and earlier in row-major order (so that the
// answer does not depend on how the rows were split over threads).
bool worse(const Asymmetry& a, const Asymmetry& b) {
  if (a.relative != b.relative) return a.relative > b.relative;
  return a.row < b.row || (a.row == b.row && a.col < b.col);
}

// The worst asymmetry over the entries of `rows` (row i numbered first_row + i, its diagonal at column
// first_row + i), each against mirror(i, j), the value its mirror has (0 where missing), relative to the
// larger of the two and the diagonals' geometric mean (column_diagonal(i, j): a_jj).
template <class Value, class Mirror, class ColumnDiagonal>
Asymmetry worst_over_entries(const CsrMatrix<Value>& rows, Index first_row, const Mirror& mirror,
                             const ColumnDiagonal& column_diagonal) {
  Asymmetry worst;
#pragma omp parallel
  {
    Asymmetry mine;
#pragma omp for schedule(static) nowait
    for (Index i = 0; i < rows.rows; ++i) {
      const double diagonal = std::abs(stored_or_zero(rows, i, first_row + i));
      for (Offset k = rows.row_begin(i); k < rows.row_end(i); ++k) {
        const double va = static_cast<double>(rows.val[k]);
        const double vt = mirror(i, rows.col[k]);
        // sqrt(a_ii) sqrt(a_jj): the product of two diagonals beyond 1.3e154 would overflow to inf, and every
        // asymmetry would look relative 0.
        const double diagonals = std::sqrt(diagonal) * std::sqrt(std::abs(column_diagonal(i, rows.col[k])));
        const double scale = std::max({std::abs(va), std::abs(vt), diagonals});
        double rel = scale > 0 ? std::abs(va - vt) / scale : 0.0;
        if (std::isnan(rel)) rel = 1.0;
        const Asymmetry here{first_row + i, rows.col[k], rel};
        if (rel > 0 && worse(here, mine)) mine = here;
      }
    }
#pragma omp critical(amgsolve_largest_asymmetry)
    if (mine.row >= 0 && worse(mine, worst)) worst = mine;
  }
  return worst;
}

}  // namespace

template <class Value>
Asymmetry largest_asymmetry(const CsrMatrix<Value>& A) {
  if (!A.is_square()) return Asymmetry{-1, -1, 1.0};
  // Each entry (i, j) against its mirror (j, i), found by binary search in the sorted row j (a zero when it is
  // missing): an entry present on one side only is found from that side. No transpose is formed.
  const Vector<Value> d = diagonal(A);
  return worst_over_entries(A, 0, [&](Index i, Index j) { return stored_or_zero(A, j, i); },
                            [&](Index, Index j) { return static_cast<double>(d[j]); });
}

Asymmetry largest_asymmetry(const CsrMatrix<double>& rows, const CsrMatrix<double>& transposed_rows,
                            const CsrMatrix<double>& column_diagonals, Index first_row) {
  return worst_over_entries(rows, first_row, [&](Index i, Index j) { return stored_or_zero(transposed_rows, i, j); },
                            [&](Index i, Index j) { return stored_or_zero(column_diagonals, i, j); });
}

Asymmetry worst_asymmetry(const std::vector<Asymmetry>& candidates) {
  Asymmetry worst;
  for (const Asymmetry& a : candidates)
    if (a.row >= 0 && worse(a, worst)) worst = a;
  return worst;
}

namespace {

// Indices counted from 1 need no word; from 0 (a scipy matrix) it is said.
std::string counted_from(int first_index) { return first_index == 1 ? "" : " (indices counted from 0)"; }

}  // namespace

void require_positive_diagonal_entry(const std::string& name, Index row, double value, int first_index) {
  if (!(value > 0))
    throw InputError(name + ": diagonal entry " + std::to_string(row + first_index) + " is " +
                     (value == 0 ? std::string("zero or missing") : "negative") + counted_from(first_index) +
                     ", so the matrix is not symmetric positive definite");
  // Subnormal: fewer significant digits than the setup's products and the factorisation need (a whole
  // matrix scaled by 1e-310 was refused later as "not SPD", which it is).
  if (value < std::numeric_limits<double>::min()) {
    char shown[32];
    std::snprintf(shown, sizeof shown, "%.3g", value);
    throw InputError(name + ": diagonal entry " + std::to_string(row + first_index) + " is " + shown +
                     counted_from(first_index) + ", below double's normal range (2.2e-308): scale the matrix");
  }
}

void require_symmetry(const std::string& name, const Asymmetry& a, int first_index) {
  if (a.relative <= 1e-10) return;
  const std::string i = std::to_string(a.row + first_index), j = std::to_string(a.col + first_index);
  char difference[32];
  std::snprintf(difference, sizeof difference, "%.3g", a.relative);
  throw InputError(name + ": matrix is not symmetric: entries (" + i + ", " + j + ") and (" + j + ", " + i +
                   ") differ (relative difference " + difference + ")" + counted_from(first_index));
}

void require_spd_candidate(const std::string& name, const CsrMatrix<double>& A, int first_index) {
  if (!A.is_square())
    throw InputError(name + ": matrix is " + std::to_string(A.rows) + "x" + std::to_string(A.cols) +
                     ", not square");
  if (A.rows == 0) throw InputError(name + ": the matrix is empty (0 rows): nothing to solve");
  const Vector<double> d = diagonal(A);
  for (Index i = 0; i < A.rows; ++i) require_positive_diagonal_entry(name, i, d[i], first_index);
  require_symmetry(name, largest_asymmetry(A), first_index);
}

#define AMGSOLVE_INSTANTIATE_CSR_OPS(V)                                                          \
  template CsrMatrix<V> csr_from_triplets(Index, Index, std::vector<Triplet<V>>, std::pair<Index, Index>*);                \
  template CsrMatrix<V> transpose(const CsrMatrix<V>&);                                          \
  template void spmv(const CsrMatrix<V>&, const Vector<V>&, Vector<V>&);                         \
  template void residual(const CsrMatrix<V>&, const Vector<V>&, const Vector<V>&, Vector<V>&);   \
  template Vector<V> diagonal(const CsrMatrix<V>&);                                              \
  template Vector<V> diagonal(const CsrMatrix<V>&, Index);                                       \
  template bool is_valid_csr(const CsrMatrix<V>&);                                               \
  template std::string csr_structure_problem(const CsrMatrix<V>&, int);                          \
  template Asymmetry largest_asymmetry(const CsrMatrix<V>&);
AMGSOLVE_INSTANTIATE_CSR_OPS(double)
AMGSOLVE_INSTANTIATE_CSR_OPS(float)

Offset drop_stored_zeros(CsrMatrix<double>& rows, Index first_row) {
  Offset kept = 0, dropped = 0;
  Offset begin = 0;
  for (Index i = 0; i < rows.rows; ++i) {
    const Offset end = rows.row_ptr[i + 1];
    for (Offset k = begin; k < end; ++k) {
      if (rows.val[k] == 0.0 && rows.col[k] != first_row + i) {
        ++dropped;
        continue;
      }
      rows.col[kept] = rows.col[k];
      rows.val[kept++] = rows.val[k];
    }
    begin = end;
    rows.row_ptr[i + 1] = kept;
  }
  rows.col.resize(static_cast<std::size_t>(kept));
  rows.val.resize(static_cast<std::size_t>(kept));
  return dropped;
}

}  // namespace amgsolve
