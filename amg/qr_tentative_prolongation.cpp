#include "amg/qr_tentative_prolongation.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "common/error.hpp"
#include "common/reduction_block.hpp"

namespace amgsolve {

int factor_aggregate(const double* values, int k, const Index* rows, Index m, double* q, double* r) {
  int kept = 0;
  for (int c = 0; c < k; ++c) {
    double* v = q + static_cast<std::size_t>(kept) * m;  // the next column's place
    double norm0 = 0;
    for (Index i = 0; i < m; ++i) {
      v[i] = values[static_cast<std::size_t>(rows[i]) * k + c];
      norm0 += v[i] * v[i];
    }
    for (int pass = 0; pass < 2; ++pass)
      for (int p = 0; p < kept; ++p) {
        const double* u = q + static_cast<std::size_t>(p) * m;
        double d = 0;
        for (Index i = 0; i < m; ++i) d += u[i] * v[i];
        for (Index i = 0; i < m; ++i) v[i] -= d * u[i];
        r[p * k + c] += d;
      }
    double norm = 0;
    for (Index i = 0; i < m; ++i) norm += v[i] * v[i];
    norm = std::sqrt(norm);
    if (norm0 == 0 || norm <= kDependentColumn * std::sqrt(norm0)) continue;
    for (Index i = 0; i < m; ++i) v[i] /= norm;
    r[kept * k + c] = norm;
    ++kept;
  }
  return kept;
}

NearNullspace coarse_near_nullspace(int k, const std::vector<Index>& first_column, const std::vector<double>& r) {
  NearNullspace coarse;
  coarse.vectors = k;
  coarse.values.resize(static_cast<std::size_t>(first_column.back()) * k);
  const auto aggregates = static_cast<Index>(first_column.size()) - 1;
  for (Index a = 0; a < aggregates; ++a) {
    if (a > 0 && a % kAggregateBlock == 0) coarse.reduction_blocks.push_back(coarse.nodes());
    const Index columns = first_column[a + 1] - first_column[a];
    if (columns == 0) continue;
    coarse.node_ptr.push_back(first_column[a + 1]);
    std::copy_n(r.data() + static_cast<std::size_t>(a) * k * k, static_cast<std::size_t>(columns) * k,
                coarse.values.data() + static_cast<std::size_t>(first_column[a]) * k);
  }
  if (aggregates > 0) coarse.reduction_blocks.push_back(coarse.nodes());
  return coarse;
}

template <class Value>
CsrMatrix<Value> tentative_prolongation(const Aggregates& node_aggregates, const NearNullspace& B,
                                        NearNullspace& coarse, Array<Index>& row_aggregates) {
  const Index rows = B.rows(), aggregates = node_aggregates.count;
  const int k = B.vectors;
  if (static_cast<Index>(node_aggregates.id.size()) != B.nodes())
    throw Error("internal: tentative_prolongation: aggregates of " + std::to_string(node_aggregates.id.size()) +
                " nodes for " + std::to_string(B.nodes()));
  // Every row's aggregate, and each aggregate's rows in order (a counting sort).
  row_aggregates.resize(static_cast<std::size_t>(rows));
  for (Index n = 0; n < B.nodes(); ++n)
    for (Index i = B.node_ptr[n]; i < B.node_ptr[n + 1]; ++i) row_aggregates[i] = node_aggregates.id[n];
  std::vector<Index> first(static_cast<std::size_t>(aggregates) + 1, 0), members(static_cast<std::size_t>(rows));
  std::vector<Index> place(static_cast<std::size_t>(rows), -1);  // a row's position within its aggregate
  for (Index i = 0; i < rows; ++i)
    if (row_aggregates[i] != kNotAggregated) ++first[row_aggregates[i] + 1];
  for (Index a = 0; a < aggregates; ++a) first[a + 1] += first[a];
  {
    std::vector<Index> next(first.begin(), first.end() - 1);
    for (Index i = 0; i < rows; ++i)
      if (const Index a = row_aggregates[i]; a != kNotAggregated) {
        place[i] = next[a] - first[a];
        members[next[a]++] = i;
      }
  }
  // Q and R of every aggregate.
  std::vector<double> q(static_cast<std::size_t>(first.back()) * k), r(static_cast<std::size_t>(aggregates) * k * k, 0.0);
  std::vector<Index> kept(static_cast<std::size_t>(aggregates) + 1, 0);
#pragma omp parallel for schedule(dynamic, 256)
  for (Index a = 0; a < aggregates; ++a)
    kept[a + 1] = factor_aggregate(B.values.data(), k, members.data() + first[a], first[a + 1] - first[a],
                                   q.data() + static_cast<std::size_t>(first[a]) * k,
                                   r.data() + static_cast<std::size_t>(a) * k * k);
  for (Index a = 0; a < aggregates; ++a) kept[a + 1] += kept[a];  // now each aggregate's first coarse row
  // T: row i of aggregate a holds row place[i] of Q_a, in coarse columns kept[a] ...
  CsrMatrix<Value> T(rows, kept.back());
  for (Index i = 0; i < rows; ++i) {
    const Index a = row_aggregates[i];
    T.row_ptr[static_cast<std::size_t>(i) + 1] = a == kNotAggregated ? 0 : kept[a + 1] - kept[a];
  }
  allocate_from_row_lengths(T);
#pragma omp parallel for schedule(static)
  for (Index i = 0; i < rows; ++i) {
    const Index a = row_aggregates[i];
    if (a == kNotAggregated) continue;
    const Index m = first[a + 1] - first[a];
    const double* qa = q.data() + static_cast<std::size_t>(first[a]) * k;
    for (Index p = 0; p < kept[a + 1] - kept[a]; ++p) {
      T.col[T.row_begin(i) + p] = kept[a] + p;
      T.val[T.row_begin(i) + p] = static_cast<Value>(qa[static_cast<std::size_t>(p) * m + place[i]]);
    }
  }
  coarse = coarse_near_nullspace(k, kept, r);
  return T;
}

template CsrMatrix<double> tentative_prolongation(const Aggregates&, const NearNullspace&, NearNullspace&,
                                                  Array<Index>&);
template CsrMatrix<float> tentative_prolongation(const Aggregates&, const NearNullspace&, NearNullspace&,
                                                 Array<Index>&);

}  // namespace amgsolve
