#include "amgsolve/matrix_scale.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>

#include "amgsolve/vector_scale.hpp"
#include "common/error.hpp"
#include "sparse/csr_ops.hpp"

namespace amgsolve {

namespace {

// Beyond 2^+-64 the solver scales A: far enough from 1 that the matrices of physical units (a stiffness of
// 2e11 Pa, a permeability of 1e-15) are used as given, near enough that float's 2^+-126 keeps its room for
// the coarse levels' sums.
constexpr int kUnscaledExponents = 64;

}  // namespace

DiagonalMagnitudes diagonal_magnitudes(const CsrMatrix<double>& rows, Index first_row) {
  const Vector<double> d = diagonal(rows, first_row);
  DiagonalMagnitudes m;
  for (std::size_t i = 0; i < d.size(); ++i) {
    const double entry = d[i];
    if (!std::isfinite(entry)) {
      m.largest = entry;
      return m;
    }
    m.largest = std::max(m.largest, std::abs(entry));
    if (entry != 0 && (m.smallest_row < 0 || std::abs(entry) < std::abs(m.smallest))) {
      m.smallest = entry;
      m.smallest_row = first_row + static_cast<std::int64_t>(i);
    }
  }
  return m;
}

std::string diagonal_range_problem(const DiagonalMagnitudes& diagonal, int exponent) {
  if (diagonal.smallest_row < 0 || !std::isfinite(diagonal.largest) ||
      std::abs(std::ldexp(diagonal.smallest, -exponent)) >= std::numeric_limits<double>::min())
    return "";
  const std::string scale = exponent == 0 ? "A as given" : "A / 2^" + std::to_string(exponent) + ", its largest "
                                                           "diagonal entry brought near 1";
  return kDiagonalRangeProblem + std::to_string(diagonal.smallest_row + 1) + ", " + format_number(diagonal.smallest) +
         ", is below double's normal numbers (2.2e-308) on the scale the solver works on (" + scale +
         "): A's diagonal spans more than double holds; scale its rows and columns symmetrically first "
         "(D^-1/2 A D^-1/2)";
}

int matrix_exponent(double largest_diagonal) {
  if (!(largest_diagonal > 0) || !std::isfinite(largest_diagonal)) return 0;
  const int exponent = std::ilogb(largest_diagonal);
  return std::abs(exponent) > kUnscaledExponents ? exponent : 0;
}

CsrMatrix<double> scaled_down(CsrMatrix<double> A, int exponent) {
  if (exponent == 0) return A;
  times_power_of_two(A.val.data(), A.val.data(), static_cast<std::int64_t>(A.val.size()), -exponent);
  return A;
}

std::shared_ptr<const CsrMatrix<double>> scaled_down(std::shared_ptr<const CsrMatrix<double>> A, int exponent) {
  if (exponent == 0) return A;
  return std::make_shared<const CsrMatrix<double>>(scaled_down(CsrMatrix<double>(*A), exponent));
}

}  // namespace amgsolve
