#pragma once
// The AMG hierarchy: the levels smoothed aggregation built (amg/smoothed_aggregation.hpp) and what each cost.
// It stores them; the V-cycle (amg/vcycle.hpp) applies them on a backend.
#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "amg/kept_structure.hpp"
#include "amg/params.hpp"
#include "backend/cpu/cpu_backend.hpp"
#include "amg/smoother.hpp"
#include "sparse/sparse_ldlt.hpp"
#include "spgemm/spgemm.hpp"

namespace amgsolve {

// What setup did on one level, for the level table and the JSON report.
struct LevelInfo {
  int level = 0;
  Index rows = 0;
  Offset nnz = 0;
  // The aggregates (0 on the coarsest): the next level's rows, or for a system (amg/system_setup.hpp) its
  // nodes, each of as many rows as near-nullspace vectors (fewer where some depend on the others there).
  Index aggregates = 0;
  double rho = 0.0;            // estimate of rho(D^-1 A) (amg.spectral_radius)
  double seconds = 0.0;        // building the transfer to the next level (or factorising, coarsest)
  double spgemm_seconds = 0.0;  // the three SpGEMMs: A_f T, A P, P^T (A P)
  SpgemmStats prolongator_product, ap_product, rap_product;
  // Seconds per setup phase on this level (they add up to `seconds`).
  struct Phases {
    double strength = 0, aggregation = 0, eigenvalues = 0, prolongator = 0, transpose = 0, galerkin = 0,
           smoother = 0;
    // Each phase's name (the report's and the Python package's key) and seconds, in the setup's order.
    std::array<std::pair<const char*, double>, 7> named() const {
      static_assert(sizeof(Phases) == 7 * sizeof(double), "a phase added to Phases must be named here too");
      return {{{"strength", strength},
               {"aggregation", aggregation},
               {"eigenvalues", eigenvalues},
               {"prolongator", prolongator},
               {"transpose", transpose},
               {"galerkin", galerkin},
               {"smoother", smoother}}};
    }
  } phases;
  std::string smoother;         // description of the smoother used on this level
  // The values of its D^-1 where they are a system's node blocks (sum of the nodes' rows squared); 0: the
  // pointwise diagonal, one per row.
  std::int64_t smoother_block_values = 0;
  bool coarsest = false;
  bool smoothed_coarsest = false;  // a coarsest level smoothed, not factorised (amg/params.hpp)
  // A re-setup's level on its kept strength (the cpu backend's): the share of a sample of its couplings that
  // the new values classify otherwise (strength_drift, amg/strength.hpp); -1: not checked.
  double strength_drift = -1.0;
};

template <class Backend, class Value>
struct CoarseningStep;
template <class Backend, class Value>
class SmoothedAggregation;

// A level's three operators (Hierarchy::release).
enum class LevelOperator { matrix, prolongator, restriction };

// The levels of a smoothed-aggregation hierarchy on a backend: each level's operator, prolongator P,
// restriction R = P^T (the backend's CSR) and smoother parameters, and the coarsest level's factorisation
// (on the host). Built by smoothed aggregation (amg/smoothed_aggregation.hpp, which defines the
// constructor); it only stores the levels, and the V-cycle (amg/vcycle.hpp) applies them.
template <class Backend, class Value>
class Hierarchy {
 public:
  using Csr = typename Backend::template Csr<Value>;
  using Shared = std::shared_ptr<const Csr>;
  using LevelCallback = std::function<void(const LevelInfo&)>;
  // Sees every SpGEMM of the setup: (level, product, A, B, C) with product "prolongator" (A_f T),
  // "ap" (A P) or "rap" (P^T (A P)), on the host; used to compare backends on the real products.
  using ProductCallback = std::function<void(int, const std::string&, const CsrMatrix<Value>&,
                                             const CsrMatrix<Value>&, const CsrMatrix<Value>&)>;

  // Builds the hierarchy for A (shared, not copied) on `backend`. on_level is called as each level is
  // finished. params.spgemm empty: the backend's default SpGEMM (default_spgemm_backend).
  Hierarchy(const Backend& backend, Shared A, const AmgParams& params, LevelCallback on_level = {},
            ProductCallback on_product = {});
  // The same on the cpu backend.
  Hierarchy(Shared A, const AmgParams& params, LevelCallback on_level = {}, ProductCallback on_product = {})
    requires std::is_same_v<Backend, CpuBackend>
      : Hierarchy(Backend{}, std::move(A), params, std::move(on_level), std::move(on_product)) {}

