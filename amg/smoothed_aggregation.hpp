#pragma once
// Smoothed aggregation (P. Vanek, J. Mandel, M. Brezina, "Algebraic multigrid by smoothed aggregation for
// second and fourth order elliptic problems", Computing 56, 1996), with the aggregation of Bell, Dalton &
// Olson (SIAM J. Sci. Comput. 34, 2012: MIS-2). Each level A is coarsened in five steps:
//
//   1. strong couplings    j is a strong neighbour of i when |a_ij| >= theta sqrt(a_ii a_jj)   strength.hpp
//   2. aggregation          disjoint aggregates of strong neighbours, rooted at a maximal
//                           independent set of distance 2 (seeded hash priorities)             mis2_aggregation.hpp
//   3. tentative prolongator T: column k is the near-nullspace vector B (1 on the finest level)
//                           on aggregate k, normalised; the norms are the next level's B     tentative_prolongation.hpp
//   4. smoothed prolongator P = (I - omega D_f^-1 A_f) T, omega = (4/3) / rho(D_f^-1 A_f), with A_f the
//                           filtered matrix (weak couplings lumped into the diagonal:
//                           filtered_matrix.hpp)                                             smoothed_prolongation.hpp
//   5. coarse operator      A_c = P^T (A P), R = P^T kept for the cycle      smooth_and_multiply below
//
// and the level's smoother is fitted to rho(D^-1 A) (smoother.hpp). A system (amg.block_size, several
// near-nullspace vectors; the cpu backend) takes steps 1-3 node by node, T by a QR factorisation per aggregate
// (amg/system_setup.hpp), and its smoothers scale by the nodes' diagonal blocks D_b (sparse/block_diagonal.hpp).
// Coarsening stops at amg.coarse_size rows, at amg.max_levels, or when aggregation removes less than 10% of
// the rows; the coarsest level is factorised on the host (sparse LDL^T, sparse/sparse_ldlt.hpp), the only
// step that leaves the backend. A singular matrix with the constant nullspace (amg.nullspace, amg/nullspace.hpp)
// keeps it on every level, with the coarsest level's nullspace B known exactly, and the coarsest solve is its
// pseudo-inverse; so does a singular system, whose nullspace is B C of each level's near-nullspace vectors B,
// its prolongators smoothed with A itself rather than A_f (amg/system_nullspace.hpp).
//
// A re-setup for new values on the same pattern keeps steps 2-3 and repeats 4-5 (amg/resetup.hpp), and
// step 1 where it can (a level whose matrix keeps its first pattern keeps its first classification).
//
// Written once over a backend: every step is a call of the backend's operations (multiply, transpose, ...)
// or of the step's own function overloaded for the backend (strength_of_connection(backend, A, theta):
// amg/strength.hpp for the cpu backend, amg/cuda/device_setup.hpp for the cuda backend), so the setup
// stays where the backend keeps its data. The result is a Hierarchy<Backend, Value>, which only stores
// the levels.
#include <cmath>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "amg/filtered_matrix.hpp"
#include "amg/hierarchy.hpp"
#include "amg/improve_near_nullspace.hpp"
#include "amg/mis2_aggregation.hpp"
#include "amg/system_setup.hpp"
#include "amg/nullspace.hpp"
#include "amg/smoothed_prolongation.hpp"
#include "amg/spectral_radius.hpp"
#include "amg/strength.hpp"
#include "amg/system_nullspace.hpp"
#include "amg/system_spectral_radius.hpp"
#include "amg/tentative_prolongation.hpp"
#include "backend/backend.hpp"
#include "common/error.hpp"
#include "common/hash.hpp"
#include "common/reduction_block.hpp"
#include "common/timer.hpp"
#include "spgemm/registry.hpp"

namespace amgsolve {

// What coarsening one level produces: the transfer operators, the coarse operator and the level's smoother.
template <class Backend, class Value>
struct CoarseningStep {
  std::shared_ptr<const typename Backend::template Csr<Value>> P, R, coarse;
  typename Backend::template Vector<double> coarse_weights;  // B^2 of the coarse level (tentative_prolongation.hpp)
  std::shared_ptr<const NearNullspace> coarse_near;  // a system's: the coarse level's nodes and B (near_nullspace.hpp)
  SmootherSpec smoother;
  Array<Index> aggregates;  // level 0 only: the aggregate of every row (-1: none), on the host
  std::optional<LevelStructure<Backend, Value>> structure;  // with amg.keep_structure
  // A re-setup's level whose filtered matrix has another pattern than the kept one, or any level below such a
  // one: its products were formed by the SpGEMM (not into the kept patterns), and `structure` holds its new
  // filtered rows and what forms its products and transpose again (kept_structure.hpp).
  bool patterns_renewed = false;
  bool strength_renewed = false;  // and its strength too, for a level matrix on another pattern
};

template <class Backend, class Value>
class SmoothedAggregation {
  static_assert(amgsolve::Backend<Backend> && SetupBackend<Backend>,
                "smoothed aggregation sets up on a backend with the Backend and SetupBackend concepts' operations");

