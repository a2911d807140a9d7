#include "spgemm/comparison.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <new>

#include "common/error.hpp"
#include "spgemm/registry.hpp"

namespace amgsolve {

template <>
double spgemm_agreement_tolerance<double>() {
  return 1e-12;
}
template <>
double spgemm_agreement_tolerance<float>() {
  return 1e-5;
}

template <class Value>
std::vector<double> product_magnitudes(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B,
                                       const CsrMatrix<Value>& pattern) {
  if (A.cols != B.rows || pattern.rows != A.rows || pattern.cols != B.cols)
    throw Error("product_magnitudes: A is " + std::to_string(A.rows) + "x" + std::to_string(A.cols) + ", B " +
                std::to_string(B.rows) + "x" + std::to_string(B.cols) + ", their product's pattern " +
                std::to_string(pattern.rows) + "x" + std::to_string(pattern.cols));
  std::vector<double> magnitude(static_cast<std::size_t>(pattern.nnz()), 0.0);
  const auto* first_column = pattern.col.data();
#pragma omp parallel for schedule(dynamic, 256)
  for (Index i = 0; i < A.rows; ++i) {
    const Index* row_begin = first_column + pattern.row_begin(i);
    const Index* row_end = first_column + pattern.row_end(i);
    for (Offset ka = A.row_begin(i); ka < A.row_end(i); ++ka) {
      const double a = std::abs(static_cast<double>(A.val[ka]));
      const Index k = A.col[ka];
      for (Offset kb = B.row_begin(k); kb < B.row_end(k); ++kb) {
        const Index* place = std::lower_bound(row_begin, row_end, B.col[kb]);
        if (place != row_end && *place == B.col[kb])
          magnitude[static_cast<std::size_t>(place - first_column)] += a * std::abs(static_cast<double>(B.val[kb]));
      }
    }
  }
  return magnitude;
}

template <class Value>
bool spgemm_results_agree(const CsrMatrix<Value>& c, const CsrMatrix<Value>& reference,
                          const std::vector<double>& magnitude, double tolerance, double& difference) {
  difference = 0.0;
  if (!c.same_pattern(reference) || magnitude.size() != reference.val.size()) {
    difference = INFINITY;
    return false;
  }
  // Below the smallest normal number rounding is absolute (steps of the smallest subnormal), not relative to
  // the products' size: a product of subnormal terms is judged on the scale of that number.
  const double smallest_normal = std::numeric_limits<Value>::min();
  for (std::size_t k = 0; k < reference.val.size(); ++k) {
    const double off = std::abs(static_cast<double>(c.val[k]) - static_cast<double>(reference.val[k]));
    if (std::isnan(off)) {  // std::max would keep the number before it
      difference = off;
      return false;
    }
    if (off > 0.0) difference = std::max(difference, off / std::max(magnitude[k], smallest_normal));
  }
  return difference <= tolerance;
}

namespace {

// The untimed runs: the first one's product is the one checked against the reference.
template <class Value>
void warm_up(const SpgemmBackend& backend, const CsrMatrix<Value>& A, const CsrMatrix<Value>& B,
             const CsrMatrix<Value>& reference, const std::vector<double>& magnitude, int warmup,
             SpgemmComparisonRow& row) {
  for (int w = 0; w < std::max(1, warmup); ++w) {
    SpgemmStats stats;
    const CsrMatrix<Value> C = backend.multiply(A, B, &stats);
    if (w == 0)
      row.agrees =
          spgemm_results_agree(C, reference, magnitude, spgemm_agreement_tolerance<Value>(), row.max_relative_difference);
    row.stats = stats;  // replaced by the median timed run's
  }
}

// The order of one timed run: this process's backends rotated by the run's number and reversed every other
// run, then the collective ones in registry order (every rank must call those alike).
std::vector<std::size_t> run_order(const std::vector<const SpgemmBackend*>& backends, int run) {
  std::vector<std::size_t> local, collective;
  for (std::size_t b = 0; b < backends.size(); ++b) (backends[b]->collective() ? collective : local).push_back(b);
  if (!local.empty()) {
    std::rotate(local.begin(), local.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(run) % local.size()),
                local.end());
    if (run % 2 == 1) std::reverse(local.begin(), local.end());
  }
  local.insert(local.end(), collective.begin(), collective.end());
  return local;
}

// The timed runs of every backend whose warm-up succeeded; one that fails later gets its error in its row.
template <class Value>
void timed_runs(const std::vector<const SpgemmBackend*>& backends, const CsrMatrix<Value>& A,
                const CsrMatrix<Value>& B, int runs, std::vector<SpgemmComparisonRow>& rows) {
  std::vector<std::vector<SpgemmStats>> measured(backends.size());
  for (int run = 0; run < runs; ++run)
    for (const std::size_t b : run_order(backends, run)) {
      if (!rows[b].error.empty()) continue;
      SpgemmStats stats;
      try {
        backends[b]->multiply(A, B, &stats);
      } catch (const Error& e) {
        rows[b].error = e.what();
        continue;
      } catch (const std::bad_alloc&) {  // one backend's workspace too large: its row says so, the others go on
        rows[b].error = "out of memory";
        continue;
      }
      measured[b].push_back(std::move(stats));
    }
  for (std::size_t b = 0; b < backends.size(); ++b) {
    std::vector<SpgemmStats>& m = measured[b];
    if (m.empty() || !rows[b].error.empty()) continue;
    std::sort(m.begin(), m.end(), [](const SpgemmStats& x, const SpgemmStats& y) { return x.seconds() < y.seconds(); });
    rows[b].runs = static_cast<int>(m.size());
    rows[b].min_seconds = m.front().seconds();
    rows[b].max_seconds = m.back().seconds();
    rows[b].stats = std::move(m[(m.size() - 1) / 2]);  // the median; of an even count, the faster middle run
  }
}

}  // namespace

