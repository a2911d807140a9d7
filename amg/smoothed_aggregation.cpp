// Smoothed aggregation (amg/smoothed_aggregation.hpp): the coarsening of one level in the five steps of
// Vanek, Mandel & Brezina, and the loop that builds the levels.
#include "amg/smoothed_aggregation.hpp"

#include <type_traits>

#include "amg/galerkin.hpp"
#include "amg/gpu_setup.hpp"
#include "amg/mis2_aggregation.hpp"
#include "amg/smoothed_prolongation.hpp"
#include "amg/spectral_radius.hpp"
#include "amg/strength.hpp"
#include "amg/tentative_prolongation.hpp"
#include "common/error.hpp"
#include "common/hash.hpp"
#include "common/timer.hpp"
#include "sparse/csr_ops.hpp"

namespace amgsolve {
namespace {

// Sparse LDL^T fill grows superlinearly (for 3D grids about n^(4/3) with good orderings, more with AMD);
// beyond this size the "coarse" solve would dominate time and memory, so it is refused with advice.
constexpr Index kMaxDirectRows = 50000;

// A Galerkin operator P^T A P has diagonal entries p_j^T A p_j, positive for SPD A: a non-positive one
// proves that the input matrix is not positive definite.
template <class Value>
void require_positive_diagonal(const CsrMatrix<Value>& A, int level) {
  const Vector<Value> d = diagonal(A);
  for (Index i = 0; i < A.rows; ++i)
    if (!(d[i] > 0))
      throw NumericalError("AMG level " + std::to_string(level) + ": diagonal entry " + std::to_string(i + 1) +
                           " is " + std::to_string(static_cast<double>(d[i])) +
                           ", so the input matrix is not positive definite");
}

// Forwards to the selected backend and shows each product to the observer, labelled in call order.
template <class Value>
class ObservedSpgemm final : public SpgemmBackend {
 public:
  using Callback = typename AmgHierarchy<Value>::ProductCallback;
  ObservedSpgemm(const SpgemmBackend& inner, const Callback& callback, int level)
      : inner_(inner), callback_(callback), level_(level) {}

  // Labels of the next products, in the order they will be computed.
  void expect(std::vector<std::string> labels) { labels_ = std::move(labels); }

  std::string name() const override { return inner_.name(); }
  std::string description() const override { return inner_.description(); }
  BackendKind runs_on() const override { return inner_.runs_on(); }

 protected:
  CsrMatrix<double> compute(const CsrMatrix<double>& A, const CsrMatrix<double>& B,
                            SpgemmStats& stats) const override {
    return observe(A, B, stats);
  }
  CsrMatrix<float> compute(const CsrMatrix<float>& A, const CsrMatrix<float>& B, SpgemmStats& stats) const override {
    return observe(A, B, stats);
  }

 private:
  template <class V>
  CsrMatrix<V> observe(const CsrMatrix<V>& A, const CsrMatrix<V>& B, SpgemmStats& stats) const {
    CsrMatrix<V> C = inner_.multiply(A, B, &stats);
    if constexpr (std::is_same_v<V, Value>) {
      const std::string label = labels_.empty() ? "product" : labels_.front();
      if (!labels_.empty()) labels_.erase(labels_.begin());
      callback_(level_, label, A, B, C);
    }
    return C;
  }

  const SpgemmBackend& inner_;
  const Callback& callback_;
  int level_;
  mutable std::vector<std::string> labels_;
};

// Steps 1-3 on the backend's device: the one place the setup looks at it. The GPU versions
// (amg/gpu_setup.hpp) give bit-identical results, so the hierarchy does not depend on it.
template <class Value>
struct AggregationPhases {
  Strength (*strength)(const CsrMatrix<Value>&, double);
  Aggregates (*aggregate)(const StrengthGraph&, std::uint64_t);
  CsrMatrix<Value> (*tentative)(const Aggregates&);
};

template <class Value>
AggregationPhases<Value> aggregation_phases(BackendKind backend) {
  if (backend == BackendKind::cuda) {
    require_gpu("backend: cuda");
    return {&gpu_strength_of_connection<Value>, &gpu_mis2_aggregation, &gpu_tentative_prolongation<Value>};
  }
  return {&strength_of_connection<Value>, &mis2_aggregation, &tentative_prolongation<Value>};
}

template <class Value>
double estimate_rho_dinv_a(const CsrMatrix<Value>& A, const AmgParams& params, std::uint64_t seed) {
  if (params.spectral_radius == SpectralRadius::gershgorin) return gershgorin_bound_dinv_a(A);
  return lanczos_max_eigenvalue_dinv_a(A, params.lanczos_steps, seed);
}

// Accumulates the seconds since the last lap into a phase's slot.
class PhaseClock {
 public:
  void lap(double& slot) {
    slot += timer_.seconds();
    timer_.restart();
  }