  // Accumulates the seconds since the last lap into a phase's slot. A backend whose kernels run after their
  // launch returns (the GPU's) is waited for first, so that each phase counts its own kernels.
  class PhaseClock {
   public:
    explicit PhaseClock(const Backend& backend) : backend_(backend) {}
    void lap(double& slot) {
      if constexpr (requires { backend_.wait_for_device(); }) backend_.wait_for_device();
      slot += timer_.seconds();
      timer_.restart();
    }

   private:
    const Backend& backend_;
    Timer timer_;
  };

 public:
  using Csr = typename Backend::template Csr<Value>;
  using Shared = std::shared_ptr<const Csr>;
  using ProductPattern = typename ProductPatternOf<Backend, Value>::type;  // what a re-setup keeps of a product
  using TransposePattern = typename TransposePatternOf<Backend, Value>::type;  // and of P^T
  using LevelCallback = typename Hierarchy<Backend, Value>::LevelCallback;
  using ProductCallback = typename Hierarchy<Backend, Value>::ProductCallback;

  // params.spgemm: a SpGEMM backend that runs on `backend`.
  SmoothedAggregation(const Backend& backend, const AmgParams& params, const SpgemmBackend& spgemm,
                      ProductCallback on_product = {})
      : backend_(backend), params_(params), spgemm_(spgemm), on_product_(std::move(on_product)) {}

  using Weights = typename Backend::template Vector<double>;
  using LevelStrength = typename KeptStrength<Backend>::type;

  // The level's random choices (MIS-2's priorities, Lanczos' start) from the seed and the level alone: the
  // same hierarchy on any thread count, rank count and device.
  std::uint64_t level_seed(int level) const { return seeded_hash(params_.seed, static_cast<std::uint64_t>(level)); }
  // Coarsening stops when it no longer pays: nothing to aggregate, or under 10% fewer rows (or nodes).
  static bool coarsening_pays(std::int64_t coarse, std::int64_t fine) {
    return coarse > 0 && static_cast<double>(coarse) <= 0.9 * static_cast<double>(fine);
  }
  // Only the backends with a system's steps set one up (require_system_supported); an explicit instantiation of
  // the class for another compiles the system's members too, whose bodies are this for those backends.
  [[noreturn]] static void throw_no_system_setup() {
    throw Error("internal: a system's setup on the " + std::string(to_string(Backend::kind)) + " backend");
  }

  // Steps 1-5 for level `info.level` with matrix A and its near-nullspace weights (empty on the finest
  // level), or a system's nodes and near-nullspace `near`; empty when aggregation no longer pays. Fills the
  // level's statistics (aggregates, rho, phase times, the three products) into info.
  std::optional<CoarseningStep<Backend, Value>> coarsen(const Csr& A, const Weights& weights, const NearNullspace* near,
                                                        LevelInfo& info) const {
    if (near) return coarsen_system(A, *near, info);
    const std::uint64_t seed = level_seed(info.level);
    LevelInfo::Phases& t = info.phases;
    PhaseClock clock(backend_);
    // 1. strong couplings
    auto strength = strength_of_checked(A, info.level);
    clock.lap(t.strength);
    // 2. aggregation; stop when it no longer pays: nothing to aggregate, or under 10% fewer rows
    auto aggregates = mis2_aggregation(backend_, strength, seed);
    if (params_.nullspace == NullspaceChoice::constant) aggregate_left_out_nodes(backend_, aggregates);
    clock.lap(t.aggregation);
    if (!coarsening_pays(aggregates.count, backend_.global_rows(A))) return std::nullopt;
    info.aggregates = aggregates.count;
    // 3. tentative prolongator
    CoarseningStep<Backend, Value> step;
    Csr T = tentative_prolongation<Value>(backend_, aggregates, weights, step.coarse_weights);
    if (info.level == 0) step.aggregates = aggregate_ids(backend_, aggregates);
    // Without a kept structure the strength, the aggregates and T are done with once P is built: let go of
    // them before the Galerkin products, the setup's high-water mark (fewer fresh pages, a lower peak).
    const auto release_done = [&] {
      if (params_.keep_structure) return;
      strength = decltype(strength){};
      aggregates = decltype(aggregates){};
      T = Csr{};
    };
    smooth_and_multiply(A, weights, nullptr, strength, T, info, clock, step, nullptr, release_done);
    record_kept_structure(step, strength, std::move(T), aggregates.count);
    return step;
  }

  // Step 1 after A's diagonal is checked positive (a non-positive entry proves A indefinite); where the backend
  // gives the diagonal it checked (the cpu's), the strength test takes that one rather than find it again.
  auto strength_of_checked(const Csr& A, int level) const {
    if constexpr (requires { backend_.positive_diagonal(A, level); }) {
      return strength_of_connection(backend_, A, params_.strength_threshold, backend_.positive_diagonal(A, level));
    } else {
      backend_.require_positive_diagonal(A, level);
      return strength_of_connection(backend_, A, params_.strength_threshold);
    }
  }

