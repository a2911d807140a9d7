#include "spgemm/comparison.hpp"

#include <algorithm>
#include <cmath>

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
bool spgemm_results_agree(const CsrMatrix<Value>& c, const CsrMatrix<Value>& reference, double tolerance,
                          double& difference) {
  difference = 0.0;
  if (c.rows != reference.rows || c.cols != reference.cols || c.row_ptr != reference.row_ptr ||
      c.col != reference.col) {
    difference = INFINITY;
    return false;
  }
  double scale = 0.0, diff = 0.0;
  for (std::size_t k = 0; k < reference.val.size(); ++k) {
    scale = std::max(scale, std::abs(static_cast<double>(reference.val[k])));
    diff = std::max(diff, std::abs(static_cast<double>(c.val[k]) - static_cast<double>(reference.val[k])));
  }
  difference = scale > 0 ? diff / scale : diff;
  return difference <= tolerance;
}

template <class Value>
std::vector<SpgemmComparisonRow> compare_spgemm_backends(int level, const std::string& product,
                                                         const CsrMatrix<Value>& A, const CsrMatrix<Value>& B,
                                                         const CsrMatrix<Value>& reference) {
  std::vector<SpgemmComparisonRow> rows;
  for (const SpgemmBackend* backend : SpgemmRegistry::instance().all()) {
    if (!backend->available()) continue;
    SpgemmComparisonRow row;
    row.level = level;
    row.product = product;
    row.backend = backend->name();
    row.external_baseline = backend->external_baseline();
    try {
      const CsrMatrix<Value> C = backend->multiply(A, B, &row.stats);
      row.agrees =
          spgemm_results_agree(C, reference, spgemm_agreement_tolerance<Value>(), row.max_relative_difference);
    } catch (const Error& e) {
      row.error = e.what();
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

#define AMGSOLVE_INSTANTIATE_COMPARISON(V)                                                                   \
  template bool spgemm_results_agree(const CsrMatrix<V>&, const CsrMatrix<V>&, double, double&);            \
  template std::vector<SpgemmComparisonRow> compare_spgemm_backends(int, const std::string&, const CsrMatrix<V>&, \
                                                                    const CsrMatrix<V>&, const CsrMatrix<V>&);
AMGSOLVE_INSTANTIATE_COMPARISON(double)
AMGSOLVE_INSTANTIATE_COMPARISON(float)

}  // namespace amgsolve
