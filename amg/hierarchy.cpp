#include "amg/hierarchy.hpp"

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
#include "spgemm/registry.hpp"

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

// The aggregation phases on the device amg.device selects: the one place the setup looks at the device.
// The GPU versions (amg/gpu_setup.hpp) give bit-identical results, so the hierarchy does not depend on it.
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

}  // namespace

template <class Value>
AmgHierarchy<Value>::AmgHierarchy(std::shared_ptr<const CsrMatrix<Value>> A, const AmgParams& params,
                                  LevelCallback on_level, ProductCallback on_product, BackendKind backend)
    : params_(params), backend_(backend) {
  Timer total;
  if (params_.spgemm.empty()) params_.spgemm = default_spgemm_backend(backend);
  const SpgemmBackend& spgemm = SpgemmRegistry::instance().get(params_.spgemm, backend);
  levels_.push_back(Level{std::move(A), {}, {}, {}});
  while (true) {
    LevelInfo info;
    info.level = static_cast<int>(levels_.size()) - 1;
    info.rows = levels_.back().A->rows;
    info.nnz = levels_.back().A->nnz();
    Timer timer;
    const bool small_enough = info.rows <= params.coarse_size || static_cast<int>(levels_.size()) >= params.max_levels;
    if (small_enough || !coarsen(params_, spgemm, on_product, info)) {
      if (info.rows > kMaxDirectRows)
        throw NumericalError("coarsening stopped at level " + std::to_string(info.level) + " with " +
                             std::to_string(info.rows) + " rows, too many for the direct coarse solve (limit " +
                             std::to_string(kMaxDirectRows) +
                             "): lower amg.strength_threshold or amg.coarse_size, or raise amg.max_levels");
      coarse_ = std::make_shared<const SparseLdlt<Value>>(*levels_.back().A);
      info.coarsest = true;
      info.smoother = "direct (sparse LDL^T)";
      info.seconds = timer.seconds();
      info_.push_back(info);
      if (on_level) on_level(info);
      break;
    }
    info.seconds = timer.seconds();
    info_.push_back(info);
    if (on_level) on_level(info);
  }
  setup_seconds_ = total.seconds();
}

template <class Value>
AmgHierarchy<Value>::~AmgHierarchy() = default;

// Builds P, R and the next level's matrix from the last level; false if aggregation cannot coarsen.
template <class Value>
bool AmgHierarchy<Value>::coarsen(const AmgParams& params, const SpgemmBackend& selected,
                                  const ProductCallback& on_product, LevelInfo& info) {
  ObservedSpgemm<Value> observed(selected, on_product, info.level);
  const SpgemmBackend& spgemm = on_product ? static_cast<const SpgemmBackend&>(observed) : selected;
  Level& fine = levels_.back();
  const CsrMatrix<Value>& A = *fine.A;
  const std::uint64_t level_seed = seeded_hash(params.seed, static_cast<std::uint64_t>(info.level));

  LevelInfo::Phases& t = info.phases;
  Timer phase;
  auto lap = [&phase](double& slot) {
    slot += phase.seconds();
    phase.restart();
  };
  require_positive_diagonal(A, info.level);
  const AggregationPhases<Value> phases = aggregation_phases<Value>(backend_);
  const Strength strength = phases.strength(A, params.strength_threshold);
  lap(t.strength);
  Aggregates aggregates = phases.aggregate(strength.graph, level_seed);
  lap(t.aggregation);
  // Stop when aggregation no longer pays: nothing to aggregate, or under 10% fewer rows.
  if (aggregates.count == 0 || aggregates.count > 0.9 * A.rows) return false;
  info.aggregates = aggregates.count;

  const CsrMatrix<Value> T = phases.tentative(aggregates);
  if (info.level == 0) finest_aggregates_ = std::move(aggregates.id);
  const bool has_weak = strength.weak_entries > 0;
  const CsrMatrix<Value> filtered = has_weak ? filtered_matrix(A, strength) : CsrMatrix<Value>{};
  const CsrMatrix<Value>& A_f = has_weak ? filtered : A;
  lap(t.prolongator);

  const double rho_f = estimate_rho_dinv_a(A_f, params, level_seed);
  info.rho = has_weak ? estimate_rho_dinv_a(A, params, level_seed) : rho_f;
  lap(t.eigenvalues);

  observed.expect({"prolongator"});
  fine.P = std::make_shared<const CsrMatrix<Value>>(
      smoothed_prolongation(A_f, T, params.prolongator_damping / rho_f, spgemm, &info.prolongator_product));
  lap(t.prolongator);
  fine.R = std::make_shared<const CsrMatrix<Value>>(transpose(*fine.P));
  lap(t.transpose);
  GalerkinStats galerkin;
  observed.expect({"ap", "rap"});
  auto coarse = std::make_shared<const CsrMatrix<Value>>(galerkin_product(A, *fine.P, *fine.R, spgemm, &galerkin));
  info.ap_product = galerkin.ap;
  info.rap_product = galerkin.r_ap;
  info.spgemm_seconds = info.prolongator_product.seconds() + galerkin.ap.seconds() + galerkin.r_ap.seconds();
  lap(t.galerkin);

  fine.smoother = smoother_spec(A, params.smoother, info.rho);
  info.smoother = describe(fine.smoother);
  lap(t.smoother);
  levels_.push_back(Level{std::move(coarse), {}, {}, {}});
  return true;
}

template <class Value>
double AmgHierarchy<Value>::operator_complexity() const {
  double total = 0;
  for (const auto& l : levels_) total += static_cast<double>(l.A->nnz());
  return total / static_cast<double>(std::max<Offset>(1, levels_.front().A->nnz()));
}

template <class Value>
double AmgHierarchy<Value>::grid_complexity() const {
  double total = 0;
  for (const auto& l : levels_) total += l.A->rows;
  return total / std::max<double>(1, levels_.front().A->rows);
}

template <class Value>
std::uint64_t AmgHierarchy<Value>::bytes() const {
  std::uint64_t total = 0;
  for (std::size_t l = 0; l < levels_.size(); ++l) {
    if (l > 0) total += levels_[l].A->bytes();
    if (levels_[l].P) total += levels_[l].P->bytes() + levels_[l].R->bytes();
  }
  return total;
}

template class AmgHierarchy<double>;
template class AmgHierarchy<float>;

}  // namespace amgsolve