  // coarsen() for a system (amg/system_setup.hpp): steps 1-3 on A's nodes, then as a scalar level.
  std::optional<CoarseningStep<Backend, Value>> coarsen_system(const Csr& A, const NearNullspace& near,
                                                               LevelInfo& info) const {
    if constexpr (!SetsUpSystems<Backend>::value) {
      throw_no_system_setup();
    } else {
      LevelInfo::Phases& t = info.phases;
      PhaseClock clock(backend_);
      backend_.require_positive_diagonal(A, info.level);
      auto strength = node_strength(backend_, A, near, params_.strength_threshold);
      clock.lap(t.strength);
      Aggregates aggregates =
          node_aggregation(backend_, strength, level_seed(info.level));
      // A singular system's nullspace must reach every level through T B_c = B: no node left out.
      if (params_.singular()) aggregate_left_out_nodes(backend_, aggregates);
      clock.lap(t.aggregation);
      const std::int64_t nodes = sum_over_ranks(backend_, near.nodes());
      if (!coarsening_pays(aggregates.count, nodes)) return std::nullopt;
      CoarseningStep<Backend, Value> step;
      std::optional<NearNullspace> improved;
      std::optional<double> rho;  // rho(D^-1 A) for the level's smoother, where the relaxation estimated it
      if (relaxes_near_nullspace(info.level)) improved = improved_near_nullspace(A, near, info, clock, rho);
      NearNullspace coarse;
      Aggregates row_aggregates{aggregates.count, {}, {}};
      Csr T = tentative_prolongation<Value>(backend_, aggregates, improved ? *improved : near, coarse, row_aggregates.id);
      improved.reset();
      const std::int64_t coarse_rows = sum_over_ranks(backend_, coarse.rows());
      if (!coarsening_pays(coarse_rows, backend_.global_rows(A))) return std::nullopt;  // more vectors than rows
      info.aggregates = aggregates.count;
      step.coarse_near = std::make_shared<const NearNullspace>(std::move(coarse));
      if (info.level == 0) step.aggregates = aggregate_ids(backend_, row_aggregates);
      const Index aggregate_count = aggregates.count;
      strength.nodes = StrengthGraph{};
      if constexpr (requires { strength.columns; }) strength.columns = {};  // the ranks' ghost nodes: MIS-2's
      aggregates = Aggregates{};
      row_aggregates = Aggregates{};
      const auto release_done = [&] {  // as coarsen's: before the Galerkin products
        if (params_.keep_structure) return;
        strength.rows = decltype(strength.rows){};
        T = Csr{};
      };
      smooth_and_multiply(A, Weights{}, &near, strength.rows, T, info, clock, step, nullptr, release_done, rho);
      record_kept_structure(step, strength.rows, std::move(T), aggregate_count);
      return step;
    }
  }

  // Whether a system's level relaxes its near-nullspace vectors before its QR (amg.improve_near_nullspace): the
  // finest does, but for a singular system, whose nullspace (combinations of the given vectors) must reach
  // every level exactly (amg/system_nullspace.hpp), which relaxed vectors would carry only to rounding.
  bool relaxes_near_nullspace(int level) const {
    return level == 0 && params_.improve_near_nullspace > 0 && !params_.singular();
  }
  // The level's near-nullspace relaxed on A x = 0 (amg/improve_near_nullspace.hpp) in the level's smoother
  // diagonal, with the prolongator smoothing's weight from its rho(D^-1 A): an estimate the level's smoother
  // takes too (into `rho`, not estimated again). (Only for a backend with a system's steps: coarsen_system.)
  NearNullspace improved_near_nullspace(const Csr& A, const NearNullspace& near, LevelInfo& info, PhaseClock& clock,
                                        std::optional<double>& rho) const {
    if constexpr (!SetsUpSystems<Backend>::value) {
      throw_no_system_setup();
    } else {
      const std::uint64_t seed = level_seed(info.level);
      std::shared_ptr<const Array<Index>> blocks = smoother_blocks(&near);
      rho = smoother_spectral_radius(A, blocks, &near, seed, info.level);
      clock.lap(info.phases.eigenvalues);
      NearNullspace improved = near;
      improve_near_nullspace(backend_, A, blocks ? std::move(blocks) : single_row_nodes(near.rows()),
                             params_.prolongator_damping / *rho, params_.improve_near_nullspace, improved);
      clock.lap(info.phases.prolongator);
      return improved;
    }
  }

  // What a re-setup keeps of a level coarsened anew (amg.keep_structure): its strength and T.
  template <class LevelStrengthOf>
  void record_kept_structure(CoarseningStep<Backend, Value>& step, LevelStrengthOf& strength, Csr&& T,
                             Index aggregates) const {
    if (!step.structure) return;
    step.structure->weak_entries = strength.weak_entries;
    step.structure->strength = std::move(local_strength(strength));
    step.structure->T = std::make_shared<const Csr>(std::move(T));
    step.structure->aggregates = aggregates;
    step.structure->coarse_near = step.coarse_near;
  }

  // Step 1 of a level (a system's: of the nodes, amg/node_strength.hpp), for a re-setup whose level matrix has
  // another pattern than the kept classification's.
  auto strength_of(const Csr& A, const NearNullspace* near) const {
    if constexpr (SetsUpSystems<Backend>::value)
      if (near) return std::move(node_strength(backend_, A, *near, params_.strength_threshold).rows);
    return strength_of_connection(backend_, A, params_.strength_threshold);
  }

