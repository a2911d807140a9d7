#pragma once
// The power of two the solve divides b by. The solve runs on b / 2^e, with 2^e about b's largest entry, and
// A / 2^s (amgsolve/matrix_scale.hpp), so on x / 2^(e - s), and scales x back: PCG's norms and dot products
// then neither underflow (b of 1e-170, or 1e-30 in the float cycle) nor overflow (1e+300). Powers of two scale
// exactly, so the iterates are those of b itself, bit for bit, wherever those exist. Over MPI ranks each
// rank's part of a vector is measured here and the ranks' largest taken by the Solver.
#include <cmath>
#include <cstdint>
#include <cstdlib>

#include "sparse/csr.hpp"

namespace amgsolve {

// max |v_i| (0 for an empty v), infinite where an entry is not finite.
double largest_magnitude(const Vector<double>& v);

// e with 2^e <= largest < 2^(e+1); 0 for 0 or a value that is not finite (a vector with a NaN or infinite
// entry, which the solve refuses as it is).
int vector_exponent(double largest);

// Multiplication by 2^exponent as ldexp rounds it: by a product where 2^exponent is a normal double (the exact
// product rounded once, as ldexp rounds it, without ldexp's libm call per entry: 1% of a mouse run's samples,
// docs/BENCHMARKS.md), by ldexp beyond.
class PowerOfTwo {
 public:
  explicit PowerOfTwo(int exponent)
      : exponent_(exponent), by_product_(std::abs(exponent) <= 1022), power_(std::ldexp(1.0, by_product_ ? exponent : 0)) {}
  double times(double x) const { return by_product_ ? x * power_ : std::ldexp(x, exponent_); }

 private:
  int exponent_;
  bool by_product_;
  double power_;
};

// to[k] = from[k] times 2^exponent for k in [0, n), rounded as ldexp rounds it (exact but where an entry
// leaves double's normal range), by all threads; from and to may be the same array.
void times_power_of_two(const double* from, double* to, std::int64_t n, int exponent);

// v times 2^exponent, entry by entry (times_power_of_two).
Vector<double> scaled(const Vector<double>& v, int exponent);

// Whether x times 2^-exponent differs from on_b_scale: scaling back by 2^exponent lost digits of an entry
// (underflow to a subnormal or to zero).
bool lost_digits(const Vector<double>& on_b_scale, const Vector<double>& x, int exponent);

// After scaling back: a NumericalError where the largest entry (of every rank's rows, `largest`) left
// double's range, above (overflow) or with every entry below its normal numbers (digits lost); `what` names
// the vector ("solution").
void require_in_double_range(double largest, const char* what);

}  // namespace amgsolve
