#pragma once
// The AMG V-cycle (e.g. Trottenberg, Oosterlee & Schueller, "Multigrid", 2001, section 2.4; for smoothed
// aggregation Vanek, Mandel & Brezina 1996), written once over a backend: on level l, from x = 0,
//   pre_smooth steps (the first from x = 0; none: x = 0),
//   r = b - A x,  b_{l+1} = R r,  x_{l+1} = cycle(l + 1)  (the coarsest: the direct solve, or where it is
//                                                          too large, kCoarsestSmoothingSteps smoothing steps),
//   x += P x_{l+1},
//   post_smooth steps.
// With equal pre- and post-smoothing and symmetric smoothers it is a symmetric positive definite
// preconditioner. The levels come from the backend's Hierarchy; the backend multiplies them where they are
// (the cpu backend shares the hierarchy's CSR matrices, the cuda backend converts them on the device to
// `format`, the mpi backend keeps each rank's rows).
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "amg/chebyshev.hpp"
#include "amg/gauss_seidel.hpp"
#include "amg/hierarchy.hpp"
#include "amg/jacobi.hpp"
#include "sparse/spmv_format.hpp"

namespace amgsolve {

template <class Backend, class V>
class Vcycle {
 public:
  using Vec = typename Backend::template Vector<V>;
  using Mat = typename Backend::template Matrix<V>;

  // fine: level 0's operator on the backend when the caller already has it there (the outer iteration's
  // matrix, in the same precision), so that it is held once; nullptr: the cycle gets its own.
  // on_built: called with each operator of a level once the cycle holds it and no longer reads the
  // hierarchy's (so the caller may let the hierarchy release it); on the coarsest level only where it is
  // smoothed (the direct solve keeps the hierarchy's).
  using OperatorBuilt = std::function<void(std::size_t level, LevelOperator which, const Mat& built)>;
  //
  // The hierarchy is usually the backend's own; a layer may cycle on another backend's (the distributed
  // layer over a GPU, backend/mpi/mpi_over.hpp, on the levels the mpi backend's setup built).
  template <class BuiltOn>
  Vcycle(const Backend& backend, const Hierarchy<BuiltOn, V>& hierarchy, SpmvFormat format = SpmvFormat::csr,
         std::shared_ptr<const Mat> fine = nullptr, const OperatorBuilt& on_built = {})
      : backend_(backend), pre_smooth_(hierarchy.params().pre_smooth), post_smooth_(hierarchy.params().post_smooth) {
    const std::size_t coarsest = hierarchy.levels() - 1;
    levels_.resize(hierarchy.levels());  // not resized again: the smoothers refer to the levels' matrices
    for (std::size_t l = 0; l < levels_.size(); ++l) {
      Level& level = levels_[l];
      level.A = l == 0 && fine ? fine : backend.matrix(hierarchy.shared_matrix(l), format);
      if (l == coarsest) break;
      level.P = transfer_matrix(backend, hierarchy.shared_prolongator(l), format);
      if (on_built) on_built(l, LevelOperator::prolongator, *level.P);
      level.R = transfer_matrix(backend, hierarchy.shared_restriction(l), format);
      if (on_built) on_built(l, LevelOperator::restriction, *level.R);
      level.smoother = make_smoother(backend, hierarchy, l, *level.A);
      if (on_built) on_built(l, LevelOperator::matrix, *level.A);
    }
    if (hierarchy.coarsest_smoothed()) {
      levels_[coarsest].smoother = make_smoother(backend, hierarchy, coarsest, *levels_[coarsest].A);
      if (on_built) on_built(coarsest, LevelOperator::matrix, *levels_[coarsest].A);
    } else {
      coarse_ = std::make_unique<typename Backend::template CoarseSolve<V>>(
          backend, *hierarchy.coarsest_on_host(), hierarchy.coarse_factor(), hierarchy.coarse_nullspace());
    }
  }

  // x = M^-1 b: one V-cycle from a zero initial guess.
  void apply(const Vec& b, Vec& x) const {
    cycle(0, b);
    x.swap(levels_.front().x);
  }

  std::size_t levels() const { return levels_.size(); }

  // Memory the cycle holds on its backend beyond the hierarchy (device copies, work vectors, the smoothers'
  // D^-1).
  std::uint64_t bytes() const {
    std::uint64_t total = coarse_ ? coarse_->bytes() : 0;
    for (const Level& level : levels_) {
      for (const auto& M : {level.A, level.P, level.R})
        if (M) total += backend_.bytes(*M);
      total += sizeof(V) * (level.b.size() + level.x.size() + level.r.size());
      if (level.smoother) total += level.smoother->bytes();
    }
    return total;
  }