  // The same with the aggregates and tentative prolongator of a kept level (amg/resetup.hpp).
  CoarseningStep<Backend, Value> coarsen_kept(const Csr& A, const Weights& weights, const NearNullspace* near,
                                              LevelInfo& info, const KeptLevel<Backend, Value>& kept) const;
  bool on_first_pattern(const Csr& A, const KeptLevel<Backend, Value>& kept) const;
  static Shared pattern_record(const Shared& A);
  // Coarsens from A until a stopping rule holds, then factorises the coarsest level, into `hierarchy`.
  // With `kept`: as many levels as it has, each with its structure; numeric_only (a re-setup): the products
  // into its patterns as well, where the backend has them (kNumericProducts: the cpu and mpi backends).
  void build(Shared A, Hierarchy<Backend, Value>& hierarchy, const LevelCallback& on_level,
             const Hierarchy<Backend, Value>* kept = nullptr, bool numeric_only = false) const {
    Shared level_matrix = std::move(A);
    Weights weights;  // the finest level's: empty, all 1
    std::shared_ptr<const NearNullspace> near;  // a system's nodes and near-nullspace (near_nullspace.hpp)
    if constexpr (SetsUpSystems<Backend>::value)
      if (params_.is_system())
        near = std::make_shared<const NearNullspace>(
            finest_near_nullspace(backend_, *level_matrix, params_.block_size, params_.near_nullspace));
    bool patterns_hold = numeric_only;  // until a level's filtered matrix has another pattern
    for (int level = 0;; ++level) {
      LevelInfo info;
      info.level = level;
      info.rows = static_cast<Index>(backend_.global_rows(*level_matrix));  // all ranks' (the mpi backend)
      info.nnz = backend_.global_nnz(*level_matrix);
      Timer timer;
      const bool small_enough = info.rows <= params_.coarse_size || level + 1 >= params_.max_levels;
      std::optional<CoarseningStep<Backend, Value>> step;
      if (kept) {
        if (static_cast<std::size_t>(level) < kept->structure_.size())
          step = coarsen_kept(*level_matrix, weights, near.get(), info,
                              kept_level(*kept, level,
                                         !numeric_only ? KeptProducts::by_spgemm
                                         : patterns_hold ? KeptProducts::numeric_only
                                                         : KeptProducts::renewed));
      } else if (!small_enough) {
        step = coarsen(*level_matrix, weights, near.get(), info);
      }
      if (!step) {
        add_coarsest(std::move(level_matrix), weights, near.get(), hierarchy, info, timer);
        if (on_level) on_level(info);
        return;
      }
      info.seconds = timer.seconds();
      if (step->patterns_renewed && patterns_hold) {
        patterns_hold = false;  // this level's products have new patterns, so have all coarser ones
        hierarchy.products_renewed_from_ = level;
      }
      Shared coarse = step->coarse;
      weights = std::move(step->coarse_weights);
      near = std::move(step->coarse_near);
      hierarchy.add_level(std::move(level_matrix), std::move(*step), info);
      if (on_level) on_level(info);
      level_matrix = std::move(coarse);
    }
  }

 private:
  // What the kept hierarchy gives level `level` of a setup on its structure (amg/resetup.hpp).
  KeptLevel<Backend, Value> kept_level(const Hierarchy<Backend, Value>& kept, int level, KeptProducts products) const;

  // Step 4 (the filtered matrix, then P) and step 5, then the smoother, from the strength and the tentative
  // prolongator T (and a system's nodes, `near`, for its smoother). `prolongator_built` is called once P is:
  // the caller may let go of what only P needed (the filtered matrix goes then too). With `kept` (a re-setup's
  // level) the products are formed into its patterns while they hold; with amg.keep_structure, or where they
  // no longer hold, what forms them again is recorded into step.structure (keep_patterns).
  template <class StrengthOf>
  void smooth_and_multiply(const Csr& A, const Weights& weights, const NearNullspace* near, const StrengthOf& strength,
                           const Csr& T,
                           LevelInfo& info, PhaseClock& clock, CoarseningStep<Backend, Value>& step,
                           const KeptLevel<Backend, Value>* kept,
                           const std::function<void()>& prolongator_built = {},
                           std::optional<double> smoother_rho = std::nullopt) const {
    const std::uint64_t seed = level_seed(info.level);
    LevelInfo::Phases& t = info.phases;
    // A singular system's prolongator is smoothed with A itself: lumping row by row keeps A_f 1 = A 1, not
    // A_f B = 0 for a rotation, and P B_c = B must hold for its nullspace to be every level's
    // (amg/system_nullspace.hpp).
    const bool has_weak = strength.weak_entries > 0 && !(near && params_.singular());
    LevelPatterns patterns;
    Csr filtered;
    if (has_weak) filtered = filtered_matrix_of(A, strength, weights, patterns.filtered_rows);
    if (kept && lumps_other_rows(patterns.filtered_rows, *kept)) step.patterns_renewed = true;
    // From here on the products are formed by the SpGEMM. (On the cuda backend, which has no numeric-only
    // products, a kept level's patterns are not used either way.)
    if (step.patterns_renewed) kept = nullptr;
    const bool record = params_.keep_structure || step.patterns_renewed;
    const Csr& A_f = has_weak ? filtered : A;
    clock.lap(t.prolongator);
    // 4. smoothed prolongator, damped by the spectral radius of D_f^-1 A_f
    const double rho_f = spectral_radius(A_f, near, seed, info.level);
    const std::shared_ptr<const Array<Index>> blocks = smoother_blocks(near);
    info.rho = smoother_rho        ? *smoother_rho  // estimated where the near-nullspace was relaxed
               : blocks || has_weak ? smoother_spectral_radius(A, blocks, near, seed, info.level)
                                    : rho_f;  // A_f is A
    clock.lap(t.eigenvalues);
    step.P = std::make_shared<const Csr>(smoothed_prolongator(A_f, T, params_.prolongator_damping / rho_f, info.level,
                                                              kept ? kept->prolongator_pattern : nullptr,
                                                              info.prolongator_product));
    if (record) patterns.prolongator = prolongator_pattern(A_f, T, *step.P);
    filtered = Csr{};
    if (prolongator_built) prolongator_built();
    clock.lap(t.prolongator);
    step.R = std::make_shared<const Csr>(
        transpose(*step.P, kept ? kept->transpose_pattern : nullptr, record ? &patterns.transpose : nullptr));
    clock.lap(t.transpose);
    // 5. coarse operator
    Csr AP = product(A, *step.P, kept ? kept->ap_pattern : nullptr, info.ap_product);
    observe(info.level, "ap", A, *step.P, AP);
    step.coarse = std::make_shared<const Csr>(
        product(*step.R, AP, kept ? kept->coarse_pattern.get() : nullptr, info.rap_product));
    observe(info.level, "rap", *step.R, AP, *step.coarse);
    info.spgemm_seconds =
        info.prolongator_product.seconds() + info.ap_product.seconds() + info.rap_product.seconds();
    if (record) keep_patterns(A, std::move(AP), std::move(patterns), step);
    clock.lap(t.galerkin);
    // and the level's smoother
    step.smoother = level_smoother(A, blocks, near, info);
    info.smoother = describe(step.smoother);
    clock.lap(t.smoother);
  }

