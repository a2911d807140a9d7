#pragma once
// Run-time comparison of SpGEMM backends: one product C = A * B, computed by every available backend,
// timed and checked against a reference result (same pattern; each value within a relative tolerance of
// the sum of its products' magnitudes, (|A| |B|)_ij). Used by `amgsolve --compare-spgemm` for every Galerkin product of
// the setup; the AMG code only hands over its products (see AmgHierarchy's product callback).
#include <string>
#include <vector>

#include "spgemm/spgemm.hpp"

namespace amgsolve {

struct SpgemmComparisonRow {
  int level = 0;
  std::string product;  // "prolongator" (A_f T), "ap" (A P) or "rap" (P^T (A P))
  std::string backend;
  bool external_baseline = false;  // SpgemmBackend::external_baseline()
  SpgemmStats stats;  // stats.choice: what a delegating backend (auto) picked and why
  bool agrees = false;
  std::string error;  // why the backend could not compute this product (then agrees = false)
  double max_relative_difference = 0.0;  // max over entries of |c_ij - ref_ij| / (|A| |B|)_ij
  // Timed runs after the warm-up; `stats` is the run of median time, the spread is the fastest and slowest.
  int runs = 0;
  double min_seconds = 0.0;
  double max_seconds = 0.0;
};

// How the comparison times: one untimed warm-up run of every backend (page faults, caches, first-touch
// allocations; its result is the one checked), then `runs` timed runs. In each run the backends of this
// process go in another order (rotated by the run's number, reversed every other run), so that none always
// runs first or after the same other; the collective (MPI) backends follow them in the registry's order,
// the same on every rank. The time reported is the median run's (the upper middle one for an even count).
struct ComparisonTiming {
  int warmup = 1;
  int runs = 3;
};

// Values agree when |c_ij - ref_ij| <= tolerance * (|A| |B|)_ij for every entry: 1e-12 for double, 1e-5 for
// float. (|A| |B|)_ij bounds what any order of summing the products may round away, so an entry that
// cancels (a stiffness matrix's row sums, a product of order 1e8 terms that sums to 1) is judged on the
// scale of its terms, not on the scale of the largest entry of C, against which its rounding looked wrong.
template <class Value>
double spgemm_agreement_tolerance();

// (|A| |B|)_ij for each stored entry of `pattern` (the product's pattern, columns sorted in each row), in
// its order; a product (i, k, j) whose j is not in row i of the pattern is left out.
template <class Value>
std::vector<double> product_magnitudes(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B,
                                       const CsrMatrix<Value>& pattern);

// Same pattern and values within `tolerance` as above, `magnitude` being product_magnitudes(A, B,
// reference); sets `difference` to the largest |c_ij - ref_ij| / (|A| |B|)_ij (0 / 0 taken as 0), (|A| |B|)_ij
// taken as at least the smallest normal number of Value (below it, rounding steps are absolute).
template <class Value>
bool spgemm_results_agree(const CsrMatrix<Value>& c, const CsrMatrix<Value>& reference,
                          const std::vector<double>& magnitude, double tolerance, double& difference);

// Times every available backend on A * B as `timing` says, checking its result against `reference`.
template <class Value>
std::vector<SpgemmComparisonRow> compare_spgemm_backends(int level, const std::string& product,
                                                         const CsrMatrix<Value>& A, const CsrMatrix<Value>& B,
                                                         const CsrMatrix<Value>& reference,
                                                         const ComparisonTiming& timing = {});

}  // namespace amgsolve