template <class Value>
std::vector<SpgemmComparisonRow> compare_spgemm_backends(int level, const std::string& product,
                                                         const CsrMatrix<Value>& A, const CsrMatrix<Value>& B,
                                                         const CsrMatrix<Value>& reference,
                                                         const ComparisonTiming& timing) {
  std::vector<const SpgemmBackend*> backends;
  for (const SpgemmBackend* backend : SpgemmRegistry::instance().all())
    if (backend->available()) backends.push_back(backend);
  std::vector<SpgemmComparisonRow> rows(backends.size());
  const std::vector<double> magnitude = product_magnitudes(A, B, reference);
  for (std::size_t b = 0; b < backends.size(); ++b) {
    SpgemmComparisonRow& row = rows[b];
    row.level = level;
    row.product = product;
    row.backend = backends[b]->name();
    row.external_baseline = backends[b]->external_baseline();
    try {
      warm_up(*backends[b], A, B, reference, magnitude, timing.warmup, row);
    } catch (const Error& e) {
      row.error = e.what();
    } catch (const std::bad_alloc&) {
      row.error = "out of memory";
    }
  }
  timed_runs(backends, A, B, timing.runs, rows);
  return rows;
}

#define AMGSOLVE_INSTANTIATE_COMPARISON(V)                                                                   \
  template std::vector<double> product_magnitudes(const CsrMatrix<V>&, const CsrMatrix<V>&, const CsrMatrix<V>&); \
  template bool spgemm_results_agree(const CsrMatrix<V>&, const CsrMatrix<V>&, const std::vector<double>&, double, \
                                     double&);                                                                \
  template std::vector<SpgemmComparisonRow> compare_spgemm_backends(int, const std::string&, const CsrMatrix<V>&, \
                                                                    const CsrMatrix<V>&, const CsrMatrix<V>&,     \
                                                                    const ComparisonTiming&);
AMGSOLVE_INSTANTIATE_COMPARISON(double)
AMGSOLVE_INSTANTIATE_COMPARISON(float)

}  // namespace amgsolve
