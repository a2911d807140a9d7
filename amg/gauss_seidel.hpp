#pragma once
// Symmetric l1 hybrid Gauss-Seidel smoothing: A. H. Baker, R. D. Falgout, T. V. Kolev, U. M. Yang,
// "Multigrid smoothers for ultraparallel computing", SIAM J. Sci. Comput. 33(5), 2011, its hybrid
// Gauss-Seidel and l1 smoothers. The level's rows are cut into fixed blocks, its reduction blocks
// (common/reduction_block.hpp: 2,048 rows on the finest level, 64 aggregates on a coarse one, a system's in
// nodes), which are also the units MPI ranks hold rows in. A sweep is Gauss-Seidel within each block, reading
// the rows outside it as they were before the sweep (Jacobi between blocks), each row's diagonal increased by
// the absolute values of its entries outside the block (the l1 term), which makes the sweep convergent for
// any SPD matrix whatever the blocks: x_i <- x_i + (b_i - sum_j a_ij x_j) / (a_ii + sum_{j outside} |a_ij|).
// One smoothing step is a forward sweep and a backward one, whose product is self-adjoint in the A inner
// product, so the V-cycle stays a symmetric preconditioner for PCG. Because the blocks are fixed by the level
// and not by the threads or the ranks, the result is the same on any thread count and rank count.
#include <memory>
#include <utility>

#include "amg/smoother.hpp"
#include "common/device.hpp"  // SweepDirection

namespace amgsolve {

// SweepMatrix: the level's matrix as the backend sweeps it (the hierarchy's CSR on the cpu backend, its
// distributed matrix over MPI ranks; the solve's copy may be sliced ELLPACK, which has no rows to sweep).
template <class Backend, class V, class SweepMatrix>
class GaussSeidelSmoother final : public Smoother<Backend, V> {
 public:
  using Vec = typename Backend::template Vector<V>;

  // A shared: the solve may let the hierarchy's copy go where it multiplies a sliced ELLPACK one
  // (amgsolve/solver.cpp), and the sweeps still need the rows.
  GaussSeidelSmoother(const Backend& backend, std::shared_ptr<const SweepMatrix> A, const SmootherSpec& spec)
      : backend_(backend),
        A_(std::move(A)),
        blocks_(spec.sweep_blocks),
        inverse_diagonal_(backend.l1_gauss_seidel_inverse_diagonal(*A_, *blocks_)) {}

  void smooth(const Vec& b, Vec& x, bool x_is_zero) const override {
    if (x_is_zero) backend_.zero(x, static_cast<Index>(inverse_diagonal_.size()));  // sized, not yet zero
    backend_.gauss_seidel_sweep(*A_, *blocks_, inverse_diagonal_, b, x, before_, SweepDirection::forward);
    backend_.gauss_seidel_sweep(*A_, *blocks_, inverse_diagonal_, b, x, before_, SweepDirection::backward);
  }
  std::uint64_t bytes() const override {
    return held_bytes(inverse_diagonal_) + held_bytes(before_) + blocks_->size() * sizeof(Index);
  }

 private:
  const Backend& backend_;
  std::shared_ptr<const SweepMatrix> A_;
  std::shared_ptr<const Array<Index>> blocks_;
  Vec inverse_diagonal_;  // 1 / (a_ii + the l1 term)
  mutable Vec before_;    // x before the sweep (with the ghosts' entries over MPI)
};

}  // namespace amgsolve
