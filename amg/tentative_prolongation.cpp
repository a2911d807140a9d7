#include "amg/tentative_prolongation.hpp"

#include <cmath>

namespace amgsolve {

template <class Value>
CsrMatrix<Value> tentative_prolongation(const Aggregates& aggregates) {
  const Index n = static_cast<Index>(aggregates.id.size());
  std::vector<Index> size(static_cast<std::size_t>(aggregates.count), 0);
  for (Index id : aggregates.id)
    if (id != kNotAggregated) ++size[id];

  CsrMatrix<Value> T(n, aggregates.count);
  for (Index i = 0; i < n; ++i) T.row_ptr[i + 1] = T.row_ptr[i] + (aggregates.id[i] != kNotAggregated ? 1 : 0);
  T.col.resize(static_cast<std::size_t>(T.nnz()));
  T.val.resize(static_cast<std::size_t>(T.nnz()));
#pragma omp parallel for schedule(static)
  for (Index i = 0; i < n; ++i) {
    const Index id = aggregates.id[i];
    if (id == kNotAggregated) continue;
    T.col[T.row_ptr[i]] = id;
    T.val[T.row_ptr[i]] = static_cast<Value>(1.0 / std::sqrt(static_cast<double>(size[id])));
  }
  return T;
}

template CsrMatrix<double> tentative_prolongation(const Aggregates&);
template CsrMatrix<float> tentative_prolongation(const Aggregates&);

}  // namespace amgsolve
