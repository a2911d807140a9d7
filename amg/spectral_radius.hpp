#pragma once
// Largest eigenvalue of D^-1 A for SPD A, by the Lanczos method on the similar symmetric matrix
// D^-1/2 A D^-1/2 (C. Lanczos 1950; see Saad, "Numerical Methods for Large Eigenvalue Problems",
// 2nd ed., 2011, section 6.6). A few steps give the top Ritz value, a lower bound that converges much
// faster than power iteration; callers apply a safety factor where an upper bound matters.
// The start vector is a seeded hash and all reductions are deterministic.
#include <cstdint>

#include "sparse/csr.hpp"

namespace amgsolve {

template <class Value>
double lanczos_max_eigenvalue_dinv_a(const CsrMatrix<Value>& A, int steps, std::uint64_t seed);

// Gershgorin's bound max_i sum_j |a_ij| / a_ii: an upper bound of rho(D^-1 A), exact in the limit for
// the Laplacians (2 for every Poisson stencil here), one pass over A.
template <class Value>
double gershgorin_bound_dinv_a(const CsrMatrix<Value>& A);

}  // namespace amgsolve
