#pragma once
// The smoothers of the V-cycle, polynomials in D^-1 A and hence self-adjoint in the A inner product, or a
// forward and a backward Gauss-Seidel sweep, whose product is: the V-cycle with equal pre- and
// post-smoothing is a symmetric positive definite preconditioner, as PCG requires. D is A's diagonal or, for a system (amg.smoother.diagonal), the diagonal blocks of its nodes
// (sparse/block_diagonal.hpp), symmetric positive definite too. Two halves:
//   * the setup's (host, once per level): SmootherSpec, the polynomial and its parameters for a level's
//     matrix and its estimate of rho(D^-1 A), and the diagonal scaling it applies;
//   * the cycle's: Smoother<Backend, V>, the polynomial applied with the backend's kernels, written once
//     (amg/jacobi.hpp, amg/chebyshev.hpp).
//
// Adding a smoother: a <name>.hpp with its Smoother<Backend, V> over the backend's operations (and any pass
// of its own as a backend kernel), its spec in <name>.cpp, the enum value and its name in params.hpp
// (SmootherType, kSmootherTypeNames: amg.smoother.type takes it from there), and a case wherever a smoother's
// type decides: smoother_spec() and the passes a step makes (smoother.cpp), the cycle's construction
// (vcycle.hpp), the level's smoother in the setup (smoothed_aggregation.hpp's level_smoother), the traffic
// model (amgsolve/iteration_traffic.cpp), the remedies an indefinite cycle suggests (amgsolve/solver.cpp),
// and the keys only some smoothers take (config/schema.cpp's only_with).
#include <cstdint>
#include <memory>
#include <string>

#include "amg/params.hpp"
#include "sparse/csr.hpp"

namespace amgsolve {

// What a smoother computes, as plain values. Jacobi: x <- x + omega D^-1 (b - A x), `sweeps` times;
// Chebyshev: the degree-`degree` Chebyshev polynomial on [lower, upper] of D^-1 A; Gauss-Seidel: a forward
// and a backward l1 hybrid sweep over the level's `sweep_blocks` (amg/gauss_seidel.hpp).
// D is A's diagonal, or with `nodes` the diagonal blocks of those nodes (sparse/block_diagonal.hpp).
struct SmootherSpec {
  SmootherType type = SmootherType::chebyshev;
  int degree = 0;
  double upper = 0.0, lower = 0.0;
  int sweeps = 0;
  double omega = 0.0;
  std::shared_ptr<const Array<Index>> nodes;  // node n's rows: [nodes[n], nodes[n + 1]); null: pointwise
  // Gauss-Seidel's blocks: block k is rows [sweep_blocks[k], sweep_blocks[k + 1]) of the level (of the rank's
  // rows over MPI), the level's reduction blocks (common/reduction_block.hpp).
  std::shared_ptr<const Array<Index>> sweep_blocks;
  std::int64_t sweep_unit = 0;         // those blocks' size, in rows or (a system's) nodes, as the report says
  bool nodes_per_sweep_unit = false;
};

// rho: the level's estimate of rho(D^-1 A) (amg.spectral_radius); gershgorin: Gershgorin's bound of
// rho(D^-1 A), above it (amg/spectral_radius.hpp).
SmootherSpec smoother_spec(const SmootherParams& p, double rho, double gershgorin);
SmootherSpec jacobi_spec(const SmootherParams& p, double rho);
// An error naming amg.smoother.omega where it makes Jacobi diverge on the level (jacobi.cpp): judged where rho
// is the Lanczos estimate (from below), not Gershgorin's bound (from above).
void require_jacobi_converges(const SmootherParams& p, SpectralRadius estimate, double rho, int level);
SmootherSpec chebyshev_spec(const SmootherParams& p, double rho, double gershgorin);
// The l1 hybrid Gauss-Seidel smoother on a level of `rows` rows (a rank's, over MPI): blocks of `unit` rows
// (a scalar level's reduction block), or with `node_ptr` and `node_blocks` (a system's level: its nodes'
// rows and its reduction blocks of nodes) those blocks' rows.
SmootherSpec gauss_seidel_spec(Index rows, std::int64_t unit, const Array<Index>* node_ptr = nullptr,
                               const Array<Index>* node_blocks = nullptr);

// The numerator of the diagonal scaling the smoother applies per row, numerator / a_ii: omega (Jacobi)
// or 1 (Chebyshev); the backend computes it in double and rounds to the cycle's precision.
double smoother_scale(const SmootherSpec& spec);

std::string describe(const SmootherSpec& spec);
int spmvs_per_step(const SmootherSpec& spec);  // matrix-vector products per smoothing step

template <class Backend, class V>
class Smoother {
 public:
  using Vec = typename Backend::template Vector<V>;
  virtual ~Smoother() = default;
  // x <- one smoothing step for A x = b. x_is_zero: x holds zeros (sized), so the first residual is b.
  virtual void smooth(const Vec& b, Vec& x, bool x_is_zero) const = 0;
  // Memory it holds: its D^-1 and work vectors.
  virtual std::uint64_t bytes() const = 0;
};

// The bytes of a smoother's D^-1 (a vector, or a system's node blocks) or work vector.
template <class T>
std::uint64_t held_bytes(const T& held) {
  if constexpr (requires { held.bytes(); })
    return held.bytes();
  else
    return held.size() * sizeof(typename T::value_type);
}

}  // namespace amgsolve
