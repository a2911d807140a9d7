// MAGNUS: SpGEMM with generated data locality (Wolfson-Pou, Laukemann & Petrini, ICS 2025;
// ../shared/papers/magnus-wolfson-pou-2025.txt).
//
// Every row of C is put in one of four categories (section 3.1) from its number of intermediate
// products and its column range:
//   sort    fewer products than the sort threshold: gather them and sort (section 3.4);
//   dense   the column range fits a dense accumulator in L2: Gustavson on that range (Algorithm 1);
//   fine    the fine level (section 3.2, Algorithm 3): histogram the products by column chunk, prefix
//           sum, reorder them into chunks with chunk-local columns (non-temporal stores optional), accumulate
//           each chunk with a dense accumulator of chunk length (or by sorting if it is small);
//   coarse  when even the fine level's structures exceed L2 (very wide C): batches of such rows are
//           first reordered into coarse column ranges by an outer product over a CSC copy of their rows
//           of A (section 3.3, Algorithm 4), then the fine level runs on every coarse chunk.
// Rows are processed category by category. Chunk counts come from parameters.cpp (section 3.5).
// Every path sums the products of an output entry in the order of A's columns, as Gustavson does, so
// the result is bitwise identical to the `gustavson` backend and independent of the thread count.
// Both phases run the same code: the symbolic one (kNumeric = false) only counts distinct columns.
#include "spgemm/magnus/magnus.hpp"
#include "spgemm/accumulator.hpp"
#include "spgemm/bitonic_sort.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <limits>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "common/cpu_info.hpp"
#include "common/parallel.hpp"
#include "common/timer.hpp"
#include "spgemm/registry.hpp"

namespace amgsolve::magnus {
namespace {

enum class Category : std::uint8_t { sort, dense, fine, coarse };

// Non-temporal store (bypasses the cache, which holds the accumulator and the chunk counters).
inline void stream_store(Index* p, Index v) {
#if defined(__x86_64__)
  _mm_stream_si32(reinterpret_cast<int*>(p), v);
#else
  *p = v;
#endif
}
inline void stream_store(double* p, double v) {
#if defined(__x86_64__)
  _mm_stream_si64(reinterpret_cast<long long*>(p), std::bit_cast<long long>(v));
#else
  *p = v;
#endif
}
inline void stream_store(float* p, float v) {
#if defined(__x86_64__)
  _mm_stream_si32(reinterpret_cast<int*>(p), std::bit_cast<int>(v));
#else
  *p = v;
#endif
}
inline void store_fence() {
#if defined(__x86_64__)
  _mm_sfence();
#endif
}

// Per-row facts of the setup pass, the same for both phases.
struct RowShapes {
  std::vector<Offset> products;  // intermediate products per row
  std::vector<Index> first_col;  // smallest column among the products
  std::vector<Offset> range;     // largest - smallest column + 1 (0 for an empty row)
};

// The rows of each category for one phase (its chunk parameters and accumulator size decide them).
struct RowPlan {
  std::array<std::vector<Index>, 4> rows;  // rows per category, ascending
  std::vector<std::pair<std::size_t, std::size_t>> coarse_batches;  // ranges of rows[coarse]
};

// The per-thread state of one phase: accumulators, chunk buffers and where the current row goes.
template <class Value, bool kNumeric>
class Worker {
 public:
  Worker(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B, CsrMatrix<Value>& C, const ChunkParameters& p,
         const Options& o)
      : A_(A), B_(B), C_(C), p_(p), o_(o), fine_counts_(p.fine_chunks), fine_offsets_(p.fine_chunks + 1) {}

  // Row i of C is computed between these two: the numeric phase writes it into C's arrays, the
  // symbolic phase only counts its entries into C.row_ptr[i + 1].
  void begin_row(Index i) {
    out_col_ = kNumeric ? C_.col.data() + C_.row_begin(i) : nullptr;
    out_val_ = kNumeric ? C_.val.data() + C_.row_begin(i) : nullptr;
    written_ = 0;
  }
  void end_row(Index i) {
    if (!kNumeric) C_.row_ptr[static_cast<std::size_t>(i) + 1] = written_;
  }

  // Calls f(column, value) for every intermediate product of row i of C.
  template <class F>
  void row_products(Index i, F&& f) const {
    for (Offset ka = A_.row_begin(i); ka < A_.row_end(i); ++ka) {
      const Index k = A_.col[ka];
      const Value a = kNumeric ? A_.val[ka] : Value(0);
      for (Offset kb = B_.row_begin(k); kb < B_.row_end(k); ++kb) f(B_.col[kb], kNumeric ? a * B_.val[kb] : Value(0));
    }
  }

