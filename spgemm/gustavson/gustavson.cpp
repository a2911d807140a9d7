// Gustavson's row-by-row SpGEMM with a dense accumulator.
//
// F. G. Gustavson, "Two fast algorithms for sparse matrices: multiplication and permuted transposition",
// ACM TOMS 4(3), 1978. Row i of C is the linear combination of the rows of B selected by row i of A:
//     C(i,:) = sum_k A(i,k) * B(k,:).
// Symbolic phase: count the distinct columns of each output row with a per-thread marker array of
// length B.cols, then a prefix sum gives the row offsets. Numeric phase: accumulate values in a
// per-thread dense array of length B.cols, list the touched columns in order (sorted, or scanned across
// the row's column window: spgemm/accumulator.hpp), and write the row. Rows whose products crowd into a
// narrow column window skip the "is this column new" test altogether (accumulate_products<false>), and
// groups of 2 or 3 rows of A with the same columns (finite-element node unknowns) are computed together.
// Rows are independent, so the result is the same for any thread count. It is the cpu backends' default
// (the fastest on the AMG products); the tests' oracle is the untuned textbook version in tests/. The
// thresholds below say why they are where they are; the numbers are in docs/BENCHMARKS.md ("Gustavson and
// the shared kernels: design choices measured").
// Small products (at most kSerialMultiplications) run on one thread in one pass, the output grown row by
// row into space for every product: waking the other threads costs more than such a product (tens of
// microseconds on the 2-core VM, milliseconds when its cores are busy), and the symbolic pass doubles
// the reads for what fits in cache anyway. Mid-sized products (and large ones that merge many products
// per entry) also skip the symbolic pass: blocks of rows are computed in parallel into buffers and
// copied into C (one_pass_blocks). Only the largest, least merging products take both passes, which
// need no memory beyond C.
//
// This file chooses the passes and runs them over the rows; spgemm/gustavson/accumulate_row.hpp computes
// one row, spgemm/gustavson/row_groups.hpp groups rows with the same columns.
#include <algorithm>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "common/parallel.hpp"
#include "common/thread_errors.hpp"
#include "common/timer.hpp"
#include "spgemm/accumulator.hpp"
#include "spgemm/gustavson/accumulate_row.hpp"
#include "spgemm/gustavson/row_groups.hpp"
#include "spgemm/product_memory.hpp"
#include "spgemm/registry.hpp"

