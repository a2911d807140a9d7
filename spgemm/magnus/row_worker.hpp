#pragma once
// MAGNUS's per-thread work (spgemm/magnus/magnus.cpp runs it): one Worker per thread and phase holds the
// accumulators, chunk buffers and output cursor, and computes one row of C of each category, or a batch
// of coarse rows, with the paper's accumulators (Algorithms 1-4 of Wolfson-Pou, Laukemann & Petrini,
// ICS 2025) and the departures magnus.cpp lists. Internal to magnus.cpp, which is its only includer.
#include <algorithm>
#include <array>
#include <bit>
#include <cassert>
#include <limits>
#include <type_traits>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "spgemm/accumulator.hpp"
#include "spgemm/bitonic_sort.hpp"
#include "spgemm/magnus/magnus.hpp"
#include "spgemm/streamed_output.hpp"

namespace amgsolve::magnus::detail {

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

// One intermediate product as the reorder moves it: its column and, in the numeric phase, its value,
// side by side, so that a product scattered to its chunk opens one cache line rather than one per
// array (at 2^26 columns the 2048 chunks' open lines exceed L1, and nearly every scattered store misses).
struct ColumnOnly {
  Index col;
};
template <class Value, bool kNumeric>
using Product = std::conditional_t<kNumeric, ColumnValue<Value>, ColumnOnly>;

// The bitmap of a dense accumulator: one bit per column of its window, all clear between uses. One bit
// rather than the byte of the paper's bitMap (section 3.4) or a 4-byte stamp: the symbolic phase's
// accumulator is then nothing else, and its L2-sized window 8 times wider.
class ColumnBits {
 public:
  void cover(Index columns) {
    const std::size_t words = bitmap_words(columns);
    if (words_.size() < words) words_.assign(words, 0);
  }
  // Sets the bit of column c and says whether it was clear. A set bit is not stored again: in rows that
  // hit a few columns many times (dense blocks), every store would wait on the previous one's.
  bool insert(Index c) {
    std::uint64_t& word = words_[static_cast<std::size_t>(c) >> 6];
    const std::uint64_t bit = std::uint64_t{1} << (c & 63);
    if (word & bit) return false;
    word |= bit;
    return true;
  }
  // Sets the bit of column c and says whether it was clear, without a branch: the store happens
  // whatever the bit was (see insert for when that costs).
  bool insert_unconditionally(Index c) {
    std::uint64_t& word = words_[static_cast<std::size_t>(c) >> 6];
    const std::uint64_t old = word;
    word = old | std::uint64_t{1} << (c & 63);
    return ((old >> (c & 63)) & 1) == 0;
  }
  void clear(Index c) { words_[static_cast<std::size_t>(c) >> 6] = 0; }
  // The number of set bits among [0, columns); clears them.
  Offset count_and_clear(Index columns) { return count_set_bits(words_.data(), bitmap_words(columns)); }
  void clear_all(Index columns) { std::fill_n(words_.begin(), bitmap_words(columns), 0); }
  // The set columns of [0, columns), ascending, into cols; clears them.
  Index list(Index columns, Index* cols, bool allow_vector) {
    return list_set_bits(words_.data(), static_cast<Index>(bitmap_words(columns)), cols, allow_vector);
  }
  std::size_t bytes() const { return words_.capacity() * sizeof(std::uint64_t); }

 private:
  std::vector<std::uint64_t> words_;
};

// Segments of 2^shift columns that cover a column range (the segmented category).
Offset segment_count(Offset range, int shift) { return (range + (Offset{1} << shift) - 1) >> shift; }

// The numeric fine level's chunks on wide, sparse rows (Worker::fine_shift_for).
constexpr std::uint64_t kProductsPerRegisterChunk = kRegisterAccumulatorMax / 2;
constexpr std::uint64_t kMostRegisterChunks = 4096;
// Entries of C written at once (the register accumulator's most, two chunks at a time).
constexpr Index kMostPerOutputWrite = 2 * kRegisterAccumulatorMax;
constexpr int kNarrowestRegisterChunk = 10;  // log2 of the columns

// The per-thread state of one phase: accumulators, chunk buffers and where the current row goes.
template <class Value, bool kNumeric>
class Worker {
 public:
  using Item = Product<Value, kNumeric>;

