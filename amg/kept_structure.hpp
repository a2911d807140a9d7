#pragma once
// What a re-setup on the same pattern keeps of a hierarchy (amg.keep_structure; AMGCL's rebuild, AmgX's
// resetup, MueLu's reuse), and how a level coarsened on a kept structure forms its products. The re-setup
// itself is amg/resetup.hpp.
#include <cstdint>
#include <memory>

#include "amg/cuda/cuda_strength.hpp"
#include "amg/near_nullspace.hpp"
#include "amg/strength.hpp"
#include "backend/cpu/cpu_backend.hpp"
#include "spgemm/spgemm.hpp"

namespace amgsolve {

// Whether a re-setup on the backend follows the kept product patterns by recording which rows each level's
// filtered matrix lumped (while those rows stay the same, so do the patterns): the backend says
// (records_lumped_rows). One that records none (the cuda backend) compares each level's matrix with the kept
// one instead (same_pattern); which products it then forms by the SpGEMM is kNumericProducts' to say, below
// (the cuda backend has no numeric-only products either).
template <class Backend>
inline constexpr bool kRecordsLumpedRows = Backend::records_lumped_rows;

// The strength classification a level keeps: the host's (amg/strength.hpp; over MPI a rank's rows') or, on
// the cuda backend, the device's (amg/cuda/cuda_strength.hpp). strength_bytes, beside each, gives its memory.
template <class Backend>
struct KeptStrength {
  using type = Strength;
};
template <>
struct KeptStrength<CudaBackend> {
  using type = CudaStrength;
};

// What a backend keeps of a product to form it again by its numeric phase alone (its ProductPattern: on
// the cpu the pattern, over MPI the rowwise product's fetch plan and layout); a plain pattern for a backend
// that forms every product by its SpGEMM (the cuda one: kNumericProducts below is false).
template <class Backend, class Value>
struct ProductPatternOf {
  using type = CsrMatrix<Value>;
};
template <class Backend, class Value>
  requires requires { typename Backend::template ProductPattern<Value>; }
struct ProductPatternOf<Backend, Value> {
  using type = typename Backend::template ProductPattern<Value>;
};

// What a backend keeps of a transpose to form it again for new values (its TransposePattern: over MPI the
// order its entries are sent in and the transpose's layout); nothing for a backend that transposes anew.
struct NoTransposePattern {
  std::uint64_t bytes() const { return 0; }
};
template <class Backend, class Value>
struct TransposePatternOf {
  using type = NoTransposePattern;
};
template <class Backend, class Value>
  requires requires { typename Backend::template TransposePattern<Value>; }
struct TransposePatternOf<Backend, Value> {
  using type = typename Backend::template TransposePattern<Value>;
};

// What a re-setup keeps of a level (amg.keep_structure): the strength classification, so that the
// filtered matrix keeps its pattern; the tentative prolongator (shared, never changed) and the next level's
// near-nullspace weights, so that the aggregates stay; which rows were lumped (kRecordsLumpedRows: where that
// changes, the products have new patterns from that level on); on the cpu and mpi backends also what forms
// A P again (its pattern, the one product the hierarchy does not hold: P's pattern is P's own, P^T (A P)'s
// the next level's matrix) and, over MPI, what forms P^T (A P) again beside that matrix (a fetch plan) and
// what forms A_f T and P^T again (which the cpu gathers in one pass and transposes anew).
//
// A level's strength is the one a setup on the kept aggregates would use: the first setup's where the level
// matrix has the first setup's pattern, and one computed anew from the matrix where it has another (a coarse
// level below one whose products changed their patterns). Then `strength` is that newest one, and the first
// setup's is kept beside it with its pattern, so that a matrix back on the first pattern gets it back: the
// hierarchy does not depend on the re-setups that came before.
template <class Backend, class Value>
struct LevelStructure {
  using Strength = typename KeptStrength<Backend>::type;
  using Csr = typename Backend::template Csr<Value>;
  Strength strength;         // this rank's rows' (the mpi backend's local part)
  Offset weak_entries = 0;   // over all ranks
  std::shared_ptr<const Csr> T;
  typename Backend::template Vector<double> coarse_weights;
  std::shared_ptr<const NearNullspace> coarse_near;  // a system's next level (amg/near_nullspace.hpp)
  Index aggregates = 0;      // the level's aggregates, over all ranks (T's columns, for a scalar problem)
  using ProductPattern = typename ProductPatternOf<Backend, Value>::type;
  Array<std::uint8_t> filtered_rows;  // which of this rank's rows lumped weak entries; empty: none weak
  ProductPattern ap_pattern;          // A P's
  ProductPattern rap_pattern;         // what the next level's matrix does not give (nothing on the cpu)
  ProductPattern prolongator_pattern; // A_f T's, where the backend multiplies it (nothing on the cpu)
  typename TransposePatternOf<Backend, Value>::type transpose_pattern;  // P^T's (nothing on the cpu)
  // Set while the level matrix has another pattern than at the first setup: that setup's strength, its weak
  // entries and its pattern (on the host row_ptr and col only; on the other backends the old matrix, held).
  std::shared_ptr<const Strength> first_strength;
  Offset first_weak_entries = 0;
  std::shared_ptr<const Csr> first_pattern;