  void sort_row(Index i, Offset products) {
    gather_col_.resize(static_cast<std::size_t>(products));
    if (kNumeric) gather_val_.resize(static_cast<std::size_t>(products));
    std::size_t n = 0;
    row_products(i, [&](Index c, Value v) {
      gather_col_[n] = c;
      if (kNumeric) gather_val_[n] = v;
      ++n;
    });
    accumulate_sorted(gather_col_.data(), gather_val_.data(), static_cast<Offset>(n), 0);
  }

  void dense_row(Index i, Index first_col, Index range) {
    accumulate_dense([&](auto&& f) { row_products(i, [&](Index c, Value v) { f(c - first_col, v); }); }, first_col,
                     range);
  }

  void fine_row(Index i) {
    fine_level([&](auto&& f) { row_products(i, f); }, 0, p_.fine_shift, p_.fine_chunks);
  }

  // Section 3.3: the rows rows[begin, end) of the coarse category, as one batch.
  void coarse_batch(const std::vector<Index>& rows, std::size_t begin, std::size_t end) {
    const std::size_t batch = end - begin;
    const std::uint64_t chunks = p_.coarse_chunks;
    // The CSC copy of the batch's rows of A: entries sorted by column k of A (= row of B), then by row.
    csc_.clear();
    for (std::size_t r = 0; r < batch; ++r) {
      const Index i = rows[begin + r];
      for (Offset ka = A_.row_begin(i); ka < A_.row_end(i); ++ka)
        csc_.push_back({A_.col[ka], static_cast<Index>(r), kNumeric ? A_.val[ka] : Value(0)});
    }
    std::sort(csc_.begin(), csc_.end(), [](const CscEntry& x, const CscEntry& y) {
      return x.k != y.k ? x.k < y.k : x.row < y.row;
    });
    // Histogram per (row, coarse chunk), prefix sum, reorder (Algorithm 4).
    coarse_counts_.assign(batch * chunks, 0);
    for (const CscEntry& e : csc_)
      for (Offset kb = B_.row_begin(e.k); kb < B_.row_end(e.k); ++kb)
        ++coarse_counts_[e.row * chunks + (static_cast<std::uint64_t>(B_.col[kb]) >> p_.coarse_shift)];
    coarse_offsets_.resize(batch * chunks + 1);
    coarse_offsets_[0] = 0;
    for (std::size_t c = 0; c < batch * chunks; ++c) coarse_offsets_[c + 1] = coarse_offsets_[c] + coarse_counts_[c];
    const auto total = static_cast<std::size_t>(coarse_offsets_.back());
    coarse_col_.resize(total);
    if (kNumeric) coarse_val_.resize(total);
    std::fill(coarse_counts_.begin(), coarse_counts_.end(), 0);
    for (const CscEntry& e : csc_)
      for (Offset kb = B_.row_begin(e.k); kb < B_.row_end(e.k); ++kb) {
        const Index col = B_.col[kb];
        const std::uint64_t chunk = static_cast<std::uint64_t>(col) >> p_.coarse_shift;
        const std::size_t slot = e.row * chunks + chunk;
        const auto at = static_cast<std::size_t>(coarse_offsets_[slot] + coarse_counts_[slot]++);
        store(&coarse_col_[at], static_cast<Index>(col - (chunk << p_.coarse_shift)));
        if (kNumeric) store(&coarse_val_[at], e.a * B_.val[kb]);
      }
    store_fence();
    // The fine level on each coarse chunk of each row, in column order.
    for (std::size_t r = 0; r < batch; ++r) {
      const Index i = rows[begin + r];
      begin_row(i);
      for (std::uint64_t c = 0; c < chunks; ++c) {
        const auto from = static_cast<std::size_t>(coarse_offsets_[r * chunks + c]);
        const Offset count = coarse_offsets_[r * chunks + c + 1] - coarse_offsets_[r * chunks + c];
        if (count == 0) continue;
        const auto base = static_cast<Index>(c << p_.coarse_shift);
        const Index* cols = coarse_col_.data() + from;
        const Value* vals = kNumeric ? coarse_val_.data() + from : nullptr;
        if (count < o_.sort_threshold) {
          accumulate_sorted(cols, vals, count, base);
        } else {
          fine_level(
              [&](auto&& f) {
                for (Offset t = 0; t < count; ++t) f(cols[t], kNumeric ? vals[t] : Value(0));
              },
              base, p_.fine_shift, p_.fine_chunks);
        }
      }
      end_row(i);
    }
  }