 private:
  Timer timer_;
};

}  // namespace

template <class Value>
SmoothedAggregation<Value>::SmoothedAggregation(const AmgParams& params, BackendKind backend,
                                                const SpgemmBackend& spgemm, ProductCallback on_product)
    : params_(params), backend_(backend), spgemm_(spgemm), on_product_(std::move(on_product)) {}

template <class Value>
std::optional<CoarseningStep<Value>> SmoothedAggregation<Value>::coarsen(const CsrMatrix<Value>& A,
                                                                         LevelInfo& info) const {
  ObservedSpgemm<Value> observed(spgemm_, on_product_, info.level);
  const SpgemmBackend& spgemm = on_product_ ? static_cast<const SpgemmBackend&>(observed) : spgemm_;
  const std::uint64_t level_seed = seeded_hash(params_.seed, static_cast<std::uint64_t>(info.level));
  const AggregationPhases<Value> on_device = aggregation_phases<Value>(backend_);
  LevelInfo::Phases& t = info.phases;
  PhaseClock clock;
  require_positive_diagonal(A, info.level);

  // 1. strong couplings
  const Strength strength = on_device.strength(A, params_.strength_threshold);
  clock.lap(t.strength);
  // 2. aggregation; stop when it no longer pays: nothing to aggregate, or under 10% fewer rows
  Aggregates aggregates = on_device.aggregate(strength.graph, level_seed);
  clock.lap(t.aggregation);
  if (aggregates.count == 0 || aggregates.count > 0.9 * A.rows) return std::nullopt;
  info.aggregates = aggregates.count;
  // 3. tentative prolongator, and the filtered matrix for step 4
  const CsrMatrix<Value> T = on_device.tentative(aggregates);
  const bool has_weak = strength.weak_entries > 0;
  const CsrMatrix<Value> filtered = has_weak ? filtered_matrix(A, strength) : CsrMatrix<Value>{};
  const CsrMatrix<Value>& A_f = has_weak ? filtered : A;
  clock.lap(t.prolongator);
  // 4. smoothed prolongator, damped by the spectral radius of D_f^-1 A_f
  const double rho_f = estimate_rho_dinv_a(A_f, params_, level_seed);
  info.rho = has_weak ? estimate_rho_dinv_a(A, params_, level_seed) : rho_f;
  clock.lap(t.eigenvalues);
  CoarseningStep<Value> step;
  observed.expect({"prolongator"});
  step.P = std::make_shared<const CsrMatrix<Value>>(
      smoothed_prolongation(A_f, T, params_.prolongator_damping / rho_f, spgemm, &info.prolongator_product));
  clock.lap(t.prolongator);
  step.R = std::make_shared<const CsrMatrix<Value>>(transpose(*step.P));
  clock.lap(t.transpose);
  // 5. coarse operator
  GalerkinStats galerkin;
  observed.expect({"ap", "rap"});
  step.coarse = std::make_shared<const CsrMatrix<Value>>(galerkin_product(A, *step.P, *step.R, spgemm, &galerkin));
  info.ap_product = galerkin.ap;
  info.rap_product = galerkin.r_ap;
  info.spgemm_seconds = info.prolongator_product.seconds() + galerkin.ap.seconds() + galerkin.r_ap.seconds();
  clock.lap(t.galerkin);
  // and the level's smoother
  step.smoother = smoother_spec(A, params_.smoother, info.rho);
  info.smoother = describe(step.smoother);
  clock.lap(t.smoother);
  step.aggregates = std::move(aggregates.id);
  return step;
}

template <class Value>
void SmoothedAggregation<Value>::build(std::shared_ptr<const CsrMatrix<Value>> A, AmgHierarchy<Value>& hierarchy,
                                       const LevelCallback& on_level) const {
  std::shared_ptr<const CsrMatrix<Value>> level_matrix = std::move(A);
  for (int level = 0;; ++level) {
    LevelInfo info;
    info.level = level;
    info.rows = level_matrix->rows;
    info.nnz = level_matrix->nnz();
    Timer timer;
    const bool small_enough = info.rows <= params_.coarse_size || level + 1 >= params_.max_levels;
    std::optional<CoarseningStep<Value>> step;
    if (!small_enough) step = coarsen(*level_matrix, info);
    if (!step) {
      if (info.rows > kMaxDirectRows)
        throw NumericalError("coarsening stopped at level " + std::to_string(level) + " with " +
                             std::to_string(info.rows) + " rows, too many for the direct coarse solve (limit " +
                             std::to_string(kMaxDirectRows) +
                             "): lower amg.strength_threshold or amg.coarse_size, or raise amg.max_levels");
      auto factor = std::make_shared<const SparseLdlt<Value>>(*level_matrix);
      info.coarsest = true;
      info.smoother = "direct (sparse LDL^T)";
      info.seconds = timer.seconds();
      hierarchy.add_coarsest(std::move(level_matrix), std::move(factor), info);
      if (on_level) on_level(info);
      return;
    }
    info.seconds = timer.seconds();
    std::shared_ptr<const CsrMatrix<Value>> coarse = step->coarse;
    hierarchy.add_level(std::move(level_matrix), std::move(*step), info);
    if (on_level) on_level(info);
    level_matrix = std::move(coarse);
  }
}

template class SmoothedAggregation<double>;
template class SmoothedAggregation<float>;

}  // namespace amgsolve
