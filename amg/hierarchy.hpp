#pragma once
// The smoothed-aggregation AMG hierarchy and its V-cycle.
//
// Setup, level by level (Vanek, Mandel & Brezina 1996; Bell, Dalton & Olson 2012):
//   strength graph -> MIS-2 aggregates -> tentative prolongator T -> filtered matrix A_f ->
//   rho(D^-1 A_f) by Lanczos or Gershgorin -> P = (I - 4/(3 rho) D^-1 A_f) T -> R = P^T -> A_c = R (A P),
// until the level has at most coarse_size rows (or aggregation stops reducing it), then the coarsest
// matrix is factorised. The SpGEMM backend is looked up by name once; this file never knows which.
#include <functional>
#include <memory>
#include <vector>

#include "amg/coarse_solver.hpp"
#include "amg/params.hpp"
#include "amg/smoother.hpp"
#include "spgemm/spgemm.hpp"

namespace amgsolve {

// What setup did on one level, for the level table and the JSON report.
struct LevelInfo {
  int level = 0;
  Index rows = 0;
  Offset nnz = 0;
  Index aggregates = 0;        // = rows of the next level (0 on the coarsest)
  double rho = 0.0;            // estimate of rho(D^-1 A) (amg.spectral_radius)
  double seconds = 0.0;        // building the transfer to the next level (or factorising, coarsest)
  double spgemm_seconds = 0.0;  // the three SpGEMMs: A_f T, A P, P^T (A P)
  SpgemmStats prolongator_product, ap_product, rap_product;
  // Seconds per setup phase on this level (they add up to `seconds`).
  struct Phases {
    double strength = 0, aggregation = 0, eigenvalues = 0, prolongator = 0, transpose = 0, galerkin = 0,
           smoother = 0;
  } phases;
  std::string smoother;         // description of the smoother used on this level
  bool coarsest = false;
};

template <class Value>
class AmgHierarchy {
 public:
  using LevelCallback = std::function<void(const LevelInfo&)>;
  // Sees every SpGEMM of the setup: (level, product, A, B, C) with product "prolongator" (A_f T),
  // "ap" (A P) or "rap" (P^T (A P)); used to compare backends on the real products.
  using ProductCallback = std::function<void(int, const std::string&, const CsrMatrix<Value>&,
                                             const CsrMatrix<Value>&, const CsrMatrix<Value>&)>;

  // Builds the hierarchy for A (shared, not copied). on_level is called as each level is finished. With the
  // cuda backend, strength, MIS-2 and the tentative prolongator run on the GPU (bit-identical results) and
  // params.spgemm must be one of its SpGEMM backends.
  AmgHierarchy(std::shared_ptr<const CsrMatrix<Value>> A, const AmgParams& params, LevelCallback on_level = {},
               ProductCallback on_product = {}, BackendKind backend = BackendKind::cpu);
  ~AmgHierarchy();

  // x = M^-1 b: one V-cycle from a zero initial guess (the preconditioner PCG applies).
  void apply(const Vector<Value>& b, Vector<Value>& x) const;

  std::size_t levels() const { return levels_.size(); }
  const CsrMatrix<Value>& matrix(std::size_t level) const { return *levels_[level].A; }
  const CsrMatrix<Value>& prolongator(std::size_t level) const { return levels_[level].P; }
  // R = P^T of a level (empty on the coarsest), its smoother (not on the coarsest), and the parameters the
  // hierarchy was built with (pre_smooth / post_smooth shape the cycle): what a second implementation of
  // cycle() (the device V-cycle, solver/cuda/device_vcycle.cu) needs to run the same cycle.
  const CsrMatrix<Value>& restriction(std::size_t level) const { return levels_[level].R; }
  const Smoother<Value>& smoother(std::size_t level) const { return *levels_[level].smoother; }
  const AmgParams& params() const { return params_; }
  const std::vector<LevelInfo>& info() const { return info_; }
  const Array<Index>& finest_aggregates() const { return finest_aggregates_; }
  const std::string& spgemm_backend() const { return params_.spgemm; }  // the one used (never empty)
  double operator_complexity() const;  // sum nnz(A_l) / nnz(A_0)
  double grid_complexity() const;      // sum rows(A_l) / rows(A_0)
  double setup_seconds() const { return setup_seconds_; }
  std::uint64_t bytes() const;         // memory held by the hierarchy (excluding the fine matrix)

 private:
  struct Level {
    std::shared_ptr<const CsrMatrix<Value>> A;
    CsrMatrix<Value> P, R;
    std::unique_ptr<Smoother<Value>> smoother;
    mutable Vector<Value> b, x, r;  // V-cycle work vectors
  };

  bool coarsen(const AmgParams& params, const SpgemmBackend& spgemm, const ProductCallback& on_product,
               LevelInfo& info);
  void cycle(std::size_t level, const Vector<Value>& b) const;

  AmgParams params_;
  BackendKind backend_;
  std::vector<Level> levels_;
  std::vector<LevelInfo> info_;
  Array<Index> finest_aggregates_;
  std::unique_ptr<CoarseSolver<Value>> coarse_;
  double setup_seconds_ = 0.0;
};

}  // namespace amgsolve
