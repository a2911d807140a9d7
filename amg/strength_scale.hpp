#pragma once
// The power of two by which strength of connection scales row i (amg/strength.cpp on the CPU,
// amg/cuda/strength.cu on the GPU: one formula, so both classify alike to the last bit). It brings the
// row's diagonal entry near 1, within double's normal powers. The test a_ij^2 >= theta^2 a_ii a_jj squares
// entries: for entries beyond 2^511 (or below 2^-537) the squares overflow (underflow), and unscaled the test
// compared infinities (zeros) instead of the entries. Scaled by an exact power of two, both sides are the
// same products scaled, so where nothing overflowed the result is the same bit for bit, and on a matrix
// 2^s A it is A's.
#include "common/host_device.hpp"
#include "common/unit_scale.hpp"

namespace amgsolve {

AMGSOLVE_HOST_DEVICE inline double strength_scale(double a_ii) { return unit_scale(a_ii); }

}  // namespace amgsolve