  Worker(const CsrMatrix<Value>& A, const CsrMatrix<Value>& B, CsrMatrix<Value>& C, const ChunkParameters& p,
         const Options& o, bool stream_output)
      : A_(A),
        B_(B),
        C_(C),
        p_(p),
        o_(o),
        stream_output_(stream_output),
        fine_counts_(in_registers(1, 0) ? std::max<std::uint64_t>(p.fine_chunks, kMostRegisterChunks) : p.fine_chunks),
        fine_offsets_(fine_counts_.size() + 1) {}

  // Row i of C is computed between these two: the numeric phase writes it into C's arrays (streamed
  // where the worker streams and `stream`), the symbolic phase only counts its entries into
  // C.row_ptr[i + 1].
  void begin_row(Index i, bool stream) {
    row_entries_ = A_.row_length(i);
    if constexpr (kNumeric) {
      out_cols_.start(C_.col.data() + C_.row_begin(i), stream);
      out_vals_.start(C_.val.data() + C_.row_begin(i), stream);
    }
    written_ = 0;
  }
  void end_row(Index i) {
    if (!kNumeric) C_.row_ptr[static_cast<std::size_t>(i) + 1] = written_;
  }
  // After the last row: what the numeric phase has staged of C goes out (streamed_output.hpp).
  void finish() {
    if constexpr (kNumeric) {
      out_cols_.finish();
      out_vals_.finish();
    }
  }

  // Calls f(column, value) for every intermediate product of row i of C.
  // The bounds and arrays are read into locals once: f's stores (counters, offsets) have the type of
  // row_ptr, and the compiler would otherwise reload B's row end after each of them.
  template <class F>
  void row_products(Index i, F&& f) const {
    const Index* b_col = B_.col.data();
    const Value* b_val = B_.val.data();
    const Offset a_end = A_.row_end(i);
    for (Offset ka = A_.row_begin(i); ka < a_end; ++ka) {
      const Index k = A_.col[ka];
      const Value a = kNumeric ? A_.val[ka] : Value(0);
      const Offset b_end = B_.row_end(k);
      for (Offset kb = B_.row_begin(k); kb < b_end; ++kb) f(b_col[kb], kNumeric ? a * b_val[kb] : Value(0));
    }
  }

  // ---- one row of each category

  // Sort category (section 3.4; the expand-sort-compress of Algorithm 2): gather the row's products, sort
  // and merge them.
  void sort_row(Index i, Offset products) {
    gather_.resize(static_cast<std::size_t>(products));
    std::size_t n = 0;
    row_products(i, [&](Index c, Value v) { gather_[n++] = make_item(c, v); });
    accumulate_sorted(gather_.data(), static_cast<Offset>(n), 0, std::bit_width(static_cast<std::uint32_t>(B_.cols)));
  }

  // Dense category (Algorithm 1): Gustavson's dense accumulator over the row's own column range.
  void dense_row(Index i, Offset products, Index first_col, Index range) {
    accumulate_dense([&](auto&& f) { row_products(i, [&f, first_col](Index c, Value v) { f(c - first_col, v); }); }, products,
                     products, first_col, range);
  }

