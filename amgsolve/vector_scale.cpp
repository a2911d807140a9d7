#include "amgsolve/vector_scale.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "common/error.hpp"
#include "common/parallel.hpp"

namespace amgsolve {

double largest_magnitude(const Vector<double>& v) {
  double largest = 0;
  for (const double entry : v) {
    if (!std::isfinite(entry)) return std::numeric_limits<double>::infinity();
    largest = std::max(largest, std::abs(entry));
  }
  return largest;
}

int vector_exponent(double largest) { return largest > 0 && std::isfinite(largest) ? std::ilogb(largest) : 0; }

void times_power_of_two(const double* from, double* to, std::int64_t n, int exponent) {
  const PowerOfTwo power(exponent);
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) to[i] = power.times(from[i]);
}

Vector<double> scaled(const Vector<double>& v, int exponent) {
  Vector<double> out(v.size());
  times_power_of_two(v.data(), out.data(), static_cast<std::int64_t>(v.size()), exponent);
  return out;
}

bool lost_digits(const Vector<double>& on_b_scale, const Vector<double>& x, int exponent) {
  const auto n = static_cast<std::int64_t>(x.size());
  const PowerOfTwo power(-exponent);
  return first_index_where(n, [&](std::int64_t i) { return power.times(x[i]) != on_b_scale[i]; }) < n;
}

void require_in_double_range(double largest, const char* what) {
  if (!std::isfinite(largest))
    throw NumericalError(std::string("the ") + what + " overflows double (entries beyond 1.8e+308): scale the "
                         "right-hand side down");
  if (largest > 0 && largest < std::numeric_limits<double>::min())
    throw NumericalError(std::string("the ") + what + " underflows double (every entry below 2.2e-308, where "
                         "digits are lost): scale the right-hand side up");
}

}  // namespace amgsolve