namespace amgsolve {
namespace gustavson {
namespace {

// The functions here and in the folder's headers are declared inline, as the class members they were
// were implicitly: GCC inlines a function declared inline more eagerly, and the row kernels' speed
// depends on their callers inlining them.

constexpr Index kRowChunk = 256;
// Rows per dynamic chunk: kRowChunk, or fewer so that a matrix with few rows still gives every thread
// several chunks.
inline Index row_chunk(Index rows) { return std::clamp<Index>(rows / (8 * max_threads()), 1, kRowChunk); }
// Work too short to wake the other threads for (docs/BENCHMARKS.md, "Gustavson and the shared kernels").
constexpr Offset kSerialMultiplications = Offset{1} << 14;
// Products up to kOnePassMultiplications skip the symbolic pass; larger ones (up to
// kLargeOnePassMultiplications) only when they merge many products per entry (compression at least
// kOnePassCompression): one pass writes C's entries twice (buffer, then C) into fresh pages, two passes
// read every product twice: one pass pays where each entry merges many products (the Galerkin product
// P^T (AP)), not where it merges few (A P). Fresh pages decide it: a benchmark that repeats a product
// reuses the first run's pages and favours one pass far beyond what a program computing each product
// once sees.
constexpr Offset kOnePassMultiplications = Offset{1} << 22;
constexpr Offset kLargeOnePassMultiplications = Offset{1} << 26;  // buffers of at most 768 MiB
constexpr double kOnePassCompression = 4.0;
// About this many products are read to estimate the compression, from rows spread over all of A.
constexpr Offset kSampledProducts = Offset{1} << 16;

// Checks that `threads` accumulators of B's columns, `bytes_per_column` each, fit in memory
// (spgemm/product_memory.hpp), with `buffered_products` entries of buffers held beside them: a B of a billion
// columns needs gigabytes per thread.
template <class Value>
inline void require_accumulators(int threads, Index columns, std::uint64_t bytes_per_column,
                                 Offset buffered_products = 0) {
  const std::uint64_t accumulators =
      static_cast<std::uint64_t>(threads) * static_cast<std::uint64_t>(columns) * bytes_per_column;
  const std::uint64_t buffers = static_cast<std::uint64_t>(buffered_products) * (sizeof(Index) + sizeof(Value));
  require_product_memory(accumulators + buffers, [&] {
    return "gustavson's dense accumulators (" + std::to_string(threads) + " of " + std::to_string(columns) +
           " columns; the hash backend needs none)" +
           (buffered_products > 0 ? " and buffers for " + std::to_string(buffered_products) + " products" : "");
  });
}

// The distinct columns of row i of C, counted with markers (marker[j] == i: seen in this row).
template <class Value>
inline Offset distinct_columns(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B, Index i, Index* marker) {
  Offset count = 0;
  for (Offset ka = A.row_begin(i); ka < A.row_end(i); ++ka) {
    const Index k = A.col[ka];
    for (Offset kb = B.row_begin(k); kb < B.row_end(k); ++kb) {
      // Branch-free: whether column j is new to the row is data-dependent and mispredicts often.
      const Index j = B.col[kb];
      count += marker[j] != i;
      marker[j] = i;
    }
  }
  return count;
}

// Multiplications per distinct column over rows spread evenly over all of A, as many as hold about
// kSampledProducts products (at most 256), counted with markers: O(products), so the estimate costs
// little next to the product. (Sorting the first rows' columns instead cost finite-element products a
// quarter of their time, and read only the top of A, whose rows need not be typical.)
template <class Value>
inline double sampled_compression(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B, Offset multiplications) {
  if (A.rows == 0) return 1.0;
  const Offset per_row = std::max<Offset>(1, multiplications / A.rows);
  const auto samples =
      static_cast<Index>(std::clamp<Offset>(kSampledProducts / per_row, 1, std::min<Index>(A.rows, 256)));
  require_accumulators<Value>(1, B.cols, sizeof(Index));
  std::vector<Index> marker(static_cast<std::size_t>(B.cols), -1);
  Offset products = 0, distinct = 0;
  for (Index s = 0; s < samples && products < 4 * kSampledProducts; ++s) {  // uneven rows: a cap
    const auto i = static_cast<Index>(static_cast<std::int64_t>(A.rows) * s / samples);
    products += row_multiplications(A, B, i);
    distinct += distinct_columns(A, B, i, marker.data());
  }
  return distinct > 0 ? static_cast<double>(products) / static_cast<double>(distinct) : 1.0;
}

template <class Value>
inline bool one_pass_pays(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B, const Array<Offset>& work) {
  const Offset multiplications = work.back();
  if (multiplications <= kOnePassMultiplications) return true;
  return multiplications <= kLargeOnePassMultiplications &&
         sampled_compression(A, B, multiplications) >= kOnePassCompression;
}

// The product's multiplications when at most kSerialMultiplications, else -1 (found after reading only
// as much of A as that many multiplications take).
template <class Value>
inline Offset multiplications_if_small(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B) {
  Offset total = 0;
  for (Offset ka = 0; ka < A.nnz(); ++ka) {
    total += B.row_length(A.col[ka]);
    if (total > kSerialMultiplications) return -1;
  }
  return total;
}

// One thread, no symbolic pass: C's arrays get room for every product and are cut to size at the end.
// Returns the workspace's bytes.
template <class Value>
inline std::uint64_t one_pass(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B, Offset multiplications,
                              CsrMatrix<Value>& C) {
  const RowLayout layout = row_layout(A, B);
  require_accumulators<Value>(1, B.cols, Workspace<Value>::bytes_per_column(layout));
  Workspace<Value> ws(B.cols, layout);
  C.col.resize(static_cast<std::size_t>(multiplications) + kListPadding);
  C.val.resize(C.col.size());
  Offset end = 0;
  for (Index g = 0; g < row_groups(A.rows, ws.group); ++g) {
    Index lengths[kMaxGroup];
    end += compute_row_group<ListRoom::padded>(A, B, g, ws, C.col.data() + end, C.val.data() + end, lengths);
    set_row_lengths(C, ws.group, g, lengths);
  }
  std::partial_sum(C.row_ptr.begin(), C.row_ptr.end(), C.row_ptr.begin());
  C.col.resize(static_cast<std::size_t>(end));
  C.val.resize(static_cast<std::size_t>(end));
  return ws.bytes();
}

// work[i] = multiplications of rows 0 .. i-1 (rows + 1 entries).
template <class Value>
inline Array<Offset> multiplications_before_rows(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B) {
  Array<Offset> work(static_cast<std::size_t>(A.rows) + 1);
  work[0] = 0;
#pragma omp parallel for schedule(static)
  for (Index i = 0; i < A.rows; ++i) work[static_cast<std::size_t>(i) + 1] = row_multiplications(A, B, i);
  std::partial_sum(work.begin(), work.end(), work.begin());
  return work;
}

// Row groups [first_group, end_group) of C, computed in one pass into the block's buffer, which has
// room for every product.
template <class Value>
struct Block {
  Index first_group = 0, end_group = 0;
  Array<Index> col;
  Array<Value> val;
};

// Mid-sized products, in parallel without a symbolic pass: A's rows cut into blocks of equal work,
// each computed into its own buffer (pages are touched only as far as the block's output reaches),
// then copied into C once the row lengths are known. Returns the extra memory: the buffers' entries
// and the workspaces.
template <class Value>
inline std::uint64_t one_pass_blocks(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B,
                                     const Array<Offset>& work, CsrMatrix<Value>& C) {
  const RowLayout layout = row_layout(A, B);
  const int group = layout.group;
  const Index group_count = row_groups(A.rows, group);
  auto first_row = [&](Index g) { return std::min<Index>(group * g, A.rows); };
  const auto blocks = static_cast<std::size_t>(std::clamp<Index>(group_count, 1, 8 * max_threads()));
  std::vector<Block<Value>> block(blocks);
  for (std::size_t b = 0; b < blocks; ++b) {
    const Offset target = work.back() * static_cast<Offset>(b + 1) / static_cast<Offset>(blocks);
    const auto row = static_cast<Index>(std::lower_bound(work.begin(), work.end(), target) - work.begin());
    block[b].first_group = b == 0 ? 0 : block[b - 1].end_group;
    block[b].end_group = std::max(b + 1 == blocks ? group_count : row_groups(row, group), block[b].first_group);
  }
  // Every thread of the team makes its workspace (one without a block too), while the blocks' buffers, room
  // for every product, fill: both are held at once.
  require_accumulators<Value>(max_threads(), B.cols, Workspace<Value>::bytes_per_column(layout), work.back());
  std::uint64_t workspaces = 0;
  ThreadErrors errors;  // checked above, yet memory may run out meanwhile: an exception, not the process's end
#pragma omp parallel reduction(+ : workspaces)
  {
    std::optional<Workspace<Value>> ws;
    errors.run([&] { ws.emplace(B.cols, layout); });
#pragma omp for schedule(dynamic, 1)
    for (std::size_t b = 0; b < blocks; ++b)
      errors.run([&] {
        Block<Value>& part = block[b];
        const Offset room = work[static_cast<std::size_t>(first_row(part.end_group))] -
                            work[static_cast<std::size_t>(first_row(part.first_group))];
        part.col.resize(static_cast<std::size_t>(room) + kListPadding);
        part.val.resize(part.col.size());
        Offset end = 0;
        for (Index g = part.first_group; g < part.end_group; ++g) {
          Index lengths[kMaxGroup];
          end += compute_row_group<ListRoom::padded>(A, B, g, *ws, part.col.data() + end, part.val.data() + end,
                                                     lengths);
          set_row_lengths(C, group, g, lengths);
        }
      });
    if (ws) workspaces += ws->bytes();
  }
  errors.rethrow();
  allocate_product(C, "gustavson");
  Offset buffered = 0;
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : buffered)
  for (std::size_t b = 0; b < blocks; ++b) {
    Block<Value>& part = block[b];
    const Offset from = C.row_begin(first_row(part.first_group));
    const Offset count = C.row_begin(first_row(part.end_group)) - from;
    std::copy_n(part.col.data(), count, C.col.data() + from);
    std::copy_n(part.val.data(), count, C.val.data() + from);
    buffered += count;
    part = Block<Value>{};  // frees the buffer now
  }
  return workspaces + static_cast<std::uint64_t>(buffered) * (sizeof(Index) + sizeof(Value));
}

// Fills C.row_ptr and sizes C.col/C.val.
template <class Value>
inline void symbolic(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B, CsrMatrix<Value>& C) {
  const Index chunk = row_chunk(A.rows);
  require_accumulators<Value>(max_threads(), B.cols, sizeof(Index));
  ThreadErrors errors;
#pragma omp parallel
  {
    std::vector<Index> marker;
    errors.run([&] { marker.assign(static_cast<std::size_t>(B.cols), -1); });
#pragma omp for schedule(dynamic, chunk)
    for (Index i = 0; i < A.rows; ++i)
      if (!errors.failed()) C.row_ptr[static_cast<std::size_t>(i) + 1] = distinct_columns(A, B, i, marker.data());
  }
  errors.rethrow();
  allocate_product(C, "gustavson");
}

// Returns the workspaces' bytes.
template <class Value>
inline std::uint64_t numeric(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B, CsrMatrix<Value>& C) {
  const RowLayout layout = row_layout(A, B);
  const int group = layout.group;
  const Index chunk = std::max<Index>(1, row_chunk(A.rows) / group);
  require_accumulators<Value>(max_threads(), B.cols, Workspace<Value>::bytes_per_column(layout));
  std::uint64_t workspaces = 0;
  ThreadErrors errors;
#pragma omp parallel reduction(+ : workspaces)
  {
    std::optional<Workspace<Value>> ws;
    errors.run([&] { ws.emplace(B.cols, layout); });
#pragma omp for schedule(dynamic, chunk)
    for (Index g = 0; g < row_groups(A.rows, group); ++g) {
      if (errors.failed()) continue;
      const Offset begin = C.row_begin(group * g);
      Index lengths[kMaxGroup];
      compute_row_group<ListRoom::exact>(A, B, g, *ws, C.col.data() + begin, C.val.data() + begin, lengths);
    }
    if (ws) workspaces += ws->bytes();
  }
  errors.rethrow();
  return workspaces;
}

// The backend: the passes chosen by the product's size and how much it merges.
class Gustavson : public SpgemmBackendFor<Gustavson> {
 public:
  std::string name() const override { return "gustavson"; }
  bool sums_in_row_order() const override { return true; }
  std::string description() const override { return "OpenMP row-wise Gustavson, dense accumulator (the cpu default)"; }
  BackendKind runs_on() const override { return BackendKind::cpu; }

