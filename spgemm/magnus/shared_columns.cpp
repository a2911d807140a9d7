#include "spgemm/magnus/shared_columns.hpp"

#include <atomic>

#include "common/allocator.hpp"
#include "spgemm/accumulator.hpp"

namespace amgsolve::magnus {
namespace {

// A bit per column of B, set where the column holds two or more of B's nonzeros. Each entry sets its
// column's bit in `seen` atomically (threads share the words); one that finds it set already marks the
// column shared. The result does not depend on the order, so neither on the thread count.
template <class Value>
Array<std::uint64_t> shared_columns(const CsrMatrix<Value>& B) {
  const std::size_t words = bitmap_words(B.cols);
  Array<std::uint64_t> seen(words), shared(words);
#pragma omp parallel for schedule(static)
  for (std::size_t w = 0; w < words; ++w) seen[w] = shared[w] = 0;
  const Offset nonzeros = B.nnz();
#pragma omp parallel for schedule(static)
  for (Offset e = 0; e < nonzeros; ++e) {
    const auto c = static_cast<std::uint64_t>(B.col[e]);
    const std::uint64_t bit = std::uint64_t{1} << (c & 63);
    if ((std::atomic_ref<std::uint64_t>(seen[c >> 6]).fetch_or(bit, std::memory_order_relaxed) & bit) != 0)
      std::atomic_ref<std::uint64_t>(shared[c >> 6]).fetch_or(bit, std::memory_order_relaxed);
  }
  return shared;
}

bool is_shared(const Array<std::uint64_t>& shared, Index c) {
  return (shared[static_cast<std::size_t>(c) >> 6] >> (static_cast<unsigned>(c) & 63) & 1) != 0;
}

}  // namespace

std::uint64_t shared_column_scratch_bytes(Index b_columns) { return 2 * sizeof(std::uint64_t) * bitmap_words(b_columns); }

bool single_columns_pay(Offset b_nonzeros, Index b_columns, Offset products) {
  return b_nonzeros < b_columns && static_cast<Offset>(shared_column_scratch_bytes(b_columns)) <= products;
}

template <class Value>
CsrMatrix<Value> shared_column_entries(const CsrMatrix<Value>& B) {
  const Array<std::uint64_t> shared = shared_columns(B);
  CsrMatrix<Value> S(B.rows, B.cols);
#pragma omp parallel for schedule(static)
  for (Index k = 0; k < B.rows; ++k) {
    Offset kept = 0;
    for (Offset e = B.row_begin(k); e < B.row_end(k); ++e) kept += is_shared(shared, B.col[e]);
    S.row_ptr[static_cast<std::size_t>(k) + 1] = kept;
  }
  offsets_from_row_lengths(S);
  S.col.resize(static_cast<std::size_t>(S.nnz()));  // no values
#pragma omp parallel for schedule(static)
  for (Index k = 0; k < B.rows; ++k) {
    Offset out = S.row_begin(k);
    for (Offset e = B.row_begin(k); e < B.row_end(k); ++e)
      if (is_shared(shared, B.col[e])) S.col[out++] = B.col[e];
  }
  return S;
}

template CsrMatrix<double> shared_column_entries(const CsrMatrix<double>&);
template CsrMatrix<float> shared_column_entries(const CsrMatrix<float>&);

}  // namespace amgsolve::magnus
