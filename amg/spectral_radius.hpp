#pragma once
// Largest eigenvalue of D^-1 A for SPD A, by the Lanczos method on the similar symmetric matrix
// S = D^-1/2 A D^-1/2 (C. Lanczos 1950; see Saad, "Numerical Methods for Large Eigenvalue Problems",
// 2nd ed., 2011, section 6.6). A few steps give the top Ritz value, a lower bound that converges much
// faster than power iteration; callers apply a safety factor where an upper bound matters. The start
// vector is a seeded hash and all reductions are deterministic.
//
// The recurrence is written once over a backend (the setup's, amg/smoothed_aggregation.hpp); each step is three
// passes, the backend's lanczos_product, lanczos_orthogonalize and lanczos_rescale (the cpu backend's below,
// the cuda backend's in amg/cuda/device_setup.hpp), and the Ritz value comes from the small tridiagonal matrix
// on the host. The sums are cut in the level's reduction blocks (common/reduction_block.hpp: kReductionBlock
// rows on the finest level, kAggregateBlock on a coarse one), so that ranks whose parts of a coarse level are
// whole small blocks sum as one process does. A system's smoothers scale by node blocks D_b
// (sparse/block_diagonal.hpp): rho(D_b^-1 A) by the same recurrence on L^-1 A L^-T, D_b = L L^T, on the host.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "common/error.hpp"
#include "common/exact_sum.hpp"
#include "common/reduction_block.hpp"
#include "sparse/csr.hpp"

