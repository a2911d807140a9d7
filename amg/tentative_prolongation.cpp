#include "amg/tentative_prolongation.hpp"

#include <cmath>

#include "common/error.hpp"

namespace amgsolve {

template <class Value>
CsrMatrix<Value> tentative_prolongation(const Aggregates& aggregates, const Vector<double>& weights,
                                        Vector<double>& coarse_weights) {
  const Index n = static_cast<Index>(aggregates.id.size());
  const bool finest = weights.empty();
  if (!finest && weights.size() != aggregates.id.size())
    throw Error("tentative_prolongation: " + std::to_string(weights.size()) + " weights for " + std::to_string(n) +
                " nodes");
  const auto weight = [&](Index i) { return finest ? 1.0 : weights[static_cast<std::size_t>(i)]; };
  coarse_weights.assign(static_cast<std::size_t>(aggregates.count), 0.0);
  for (Index i = 0; i < n; ++i)
    if (aggregates.id[i] != kNotAggregated) coarse_weights[aggregates.id[i]] += weight(i);

  CsrMatrix<Value> T(n, aggregates.count);
  for (Index i = 0; i < n; ++i) T.row_ptr[i + 1] = T.row_ptr[i] + (aggregates.id[i] != kNotAggregated ? 1 : 0);
  T.col.resize(static_cast<std::size_t>(T.nnz()));
  T.val.resize(static_cast<std::size_t>(T.nnz()));
#pragma omp parallel for schedule(static)
  for (Index i = 0; i < n; ++i) {
    const Index id = aggregates.id[i];
    if (id == kNotAggregated) continue;
    T.col[T.row_ptr[i]] = id;
    T.val[T.row_ptr[i]] = tentative_entry<Value>(weight(i), coarse_weights[id]);
  }
  return T;
}

template CsrMatrix<double> tentative_prolongation(const Aggregates&, const Vector<double>&, Vector<double>&);
template CsrMatrix<float> tentative_prolongation(const Aggregates&, const Vector<double>&, Vector<double>&);

}  // namespace amgsolve
