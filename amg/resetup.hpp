#pragma once
// Re-setup on the same pattern (issue #31; AMGCL's rebuild, AmgX's resetup, MueLu's reuse): a hierarchy
// built again for new values of A on A's pattern, with the aggregates and tentative prolongators kept
// (amg/kept_structure.hpp) and what depends on the values computed anew by smoothed aggregation's steps
// 4-5 (amg/smoothed_aggregation.hpp): the filtered matrices, spectral radii, smoothed prolongators,
// Galerkin products (by their numeric phase alone into the kept patterns, where the backend has it, the
// SpGEMM sums in A's row order and the patterns still hold), smoothers and the coarsest factorisation; the
// strength (step 1) only on a level whose matrix left its first pattern. The result equals a fresh setup of
// the new matrix on the same aggregates, tentative prolongators and classification, bit for bit, whatever
// re-setups came before. (A system's T stays fitted to its near-nullspace as the first matrix relaxed it,
// amg/improve_near_nullspace.hpp: a fresh setup would relax it with the new matrix.)
#include <memory>

#include "amg/smoothed_aggregation.hpp"

namespace amgsolve {

// Rows a re-setup samples on each level to see how far its kept strength is from the new values
// (strength_drift): about a millisecond, and a share known to within a percent or two.
inline constexpr Index kDriftSampleRows = 8192;

// A level coarsened as SmoothedAggregation::coarsen does, with the aggregates and tentative prolongator of
// `kept`, and the strength a setup on them would use (LevelStructure): the first setup's where A has the pattern it was computed on, else A's own.
template <class Backend, class Value>
CoarseningStep<Backend, Value> SmoothedAggregation<Backend, Value>::coarsen_kept(
    const Csr& A, const Weights& weights, const NearNullspace* near, LevelInfo& info,
    const KeptLevel<Backend, Value>& kept) const {
  CoarseningStep<Backend, Value> step;
  PhaseClock clock(backend_);
  backend_.require_positive_diagonal(A, info.level);
  const LevelStructure<Backend, Value>& structure = *kept.kept;
  backend_.copy(structure.coarse_weights, step.coarse_weights);
  step.coarse_near = structure.coarse_near;
  info.aggregates = structure.aggregates;
  step.patterns_renewed = kept.products == KeptProducts::renewed;
  if (on_first_pattern(A, kept)) {
    // Back on the first pattern after a re-setup on another: the first strength again, and the level's
    // record (a renewed one, on every backend) says so, so that the re-setup lets go of the first copy.
    const bool back = structure.first_pattern != nullptr;
    if (back) step.patterns_renewed = true;
    const auto& strength = back ? *structure.first_strength : structure.strength;
    if constexpr (requires { strength_drift(backend_, A, 0.0, strength, Index{1}); })  // the cpu's and the ranks'
      if (!near)
        info.strength_drift = strength_drift(backend_, A, params_.strength_threshold, strength, kDriftSampleRows);
    smooth_and_multiply(A, weights, near,
                        kept_strength(backend_, strength, back ? structure.first_weak_entries : structure.weak_entries,
                                      A),
                        *structure.T, info, clock, step, &kept);
    step.strength_renewed = back;
    if (step.structure && (back || params_.keep_structure)) {
      step.structure->strength = back ? *structure.first_strength : structure.strength;
      step.structure->weak_entries = back ? structure.first_weak_entries : structure.weak_entries;
    }
  } else {
    auto strength = strength_of(A, near);
    clock.lap(info.phases.strength);
    // The kept product patterns hold only for the kept classification (and then the same lumped rows).
    if constexpr (kRecordsLumpedRows<Backend>) {
      if (!(kept.products == KeptProducts::numeric_only &&
            backend_.everywhere(local_strength(strength).keep == structure.strength.keep)))
        step.patterns_renewed = true;
    } else {
      step.patterns_renewed = true;
    }
    step.strength_renewed = true;
    smooth_and_multiply(A, weights, near, strength, *structure.T, info, clock, step, &kept);
    if (step.structure) {
      step.structure->weak_entries = strength.weak_entries;
      step.structure->strength = std::move(local_strength(strength));
      const bool first_kept = structure.first_pattern != nullptr;
      step.structure->first_strength =
          first_kept ? structure.first_strength : std::make_shared<const LevelStrength>(structure.strength);
      step.structure->first_weak_entries = first_kept ? structure.first_weak_entries : structure.weak_entries;
      step.structure->first_pattern = first_kept ? structure.first_pattern : pattern_record(kept.matrix);
    }
  }
  if (step.structure && params_.keep_structure) {
    step.structure->T = structure.T;
    step.structure->aggregates = structure.aggregates;
    step.structure->coarse_near = structure.coarse_near;
  }
  return step;
}

// Whether A has the pattern the level's first setup classified. Within a re-setup whose patterns still
// hold, A has the kept matrix's pattern by construction.
template <class Backend, class Value>
bool SmoothedAggregation<Backend, Value>::on_first_pattern(const Csr& A, const KeptLevel<Backend, Value>& kept) const {
  if (kept.kept->first_pattern) return backend_.same_pattern(A, *kept.kept->first_pattern);
  return kept.products == KeptProducts::numeric_only || backend_.same_pattern(A, *kept.matrix);
}

// What a LevelStructure keeps of a level matrix's pattern for a later same_pattern: on the host its row_ptr
// and col (no values); on the other backends the matrix itself, held rather than copied.
template <class Backend, class Value>
auto SmoothedAggregation<Backend, Value>::pattern_record(const Shared& A) -> Shared {
  if constexpr (kHostCsr<Backend>) {
    auto pattern = std::make_shared<Csr>(A->rows, A->cols);
    pattern->row_ptr = A->row_ptr;
    pattern->col = A->col;
    return pattern;
  } else {
    if constexpr (requires { A->drop_solve_copy(); }) A->drop_solve_copy();  // the solve's copy is the old cycle's
    return A;
  }
}

template <class Backend, class Value>
KeptLevel<Backend, Value> SmoothedAggregation<Backend, Value>::kept_level(const Hierarchy<Backend, Value>& kept, int level,
                                                                        KeptProducts products) const {
  KeptLevel<Backend, Value> k;
  k.products = products;
  k.kept = &kept.structure_[static_cast<std::size_t>(level)];
  k.matrix = kept.levels_[static_cast<std::size_t>(level)].A;
  if constexpr (kNumericProducts<Backend, Value>) {
    if (products == KeptProducts::numeric_only) {
      k.prolongator_pattern = &k.kept->prolongator_pattern;
      k.transpose_pattern = &k.kept->transpose_pattern;
      k.ap_pattern = &k.kept->ap_pattern;
      k.coarse_pattern = backend_.pattern_of(kept.levels_[static_cast<std::size_t>(level) + 1].A, k.kept->rap_pattern);
    }
  }
  return k;
}

// ---- the hierarchy's construction on a kept structure (declared in hierarchy.hpp)

template <class Backend, class Value>
Hierarchy<Backend, Value>::Hierarchy(const Backend& backend, Shared A, const AmgParams& params,
                                     const Hierarchy& structure_of)
    : params_(params) {
  if (structure_of.structure_.empty())
    throw InputError("a setup with another hierarchy's structure needs that hierarchy built with amg.keep_structure: true");
  if (params_.spgemm.empty()) params_.spgemm = default_spgemm_backend(Backend::kind);
  params_.nullspace = structure_of.params_.nullspace;  // the structure's aggregates were made for it
  params_.block_size = structure_of.params_.block_size;  // and its tentative prolongators for its nodes and B
  params_.near_nullspace = structure_of.params_.near_nullspace;
  params_.nullspace_combinations = structure_of.params_.nullspace_combinations;
  build_with_structure(backend, std::move(A), structure_of, false);
}

template <class Backend, class Value>
void Hierarchy<Backend, Value>::rebuild(const Backend& backend, Shared A) {
  if (structure_.empty()) throw InputError("re-setup needs the structure kept by the setup (amg.keep_structure: true)");
  if (!A) throw InputError("re-setup: no matrix");
  if (!backend.same_pattern(*A, *levels_.front().A))
    throw InputError("re-setup: the matrix's pattern is not the one the hierarchy was built for (a full setup is "
                     "needed)");
  // The re-setup reads the kept structure and level matrices, never the old P and R: they go first, so that
  // the new ones take their memory.
  for (Level& level : levels_) {
    level.P.reset();
    level.R.reset();
  }
  Hierarchy fresh;
  fresh.params_ = params_;
  fresh.params_.keep_structure = false;  // the structure does not change: it is moved over below
  try {
    // Into the kept product patterns level by level where the backend records the lumped rows that decide
    // them; otherwise each level's matrix is compared with the kept one (kRecordsLumpedRows).
    fresh.build_with_structure(backend, std::move(A), *this, kRecordsLumpedRows<Backend>);
  } catch (...) {
    clear();  // without P and R the old levels are no hierarchy
    throw;
  }
  fresh.params_.keep_structure = true;
  fresh.structure_ = std::move(structure_);
  for (RenewedLevel& renewed : fresh.renewed_patterns_) {
    LevelStructure<Backend, Value>& level = fresh.structure_[renewed.level];
    level.filtered_rows = std::move(renewed.structure.filtered_rows);
    level.ap_pattern = std::move(renewed.structure.ap_pattern);
    level.rap_pattern = std::move(renewed.structure.rap_pattern);
    level.prolongator_pattern = std::move(renewed.structure.prolongator_pattern);
    level.transpose_pattern = std::move(renewed.structure.transpose_pattern);
    if (renewed.strength) {
      level.strength = std::move(renewed.structure.strength);
      level.weak_entries = renewed.structure.weak_entries;
      level.first_strength = std::move(renewed.structure.first_strength);
      level.first_weak_entries = renewed.structure.first_weak_entries;
      level.first_pattern = std::move(renewed.structure.first_pattern);
    }
  }
  fresh.renewed_patterns_.clear();
  *this = std::move(fresh);
}

template <class Backend, class Value>
void Hierarchy<Backend, Value>::build_with_structure(const Backend& backend, Shared A, const Hierarchy& kept,
                                                     bool numeric_only) {
  Timer total;
  const SpgemmBackend& spgemm = SpgemmRegistry::instance().get(params_.spgemm, Backend::kind);
  SmoothedAggregation<Backend, Value>(backend, params_, spgemm).build(std::move(A), *this, {}, &kept, numeric_only);
  finest_aggregates_ = kept.finest_aggregates_;
  setup_seconds_ = total.seconds();
}

}  // namespace amgsolve