namespace amgsolve {

class CpuBackend;

// The largest eigenvalue of the tridiagonal matrix with diagonal alpha and off-diagonal beta.
double largest_ritz_value(const std::vector<double>& alpha, const std::vector<double>& beta);

// ---- the cpu backend's passes (double vectors, A in its own precision)

// 1 / sqrt(a_ii) per row; NumericalError for a non-positive diagonal entry. (The mpi backend's has the ghost
// columns' entries after the own rows': lanczos_product reads it by A's column.)
template <class Value>
Vector<double> inverse_sqrt_diagonal(const CpuBackend&, const CsrMatrix<Value>& A);
// The same from the diagonal entries d, the error naming row first_row + i + 1 (a rank's rows start there).
template <class Value>
Vector<double> inverse_sqrt(const Vector<Value>& d, std::int64_t first_row);
// seeded_uniform(seed, i) - 0.5 per row: the start vector.
Vector<double> seeded_vector(const CpuBackend&, Index n, std::uint64_t seed);
// v = src / divisor (src may be v itself).
void lanczos_rescale(const CpuBackend&, const Vector<double>& src, double divisor, Vector<double>& v);
// w = scale (A (scale v)) - beta v_prev, i.e. S v - beta v_prev; returns w^T v, summed in blocks of `block`
// rows. `scaled` is the product's scratch, kept across the steps: D^-1/2 v is formed there first, so that
// the rows gather one vector rather than two (on coarse levels, whose columns scatter, the gathers are what
// the product waits for); the products, so the bits, are the same.
template <class Value>
double lanczos_product(const CpuBackend&, const CsrMatrix<Value>& A, const Vector<double>& scale, double beta,
                       const Vector<double>& v_prev, const Vector<double>& v, Vector<double>& w,
                       Vector<double>& scaled, std::int64_t block);
// w -= alpha v; returns w^T w, summed in blocks of `block` rows.
double lanczos_orthogonalize(const CpuBackend&, double alpha, const Vector<double>& v, Vector<double>& w,
                             std::int64_t block);
// The two passes' sums before rounding, what a rank contributes (amg/mpi/distributed_setup.cpp): scale and
// v_columns are read by A's column (a rank's own columns first, its ghosts after them), v by row.
template <class Value>
ExactSum lanczos_product_partial(const CsrMatrix<Value>& A, const Vector<double>& scale,
                                 const Vector<double>& v_columns, double beta, const Vector<double>& v_prev,
                                 const Vector<double>& v, Vector<double>& w, Vector<double>& scaled,
                                 std::int64_t block);
ExactSum lanczos_orthogonalize_partial(double alpha, const Vector<double>& v, Vector<double>& w, std::int64_t block);

// Gershgorin's bound max_i sum_j |a_ij| / a_ii: an upper bound of rho(D^-1 A), exact in the limit for
// the Laplacians (2 for every Poisson stencil here), one pass over A.
template <class Value>
double gershgorin_bound_dinv_a(const CsrMatrix<Value>& A);
template <class Value>
double gershgorin_bound_dinv_a(const CpuBackend&, const CsrMatrix<Value>& A) {
  return gershgorin_bound_dinv_a(A);
}

// ---- the recurrence

// The top Ritz value of `steps` Lanczos steps on a symmetric operator S of n rows here and `everywhere` rows
// on all ranks, given by product(beta, v_prev, v, w): w = S v - beta v_prev, returning w^T v, and
// orthogonalize(alpha, v, w): w -= alpha v, returning w^T w (both summed the level's way).
template <class Backend, class Product, class Orthogonalize>
double lanczos_largest_ritz_value(const Backend& backend, Index n, std::int64_t everywhere, int steps,
                                  std::uint64_t seed, Product&& product, Orthogonalize&& orthogonalize) {
  if (everywhere == 0) return 0.0;
  using Vec = typename Backend::template Vector<double>;
  Vec v = seeded_vector(backend, n, seed), v_prev, w;
  backend.zero(v_prev, n);
  backend.resize(w, n);
  // v = v / ||v||: v^T v is what orthogonalizing v against the zero vector v_prev returns, summed alike.
  lanczos_rescale(backend, v, std::sqrt(orthogonalize(0.0, v_prev, v)), v);
  std::vector<double> alpha, beta;
  double beta_prev = 0.0;
  for (int j = 0; j < std::min<std::int64_t>(steps, everywhere); ++j) {
    // w = S v - beta_{j-1} v_{j-1}, alpha = w^T v, w -= alpha v, beta = ||w||.
    const double a = product(beta_prev, v_prev, v, w);
    alpha.push_back(a);
    const double b = std::sqrt(orthogonalize(a, v, w));
    if (!std::isfinite(b)) throw NumericalError("NaN or infinity while estimating the spectral radius");
    if (b <= 1e-12 * std::abs(a)) break;  // invariant subspace found: the Ritz values are exact
    beta.push_back(b);
    beta_prev = b;
    v_prev.swap(v);
    lanczos_rescale(backend, w, b, v);
  }
  return largest_ritz_value(alpha, beta);
}

// `block`: the level's reduction block (level_reduction_block).
template <class Backend, class Value>
double lanczos_max_eigenvalue_dinv_a(const Backend& backend, const typename Backend::template Csr<Value>& A,
                                     int steps, std::uint64_t seed, std::int64_t block) {
  // S = D^-1/2 A D^-1/2 on this rank's rows (all, but on the mpi backend); every rank decides by all ranks' count
  if (backend.global_rows(A) == 0) return 0.0;
  using Vec = typename Backend::template Vector<double>;
  const Vec scale = inverse_sqrt_diagonal(backend, A);
  Vec scaled;
  return lanczos_largest_ritz_value(
      backend, A.rows, backend.global_rows(A), steps, seed,
      [&](double beta, const Vec& v_prev, const Vec& v, Vec& w) {
        return lanczos_product(backend, A, scale, beta, v_prev, v, w, scaled, block);
      },
      [&](double alpha, const Vec& v, Vec& w) { return lanczos_orthogonalize(backend, alpha, v, w, block); });
}

// On the host (the cpu backend).
template <class Value>
double lanczos_max_eigenvalue_dinv_a(const CsrMatrix<Value>& A, int steps, std::uint64_t seed,
                                     std::int64_t block = kReductionBlock);

// ---- a system's node blocks (sparse/block_diagonal.hpp), on the host

// The largest eigenvalue of D_b^-1 A, D_b the diagonal blocks of `nodes`, by the same recurrence on the
// similar symmetric matrix L^-1 A L^-T (D_b = L L^T block by block), summed in blocks of kReductionBlock
// nodes (amg/system_spectral_radius.hpp, where a level's own blocks are given). A NumericalError where a
// block is not positive definite.
template <class Value>
double lanczos_max_eigenvalue_block_dinv_a(const CsrMatrix<Value>& A, std::shared_ptr<const Array<Index>> nodes,
                                           int steps, std::uint64_t seed);
// Gershgorin's bound of rho(D_b^-1 A): max_i sum_j |(D_b^-1 A)_ij|, one pass over A, each row's terms summed
// in the order of the columns' places in column_order (a rank's columns' global numbers; null: their own);
// first_row numbers the rows in the error of a block that is not positive definite.
template <class Value>
double gershgorin_bound_block_dinv_a(const CsrMatrix<Value>& A, std::shared_ptr<const Array<Index>> nodes,
                                     const std::vector<std::int64_t>* column_order = nullptr, std::int64_t first_row = 0);

}  // namespace amgsolve