  std::uint64_t buffer_bytes() const {
    return (gather_col_.capacity() + fine_col_.capacity() + touched_.capacity() + coarse_col_.capacity()) *
               sizeof(Index) +
           (gather_val_.capacity() + fine_val_.capacity() + acc_.capacity() + coarse_val_.capacity()) * sizeof(Value) +
           keys_.capacity() * sizeof(std::uint64_t) + used_.capacity() + marker_.capacity() * sizeof(Index) +
           csc_.capacity() * sizeof(CscEntry) +
           (coarse_counts_.capacity() + coarse_offsets_.capacity() + 2 * fine_counts_.size()) * sizeof(Offset);
  }

 private:
  struct CscEntry {
    Index k, row;
    Value a;
  };

  template <class T>
  void store(T* p, T v) const {
    if (o_.streaming_stores)
      stream_store(p, v);
    else
      *p = v;
  }

  void emit(Index col, Value v) {
    if (kNumeric) {
      out_col_[written_] = col;
      out_val_[written_] = v;
    }
    ++written_;
  }

  // Sort accumulator: products sorted by (column, position), so duplicates are summed in stream order.
  void accumulate_sorted(const Index* cols, const Value* vals, Offset n, Index base) {
    keys_.resize(static_cast<std::size_t>(n));
    for (Offset t = 0; t < n; ++t) keys_[t] = (static_cast<std::uint64_t>(cols[t]) << 32) | static_cast<std::uint64_t>(t);
    sort_keys(keys_.data(), keys_.size(), o_.vector_sort);
    for (Offset t = 0; t < n;) {
      const auto col = static_cast<Index>(keys_[t] >> 32);
      Value sum = kNumeric ? vals[keys_[t] & 0xffffffffu] : Value(0);
      for (++t; t < n && static_cast<Index>(keys_[t] >> 32) == col; ++t)
        if (kNumeric) sum += vals[keys_[t] & 0xffffffffu];
      emit(base + col, sum);
    }
  }

  // Dense accumulator over columns [base, base + range): producer(f) yields (column - base, value).
  template <class Producer>
  void accumulate_dense(Producer&& producer, Index base, Index range) {
    if constexpr (kNumeric)
      accumulate_dense_values(producer, base, range);
    else
      count_dense(producer, range);
  }

  // Symbolic phase: distinct columns counted with a bitmap (1 byte per column), cleared through the
  // list of touched columns.
  template <class Producer>
  void count_dense(Producer&& producer, Index range) {
    if (used_.size() < static_cast<std::size_t>(range)) used_.assign(static_cast<std::size_t>(range), 0);
    touched_.clear();
    producer([&](Index c, Value) {
      if (!used_[c]) {
        used_[c] = 1;
        touched_.push_back(c);
      }
    });
    written_ += static_cast<Offset>(touched_.size());
    for (Index c : touched_) used_[c] = 0;
  }

  // Numeric phase: a column's marker holds the stamp of the last accumulation that touched it, so
  // nothing is cleared between chunks; the touched columns are then sorted or scanned in order
  // (spgemm/accumulator.hpp).
  template <class Producer>
  void accumulate_dense_values(Producer&& producer, Index base, Index range) {
    if (marker_.size() < static_cast<std::size_t>(range)) {
      marker_.assign(static_cast<std::size_t>(range), -1);
      acc_.resize(static_cast<std::size_t>(range));
    }
    if (stamp_ == std::numeric_limits<Index>::max()) {
      std::fill(marker_.begin(), marker_.end(), -1);
      stamp_ = 0;
    }
    const Index stamp = ++stamp_;
    touched_.clear();
    producer([&](Index c, Value v) {
      if (marker_[c] != stamp) {
        marker_[c] = stamp;
        touched_.push_back(c);
        acc_[c] = v;
      } else {
        acc_[c] += v;
      }
    });
    const auto touched = static_cast<Index>(touched_.size());
    if (scan_beats_sort(touched, range, o_.vector_sort && vector_sort_available()))
      list_marked_columns(marker_.data(), stamp, 0, range, touched_.data(), o_.vector_sort);
    else
      sort_columns(touched_.data(), touched_.size(), o_.vector_sort);
    for (Index c : touched_) emit(base + c, acc_[c]);
  }

  template <bool kStreaming, class Producer>
  static void reorder(Producer&& producer, int shift, Offset* __restrict next, Index* __restrict out_col,
                      Value* __restrict out_val) {
    producer([&](Index c, Value v) {
      const std::uint64_t chunk = static_cast<std::uint64_t>(c) >> shift;
      const auto at = static_cast<std::size_t>(next[chunk]++);
      const auto local = static_cast<Index>(c - (chunk << shift));
      if constexpr (kStreaming) {
        stream_store(out_col + at, local);
        if (kNumeric) stream_store(out_val + at, v);
      } else {
        out_col[at] = local;
        if (kNumeric) out_val[at] = v;
      }
    });
    if constexpr (kStreaming) store_fence();
  }

