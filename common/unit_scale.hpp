#pragma once
// The power of two 2^-e that brings a magnitude of about 2^e to [1, 2) (1 for zero, infinity or NaN), its
// exponent kept within double's normal range. Scaling by it is exact (the same digits on another scale, but
// for values that were or become subnormal), so that squares and products of values far from 1 (1e-300,
// 1e200) neither underflow nor overflow.
#include <stdint.h>
#include <string.h>

#include "common/host_device.hpp"

namespace amgsolve {

// Read from the exponent bits (IEEE 754 binary64), as ldexp(1, -ilogb(magnitude)) clamped to 2^+-1022 but
// without the two libm calls: the setup takes it once per row in the strength test, Gershgorin's bound and
// the row sums, where the calls cost 10 ns a row (docs/BENCHMARKS.md, "Where the setup's time goes").
AMGSOLVE_HOST_DEVICE inline double unit_scale(double magnitude) {
  uint64_t bits;
  memcpy(&bits, &magnitude, sizeof bits);
  const int biased = static_cast<int>((bits >> 52) & 0x7ff);  // the sign bit left out: |magnitude|
  if (biased == 0x7ff || (bits << 1) == 0) return 1.0;         // infinity, NaN, zero
  // ilogb(magnitude) is biased - 1023 for a normal number, below -1022 for a subnormal one (biased 0).
  const int wanted = biased == 0 ? 1022 : 1023 - biased;
  const int exponent = wanted < -1022 ? -1022 : wanted > 1022 ? 1022 : wanted;
  const uint64_t power = static_cast<uint64_t>(exponent + 1023) << 52;
  double scale;
  memcpy(&scale, &power, sizeof scale);
  return scale;
}

}  // namespace amgsolve
