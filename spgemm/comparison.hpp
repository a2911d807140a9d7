#pragma once
// Run-time comparison of SpGEMM backends: one product C = A * B, computed by every available backend,
// timed and checked against a reference result (same pattern; values within a relative tolerance of
// the reference's largest magnitude). Used by `amgsolve --compare-spgemm` for every Galerkin product of
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
  double max_relative_difference = 0.0;  // max |c - ref| / max |ref|
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

// Values agree when max |c - ref| <= tolerance * max |ref|: 1e-12 for double, 1e-5 for float.
template <class Value>
double spgemm_agreement_tolerance();

// Same pattern and values within `tolerance`; sets `difference` to max |c - ref| / max |ref|.
template <class Value>
bool spgemm_results_agree(const CsrMatrix<Value>& c, const CsrMatrix<Value>& reference, double tolerance,
                          double& difference);

// Times every available backend on A * B as `timing` says, checking its result against `reference`.
template <class Value>
std::vector<SpgemmComparisonRow> compare_spgemm_backends(int level, const std::string& product,
                                                         const CsrMatrix<Value>& A, const CsrMatrix<Value>& B,
                                                         const CsrMatrix<Value>& reference,
                                                         const ComparisonTiming& timing = {});

}  // namespace amgsolve