  // Algorithm 3: histogram, prefix sum, reorder into chunks of 2^shift columns, accumulate per chunk.
  // producer(f) yields (column - base, value) and is called twice.
  template <class Producer>
  void fine_level(Producer&& producer, Index base, int shift, std::uint64_t chunks) {
    std::fill_n(fine_counts_.begin(), chunks, 0);
    producer([&](Index c, Value) { ++fine_counts_[static_cast<std::uint64_t>(c) >> shift]; });
    fine_offsets_[0] = 0;
    for (std::uint64_t j = 0; j < chunks; ++j) fine_offsets_[j + 1] = fine_offsets_[j] + fine_counts_[j];
    const auto total = static_cast<std::size_t>(fine_offsets_[chunks]);
    if (fine_col_.size() < total) {
      fine_col_.resize(total);
      if (kNumeric) fine_val_.resize(total);
    }
    // The reorder pass, a radix scatter: next[j] is where chunk j's next product goes. Local restrict
    // pointers and one cursor per chunk keep the loop to a load, an increment and two stores per product
    // (with the offset and the count read apart, and the arrays reloaded after every store, it took half
    // of the numeric phase at 2^26 columns).
    Offset* __restrict next = fine_counts_.data();
    std::copy_n(fine_offsets_.begin(), chunks, next);
    Index* __restrict out_col = fine_col_.data();
    Value* __restrict out_val = kNumeric ? fine_val_.data() : nullptr;
    if (o_.streaming_stores)
      reorder<true>(producer, shift, next, out_col, out_val);
    else
      reorder<false>(producer, shift, next, out_col, out_val);
    for (std::uint64_t j = 0; j < chunks; ++j) {
      const Offset count = fine_offsets_[j + 1] - fine_offsets_[j];
      if (count == 0) continue;
      const auto from = static_cast<std::size_t>(fine_offsets_[j]);
      const Index* cols = fine_col_.data() + from;
      const Value* vals = kNumeric ? fine_val_.data() + from : nullptr;
      const auto chunk_base = static_cast<Index>(base + (j << shift));
      if (count < o_.sort_threshold)
        accumulate_sorted(cols, vals, count, chunk_base);
      else
        accumulate_dense(
            [&](auto&& f) {
              for (Offset t = 0; t < count; ++t) f(cols[t], kNumeric ? vals[t] : Value(0));
            },
            chunk_base, static_cast<Index>(std::uint64_t{1} << shift));
    }
  }