  // What smooth_and_multiply records of a level for a re-setup beside the products (LevelStructure).
  struct LevelPatterns {
    Array<std::uint8_t> filtered_rows;  // which rows lumped weak entries (kRecordsLumpedRows)
    ProductPattern prolongator;         // A_f T's, where the backend multiplies it
    TransposePattern transpose;         // P^T's, where the backend keeps one
  };

  // A_f: A with its weak couplings lumped into the diagonal (amg/filtered_matrix.hpp), recording which rows
  // lumped where the backend records them (kRecordsLumpedRows).
  template <class StrengthOf>
  Csr filtered_matrix_of(const Csr& A, const StrengthOf& strength, const Weights& weights,
                         Array<std::uint8_t>& filtered_rows) const {
    // A node without strong couplings is an aggregate of its own for a singular matrix, in none otherwise.
    const IsolatedRows isolated = params_.nullspace == NullspaceChoice::constant ? IsolatedRows::keep_weak
                                                                                 : IsolatedRows::diagonal_alone;
    if constexpr (kRecordsLumpedRows<Backend>)
      return filtered_matrix(backend_, A, strength, weights, &filtered_rows, isolated);
    else
      return filtered_matrix(backend_, A, strength, weights, isolated);
  }

  // Whether a re-setup's level lumps other rows than the kept one did. Which rows are lumped depends on the
  // values: where that changes, A_f T, A P and so every coarser level's products have other patterns, and are
  // formed by the SpGEMM from here on (the aggregates still kept). The values are the same either way: the
  // numeric phase sums as gustavson. (Decided on every rank alike; a backend that records no lumped rows
  // compares whole patterns instead, in amg/resetup.hpp.)
  bool lumps_other_rows(const Array<std::uint8_t>& filtered_rows, const KeptLevel<Backend, Value>& kept) const {
    if constexpr (kRecordsLumpedRows<Backend>)
      return kept.products == KeptProducts::numeric_only &&
             !backend_.everywhere(filtered_rows == kept.kept->filtered_rows);
    return false;
  }

  // step.structure: the level's patterns and, for the numeric-only products where the backend has them, what
  // forms A P and P^T (A P) again (A P itself then becomes its pattern's record).
  void keep_patterns(const Csr& A, Csr&& AP, LevelPatterns&& patterns, CoarseningStep<Backend, Value>& step) const {
    step.structure.emplace();
    backend_.copy(step.coarse_weights, step.structure->coarse_weights);
    step.structure->filtered_rows = std::move(patterns.filtered_rows);
    step.structure->prolongator_pattern = std::move(patterns.prolongator);
    step.structure->transpose_pattern = std::move(patterns.transpose);
    if constexpr (kNumericProducts<Backend, Value>) {
      if (spgemm_.sums_in_row_order()) {
        step.structure->rap_pattern = backend_.held_product_pattern(*step.R, AP, *step.coarse);
        step.structure->ap_pattern = backend_.product_pattern(A, *step.P, std::move(AP));
      }
    }
  }