  template <class Value>
  CsrMatrix<Value> product(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B, SpgemmStats& stats) const {
    CsrMatrix<Value> C(A.rows, B.cols);
    Timer timer;
    const Offset multiplications = multiplications_if_small(A, B);
    if (multiplications >= 0) {
      stats.multiplications = multiplications;
      stats.path = "one pass, one thread";
      const std::uint64_t workspace = one_pass(A, B, multiplications, C);
      stats.numeric_seconds = timer.seconds();
      stats.nnz = C.nnz();
      // C's arrays had room for every product until they were cut to size.
      stats.extra_bytes =
          workspace + static_cast<std::uint64_t>(multiplications - C.nnz()) * (sizeof(Index) + sizeof(Value));
      return C;
    }
    const Array<Offset> work = multiplications_before_rows(A, B);
    stats.multiplications = work.back();
    if (one_pass_pays(A, B, work)) {
      stats.path = "one pass in blocks";
      stats.extra_bytes = one_pass_blocks(A, B, work, C);
      stats.numeric_seconds = timer.seconds();
      stats.nnz = C.nnz();
      return C;
    }
    stats.path = "two passes";
    symbolic(A, B, C);
    stats.symbolic_seconds = timer.seconds();
    timer.restart();
    stats.extra_bytes = numeric(A, B, C);  // more than the symbolic pass's markers
    stats.numeric_seconds = timer.seconds();
    stats.nnz = C.nnz();
    return C;
  }
};

}  // namespace
}  // namespace gustavson
}  // namespace amgsolve

AMGSOLVE_REGISTER_SPGEMM(gustavson, gustavson::Gustavson)
