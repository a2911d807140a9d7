// MAGNUS: SpGEMM with generated data locality (J. Wolfson-Pou, J. Laukemann, F. Petrini, ICS 2025;
// ../shared/papers/magnus-wolfson-pou-2025.txt). C = A B row by row, Gustavson's order of summation, with
// the locality of each row generated before it is accumulated. This file is the algorithm, in the paper's
// order; the per-row accumulators are in row_worker.hpp, the chunk counts of section 3.5 in parameters.cpp.
//
//   Section 3.1  Every row of C gets a category from its number of intermediate products and its column
//                range (row_shapes, plan_rows):
//                  sort       fewer products than the sort threshold: expand, sort, merge (Algorithm 2);
//                  dense      the column range fits a dense accumulator: Gustavson (Algorithm 1);
//                  segmented  (ours) too wide for that, but with many products per segment and row of B:
//                             the dense accumulator segment by segment, each row of B read through a
//                             cursor (the column segments of CSeg, An & Catalyurek, HiPC 2021, found on the
//                             fly), with no reorder pass;
//                  fine       the fine level (section 3.2, Algorithm 3): histogram the products by column
//                             chunk, prefix sum, reorder them into chunks with chunk-local columns,
//                             accumulate each chunk densely (or by sorting if it is small);
//                  coarse     when even the fine level's structures exceed L2: batches of rows reordered into
//                             coarse column ranges by an outer product over a CSC copy of their rows of A
//                             (section 3.3, Algorithm 4), then the fine level on every coarse chunk.
//   Phases       The symbolic phase (count_row_entries) and the numeric phase (multiply) run the same code
//                (run_phase), category by category; the symbolic one only counts distinct columns.
//
// Every path sums an entry's products in the order of A's columns, as Gustavson does, so C is bitwise the
// `gustavson` backend's and independent of the thread count. Where this departs from the paper (each
// measured: docs/BENCHMARKS.md, "MAGNUS: design choices measured"): a row's dense accumulator gets half of
// L2 (the rows of B it reads get the rest); the segmented category; the dense accumulators' bitmap has a
// bit per column, so the symbolic phase's windows are 8 times wider, and that phase counts every fine
// chunk with it, never by sorting; the numeric sort accumulator keeps chunks of up to 64 products in AVX-512
// registers (bitonic_sort.hpp), two neighbouring chunks at a time; wide, sparse rows get more fine chunks
// than section 3.5's count; the dense loops drop their branch where it would mispredict; the reorder moves
// a product's column and value in one store; where C is larger than half the last-level cache, the rows of
// the sort, dense and segmented categories are written with non-temporal stores of whole lines
// (streamed_output.hpp), where the paper streams the reorder instead; and where B has fewer nonzeros than
// columns, the symbolic phase runs on B's shared columns only (shared_columns.hpp).
#include "spgemm/magnus/magnus.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <numeric>
#include <optional>
#include <vector>

#include "common/cpu_info.hpp"
#include "common/parallel.hpp"
#include "common/thread_errors.hpp"
#include "common/timer.hpp"
#include "spgemm/magnus/row_worker.hpp"
#include "spgemm/magnus/shared_columns.hpp"
#include "spgemm/product_memory.hpp"
#include "spgemm/registry.hpp"

