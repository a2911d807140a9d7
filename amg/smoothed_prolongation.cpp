#include "amg/smoothed_prolongation.hpp"

#include <algorithm>
#include <vector>

#include "backend/cpu/cpu_backend.hpp"
#include "common/error.hpp"
#include "common/thread_errors.hpp"
#include "common/timer.hpp"
#include "sparse/csr_ops.hpp"
#include "spgemm/product_memory.hpp"

namespace amgsolve {
namespace {

// T's one entry per row as two arrays over T's rows: the column (-1 for a row without an entry: a node in no
// aggregate) and the value. Where every row has its entry, T's own arrays are these.
template <class Value>
class SingleEntries {
 public:
  explicit SingleEntries(const CsrMatrix<Value>& T) {
    bool single = true;
#pragma omp parallel for schedule(static) reduction(&& : single)
    for (Index k = 0; k < T.rows; ++k) single = single && T.row_length(k) <= 1;
    if (!single) throw Error("smoothed_prolongator: the tentative prolongator has a row with several entries");
    if (T.nnz() == T.rows) {  // one entry in every row: row k's is entry k
      column_ = T.col.data();
      value_ = T.val.data();
      return;
    }
    own_columns_.resize(static_cast<std::size_t>(T.rows));
    own_values_.resize(static_cast<std::size_t>(T.rows));
#pragma omp parallel for schedule(static)
    for (Index k = 0; k < T.rows; ++k) {
      const bool has = T.row_length(k) == 1;
      own_columns_[k] = has ? T.col[T.row_begin(k)] : -1;
      own_values_[k] = has ? T.val[T.row_begin(k)] : Value(0);
    }
    column_ = own_columns_.data();
    value_ = own_values_.data();
  }

  const Index* column() const { return column_; }
  const Value* value() const { return value_; }