  // P = T - omega D_f^-1 (A_f T): on the cpu and mpi backends gathered in one pass where T has one entry per
  // row (a scalar problem), otherwise the SpGEMM A_f T (or, with a kept pattern, its numeric phase), then
  // scaled. The callback still sees the product A_f T.
  Csr smoothed_prolongator(const Csr& A_f, const Csr& T, double omega, int level, const ProductPattern* pattern,
                           SpgemmStats& stats) const {
    if constexpr (kGathersProlongator) {
      if (!params_.is_system()) {
        if (on_product_) observe(level, "prolongator", A_f, T, backend_.multiply(spgemm_, A_f, T, nullptr));
        return amgsolve::smoothed_prolongator(backend_, A_f, T, omega, &stats);
      }
    }
    if constexpr (kHostCsr<Backend>) pattern = nullptr;  // the cpu keeps no pattern of A_f T
    Csr P = product(A_f, T, pattern, stats);
    observe(level, "prolongator", A_f, T, P);
    scale_and_add_tentative(backend_, P, A_f, T, omega);
    return P;
  }

  // What forms A_f T again where the backend multiplies it (kNumericProducts without the cpu's: the mpi
  // backend, a system's, whose T has several entries a row): the product's plan and P's layout (A_f T is
  // scaled in place). Nothing otherwise.
  ProductPattern prolongator_pattern(const Csr& A_f, const Csr& T, const Csr& P) const {
    if constexpr (kNumericProducts<Backend, Value> && !kHostCsr<Backend>)
      if (spgemm_.sums_in_row_order() && !(kGathersProlongator && !params_.is_system()))
        return backend_.product_pattern(A_f, T, P.layout_copy());
    return {};
  }
  // Whether the backend forms a scalar problem's P in one pass (amg/smoothed_prolongation.hpp).
  static constexpr bool kGathersProlongator = requires(const Backend& b, const Csr& M, SpgemmStats* s) {
    amgsolve::smoothed_prolongator(b, M, M, 1.0, s);
  };

  // P^T: by a kept pattern (a re-setup's), recording one in `keep`, or anew; only where the backend keeps
  // transposes (the mpi one, whose transpose moves P's entries between ranks), else anew.
  Csr transpose(const Csr& P, const TransposePattern* kept, TransposePattern* keep) const {
    if constexpr (requires(const TransposePattern& plan) { backend_.transpose(P, plan); }) {
      if (kept) return backend_.transpose(P, *kept);
      if (keep) return backend_.transpose_kept(P, *keep);
    }
    return backend_.transpose(P);
  }

  // X Y by the SpGEMM backend, or (kNumericProducts, a kept pattern) by the numeric phase into that pattern,
  // where that gives the backend's bits (a fresh setup's): else by the backend in full.
  Csr product(const Csr& X, const Csr& Y, const ProductPattern* pattern, SpgemmStats& stats) const {
    if constexpr (kNumericProducts<Backend, Value>)
      if (pattern && spgemm_.sums_in_row_order()) return backend_.multiply_into(spgemm_, X, Y, *pattern, stats);
    return backend_.multiply(spgemm_, X, Y, &stats);
  }


  // rho(D^-1 A), D the diagonal, on level `level`: summed in the level's reduction blocks, or on a system's
  // level (near) by its nodes (amg/system_spectral_radius.hpp).
  double spectral_radius(const Csr& A, const NearNullspace* near, std::uint64_t seed, int level) const {
    if (near) return system_rho(A, nullptr, *near, seed, std::nullopt);
    if (params_.spectral_radius == SpectralRadius::gershgorin) return gershgorin_bound_dinv_a(backend_, A);
    return lanczos_max_eigenvalue_dinv_a<Backend, Value>(backend_, A, params_.lanczos_steps, seed,
                                                         level_reduction_block(level));
  }

  // The nodes whose diagonal blocks a system's smoother scales by (amg.smoother.diagonal), or null: the
  // pointwise diagonal (a scalar problem, `point`, or a level whose nodes are single rows, where the two
  // agree; on every rank's nodes).
  std::shared_ptr<const Array<Index>> smoother_blocks(const NearNullspace* near) const {
    if constexpr (SetsUpSystems<Backend>::value) {
      if (!near || params_.smoother.diagonal == SmootherDiagonal::point ||
          backend_.everywhere(near->nodes() == near->rows()))
        return nullptr;
      return std::make_shared<const Array<Index>>(near->node_ptr);
    }
    return nullptr;  // no system's nodes here
  }
  // rho(D^-1 A) on a system's level for D the node blocks `blocks` or (null) the diagonal, summed by the
  // level's nodes; a block that is not positive definite is an error naming the level, where given.
  double system_rho(const Csr& A, const std::shared_ptr<const Array<Index>>& blocks, const NearNullspace& near,
                    std::uint64_t seed, std::optional<int> level) const {
    if constexpr (!SetsUpSystems<Backend>::value) {
      throw_no_system_setup();
    } else {
      try {
        if (params_.spectral_radius == SpectralRadius::gershgorin) return system_gershgorin_bound(backend_, A, blocks);
        return system_spectral_radius(backend_, A, blocks, near, params_.lanczos_steps, seed);
      } catch (const NumericalError& e) {
        if (!level) throw;
        throw NumericalError("AMG level " + std::to_string(*level) + ": " + e.what());
      }
    }
  }
  // rho(D^-1 A) for a smoother's D: the node blocks `blocks`, or (null) the diagonal.
  double smoother_spectral_radius(const Csr& A, const std::shared_ptr<const Array<Index>>& blocks,
                                  const NearNullspace* near, std::uint64_t seed, int level) const {
    return near ? system_rho(A, blocks, *near, seed, level) : spectral_radius(A, nullptr, seed, level);
  }
  double gershgorin_bound(const Csr& A, const std::shared_ptr<const Array<Index>>& blocks) const {
    if constexpr (SetsUpSystems<Backend>::value)
      if (blocks) return system_gershgorin_bound(backend_, A, blocks);
    return gershgorin_bound_dinv_a(backend_, A);
  }