namespace amgsolve::magnus {
namespace {

enum class Category : std::uint8_t { sort, dense, segmented, fine, coarse };

// s_denseAccum of section 3.5, bytes per column of a dense accumulator: the bitmap's bit, plus the
// sum in the numeric phase.
template <class Value>
constexpr double dense_bytes_per_column(bool numeric) {
  return 1.0 / 8 + (numeric ? static_cast<double>(sizeof(Value)) : 0.0);
}

// Per-row facts of the setup pass, the same for both phases.
struct RowShapes {
  std::vector<Offset> products;  // intermediate products per row
  std::vector<Index> first_col;  // smallest column among the products
  std::vector<Offset> range;     // largest - smallest column + 1 (0 for an empty row)
};

// The rows of each category for one phase (its chunk parameters and accumulator size decide them).
struct RowPlan {
  std::array<std::vector<Index>, 5> rows;  // rows per category, ascending
  int segment_shift = 0;  // log2 of a segmented row's segment width
  std::vector<std::pair<std::size_t, std::size_t>> coarse_batches;  // ranges of rows[coarse]
};

// Section 3.1, setup: the number of products and the column range of every row of C.
template <class Value>
RowShapes row_shapes(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B) {
  RowShapes shapes;
  shapes.products.resize(static_cast<std::size_t>(A.rows));
  shapes.first_col.resize(static_cast<std::size_t>(A.rows));
  shapes.range.resize(static_cast<std::size_t>(A.rows));
#pragma omp parallel for schedule(static)
  for (Index i = 0; i < A.rows; ++i) {
    Offset products = 0;
    Index lo = B.cols, hi = -1;
    for (Offset ka = A.row_begin(i); ka < A.row_end(i); ++ka) {
      const Index k = A.col[ka];
      if (B.row_length(k) == 0) continue;
      products += B.row_length(k);
      lo = std::min(lo, B.col[B.row_begin(k)]);  // rows of B are sorted
      hi = std::max(hi, B.col[B.row_end(k) - 1]);
    }
    shapes.products[i] = products;
    shapes.first_col[i] = products > 0 ? lo : 0;
    shapes.range[i] = products > 0 ? Offset{hi} - lo + 1 : 0;
  }
  return shapes;
}

// Section 3.1, categories of one phase (dense_bytes: its accumulator's bytes per column); coarse rows
// cut into batches (section 3.3).
template <class Value>
RowPlan plan_rows(const CsrMatrix<Value>& A, const RowShapes& shapes, const ChunkParameters& p, const Options& o,
                  double dense_bytes) {
  // A dense accumulator gets half of L2, the other half is for the rows of B it reads
  // (docs/BENCHMARKS.md, "MAGNUS: design choices measured").
  const auto dense_capacity = static_cast<Offset>(static_cast<double>(o.cache.l2_bytes) / 2 / dense_bytes);
  RowPlan plan;
  plan.segment_shift = std::bit_width(static_cast<std::uint64_t>(std::max<Offset>(dense_capacity, 1))) - 1;
  for (std::size_t i = 0; i < shapes.products.size(); ++i) {
    const Offset products = shapes.products[i], range = shapes.range[i];
    // A row with fewer products than fine chunks gains no locality from chunking: sort it instead.
    const bool few = products < o.sort_threshold || (range > dense_capacity && products < Offset(p.fine_chunks));
    // Segmented: enough products per cursor visit (a row of B in a segment).
    const Offset cursor_visits = detail::segment_count(range, plan.segment_shift) * A.row_length(static_cast<Index>(i));
    const bool segmented =
        static_cast<double>(products) >= o.products_per_cursor_visit * static_cast<double>(cursor_visits);
    const Category category = few                       ? Category::sort
                              : range <= dense_capacity ? Category::dense
                              : segmented               ? Category::segmented
                              : !p.coarse               ? Category::fine
                                                        : Category::coarse;
    plan.rows[static_cast<int>(category)].push_back(static_cast<Index>(i));
  }
  // Batches: bounded by the memory for their products and by L2 for their chunk counters.
  const std::vector<Index>& coarse = plan.rows[static_cast<int>(Category::coarse)];
  const std::uint64_t per_product = sizeof(detail::Product<Value, true>);
  const std::size_t max_rows =
      std::max<std::size_t>(1, o.cache.l2_bytes / (2 * sizeof(Offset) * std::max<std::uint64_t>(p.coarse_chunks, 1)));
  for (std::size_t begin = 0; begin < coarse.size();) {
    std::size_t end = begin;
    std::uint64_t bytes = 0;
    while (end < coarse.size() && end - begin < max_rows &&
           (end == begin || bytes + per_product * shapes.products[coarse[end]] <= o.batch_bytes))
      bytes += per_product * shapes.products[coarse[end++]];
    plan.coarse_batches.emplace_back(begin, end);
    begin = end;
  }
  return plan;
}

Offset total_products(const RowShapes& shapes) {
  return std::accumulate(shapes.products.begin(), shapes.products.end(), Offset{0});
}

// The report of a phase's plan; `products`: the intermediate products the phase accumulates.
RowCategories rows_per_category(const RowPlan& plan, Offset products) {
  const auto rows = [&plan](Category c) { return static_cast<Offset>(plan.rows[static_cast<int>(c)].size()); };
  return {rows(Category::sort), rows(Category::dense), rows(Category::segmented), rows(Category::fine),
          rows(Category::coarse), products};
}

// One phase over all rows, category by category (symbolic: fills C.row_ptr lengths; numeric: C).
template <class Value, bool kNumeric>
std::uint64_t run_phase(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B, CsrMatrix<Value>& C,
                        const ChunkParameters& p, const Options& o, const RowShapes& shapes, const RowPlan& plan,
                        bool stream_output) {
  std::uint64_t extra = 0;
  // A worker's buffers grow with the rows' products inside the region: out of memory there is an
  // exception after it, not the end of the process.
  ThreadErrors errors;
#pragma omp parallel reduction(+ : extra)
  {
    std::optional<detail::Worker<Value, kNumeric>> worker;
    errors.run([&] { worker.emplace(A, B, C, p, o, stream_output); });
    for (int cat = 0; cat < static_cast<int>(Category::coarse); ++cat) {
      const std::vector<Index>& rows = plan.rows[cat];
#pragma omp for schedule(dynamic, 64) nowait
      for (std::size_t r = 0; r < rows.size(); ++r) errors.run([&] {
        const Index i = rows[r];
        // The fine level's rows are written directly: its register accumulator writes up to 128 entries at
        // once, whose copy out of the staging buffer costs what streaming saves (docs/BENCHMARKS.md, "MAGNUS: design choices measured").
        worker->begin_row(i, cat != static_cast<int>(Category::fine));
        if (cat == static_cast<int>(Category::sort)) {
          worker->sort_row(i, shapes.products[i]);
        } else if (cat == static_cast<int>(Category::dense)) {
          // The row's own column range (within L2 by its category): its bitmap is cleared and scanned
          // over that range only.
          worker->dense_row(i, shapes.products[i], shapes.first_col[i], static_cast<Index>(shapes.range[i]));
        } else if (cat == static_cast<int>(Category::segmented)) {
          worker->segmented_row(i, shapes.products[i], shapes.first_col[i], shapes.range[i], plan.segment_shift);
        } else {
          worker->fine_row(i, shapes.products[i], shapes.range[i]);
        }
        worker->end_row(i);
      });
    }
    const std::vector<Index>& coarse = plan.rows[static_cast<int>(Category::coarse)];
#pragma omp for schedule(dynamic, 1) nowait
    for (std::size_t b = 0; b < plan.coarse_batches.size(); ++b)
      errors.run([&] { worker->coarse_batch(coarse, plan.coarse_batches[b].first, plan.coarse_batches[b].second); });
    errors.run([&] {
      worker->finish();
      extra += worker->buffer_bytes();
    });
  }
  errors.rethrow();
  return extra;
}

// The symbolic phase: the length of every row of C into C.row_ptr[i + 1], from the products in B's
// shared columns alone where B has single columns worth finding (shared_columns.hpp). Returns the
// peak temporary bytes.
template <class Value>
std::uint64_t count_row_entries(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B, CsrMatrix<Value>& C,
                                const Options& o, const RowShapes& shapes, Offset products,
                                RowCategories* categories) {
  const auto count = [&](const CsrMatrix<Value>& B_counted, const RowShapes& counted_shapes) {
    const double dense_bytes = dense_bytes_per_column<Value>(false);
    const ChunkParameters p = chunk_parameters(static_cast<std::uint64_t>(B_counted.cols), dense_bytes, o.cache);
    const RowPlan plan = plan_rows<Value>(A, counted_shapes, p, o, dense_bytes);
    if (categories) *categories = rows_per_category(plan, total_products(counted_shapes));
    return run_phase<Value, false>(A, B_counted, C, p, o, counted_shapes, plan, false);
  };
  if (!o.single_columns || !single_columns_pay(B.nnz(), B.cols, products)) return count(B, shapes);
  const CsrMatrix<Value> shared = shared_column_entries(B);
  if (shared.nnz() == B.nnz()) return count(B, shapes);  // no single column after all
  const RowShapes shared_shapes = row_shapes(A, shared);
  const std::uint64_t extra = count(shared, shared_shapes);
#pragma omp parallel for schedule(static)
  for (Index i = 0; i < A.rows; ++i) {
    const auto r = static_cast<std::size_t>(i);
    C.row_ptr[r + 1] += shapes.products[r] - shared_shapes.products[r];  // one entry each
  }
  return shared.bytes() + std::max(extra, shared_column_scratch_bytes(B.cols));
}

}  // namespace

Options system_options() {
  Options o;
  o.cache.l2_bytes = l2_cache_bytes();
  o.cache.line_bytes = cache_line_bytes();
  o.cache.llc_bytes = last_level_cache_bytes();
  return o;
}

template <class Value>
CsrMatrix<Value> multiply(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B, const Options& options,
                          SpgemmStats& stats, RowCategories* categories, RowCategories* symbolic_categories) {
  CsrMatrix<Value> C(A.rows, B.cols);
  Timer timer;
  const double numeric_bytes = dense_bytes_per_column<Value>(true);
  const ChunkParameters numeric = chunk_parameters(static_cast<std::uint64_t>(B.cols), numeric_bytes, options.cache);
  const RowShapes shapes = row_shapes(A, B);
  const Offset products = total_products(shapes);
  std::uint64_t extra = count_row_entries(A, B, C, options, shapes, products, symbolic_categories);
  allocate_product(C, "magnus");
  const double c_bytes = static_cast<double>(C.nnz()) * (sizeof(Index) + sizeof(Value));
  const bool stream_output = options.stream_output && c_bytes > static_cast<double>(options.cache.llc_bytes) / 2;
  stats.symbolic_seconds = timer.seconds();
  timer.restart();
  const RowPlan plan = plan_rows<Value>(A, shapes, numeric, options, numeric_bytes);
  extra = std::max(extra, run_phase<Value, true>(A, B, C, numeric, options, shapes, plan, stream_output));
  stats.numeric_seconds = timer.seconds();
  stats.nnz = C.nnz();
  stats.multiplications = products;
  stats.extra_bytes = extra;
  if (categories) *categories = rows_per_category(plan, products);
  return C;
}

template CsrMatrix<double> multiply(const CsrMatrix<double>&, const CsrMatrix<double>&, const Options&, SpgemmStats&,
                                    RowCategories*, RowCategories*);
template CsrMatrix<float> multiply(const CsrMatrix<float>&, const CsrMatrix<float>&, const Options&, SpgemmStats&,
                                   RowCategories*, RowCategories*);

namespace {

class Magnus : public SpgemmBackendFor<Magnus> {
 public:
  std::string name() const override { return "magnus"; }
  bool sums_in_row_order() const override { return true; }
  std::string description() const override {
    return "OpenMP MAGNUS: row categories, fine/coarse-level chunking sized to L2 (Wolfson-Pou et al. 2025)";
  }
  BackendKind runs_on() const override { return BackendKind::cpu; }

  template <class Value>
  CsrMatrix<Value> product(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B, SpgemmStats& stats) const {
    return magnus::multiply(A, B, options_, stats);
  }

 private:
  Options options_ = system_options();
};

}  // namespace
}  // namespace amgsolve::magnus

AMGSOLVE_REGISTER_SPGEMM(magnus, magnus::Magnus)