  const CsrMatrix<Value>& A_;
  const CsrMatrix<Value>& B_;
  CsrMatrix<Value>& C_;
  const ChunkParameters& p_;
  const Options& o_;
  Index* out_col_ = nullptr;
  Value* out_val_ = nullptr;
  Offset written_ = 0;
  std::vector<Index> gather_col_, fine_col_, touched_, coarse_col_;
  std::vector<Value> gather_val_, fine_val_, acc_, coarse_val_;
  std::vector<std::uint64_t> keys_;
  std::vector<std::uint8_t> used_;  // symbolic phase
  std::vector<Index> marker_;       // numeric phase
  Index stamp_ = 0;
  std::vector<Offset> fine_counts_, fine_offsets_, coarse_counts_, coarse_offsets_;
  std::vector<CscEntry> csc_;
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
RowPlan plan_rows(const RowShapes& shapes, const ChunkParameters& p, const Options& o, std::size_t dense_bytes) {
  const auto dense_capacity = static_cast<Offset>(o.cache.l2_bytes / dense_bytes);
  RowPlan plan;
  for (std::size_t i = 0; i < shapes.products.size(); ++i) {
    const Offset products = shapes.products[i], range = shapes.range[i];
    // A row with fewer products than fine chunks gains no locality from chunking: sort it instead.
    const bool few = products < o.sort_threshold || (range > dense_capacity && products < Offset(p.fine_chunks));
    const Category category = few                       ? Category::sort
                              : range <= dense_capacity ? Category::dense
                              : !p.coarse               ? Category::fine
                                                        : Category::coarse;
    plan.rows[static_cast<int>(category)].push_back(static_cast<Index>(i));
  }
  // Batches: bounded by the memory for their products and by L2 for their chunk counters.
  const std::vector<Index>& coarse = plan.rows[static_cast<int>(Category::coarse)];
  const std::uint64_t per_product = sizeof(Index) + sizeof(Value);
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

// One phase over all rows, category by category (symbolic: fills C.row_ptr lengths; numeric: C).
template <class Value, bool kNumeric>
std::uint64_t run_phase(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B, CsrMatrix<Value>& C,
                        const ChunkParameters& p, const Options& o, const RowShapes& shapes, const RowPlan& plan) {
  const std::size_t dense_bytes = kNumeric ? sizeof(Value) + sizeof(Index) : 1;
  const auto dense_capacity = static_cast<Offset>(o.cache.l2_bytes / dense_bytes);
  std::uint64_t extra = 0;
#pragma omp parallel reduction(+ : extra)
  {
    Worker<Value, kNumeric> w(A, B, C, p, o);
    for (int cat = 0; cat < 3; ++cat) {
      const std::vector<Index>& rows = plan.rows[cat];
#pragma omp for schedule(dynamic, 64) nowait
      for (std::size_t r = 0; r < rows.size(); ++r) {
        const Index i = rows[r];
        w.begin_row(i);
        if (cat == static_cast<int>(Category::sort)) {
          w.sort_row(i, shapes.products[i]);
        } else if (cat == static_cast<int>(Category::dense)) {
          w.dense_row(i, shapes.first_col[i],
                      static_cast<Index>(std::min<Offset>(dense_capacity, B.cols - shapes.first_col[i])));
        } else {
          w.fine_row(i);
        }
        w.end_row(i);
      }
    }
    const std::vector<Index>& coarse = plan.rows[static_cast<int>(Category::coarse)];
#pragma omp for schedule(dynamic, 1) nowait
    for (std::size_t b = 0; b < plan.coarse_batches.size(); ++b)
      w.coarse_batch(coarse, plan.coarse_batches[b].first, plan.coarse_batches[b].second);
    extra += w.buffer_bytes();
  }
  return extra;
}

}  // namespace

Options system_options() {
  Options o;
  o.cache.l2_bytes = l2_cache_bytes();
  o.cache.line_bytes = cache_line_bytes();
  return o;
}

template <class Value>
CsrMatrix<Value> multiply(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B, const Options& options,
                          SpgemmStats& stats, RowCategories* categories) {
  CsrMatrix<Value> C(A.rows, B.cols);
  Timer timer;
  // The symbolic phase's accumulator is a bitmap (1 byte per column), the numeric one's value + marker.
  const ChunkParameters symbolic = chunk_parameters(static_cast<std::uint64_t>(B.cols), 1, options.cache);
  const ChunkParameters numeric =
      chunk_parameters(static_cast<std::uint64_t>(B.cols), sizeof(Value) + sizeof(Index), options.cache);
  const RowShapes shapes = row_shapes(A, B);
  const RowPlan symbolic_plan = plan_rows<Value>(shapes, symbolic, options, 1);
  std::uint64_t extra = run_phase<Value, false>(A, B, C, symbolic, options, shapes, symbolic_plan);
  allocate_from_row_lengths(C);
  stats.symbolic_seconds = timer.seconds();
  timer.restart();
  const RowPlan plan = plan_rows<Value>(shapes, numeric, options, sizeof(Value) + sizeof(Index));
  extra = std::max(extra, run_phase<Value, true>(A, B, C, numeric, options, shapes, plan));
  stats.numeric_seconds = timer.seconds();
  stats.nnz = C.nnz();
  stats.multiplications = 0;
  for (Offset m : shapes.products) stats.multiplications += m;
  stats.extra_bytes = extra;
  if (categories) {
    categories->sort = static_cast<Offset>(plan.rows[0].size());
    categories->dense = static_cast<Offset>(plan.rows[1].size());
    categories->fine = static_cast<Offset>(plan.rows[2].size());
    categories->coarse = static_cast<Offset>(plan.rows[3].size());
  }
  return C;
}

template CsrMatrix<double> multiply(const CsrMatrix<double>&, const CsrMatrix<double>&, const Options&, SpgemmStats&,
                                    RowCategories*);
template CsrMatrix<float> multiply(const CsrMatrix<float>&, const CsrMatrix<float>&, const Options&, SpgemmStats&,
                                   RowCategories*);

namespace {

class Magnus : public SpgemmBackendFor<Magnus> {
 public:
  std::string name() const override { return "magnus"; }
  std::string description() const override {
    return "OpenMP MAGNUS: row categories, fine/coarse-level chunking sized to L2 (Wolfson-Pou et al. 2025)";
  }
  Device device() const override { return Device::cpu; }

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
