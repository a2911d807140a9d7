#include "amgsolve/matrix_scale.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>

#include "common/error.hpp"
#include "common/parallel.hpp"
#include "sparse/csr_ops.hpp"

namespace amgsolve {

namespace {

// Beyond 2^+-64 the solver scales A: far enough from 1 that the matrices of physical units (a stiffness of
// 2e11 Pa, a permeability of 1e-15) are used as given, near enough that float's 2^+-126 keeps its room for
// the coarse levels' sums.
constexpr int kUnscaledExponents = 64;

}  // namespace

double largest_diagonal(const CsrMatrix<double>& rows, Index first_row) {
  const Vector<double> d = diagonal(rows, first_row);
  double largest = 0;
  for (const double entry : d) {
    if (!std::isfinite(entry)) return entry;
    largest = std::max(largest, std::abs(entry));
  }
  return largest;
}

std::string diagonal_range_problem(const CsrMatrix<double>& rows, int exponent, Index first_row) {
  const Vector<double> d = diagonal(rows, first_row);
  const auto n = static_cast<std::int64_t>(d.size());
  const std::int64_t i = first_index_where(n, [&](std::int64_t k) {
    return d[k] != 0 && std::abs(std::ldexp(d[k], -exponent)) < std::numeric_limits<double>::min();
  });
  if (i == n) return "";
  const std::string scale = exponent == 0 ? "A as given" : "A / 2^" + std::to_string(exponent) + ", its largest "
                                                           "diagonal entry brought near 1";
  return kDiagonalRangeProblem + std::to_string(first_row + i + 1) + ", " + format_number(d[i]) +
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
  const auto n = static_cast<std::int64_t>(A.val.size());
#pragma omp parallel for schedule(static)
  for (std::int64_t k = 0; k < n; ++k) A.val[k] = std::ldexp(A.val[k], -exponent);
  return A;
}

std::shared_ptr<const CsrMatrix<double>> scaled_down(std::shared_ptr<const CsrMatrix<double>> A, int exponent) {
  if (exponent == 0) return A;
  return std::make_shared<const CsrMatrix<double>>(scaled_down(CsrMatrix<double>(*A), exponent));
}

}  // namespace amgsolve
