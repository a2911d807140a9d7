#include "spgemm/magnus/shared_columns.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cassert>
#include <vector>

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

bool is_shared(const std::uint64_t* shared, Index c) {
  return (shared[static_cast<std::size_t>(c) >> 6] >> (static_cast<unsigned>(c) & 63) & 1) != 0;
}

// rank[w] = the set bits of words[0, w) for w < n (POPCNT clones: spgemm/accumulator.hpp); returns
// all of them.
AMGSOLVE_POPCNT_CLONES
Index rank_words(const std::uint64_t* words, std::size_t n, Index* rank) {
  Index start = 0;
  for (std::size_t w = 0; w < n; ++w) {
    rank[w] = start;
    start += std::popcount(words[w]);
  }
  return start;
}

// The shared columns' entries of cols[0, n) (a row of B), each as its column's rank among the shared
// columns (how many shared columns precede it), into out; returns how many. The rank is a monotone
// map, so the row stays sorted.
AMGSOLVE_POPCNT_CLONES
Offset rank_shared_entries(const Index* cols, Offset n, const std::uint64_t* shared, const Index* word_rank,
                           Index* out) {
  Offset kept = 0;
  for (Offset e = 0; e < n; ++e) {
    if (!is_shared(shared, cols[e])) continue;
    const auto c = static_cast<unsigned>(cols[e]);
    out[kept++] = word_rank[c >> 6] + std::popcount(shared[c >> 6] & ((std::uint64_t{1} << (c & 63)) - 1));
  }
  return kept;
}

// The rank of every word of the shared-column bitmap (rank_words), in blocks of a fixed size so in
// parallel; returns the number of shared columns.
Index rank_shared_words(const Array<std::uint64_t>& shared, Array<Index>& word_rank) {
  constexpr std::size_t kBlock = 4096;
  const std::size_t words = shared.size(), blocks = (words + kBlock - 1) / kBlock;
  const auto block_words = [&](std::size_t b) { return std::min(kBlock, words - b * kBlock); };
  word_rank.resize(words);
  std::vector<Index> block_start(blocks + 1, 0);
#pragma omp parallel for schedule(static)
  for (std::size_t b = 0; b < blocks; ++b)
    block_start[b + 1] = rank_words(shared.data() + b * kBlock, block_words(b), word_rank.data() + b * kBlock);
  for (std::size_t b = 0; b < blocks; ++b) block_start[b + 1] += block_start[b];
#pragma omp parallel for schedule(static)
  for (std::size_t b = 0; b < blocks; ++b)
    for (std::size_t w = b * kBlock; w < b * kBlock + block_words(b); ++w) word_rank[w] += block_start[b];
  return block_start[blocks];
}

}  // namespace

// Two bitmaps while the shared columns are found, then the shared one and the word ranks (`seen` is
// freed by then).
std::uint64_t shared_column_scratch_bytes(Index b_columns) {
  return std::max(2 * sizeof(std::uint64_t), sizeof(std::uint64_t) + sizeof(Index)) * bitmap_words(b_columns);
}

bool single_columns_pay(Offset b_nonzeros, Index b_columns, Offset products) {
  return b_nonzeros < b_columns && static_cast<Offset>(shared_column_scratch_bytes(b_columns)) <= products;
}

template <class Value>
CsrMatrix<Value> shared_column_entries(const CsrMatrix<Value>& B) {
  const Array<std::uint64_t> shared = shared_columns(B);
  Array<Index> word_rank;
  CsrMatrix<Value> S(B.rows, rank_shared_words(shared, word_rank));
#pragma omp parallel for schedule(static)
  for (Index k = 0; k < B.rows; ++k) {
    Offset kept = 0;
    for (Offset e = B.row_begin(k); e < B.row_end(k); ++e) kept += is_shared(shared.data(), B.col[e]);
    S.row_ptr[static_cast<std::size_t>(k) + 1] = kept;
  }
  offsets_from_row_lengths(S);
  S.col.resize(static_cast<std::size_t>(S.nnz()));  // no values
#pragma omp parallel for schedule(static)
  for (Index k = 0; k < B.rows; ++k) {
    [[maybe_unused]] const Offset kept = rank_shared_entries(B.col.data() + B.row_begin(k), B.row_length(k),
                                                             shared.data(), word_rank.data(),
                                                             S.col.data() + S.row_begin(k));
    assert(kept == S.row_length(k));
  }
  return S;
}

template CsrMatrix<double> shared_column_entries(const CsrMatrix<double>&);
template CsrMatrix<float> shared_column_entries(const CsrMatrix<float>&);

}  // namespace amgsolve::magnus
