#pragma once
// The power of two the solver divides A by. Where A's largest diagonal entry lies beyond 2^+-64 (a matrix of
// 1e-300, or 1e+300, as unit systems can make one), the solver sets up and solves with A / 2^s, its largest
// diagonal entry brought to [1, 2): the Galerkin sums of the coarse levels, the float cycle of
// solver.precision: mixed and the solve's iterates then hold it as they hold a matrix of 1 (before, the
// coarse levels overflowed, a float cycle could not hold it, and the iterates left double's range). Between
// those bounds A is used as given: no copy, the same digits. Powers of two scale exactly (but for entries
// that become subnormal, 1e-300 below the diagonal), so the hierarchy is the one of A itself on another
// scale, and x is the same: A x = b is (A / 2^s) x = b / 2^s.
#include <memory>

#include "sparse/csr.hpp"

namespace amgsolve {

// The largest |a_ii| of a block of rows [first_row, first_row + rows.rows) of a matrix (global columns):
// the whole matrix for first_row 0. Not finite where a diagonal entry is not.
double largest_diagonal(const CsrMatrix<double>& rows, Index first_row = 0);

// s, with 2^s <= largest_diagonal < 2^(s+1), where that lies beyond 2^+-64; else 0 (and for 0 or a value
// that is not finite, which the setup refuses in its own words).
int matrix_exponent(double largest_diagonal);

// A's values times 2^-exponent (A itself for 0).
CsrMatrix<double> scaled_down(CsrMatrix<double> A, int exponent);
std::shared_ptr<const CsrMatrix<double>> scaled_down(std::shared_ptr<const CsrMatrix<double>> A, int exponent);

}  // namespace amgsolve