 private:
  // P or R for the cycle: in a layout of the backend's that may replace the hierarchy's (transfer_matrix,
  // the cpu backend's), else as the level matrices are.
  template <class Shared>
  static std::shared_ptr<const Mat> transfer_matrix(const Backend& backend, const Shared& M, SpmvFormat format) {
    if constexpr (requires { backend.transfer_matrix(M, format); })
      return backend.transfer_matrix(M, format);
    else
      return backend.matrix(M, format);
  }

  template <class BuiltOn>
  static std::unique_ptr<Smoother<Backend, V>> make_smoother(const Backend& backend,
                                                             const Hierarchy<BuiltOn, V>& hierarchy,
                                                             std::size_t l, const Mat& A) {
    const SmootherSpec& spec = hierarchy.smoother(l);
    if (spec.type == SmootherType::gauss_seidel) return gauss_seidel(backend, hierarchy.shared_matrix(l), spec);
    if (!spec.nodes) return smoother_with(backend, A, spec, backend.smoother_diagonal(hierarchy.matrix(l), smoother_scale(spec)));
    // A system's node blocks: only the cpu backend sets up a system (amg/smoothed_aggregation.hpp).
    if constexpr (requires { backend.smoother_block_diagonal(hierarchy.matrix(l), spec.nodes, 1.0); })
      return smoother_with(backend, A, spec,
                           backend.smoother_block_diagonal(hierarchy.matrix(l), spec.nodes, smoother_scale(spec)));
    else
      throw Error("internal: node-block smoothing on the " + std::string(to_string(Backend::kind)) + " backend");
  }
  // Gauss-Seidel sweeps the rows of the hierarchy's matrix, on a backend that has the sweep (the cpu one, and
  // the ranks' over it); the configuration refuses it on the others (config/schema.cpp).
  template <class SweepMatrix>
  static std::unique_ptr<Smoother<Backend, V>> gauss_seidel(const Backend& backend,
                                                            const std::shared_ptr<const SweepMatrix>& A,
                                                            const SmootherSpec& spec) {
    if constexpr (requires { backend.l1_gauss_seidel_inverse_diagonal(*A, *spec.sweep_blocks); })
      return std::make_unique<GaussSeidelSmoother<Backend, V, SweepMatrix>>(backend, A, spec);
    else
      throw InputError(kGaussSeidelOnCpuOnly);
  }
  // The smoother of spec's type, scaling by `diagonal` (a vector or node blocks).
  template <class Diagonal>
  static std::unique_ptr<Smoother<Backend, V>> smoother_with(const Backend& backend, const Mat& A,
                                                             const SmootherSpec& spec, Diagonal diagonal) {
    if (spec.type == SmootherType::jacobi)
      return std::make_unique<JacobiSmoother<Backend, V, Diagonal>>(backend, A, spec, std::move(diagonal));
    return std::make_unique<ChebyshevSmoother<Backend, V, Diagonal>>(backend, A, spec, std::move(diagonal));
  }

  struct Level {
    std::shared_ptr<const Mat> A, P, R;
    std::unique_ptr<Smoother<Backend, V>> smoother;
    mutable Vec b, x, r;  // right-hand side (below level 0), iterate, residual
  };

  // The cycle on level l for the right-hand side b (the caller's on level 0, levels_[l].b below it); the
  // result is left in levels_[l].x.
  void cycle(std::size_t l, const Vec& b) const {
    const Level& level = levels_[l];
    const Index n = level.A->rows;
    backend_.resize(level.x, n);
    if (l + 1 == levels_.size()) {
      if (coarse_)
        coarse_->solve(b, level.x);
      else
        for (int s = 0; s < kCoarsestSmoothingSteps; ++s) level.smoother->smooth(b, level.x, s == 0);
      return;
    }
    for (int s = 0; s < pre_smooth_; ++s) level.smoother->smooth(b, level.x, s == 0);
    if (pre_smooth_ == 0) backend_.zero(level.x, n);

    backend_.residual(*level.A, level.x, b, level.r);
    const Level& coarse = levels_[l + 1];
    backend_.spmv(*level.R, level.r, coarse.b);
    cycle(l + 1, coarse.b);
    backend_.spmv_add(*level.P, coarse.x, level.x);
    for (int s = 0; s < post_smooth_; ++s) level.smoother->smooth(b, level.x, false);
  }

  const Backend& backend_;
  int pre_smooth_, post_smooth_;
  std::vector<Level> levels_;
  std::unique_ptr<typename Backend::template CoarseSolve<V>> coarse_;
};

}  // namespace amgsolve
