#pragma once
// The power of two the solver divides A by. Where A's largest diagonal entry lies beyond 2^+-64 (a matrix of
// 1e-300, or 1e+300, as unit systems can make one), the solver sets up and solves with A / 2^s, its largest
// diagonal entry brought to [1, 2): the Galerkin sums of the coarse levels, the float cycle of
// solver.precision: mixed and the solve's iterates then hold it as they hold a matrix of 1 (before, the
// coarse levels overflowed, a float cycle could not hold it, and the iterates left double's range). Between
// those bounds A is used as given: no copy, the same digits. Powers of two scale exactly (but for entries
// that become subnormal, 1e-300 below the diagonal), so the hierarchy is the one of A itself on another
// scale, and x is the same: A x = b is (A / 2^s) x = b / 2^s.
#include <cstdint>
#include <memory>
#include <string>

#include "sparse/csr.hpp"

namespace amgsolve {

// The largest |a_ii| of a block of rows [first_row, first_row + rows.rows) of a matrix (global columns):
// the whole matrix for first_row 0 (not finite where a diagonal entry is not), and the smallest nonzero one,
// in one pass.
struct DiagonalMagnitudes {
  double largest = 0;
  double smallest = 0;          // a_ii itself, of the smallest nonzero |a_ii| (0: none)
  std::int64_t smallest_row = -1;  // its global row, from 0
};
DiagonalMagnitudes diagonal_magnitudes(const CsrMatrix<double>& rows, Index first_row = 0);
inline double largest_diagonal(const CsrMatrix<double>& rows, Index first_row = 0) {
  return diagonal_magnitudes(rows, first_row).largest;
}

// s, with 2^s <= largest_diagonal < 2^(s+1), where that lies beyond 2^+-64; else 0 (and for 0 or a value
// that is not finite, which the setup refuses in its own words).
int matrix_exponent(double largest_diagonal);

// What is wrong with A's diagonal (its rows' magnitudes) on the scale the solver works on (A / 2^exponent),
// or "": its smallest nonzero entry below double's normal numbers there, named by its row (counted from 1).
// A diagonal spanning more than double holds (diag(1e-200, 1e200)) would otherwise be taken for a singular
// or indefinite one by the setup, or overflow the solve.
std::string diagonal_range_problem(const DiagonalMagnitudes& diagonal, int exponent);
// How its text starts.
inline constexpr const char* kDiagonalRangeProblem = "A's diagonal entry in row ";

// A's values times 2^-exponent (A itself for 0).
CsrMatrix<double> scaled_down(CsrMatrix<double> A, int exponent);
std::shared_ptr<const CsrMatrix<double>> scaled_down(std::shared_ptr<const CsrMatrix<double>> A, int exponent);

}  // namespace amgsolve