  // A fresh setup of A that takes the strength classification and the aggregates (tentative prolongators)
  // of `structure_of`, built with amg.keep_structure; everything else is computed anew, the products by full
  // SpGEMMs. What rebuild() must equal, and a setup for matrices that share a structure.
  Hierarchy(const Backend& backend, Shared A, const AmgParams& params, const Hierarchy& structure_of);

  // Re-setup for new values on the same pattern (amg.keep_structure): the aggregates and tentative
  // prolongators are kept; the filtered matrices, spectral radii, smoothed prolongators, Galerkin products,
  // smoothers and the coarse factorisation are computed anew. On the cpu backend the products by their
  // numeric phase only, into the kept patterns, down to a level whose filtered matrix has another pattern
  // than before (other rows lumped, or another strength on a level matrix of another pattern), from which on
  // by the SpGEMM (products_renewed_from()); each level's strength the one a setup on the kept aggregates
  // would use (LevelStructure); on the mpi backend the Galerkin products by the distributed SpGEMM's numeric
  // phase on kept plans and a scalar problem's A_f T gathered in one pass, so the result is the cpu
  // re-setup's, bit for bit; on the cuda backend by its SpGEMM, each level's
  // strength kept where its matrix has the kept pattern (the cpu re-setup's decisions; on the device, so
  // nothing but A goes up). Throws InputError when A's pattern is not the finest matrix's (checked over all
  // ranks) or no structure was kept, and leaves the hierarchy as it was. The old P and R are let go of
  // first (so the new ones take their memory): values the re-setup fails on (not positive definite, NaN)
  // throw and leave an empty hierarchy (no levels). Collective on the mpi backend.
  void rebuild(const Backend& backend, Shared A);
  void rebuild(Shared A)
    requires std::is_same_v<Backend, CpuBackend>
  {
    rebuild(Backend{}, std::move(A));
  }
  // No levels: what a failed re-setup leaves (its old levels are no hierarchy), and what a solver whose
  // rebuild failed holds until the next one succeeds.
  void clear() { *this = Hierarchy(); }
  bool keeps_structure() const { return !structure_.empty(); }
  // After a re-setup: the first level whose filtered matrix had another pattern than before, so that its
  // products and every coarser level's were formed by the SpGEMM rather than into the kept patterns (the
  // aggregates are kept on every level all the same); -1 when the kept patterns held throughout.
  int products_renewed_from() const { return products_renewed_from_; }

  std::size_t levels() const { return levels_.size(); }
  const Csr& matrix(std::size_t level) const { return or_empty(levels_[level].A); }
  // P and R = P^T of a level (empty on the coarsest).
  const Csr& prolongator(std::size_t level) const { return or_empty(levels_[level].P); }
  const Csr& restriction(std::size_t level) const { return or_empty(levels_[level].R); }
  const Shared& shared_matrix(std::size_t level) const { return levels_[level].A; }
  const Shared& shared_prolongator(std::size_t level) const { return levels_[level].P; }
  const Shared& shared_restriction(std::size_t level) const { return levels_[level].R; }
  // The solve holds one of a level's operators in a layout of its own (the cpu backend's sliced ELLPACK):
  // the hierarchy lets go of its copy, so that it is not held twice (matrix(), prolongator() or
  // restriction() is empty after). A re-setup needs the level matrices (amg.keep_structure), not P or R.
  void release(std::size_t level, LevelOperator which) {
    Level& l = levels_[level];
    (which == LevelOperator::matrix ? l.A : which == LevelOperator::prolongator ? l.P : l.R).reset();
  }
  // The smoother of a level (the coarsest's where it is smoothed): its polynomial, for the cycle to apply.
  const SmootherSpec& smoother(std::size_t level) const { return levels_[level].smoother; }
  // Whether the coarsest level is smoothed (kCoarsestSmoothingSteps of its smoother) rather than solved.
  bool coarsest_smoothed() const { return !levels_.empty() && !coarse_; }
  // The coarsest level on the host, and its sparse LDL^T (the pseudo-inverse for a singular matrix); both
  // empty where the coarsest level is smoothed.
  const std::shared_ptr<const CsrMatrix<Value>>& coarsest_on_host() const { return coarsest_host_; }
  const std::shared_ptr<const SparseLdlt<Value>>& coarse_factor() const { return coarse_; }
  // A singular matrix (amg.nullspace resolved to constant, or for a system to near_nullspace).
  bool singular() const { return params_.singular(); }
  // Its coarsest level's nullspace: m vectors, one after the other.
  const Vector<double>& coarse_nullspace() const { return coarse_nullspace_; }
  const AmgParams& params() const { return params_; }
  const std::vector<LevelInfo>& info() const { return info_; }
  // The finest level's aggregate of each row (of this rank's rows, over MPI ranks).
  const Array<Index>& finest_aggregates() const { return finest_aggregates_; }
  const std::string& spgemm_backend() const { return params_.spgemm; }  // the one used (never empty)
  double setup_seconds() const { return setup_seconds_; }