  // The segmented category: a row too wide for one dense accumulator, with many products per segment of
  // 2^segment_shift columns. The dense accumulator runs segment by segment, every row of B giving its
  // products in the segment from a cursor (the column segments of CSeg, An & Catalyurek 2021, found on
  // the fly rather than stored): no reorder pass, but a cursor visit per row of B and segment. Each
  // column's products still come in the order of A's columns, as Gustavson sums them.
  void segmented_row(Index i, Offset products, Index first_col, Offset range, int segment_shift) {
    const Offset a_begin = A_.row_begin(i);
    const auto entries = static_cast<std::size_t>(row_entries_);
    cursor_.resize(entries);
    b_end_.resize(entries);
    for (std::size_t t = 0; t < entries; ++t) {
      const Index k = A_.col[a_begin + static_cast<Offset>(t)];
      cursor_[t] = B_.row_begin(k);
      b_end_[t] = B_.row_end(k);
    }
    const Offset width = Offset{1} << segment_shift, end = Offset{first_col} + range;
    const Offset products_per_segment = products / segment_count(range, segment_shift);  // on average
    for (Offset lo = first_col; lo < end; lo += width) {
      const Offset hi = std::min(lo + width, end);
      accumulate_dense([&](auto&& f) { segment_products(i, lo, hi, f); }, products_per_segment, products,
                       static_cast<Index>(lo), static_cast<Index>(hi - lo));
    }
  }

  // Fine category (section 3.2, Algorithm 3): the fine level straight from A and B.
  void fine_row(Index i, Offset products, Offset range) {
    const int shift = fine_shift_for(products, range);
    fine_level([&](auto&& f) { row_products(i, f); }, 0, shift, std::uint64_t{1} << (fine_level_bits() - shift));
  }

  // Coarse category (section 3.3, Algorithm 4): the rows rows[begin, end) as one batch, reordered into
  // coarse chunks by an outer product, then the fine level (Algorithm 3) on every coarse chunk.
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
    const auto outer_product = [&](auto&& f) {
      for (const CscEntry& e : csc_)
        for (Offset kb = B_.row_begin(e.k); kb < B_.row_end(e.k); ++kb) {
          const Index col = B_.col[kb];
          const std::uint64_t chunk = static_cast<std::uint64_t>(col) >> p_.coarse_shift;
          f(e.row * chunks + chunk, static_cast<Index>(col - (chunk << p_.coarse_shift)),
            kNumeric ? e.a * B_.val[kb] : Value(0));
        }
    };
    coarse_counts_.assign(batch * chunks, 0);
    outer_product([&](std::uint64_t slot, Index, Value) { ++coarse_counts_[slot]; });
    coarse_offsets_.resize(batch * chunks + 1);
    coarse_offsets_[0] = 0;
    for (std::size_t c = 0; c < batch * chunks; ++c) coarse_offsets_[c + 1] = coarse_offsets_[c] + coarse_counts_[c];
    coarse_.resize(static_cast<std::size_t>(coarse_offsets_.back()));
    scatter(outer_product, coarse_counts_.data(), coarse_offsets_.data(), batch * chunks, coarse_.data());
    // The fine level on each coarse chunk of each row, in column order.
    for (std::size_t r = 0; r < batch; ++r) {
      const Index i = rows[begin + r];
      begin_row(i, false);
      for (std::uint64_t c = 0; c < chunks; ++c) {
        const Offset from = coarse_offsets_[r * chunks + c];
        const Offset count = coarse_offsets_[r * chunks + c + 1] - from;
        if (count == 0) continue;
        const auto base = static_cast<Index>(c << p_.coarse_shift);
        const Item* items = coarse_.data() + from;
        if (count < o_.sort_threshold)
          accumulate_sorted(items, count, base, p_.coarse_shift);
        else
          fine_level([&](auto&& f) { replay(items, count, f); }, base, p_.fine_shift, p_.fine_chunks);
      }
      end_row(i);
    }
  }

