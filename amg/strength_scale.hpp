#pragma once
// The power of two by which strength of connection scales row i (amg/strength.cpp on the CPU,
// amg/cuda/strength.cu on the GPU: one formula, so both classify alike to the last bit). It brings the
// row's diagonal entry near 1, within double's normal powers. The test a_ij^2 >= theta^2 a_ii a_jj squares
// entries: for entries beyond 2^511 (or below 2^-537) the squares overflow (underflow), and unscaled the test
// compared infinities (zeros) instead of the entries. Scaled by an exact power of two, both sides are the
// same products scaled, so where nothing overflowed the result is the same bit for bit, and on a matrix
// 2^s A it is A's.
#include <math.h>

#include "common/host_device.hpp"

namespace amgsolve {

AMGSOLVE_HOST_DEVICE inline double strength_scale(double a_ii) {
  if (!isfinite(a_ii) || a_ii == 0.0) return 1.0;
  const int exponent = -ilogb(a_ii);
  return ldexp(1.0, exponent < -1022 ? -1022 : exponent > 1022 ? 1022 : exponent);
}

}  // namespace amgsolve