  // From the level table, whose counts are all ranks' on the mpi backend.
  double operator_complexity() const {  // sum nnz(A_l) / nnz(A_0)
    double total = 0;
    for (const LevelInfo& l : info_) total += static_cast<double>(l.nnz);
    return total / static_cast<double>(std::max<Offset>(1, info_.front().nnz));
  }
  double grid_complexity() const {  // sum rows(A_l) / rows(A_0)
    double total = 0;
    for (const LevelInfo& l : info_) total += l.rows;
    return total / std::max<double>(1, info_.front().rows);
  }
  // Memory held by the hierarchy beyond the fine matrix (this rank's): the coarse levels, P, R, the kept
  // structure and the coarsest level's factor.
  std::uint64_t bytes() const {
    std::uint64_t total = 0;
    for (std::size_t l = 0; l < levels_.size(); ++l) {
      if (l > 0 && levels_[l].A) total += levels_[l].A->bytes();
      if (levels_[l].P) total += levels_[l].P->bytes();
      if (levels_[l].R) total += levels_[l].R->bytes();
    }
    for (const LevelStructure<Backend, Value>& kept : structure_) total += kept.bytes();
    if (coarse_) total += coarse_->bytes();  // the coarsest level's factor (of the whole matrix on one level)
    return total;
  }

 private:
  struct Level {
    Shared A, P, R;
    SmootherSpec smoother;
  };

  Hierarchy() = default;  // filled by build_with_structure (rebuild)

  static const Csr& or_empty(const Shared& M) {
    static const Csr empty;
    return M ? *M : empty;
  }

  // How SmoothedAggregation::build fills the levels, finest first.
  friend class SmoothedAggregation<Backend, Value>;
  void add_level(Shared A, CoarseningStep<Backend, Value>&& step, const LevelInfo& info);
  // Builds into this (empty) hierarchy with the structure of `kept` (numeric_only: into the patterns of
  // `kept`'s products too). Defined in amg/resetup.hpp.
  void build_with_structure(const Backend& backend, Shared A, const Hierarchy& kept, bool numeric_only);
  void add_smoothed_coarsest(Shared A, const SmootherSpec& smoother, const LevelInfo& info);
  void resolve_nullspace_of_system(const Backend& backend, const Csr& A);
  void add_coarsest(Shared A, std::shared_ptr<const CsrMatrix<Value>> on_host,
                    std::shared_ptr<const SparseLdlt<Value>> factor, Vector<double> nullspace, const LevelInfo& info);

  AmgParams params_;
  std::vector<Level> levels_;
  std::vector<LevelInfo> info_;
  Array<Index> finest_aggregates_;
  std::vector<LevelStructure<Backend, Value>> structure_;  // per coarsened level, with amg.keep_structure
  // The last re-setup's first level whose products had new patterns (-1: none), and, while it runs, the new
  // filtered rows and A P patterns of such levels (merged into structure_ by rebuild).
  int products_renewed_from_ = -1;
  struct RenewedLevel {
    std::size_t level;
    bool strength;  // its strength record changed too (the level's matrix had another pattern than the kept one)
    LevelStructure<Backend, Value> structure;
  };
  std::vector<RenewedLevel> renewed_patterns_;
  std::shared_ptr<const CsrMatrix<Value>> coarsest_host_;
  std::shared_ptr<const SparseLdlt<Value>> coarse_;
  Vector<double> coarse_nullspace_;
  double setup_seconds_ = 0.0;
};

// The hierarchy built and held on the host.
template <class Value>
using AmgHierarchy = Hierarchy<CpuBackend, Value>;

}  // namespace amgsolve