  // Shows a product of the setup to the caller's callback, on the host.
  void observe(int level, const char* product, const Csr& A, const Csr& B, const Csr& C) const {
    if (!on_product_) return;
    on_product_(level, product, *backend_.host_view(A), *backend_.host_view(B), *backend_.host_view(C));
  }

  // The coarsest level: copied to the host and factorised there; for a singular matrix with the nullspace
  // B = sqrt(weights) (amg/tentative_prolongation.hpp), or a singular system's B C of the level's
  // near-nullspace vectors (amg/system_nullspace.hpp), its pseudo-inverse.
  void add_coarsest(Shared A, const Weights& weights, const NearNullspace* near, Hierarchy<Backend, Value>& hierarchy,
                    LevelInfo& info, const Timer& timer) const {
    if (info.rows > kMaxDirectRows)
      return add_smoothed_coarsest(std::move(A), near, hierarchy, info, timer,
                                   "over " + std::to_string(kMaxDirectRows) + " rows, too many to factorise");
    std::shared_ptr<const CsrMatrix<Value>> on_host;
    if constexpr (std::is_same_v<Csr, CsrMatrix<Value>>)
      on_host = A;  // it is on the host already
    else
      on_host = backend_.host_view(*A);  // a copy the host owns
    if (info.rows > params_.coarse_size) {  // coarsening stopped early (amg/params.hpp)
      const double work = factorisation_work(*on_host);
      if (work > kMaxEarlyCoarsestWork)
        return add_smoothed_coarsest(std::move(A), near, hierarchy, info, timer,
                                     "its factorisation would take " + format_number(work) +
                                         " multiply-adds, too many");
    }
    Vector<double> nullspace;
    if (params_.nullspace == NullspaceChoice::near_nullspace) {
      // B C of this level's B (over MPI ranks gathered, as the level is); only where a system is set up
      if constexpr (SetsUpSystems<Backend>::value)
        nullspace = nullspace_vectors(whole_near_nullspace(backend_, *near), *params_.nullspace_combinations);
    } else if (params_.nullspace == NullspaceChoice::constant) {
      if (info.level == 0)  // the finest level (weights empty on every rank): B = 1
        nullspace.assign(static_cast<std::size_t>(on_host->rows), 1.0);
      else
        backend_.download(weights, nullspace);
      for (double& b : nullspace) b = std::sqrt(b);
    }
    auto factor = std::make_shared<const SparseLdlt<Value>>(*on_host, nullspace);
    info.coarsest = true;
    info.smoother = nullspace.empty() ? "direct sparse LDL^T" : "direct sparse LDL^T, pseudo-inverse on the range";
    info.seconds = timer.seconds();
    hierarchy.add_coarsest(std::move(A), on_host, std::move(factor), std::move(nullspace), info);
  }

  // A level's smoother (amg.smoother) from its estimate info.rho of rho(D^-1 A), D the diagonal or the node
  // blocks `blocks`; Chebyshev's also from Gershgorin's bound, above it. The blocks' values go into the level's
  // table (the traffic model's).
  SmootherSpec level_smoother(const Csr& A, std::shared_ptr<const Array<Index>> blocks, const NearNullspace* near,
                              LevelInfo& info) const {
    info.smoother_block_values = 0;
    if (params_.smoother.type == SmootherType::gauss_seidel) {  // no interval, no blocks to invert
      const std::int64_t unit = level_reduction_block(info.level);  // rows, or a system's nodes
      if (near && near->reduction_blocks.back() == near->nodes() && near->nodes() > 0)  // its blocks of nodes
        return gauss_seidel_spec(A.rows, unit, &near->node_ptr, &near->reduction_blocks);
      return gauss_seidel_spec(A.rows, unit);
    }
    if constexpr (SetsUpSystems<Backend>::value) {
      std::int64_t values = 0;
      if (blocks)
        for (std::size_t n = 0; n + 1 < blocks->size(); ++n)
          values += std::int64_t{(*blocks)[n + 1] - (*blocks)[n]} * ((*blocks)[n + 1] - (*blocks)[n]);
      info.smoother_block_values = sum_over_ranks(backend_, values);
    }
    require_jacobi_converges(params_.smoother, params_.spectral_radius, info.rho, info.level);
    const bool chebyshev = params_.smoother.type == SmootherType::chebyshev;
    SmootherSpec spec = smoother_spec(params_.smoother, info.rho, chebyshev ? gershgorin_bound(A, blocks) : 0.0);
    spec.nodes = std::move(blocks);
    return spec;
  }

