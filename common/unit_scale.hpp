#pragma once
// The power of two 2^-e that brings a magnitude of about 2^e to [1, 2) (1 for zero, infinity or NaN), its
// exponent kept within double's normal range. Scaling by it is exact (the same digits on another scale, but
// for values that were or become subnormal), so that squares and products of values far from 1 (1e-300,
// 1e200) neither underflow nor overflow.
#include <math.h>

#include "common/host_device.hpp"

namespace amgsolve {

AMGSOLVE_HOST_DEVICE inline double unit_scale(double magnitude) {
  if (!isfinite(magnitude) || magnitude == 0.0) return 1.0;
  const int exponent = -ilogb(magnitude);
  return ldexp(1.0, exponent < -1022 ? -1022 : exponent > 1022 ? 1022 : exponent);
}

}  // namespace amgsolve
