#pragma once
// The AMG hierarchy: the levels smoothed aggregation built (amg/smoothed_aggregation.hpp) and what each cost.
// It stores them; the V-cycle (amg/vcycle.hpp) applies them on a backend.
#include <functional>
#include <memory>
#include <vector>

#include "amg/params.hpp"
#include "amg/smoother.hpp"
#include "sparse/sparse_ldlt.hpp"
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
struct CoarseningStep;
template <class Value>
class SmoothedAggregation;

// The levels of a smoothed-aggregation hierarchy, built on the host: each level's operator, prolongator P,
// restriction R = P^T and smoother parameters, and the coarsest level's factorisation. It only stores them;
// the V-cycle (amg/vcycle.hpp) applies them on a backend.
template <class Value>
class AmgHierarchy {
 public:
  using LevelCallback = std::function<void(const LevelInfo&)>;
  // Sees every SpGEMM of the setup: (level, product, A, B, C) with product "prolongator" (A_f T),
  // "ap" (A P) or "rap" (P^T (A P)); used to compare backends on the real products.
  using ProductCallback = std::function<void(int, const std::string&, const CsrMatrix<Value>&,
                                             const CsrMatrix<Value>&, const CsrMatrix<Value>&)>;
  template <class V>
  using Shared = std::shared_ptr<const CsrMatrix<V>>;

  // Builds the hierarchy for A (shared, not copied) by smoothed aggregation (amg/smoothed_aggregation.hpp).
  // on_level is called as each level is finished. With the cuda backend, strength, MIS-2 and the tentative
  // prolongator run on the GPU (bit-identical results) and params.spgemm must be one of its SpGEMM backends.
  AmgHierarchy(Shared<Value> A, const AmgParams& params, LevelCallback on_level = {}, ProductCallback on_product = {},
               BackendKind backend = BackendKind::cpu);
  ~AmgHierarchy();

  std::size_t levels() const { return levels_.size(); }
  const CsrMatrix<Value>& matrix(std::size_t level) const { return *levels_[level].A; }
  // P and R = P^T of a level (empty on the coarsest).
  const CsrMatrix<Value>& prolongator(std::size_t level) const { return or_empty(levels_[level].P); }
  const CsrMatrix<Value>& restriction(std::size_t level) const { return or_empty(levels_[level].R); }
  const Shared<Value>& shared_matrix(std::size_t level) const { return levels_[level].A; }
  const Shared<Value>& shared_prolongator(std::size_t level) const { return levels_[level].P; }
  const Shared<Value>& shared_restriction(std::size_t level) const { return levels_[level].R; }
  // The smoother of a level (not the coarsest): its polynomial, for the cycle to apply.
  const SmootherSpec& smoother(std::size_t level) const { return levels_[level].smoother; }
  // The coarsest level's sparse LDL^T.
  const std::shared_ptr<const SparseLdlt<Value>>& coarse_factor() const { return coarse_; }
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
    Shared<Value> A, P, R;
    SmootherSpec smoother;
  };

  static const CsrMatrix<Value>& or_empty(const Shared<Value>& M) {
    static const CsrMatrix<Value> empty;
    return M ? *M : empty;
  }

  // How SmoothedAggregation::build fills the levels, finest first.
  friend class SmoothedAggregation<Value>;
  void add_level(Shared<Value> A, CoarseningStep<Value>&& step, const LevelInfo& info);
  void add_coarsest(Shared<Value> A, std::shared_ptr<const SparseLdlt<Value>> factor, const LevelInfo& info);

  AmgParams params_;
  std::vector<Level> levels_;
  std::vector<LevelInfo> info_;
  Array<Index> finest_aggregates_;
  std::shared_ptr<const SparseLdlt<Value>> coarse_;
  double setup_seconds_ = 0.0;
};

}  // namespace amgsolve