  std::uint64_t buffer_bytes() const {
    return (gather_.capacity() + fine_.capacity() + coarse_.capacity()) * sizeof(Item) +
           (touched_.capacity() + sorted_.capacity()) * sizeof(Index) + acc_.capacity() * sizeof(Value) +
           keys_.capacity() * sizeof(std::uint64_t) + bits_.bytes() + csc_.capacity() * sizeof(CscEntry) +
           (cursor_.capacity() + b_end_.capacity()) * sizeof(Offset) + out_cols_.bytes() + out_vals_.bytes() +
           (coarse_counts_.capacity() + coarse_offsets_.capacity() + 2 * fine_counts_.size()) * sizeof(Offset);
  }

 private:
  struct CscEntry {
    Index k, row;
    Value a;
  };

  // Calls f(column - lo, value) for the products of row i of C in columns [lo, hi): each row of B read
  // from its cursor on, which is left at the first column past hi (rows of B are sorted). So the
  // segments must come in column order, and each be produced once.
  template <class F>
  void segment_products(Index i, Offset lo, Offset hi, F&& f) {
    const Index* b_col = B_.col.data();
    const Value* b_val = B_.val.data();
    const Offset a_begin = A_.row_begin(i);
    for (std::size_t t = 0; t < cursor_.size(); ++t) {
      const Value a = kNumeric ? A_.val[a_begin + static_cast<Offset>(t)] : Value(0);
      const Offset b_end = b_end_[t];
      Offset kb = cursor_[t];
      for (; kb < b_end && b_col[kb] < hi; ++kb)
        f(static_cast<Index>(b_col[kb] - lo), kNumeric ? a * b_val[kb] : Value(0));
      cursor_[t] = kb;
    }
  }

  static Item make_item(Index c, Value v) {
    if constexpr (kNumeric)
      return {c, v};
    else
      return {c};
  }
  static Value value_of(const Item& item) {
    if constexpr (kNumeric)
      return item.val;
    else
      return Value(0);
  }
  template <class F>
  static void replay(const Item* items, Offset count, F&& f) {
    for (Offset t = 0; t < count; ++t) f(items[t].col, value_of(items[t]));
  }

