#pragma once
// Basic CSR operations: construction from triplets, transpose, SpMV, diagonal, structural checks.
// All are OpenMP-parallel where it pays and give results independent of the thread count.
#include <string>
#include <utility>
#include <vector>

#include "common/parallel.hpp"
#include "sparse/csr.hpp"

namespace amgsolve {

template <class Value>
struct Triplet {
  Index row;
  Index col;
  Value value;
};

// Builds CSR from unsorted (row, col, value) triplets; duplicates are summed, explicit zeros kept.
template <class Value>
// Entries at the same place are summed; where first_duplicate is given, it receives the (row, column) of the
// first such place in row-major order (left as it was where there is none).
CsrMatrix<Value> csr_from_triplets(Index rows, Index cols, std::vector<Triplet<Value>> triplets,
                                   std::pair<Index, Index>* first_duplicate = nullptr);

// B = A^T, rows of B sorted. Parallel, deterministic.
template <class Value>
CsrMatrix<Value> transpose(const CsrMatrix<Value>& A);

// y = A x
template <class Value>
void spmv(const CsrMatrix<Value>& A, const Vector<Value>& x, Vector<Value>& y);

// r = b - A x
template <class Value>
void residual(const CsrMatrix<Value>& A, const Vector<Value>& x, const Vector<Value>& b, Vector<Value>& r);

// The main diagonal (zero where a row has no diagonal entry).
template <class Value>
Vector<Value> diagonal(const CsrMatrix<Value>& A);
// The diagonal of a block of rows [first_row, first_row + rows.rows) of a larger matrix, columns numbered
// globally: entry (i, first_row + i) of each row (zero where missing).
template <class Value>
Vector<Value> diagonal(const CsrMatrix<Value>& rows, Index first_row);

// Leaves out the off-diagonal entries stored with the value 0 (rows from first_row on, global columns):
// assembled finite-element files often hold them, and each would be carried into every Galerkin product,
// raising the operator complexity (docs/BENCHMARKS.md, "Structurally unusual matrices"). Returns how many.
Offset drop_stored_zeros(CsrMatrix<double>& rows, Index first_row = 0);

// Converts the value type (e.g. double -> float for a mixed-precision cycle).
template <class To, class From>
CsrMatrix<To> cast_values(const CsrMatrix<From>& A) {
  CsrMatrix<To> B;
  B.rows = A.rows;
  B.cols = A.cols;
  parallel_convert(A.row_ptr, B.row_ptr);
  parallel_convert(A.col, B.col);
  parallel_convert(A.val, B.val);
  return B;
}


// What makes A no CSR matrix (row_ptr of the wrong length, not starting at 0 or decreasing, or not
// ending at the entry count; a row's columns out of range, out of order or repeated; a value that is not
// finite), naming the first row
// at fault, counted from first_index; "" for a valid one. One parallel pass: cheap beside a setup, so the
// library checks every matrix it is given (a column past the end was read past x's end).
template <class Value>
std::string csr_structure_problem(const CsrMatrix<Value>& A, int first_index = 0);
// True where csr_structure_problem finds nothing.
template <class Value>
bool is_valid_csr(const CsrMatrix<Value>& A);

// The entry (i, j) where A differs most from A^T, relative to max(|a_ij|, |a_ji|, sqrt(|a_ii a_jj|)): an
// entry far below the diagonals is measured against them, so that round-off in an assembled matrix (1e-17
// beside -1e-17 where the diagonal is 4) is no asymmetry, while a coupling comparable to the diagonals
// must match its mirror to its own digits; a symmetric scaling D A D changes no answer. A missing a_ji
// counts as 0. relative == 0 means A is exactly symmetric.
struct Asymmetry {
  Index row = -1;
  Index col = -1;
  double relative = 0.0;
};

template <class Value>
Asymmetry largest_asymmetry(const CsrMatrix<Value>& A);

// What symmetric positive definiteness needs and costs little to check: square, every diagonal entry
// positive, symmetric to 1e-10 relative. Throws InputError "name: ..." naming the entry that fails, its
// indices counted from `first_index`: 1 as in a Matrix Market file, 0 for a scipy matrix (then said so).
void require_spd_candidate(const std::string& name, const CsrMatrix<double>& A, int first_index = 1);

// The same checks a piece at a time, for a matrix whose rows are spread over processes: the largest
// asymmetry of rows [first_row, first_row + rows.rows) (global columns) against those rows of A^T (the
// same numbering) and the diagonal entry of each entry's column (column_diagonals: a_jj at (i, j) for every
// stored a_ij), the worst of several such answers (the one largest_asymmetry gives for the whole), and
// the two messages: a diagonal entry (row: global, 0-based) that is not positive or is subnormal (below
// double's normal range), an asymmetry over 1e-10.
Asymmetry largest_asymmetry(const CsrMatrix<double>& rows, const CsrMatrix<double>& transposed_rows,
                            const CsrMatrix<double>& column_diagonals, Index first_row);
Asymmetry worst_asymmetry(const std::vector<Asymmetry>& candidates);
void require_positive_diagonal_entry(const std::string& name, Index row, double value, int first_index = 1);
void require_symmetry(const std::string& name, const Asymmetry& a, int first_index = 1);

}  // namespace amgsolve