  std::uint64_t bytes() const {
    return (T ? T->bytes() : 0) + (coarse_near ? coarse_near->bytes() : 0) + ap_pattern.bytes() + rap_pattern.bytes() + prolongator_pattern.bytes() + transpose_pattern.bytes() +
           filtered_rows.size() + strength_bytes(strength) +
           (first_strength ? strength_bytes(*first_strength) : 0) + (first_pattern ? first_pattern->bytes() : 0);
  }
};

// How a kept level's products are formed.
enum class KeptProducts {
  by_spgemm,     // a setup with another hierarchy's structure: by the SpGEMM
  numeric_only,  // a re-setup whose kept product patterns still hold on this level: into them
  renewed,       // a re-setup below a level whose products changed their patterns: by the SpGEMM, as these change
};

// Whether a backend forms a product by its numeric phase alone into a kept pattern (multiply_into; the cpu
// backend, and the mpi backend with its kept plans, which fetch only the values of the rows).
template <class Backend, class Value>
inline constexpr bool kNumericProducts =
    requires(const Backend& b, const typename Backend::template Csr<Value>& X,
             const typename ProductPatternOf<Backend, Value>::type& pattern, const SpgemmBackend& spgemm,
             SpgemmStats& stats) { b.multiply_into(spgemm, X, X, pattern, stats); };

// A level coarsened with a kept structure (Hierarchy::rebuild and the constructor that takes another
// hierarchy's structure): the strength and tentative prolongator are `kept`'s. With the patterns
// (kNumericProducts, KeptProducts::numeric_only), the Galerkin products are formed by their numeric phase
// only: A_f T into prolongator_pattern and A P into ap_pattern (kept's), P^T (A P) into coarse_pattern (the
// old next level matrix's, with kept's rap_pattern); P^T by transpose_pattern.
template <class Backend, class Value>
struct KeptLevel {
  using ProductPattern = typename ProductPatternOf<Backend, Value>::type;
  const LevelStructure<Backend, Value>* kept = nullptr;
  std::shared_ptr<const typename Backend::template Csr<Value>> matrix;  // the kept hierarchy's matrix of the level
  KeptProducts products = KeptProducts::by_spgemm;
  const ProductPattern* prolongator_pattern = nullptr;
  const typename TransposePatternOf<Backend, Value>::type* transpose_pattern = nullptr;
  const ProductPattern* ap_pattern = nullptr;
  std::shared_ptr<const ProductPattern> coarse_pattern;
};

}  // namespace amgsolve