  // The reorder's regular store of a product: a double's column and value as one 16-byte store (the
  // column's 4 bytes of padding zeroed) rather than two (docs/BENCHMARKS.md, "MAGNUS: design choices measured").
  static void store_item(Item* p, Index c, Value v) {
#if defined(__x86_64__)
    if constexpr (kNumeric && std::is_same_v<Value, double>) {
      static_assert(sizeof(Item) == 16 && offsetof(Item, val) == 8);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(p),
                       _mm_unpacklo_epi64(_mm_cvtsi32_si128(c), _mm_castpd_si128(_mm_set_sd(v))));
      return;
    }
#endif
    *p = make_item(c, v);
  }

  static void stream_item(Item* p, const Item& item) {
    stream_store(&p->col, item.col);
    if constexpr (kNumeric) stream_store(&p->val, item.val);
  }

  // The reorder of Algorithms 3 and 4, a radix scatter: produce(f) yields (slot, column, value);
  // next[s] (counts, overwritten) is where slot s's next product goes. Local restrict pointers keep
  // the loop to a load, an increment and the product's store.
  template <class Produce>
  void scatter(Produce&& produce, Offset* __restrict next, const Offset* offsets, std::size_t slots,
               Item* __restrict out) const {
    std::copy_n(offsets, slots, next);
    if (o_.streaming_stores) {
      produce([&](std::uint64_t s, Index c, Value v) { stream_item(out + next[s]++, make_item(c, v)); });
      non_temporal_store_fence();
    } else {
      produce([&](std::uint64_t s, Index c, Value v) { store_item(out + next[s]++, c, v); });
    }
  }

  void emit(Index col, Value v) {
    if (kNumeric) {
      out_cols_.push(col);
      out_vals_.push(v);
    }
    ++written_;
  }

  // Sort accumulator (section 3.4). The symbolic phase sorts the columns alone and counts the distinct
  // ones. The numeric phase sorts (column, position) keys, so duplicates are summed in stream order:
  // up to 64 products in registers (accumulate_in_registers), else in 32-bit keys in memory when the
  // column's col_bits and the position's bits fit beside each other, else in 64.
  void accumulate_sorted(const Item* items, Offset n, [[maybe_unused]] Index base, [[maybe_unused]] int col_bits) {
    if constexpr (!kNumeric) {
      sorted_.resize(static_cast<std::size_t>(n));
      for (Offset t = 0; t < n; ++t) sorted_[t] = items[t].col;
      sort_columns(sorted_.data(), sorted_.size(), o_.vector_sort);
      for (Offset t = 0; t < n; ++t) written_ += t == 0 || sorted_[t] != sorted_[t - 1];
    } else {
      if constexpr (std::is_same_v<Value, double>) {
        if (in_registers(n, col_bits)) {
          const Index entries = accumulate_in_registers(items, static_cast<std::size_t>(n), base, out_cols_.room(),
                                                        out_vals_.room(), true, col_bits);
          commit_output(entries);
          return;
        }
      }
      const int position_bits = std::bit_width(static_cast<std::uint64_t>(std::max<Offset>(n - 1, 0)));
      if (col_bits + position_bits <= 31 && static_cast<std::size_t>(n) <= kVectorSortMaxColumns)
        sum_sorted<std::int32_t>(items, n, base, position_bits);
      else
        sum_sorted<std::uint64_t>(items, n, base, 32);
    }
  }

  // The fine level's chunk width (log2) for a row of `products` spread over `range` columns. Section
  // 3.5's count keeps the chunk structures and one dense accumulator in L2. Where the register
  // accumulator runs, a chunk of about kProductsPerRegisterChunk products sorted in registers costs less
  // than a dense accumulation, if its columns seldom repeat: so wide, sparse rows get narrower chunks, no
  // narrower than kNarrowestRegisterChunk columns and no more than kMostRegisterChunks (their open lines
  // fit L2) (docs/BENCHMARKS.md, "MAGNUS: design choices measured").
  int fine_shift_for(Offset products, Offset range) const {
    if (!in_registers(1, p_.fine_shift) || products == 0) return p_.fine_shift;
    const auto width = static_cast<std::uint64_t>(range) * kProductsPerRegisterChunk / static_cast<std::uint64_t>(products);
    const int shift = std::max({static_cast<int>(std::bit_width(width)) - 1, kNarrowestRegisterChunk,
                                fine_level_bits() - std::countr_zero(kMostRegisterChunks)});
    return std::min(shift, p_.fine_shift);
  }
  // log2 of the columns one fine-level pass covers (chunks << fine_shift).
  int fine_level_bits() const { return p_.fine_shift + std::countr_zero(p_.fine_chunks); }

  // Whether a chunk of n products with columns below 2^col_bits goes to the register accumulator
  // (double only: its products are 16 bytes).
  bool in_registers(Offset n, int col_bits) const {
    if constexpr (kNumeric && std::is_same_v<Value, double>)
      return register_accumulator_ && n >= 1 && n <= static_cast<Offset>(kRegisterAccumulatorMax) &&
             col_bits <= kRegisterAccumulatorColumnBits;
    else
      return false;
  }

  template <class Key>
  void sum_sorted(const Item* items, Offset n, Index base, int position_bits) {
    std::vector<Key>& keys = key_buffer<Key>();
    keys.resize(static_cast<std::size_t>(n));
    for (Offset t = 0; t < n; ++t)
      keys[t] = static_cast<Key>((static_cast<Key>(items[t].col) << position_bits) | static_cast<Key>(t));
    if constexpr (sizeof(Key) == 4)
      sort_columns(keys.data(), keys.size(), o_.vector_sort);
    else
      sort_keys(keys.data(), keys.size(), o_.vector_sort);
    sum_sorted_runs(keys.data(), keys.size(), position_bits, items,
                    [&](Index col, Value sum) { emit(base + col, sum); });
  }

  template <class Key>
  std::vector<Key>& key_buffer() {
    if constexpr (sizeof(Key) == 4)
      return sorted_;
    else
      return keys_;
  }

  // -0.0 where `stale` (a fresh column's leftover sum), else the sum, by integer masks: compilers turn a
  // select of doubles into the very branch the caller avoids. -0.0 is the additive identity that keeps
  // every value's bits (-0.0 + +0.0 = +0.0, -0.0 + -0.0 = -0.0): a fresh column's sum is its first
  // product bit for bit, as in the branchy loop.
  static Value stale_to_negative_zero(Value sum, bool stale) {
    using Bits = std::conditional_t<sizeof(Value) == 8, std::uint64_t, std::uint32_t>;
    const Bits keep = static_cast<Bits>(stale) - 1;  // all ones when the sum is current
    const Bits sign = std::bit_cast<Bits>(Value(-0.0));
    return std::bit_cast<Value>((std::bit_cast<Bits>(sum) & keep) | (sign & ~keep));
  }

  // Whether a dense accumulator's "column seen before?" branch would mispredict often and storing
  // unconditionally costs little, so that the branch-free loops win; on banded rows, where the branch
  // predicts well, they lose (docs/BENCHMARKS.md, "MAGNUS: design choices measured"). Mispredicted: between 1/5 and 2 products per column of the
  // window, a good share repeat a column and a good share do not.
  bool repeats_unpredictable(Offset products, Offset window) const {
    return products * 5 >= window && stores_cheap(products, window);
  }

  // Whether the symbolic phase's branch-free loop wins although its branch would predict well: where
  // the window has at most one bitmap word per two products, counting the words (popcount) costs
  // little beside the products, whose branch, list store and count it saves (docs/BENCHMARKS.md, "MAGNUS: design choices measured").
  bool few_words_per_product(Offset products, Offset window) const {
    return static_cast<Offset>(bitmap_words(static_cast<Index>(window))) * 2 <= products &&
           stores_cheap(products, window);
  }

  // Whether a store for every product costs little beside the branch it saves: at most 2 products per
  // column of the window (beyond, most products hit a column already seen, whose store the branch
  // skips), and the row's products from one row of B at least a bitmap word (64 columns) apart on
  // average (window * entries of A's row / products), else consecutive products store to the same word
  // and every store waits on the previous one.
  bool stores_cheap(Offset products, Offset window) const {
    return products <= 2 * window && window * row_entries_ >= 64 * products;
  }

  // The dense accumulator's list of columns, with room for `room` of them.
  Index* list_of_columns(std::size_t room) {
    if (touched_.size() < room) touched_.resize(room);
    return touched_.data();
  }

  // Dense accumulator over columns [base, base + range): producer(f), called once, yields pairs
  // (column - base, value), about `products` of them (the loops are chosen by it) and at most `most`
  // (lists are sized by it).
  template <class Producer>
  void accumulate_dense(Producer&& producer, Offset products, Offset most, Index base, Index range) {
    bits_.cover(range);
    if constexpr (kNumeric)
      accumulate_dense_values(producer, products, most, base, range);
    else
      count_dense(producer, products, most, range);
  }

  // Symbolic phase: the distinct columns are the bits set. Where the branch would mispredict, or the
  // window has few words per product, every product sets its bit and the window's words are counted
  // and cleared (popcount). Otherwise the bits are set and counted as they turn on, their columns
  // listed, and cleared from the list (a random store each) or, where the window has at most 16 words
  // per distinct column, by clearing all its words (sequential stores, many to a cycle).
  template <class Producer>
  void count_dense(Producer&& producer, Offset products, Offset most, Index range) {
    if (repeats_unpredictable(products, range) || few_words_per_product(products, range)) {
      producer([&](Index c, Value) { bits_.insert_unconditionally(c); });
      written_ += bits_.count_and_clear(range);
      return;
    }
    // Past `listed_most` columns the words are cleared all at once: the list stops growing there.
    const auto words = static_cast<Offset>(bitmap_words(range));
    const auto listed_most = static_cast<Index>(std::min<Offset>({most, range, words / 16}));
    Index* __restrict listed = list_of_columns(static_cast<std::size_t>(listed_most) + 1);
    Index distinct = 0;
    producer([&](Index c, Value) {
      listed[std::min(distinct, listed_most)] = c;  // kept only if fresh
      distinct += bits_.insert(c);
    });
    written_ += distinct;
    if (distinct > listed_most)
      bits_.clear_all(range);
    else
      for (Index t = 0; t < distinct; ++t) bits_.clear(listed[t]);
  }

  // Numeric phase: a column's first product sets its bit and its sum; the touched columns are then
  // listed in order by scanning the bits or by sorting the list (spgemm/accumulator.hpp).
  template <class Producer>
  void accumulate_dense_values(Producer&& producer, Offset products, Offset most, Index base, Index range) {
    if (acc_.size() < static_cast<std::size_t>(range)) acc_.resize(static_cast<std::size_t>(range));
    const auto list_room = static_cast<std::size_t>(std::min<Offset>(most, range)) + kListPadding;
    Index* __restrict listed = list_of_columns(list_room);
    Value* __restrict acc = acc_.data();
    Index touched = 0;
    if (repeats_unpredictable(products, range)) {
      producer([&](Index c, Value v) {
        const bool fresh = bits_.insert_unconditionally(c);
        listed[touched] = c;  // past the distinct ones: into kListPadding
        touched += fresh;
        acc[c] = stale_to_negative_zero(acc[c], fresh) + v;
      });
    } else {
      producer([&](Index c, Value v) {
        if (bits_.insert(c)) {
          listed[touched++] = c;
          acc[c] = v;
        } else {
          acc[c] += v;
        }
      });
    }
    if (bit_scan_beats_sort(touched, range, o_.vector_sort && bit_listing_kernel_available())) {
      bits_.list(range, listed, o_.vector_sort);
    } else {
      sort_columns(listed, static_cast<std::size_t>(touched), o_.vector_sort);
      for (Index t = 0; t < touched; ++t) bits_.clear(listed[t]);
    }
    for (Index from = 0; from < touched; from += kMostPerOutputWrite) {
      const Index entries = std::min<Index>(touched - from, kMostPerOutputWrite);
      Index* __restrict out_col = out_cols_.room();
      Value* __restrict out_val = out_vals_.room();
      for (Index t = 0; t < entries; ++t) {
        out_col[t] = base + listed[from + t];
        out_val[t] = acc[listed[from + t]];
      }
      commit_output(entries);
    }
  }

  void commit_output(Index entries) {
    out_cols_.commit(static_cast<std::size_t>(entries));
    out_vals_.commit(static_cast<std::size_t>(entries));
    written_ += entries;
  }

  // Algorithm 3: histogram, prefix sum, reorder into chunks of 2^shift columns, accumulate per chunk.
  // producer(f) yields (column - base, value) and is called twice. The symbolic phase counts every
  // chunk with its bitmap (a bit per column, no sort at all), the numeric phase sorts the small ones.
  template <class Producer>
  void fine_level(Producer&& producer, Index base, int shift, std::uint64_t chunks) {
    std::fill_n(fine_counts_.begin(), chunks, 0);
    producer([&](Index c, Value) { ++fine_counts_[static_cast<std::uint64_t>(c) >> shift]; });
    fine_offsets_[0] = 0;
    for (std::uint64_t j = 0; j < chunks; ++j) fine_offsets_[j + 1] = fine_offsets_[j] + fine_counts_[j];
    const auto total = static_cast<std::size_t>(fine_offsets_[chunks]);
    if (fine_.size() < total) fine_.resize(total);
    scatter(
        [&](auto&& f) {
          producer([&](Index c, Value v) {
            const std::uint64_t chunk = static_cast<std::uint64_t>(c) >> shift;
            f(chunk, static_cast<Index>(c - (chunk << shift)), v);
          });
        },
        fine_counts_.data(), fine_offsets_.data(), chunks, fine_.data());
    for (std::uint64_t j = 0; j < chunks; ++j) {
      const Offset count = fine_offsets_[j + 1] - fine_offsets_[j];
      if (j + 1 < chunks && in_register_pair(count, shift) &&
          in_register_pair(fine_offsets_[j + 2] - fine_offsets_[j + 1], shift)) {
        accumulate_chunk_pair(j, base, shift);
        ++j;
        continue;
      }
      accumulate_chunk(fine_.data() + fine_offsets_[j], count, static_cast<Index>(base + (j << shift)), shift);
    }
  }

  // Whether a chunk of n products goes to the register accumulator two at a time
  // (accumulate_two_in_registers): where it fills more than one register, so that two networks, each
  // bound by the latency of its stages, overlap.
  bool in_register_pair(Offset n, int shift) const {
    return n > 16 && in_registers(n, shift);
  }

  // Fine chunks j and j + 1 of the reorder, both in_register_pair (so: numeric, double).
  void accumulate_chunk_pair(std::uint64_t j, Index base, int shift) {
    assert(in_registers(1, shift));
    if constexpr (kNumeric && std::is_same_v<Value, double>) {
      const Offset first = fine_offsets_[j], second = fine_offsets_[j + 1], end = fine_offsets_[j + 2];
      commit_output(accumulate_two_in_registers(
          fine_.data() + first, static_cast<std::size_t>(second - first), static_cast<Index>(base + (j << shift)),
          fine_.data() + second, static_cast<std::size_t>(end - second), static_cast<Index>(base + ((j + 1) << shift)),
          out_cols_.room(), out_vals_.room(), true, shift));
    }
  }

  // One fine chunk of 2^shift columns from chunk_base: the numeric phase sorts the small ones.
  void accumulate_chunk(const Item* items, Offset count, Index chunk_base, int shift) {
    if (count == 0) return;
    if (kNumeric && (count < o_.sort_threshold || in_registers(count, shift)))
      accumulate_sorted(items, count, chunk_base, shift);
    else
      accumulate_dense([&](auto&& f) { replay(items, count, f); }, count, count, chunk_base,
                       static_cast<Index>(std::uint64_t{1} << shift));
  }

  const CsrMatrix<Value>& A_;
  const CsrMatrix<Value>& B_;
  CsrMatrix<Value>& C_;
  const ChunkParameters& p_;
  const Options& o_;
  const bool register_accumulator_ = o_.vector_sort && vector_sort_available();
  const bool stream_output_;
  // Row i of C's columns and values (numeric phase).
  StreamedArray<Index> out_cols_{kNumeric && stream_output_, kMostPerOutputWrite};
  StreamedArray<Value> out_vals_{kNumeric && stream_output_, kMostPerOutputWrite};
  Offset written_ = 0;
  Offset row_entries_ = 0;  // of the current row of A
  std::vector<Item> gather_, fine_, coarse_;  // a sort row's products; the fine and coarse reorders
  std::vector<Index> touched_, sorted_;       // a dense chunk's columns; 32-bit sort keys
  std::vector<Value> acc_;
  std::vector<std::uint64_t> keys_;
  ColumnBits bits_;
  std::vector<Offset> fine_counts_, fine_offsets_, coarse_counts_, coarse_offsets_;
  std::vector<CscEntry> csc_;
  std::vector<Offset> cursor_, b_end_;  // a segmented row's rows of B: where they resume, where they end
};

}  // namespace amgsolve::magnus::detail