  // A coarsest level too large to factorise (amg/params.hpp): its smoother, as any level's, applied
  // kCoarsestSmoothingSteps times by the cycle.
  void add_smoothed_coarsest(Shared A, const NearNullspace* near, Hierarchy<Backend, Value>& hierarchy,
                             LevelInfo& info, const Timer& timer, const std::string& why) const {
    backend_.require_positive_diagonal(*A, info.level);
    const std::uint64_t seed = level_seed(info.level);
    std::shared_ptr<const Array<Index>> blocks = smoother_blocks(near);
    info.rho = smoother_spectral_radius(*A, blocks, near, seed, info.level);
    const SmootherSpec spec = level_smoother(*A, std::move(blocks), near, info);
    info.coarsest = true;
    info.smoothed_coarsest = true;
    info.smoother = std::to_string(kCoarsestSmoothingSteps) + " steps of " + describe(spec) + ": " + why;
    info.seconds = timer.seconds();
    hierarchy.add_smoothed_coarsest(std::move(A), spec, info);
  }

  const Backend& backend_;
  const AmgParams& params_;
  const SpgemmBackend& spgemm_;
  ProductCallback on_product_;
};

// ---- the hierarchy's construction and filling (declared in hierarchy.hpp)

// A system (near_nullspace.hpp) is set up on the cpu backend, of one process or of each MPI rank, with its
// nullspace among its near-nullspace vectors: an InputError otherwise (the Solver says so before it builds a
// hierarchy).
template <class Backend>
void require_system_supported(const AmgParams& params) {
  if (!params.is_system()) return;
  if constexpr (!SetsUpSystems<Backend>::value) throw InputError(system_support_problem(Backend::kind));
  require_system_nullspace_choice(params.nullspace);
}

// amg.nullspace of a system, resolved where the caller (the Solver) has not: its combinations of the
// near-nullspace vectors (amg/system_nullspace.hpp), in double (over MPI ranks on their rows).
template <class Backend, class Value>
void Hierarchy<Backend, Value>::resolve_nullspace_of_system(const Backend& backend, const Csr& A) {
  if constexpr (SetsUpSystems<Backend>::value) {
    const bool resolved = params_.nullspace == NullspaceChoice::none ||
                          (params_.nullspace == NullspaceChoice::near_nullspace && params_.nullspace_combinations);
    if (!resolved) {
      if constexpr (std::is_same_v<Value, double>)
        resolve_system_nullspace(backend, A, params_);
      else
        resolve_system_nullspace(backend, *backend.template cast<double>(A), params_);
    }
  }
}

template <class Backend, class Value>
Hierarchy<Backend, Value>::Hierarchy(const Backend& backend, Shared A, const AmgParams& params,
                                     LevelCallback on_level, ProductCallback on_product)
    : params_(params) {
  Timer total;
  if (params_.spgemm.empty()) params_.spgemm = default_spgemm_backend(Backend::kind);
  require_system_supported<Backend>(params_);
  if (params_.is_system()) {
    resolve_nullspace_of_system(backend, *A);
  } else {
    require_scalar_nullspace_choice(params_.nullspace);
    if (params_.nullspace == NullspaceChoice::automatic) {
      const bool zero_row_sums = backend.global_rows(*A) > 0 &&
                                 largest_relative_row_sum(backend, *A).relative <= zero_row_sum_tolerance<Value>();
      params_.nullspace = zero_row_sums ? NullspaceChoice::constant : NullspaceChoice::none;
    }
  }
  const SpgemmBackend& spgemm = SpgemmRegistry::instance().get(params_.spgemm, Backend::kind);
  SmoothedAggregation<Backend, Value>(backend, params_, spgemm, std::move(on_product)).build(std::move(A), *this, on_level);
  setup_seconds_ = total.seconds();
}

template <class Backend, class Value>
void Hierarchy<Backend, Value>::add_level(Shared A, CoarseningStep<Backend, Value>&& step, const LevelInfo& info) {
  if (step.structure) {
    if (params_.keep_structure)
      structure_.push_back(std::move(*step.structure));
    else  // a re-setup's level with new product patterns (SmoothedAggregation::smooth_and_multiply)
      renewed_patterns_.push_back({levels_.size(), step.strength_renewed, std::move(*step.structure)});
  }
  if (levels_.empty()) finest_aggregates_ = std::move(step.aggregates);
  levels_.push_back(Level{std::move(A), std::move(step.P), std::move(step.R), step.smoother});
  info_.push_back(info);
}

template <class Backend, class Value>
void Hierarchy<Backend, Value>::add_smoothed_coarsest(Shared A, const SmootherSpec& smoother, const LevelInfo& info) {
  levels_.push_back(Level{std::move(A), {}, {}, smoother});
  info_.push_back(info);
}

template <class Backend, class Value>
void Hierarchy<Backend, Value>::add_coarsest(Shared A, std::shared_ptr<const CsrMatrix<Value>> on_host,
                                             std::shared_ptr<const SparseLdlt<Value>> factor, Vector<double> nullspace,
                                             const LevelInfo& info) {
  levels_.push_back(Level{std::move(A), {}, {}, {}});
  coarsest_host_ = std::move(on_host);
  coarse_ = std::move(factor);
  coarse_nullspace_ = std::move(nullspace);
  info_.push_back(info);
}

}  // namespace amgsolve