 private:
  const Index* column_ = nullptr;
  const Value* value_ = nullptr;
  Array<Index> own_columns_;
  Array<Value> own_values_;
};

// The number of aggregates that row i of A_f reaches. `marker` stamps each with i (branch-free: which
// neighbour reaches an aggregate first does not follow a pattern a predictor learns).
template <class Value>
Index count_row(const CsrMatrix<Value>& A_f, const Index* __restrict aggregate, Index i, Index* __restrict marker) {
  Index length = 0;
  for (Offset ka = A_f.row_begin(i); ka < A_f.row_end(i); ++ka) {
    const Index c = aggregate[A_f.col[ka]];
    if (c < 0) continue;
    length += marker[c] != i;
    marker[c] = i;
  }
  return length;
}

// Row i of P = T - omega D_f^-1 (A_f T) into columns/values (its slots in P): the sums a_ik t_k per aggregate
// in `sums` (zero on entry, left zero), in A_f's row order as the SpGEMM adds them, listed in column order,
// times -omega / a_ii, plus T's entry of the row. `scratch` has room for the row of A_f. Returns the
// number of products.
template <class Value>
Offset fill_row(const CsrMatrix<Value>& A_f, const SingleEntries<Value>& T, double omega, Index i,
                Index* __restrict marker, Value* __restrict sums, Index* __restrict scratch, Index* __restrict columns,
                Value* __restrict values) {
  const Index* __restrict aggregate = T.column();
  const Value* __restrict weight = T.value();
  Index length = 0;
  Offset products = 0;
  Value diagonal = Value(0);
  for (Offset ka = A_f.row_begin(i); ka < A_f.row_end(i); ++ka) {
    const Index k = A_f.col[ka];
    if (k == i) diagonal = A_f.val[ka];
    const Index c = aggregate[k];
    if (c < 0) continue;
    ++products;
    scratch[length] = c;
    length += marker[c] != i;
    marker[c] = i;
    sums[c] += A_f.val[ka] * weight[k];
  }
  std::sort(scratch, scratch + length);
  const Value scale = static_cast<Value>(-omega / static_cast<double>(diagonal));
  for (Index n = 0; n < length; ++n) {
    const Index c = scratch[n];
    columns[n] = c;
    values[n] = sums[c] * scale;
    sums[c] = Value(0);
  }
  const Index own = aggregate[i];
  if (own >= 0) values[std::lower_bound(columns, columns + length, own) - columns] += weight[i];
  return products;
}

}  // namespace

template <class Value>
CsrMatrix<Value> smoothed_prolongator(const CpuBackend&, const CsrMatrix<Value>& A_f, const CsrMatrix<Value>& T,
                                      double omega, SpgemmStats* stats) {
  if (A_f.cols != T.rows) throw Error("smoothed_prolongator: A_f has " + std::to_string(A_f.cols) +
                                      " columns, T " + std::to_string(T.rows) + " rows");
  Timer timer;
  const SingleEntries<Value> entries(T);
  CsrMatrix<Value> P(A_f.rows, T.cols);
  // Each thread's markers and sums span the aggregates: checked first, so that what does not fit is named
  // (and out of memory inside the threads is an exception, not the end of the process).
  require_thread_arrays(static_cast<std::uint64_t>(T.cols), sizeof(Index) + sizeof(Value),
                        "the smoothed prolongator's markers", "aggregates");
  ThreadErrors errors;
  // Pass 1: each row's number of aggregates.
#pragma omp parallel
  {
    std::vector<Index> marker;
    errors.run([&] { marker.assign(static_cast<std::size_t>(T.cols), -1); });
#pragma omp for schedule(static)
    for (Index i = 0; i < A_f.rows; ++i)
      if (!errors.failed())
        P.row_ptr[static_cast<std::size_t>(i) + 1] = count_row(A_f, entries.column(), i, marker.data());
  }
  errors.rethrow();
  allocate_from_row_lengths(P);
  const double symbolic = timer.seconds();
  // Pass 2: the values.
  Offset products = 0;
#pragma omp parallel reduction(+ : products)
  {
    std::vector<Index> marker, scratch;
    std::vector<Value> sums;
    errors.run([&] {
      marker.assign(static_cast<std::size_t>(T.cols), -1);
      sums.assign(static_cast<std::size_t>(T.cols), Value(0));
    });
#pragma omp for schedule(static)
    for (Index i = 0; i < A_f.rows; ++i)
      errors.run([&] {
        if (scratch.size() < static_cast<std::size_t>(A_f.row_length(i))) scratch.resize(A_f.row_length(i));
        products += fill_row(A_f, entries, omega, i, marker.data(), sums.data(), scratch.data(),
                             P.col.data() + P.row_begin(i), P.val.data() + P.row_begin(i));
      });
  }
  errors.rethrow();
  if (stats) {
    stats->symbolic_seconds = symbolic;
    stats->numeric_seconds = timer.seconds() - symbolic;
    stats->multiplications = products;
    stats->nnz = P.nnz();
    stats->extra_bytes = 0;
    stats->choice = "gathered with the Jacobi step (T has one entry per row)";
  }
  return P;
}

template <class Value>
void scale_and_add_tentative(const CpuBackend&, CsrMatrix<Value>& P, const CsrMatrix<Value>& A_filtered,
                             const CsrMatrix<Value>& T, double omega) {
  const Vector<Value> d = diagonal(A_filtered);
  bool missing = false;  // T's column not in A_f T's row: impossible with A_f's positive diagonal
#pragma omp parallel for schedule(static) reduction(|| : missing)
  for (Index i = 0; i < P.rows; ++i) {
    const Value scale = static_cast<Value>(-omega / static_cast<double>(d[i]));
    for (Offset k = P.row_begin(i); k < P.row_end(i); ++k) P.val[k] *= scale;
    for (Offset t = T.row_begin(i); t < T.row_end(i); ++t) {
      const auto first = P.col.begin() + P.row_begin(i);
      const auto last = P.col.begin() + P.row_end(i);
      const auto at = std::lower_bound(first, last, T.col[t]);
      if (at == last || *at != T.col[t]) {
        missing = true;
        continue;
      }
      P.val[static_cast<std::size_t>(at - P.col.begin())] += T.val[t];
    }
  }
  if (missing) throw Error("internal: a row of the smoothed prolongator lacks its aggregate's column");
}

template <class Value>
CsrMatrix<Value> smoothed_prolongation(const CsrMatrix<Value>& A_filtered, const CsrMatrix<Value>& T, double omega,
                                       const SpgemmBackend& spgemm, SpgemmStats* stats) {
  CsrMatrix<Value> P = spgemm.multiply(A_filtered, T, stats);
  scale_and_add_tentative(CpuBackend{}, P, A_filtered, T, omega);
  return P;
}

template void scale_and_add_tentative(const CpuBackend&, CsrMatrix<double>&, const CsrMatrix<double>&,
                                      const CsrMatrix<double>&, double);
template void scale_and_add_tentative(const CpuBackend&, CsrMatrix<float>&, const CsrMatrix<float>&,
                                      const CsrMatrix<float>&, double);
template CsrMatrix<double> smoothed_prolongator(const CpuBackend&, const CsrMatrix<double>&, const CsrMatrix<double>&,
                                                double, SpgemmStats*);
template CsrMatrix<float> smoothed_prolongator(const CpuBackend&, const CsrMatrix<float>&, const CsrMatrix<float>&,
                                               double, SpgemmStats*);
template CsrMatrix<double> smoothed_prolongation(const CsrMatrix<double>&, const CsrMatrix<double>&, double,
                                                 const SpgemmBackend&, SpgemmStats*);
template CsrMatrix<float> smoothed_prolongation(const CsrMatrix<float>&, const CsrMatrix<float>&, double,
                                                const SpgemmBackend&, SpgemmStats*);

}  // namespace amgsolve
