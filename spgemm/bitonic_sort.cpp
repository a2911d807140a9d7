#include "spgemm/bitonic_sort.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cassert>
#include <cstddef>

#include "common/cpu_info.hpp"

#if defined(__x86_64__)
// GCC 12's AVX-512 min/max/permute intrinsics start from _mm512_undefined_epi32(), which it then
// reports as "(may be) used uninitialized" (GCC bug 105593, fixed in GCC 13): silence that false positive.
#pragma GCC diagnostic push
#if !defined(__clang__)  // a GCC warning clang does not know
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>
#endif

namespace amgsolve {
namespace {

// The register accumulator (accumulate_in_registers): keys (column << kPositionBits | position) of n
// products, sorted, give every column's products in stream order.
constexpr int kPositionBits = 6;
constexpr std::uint32_t kPositionMask = (1u << kPositionBits) - 1;
static_assert(std::size_t{1} << kPositionBits == kRegisterAccumulatorMax);
static_assert(kRegisterAccumulatorColumnBits + kPositionBits <= 31, "keys must stay below the padding key");
static_assert(kNarrowKeyColumnBits + kPositionBits <= 16, "narrow keys must fit 16 bits");

std::uint32_t product_key(std::int32_t col, std::size_t position) {
  return static_cast<std::uint32_t>(col) << kPositionBits | static_cast<std::uint32_t>(position);
}

// Keys sorted ascending: sums each column's values in position order and writes the distinct columns
// (+ base) and sums; returns their count.
std::int32_t sum_sorted_keys(const std::uint32_t* keys, std::size_t n, const ColumnValue<double>* items,
                             std::int32_t base, std::int32_t* out_col, double* out_val) {
  std::int32_t written = 0;
  sum_sorted_runs(keys, n, kPositionBits, items, [&](std::int32_t col, double sum) {
    out_col[written] = base + col;
    out_val[written++] = sum;
  });
  return written;
}

#if defined(__x86_64__)
// Everything up to the matching pop is compiled for AVX-512F and BW (16-bit lanes) and only called when
// the CPU has both (every AVX-512 CPU but the Xeon Phi). GCC takes a target pragma; clang ignores it and
// takes the same target as an attribute on every function of the region.
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx512bw"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw")
#endif

// The AVX-512 operations of one key width: 8 lanes of 64 bits, 16 of 32 or 32 of 16 per register.
template <class Key>
struct Lanes;

template <>
struct Lanes<std::uint64_t> {
  static constexpr int kCount = 8;
  using Reg = __m512i;
  using Mask = __mmask8;
  static Mask first(std::size_t count) { return static_cast<Mask>((1u << count) - 1); }
  // Masked loads and stores reach a partial register alone (the network's third argument is for AVX2).
  static __m512i load(const std::uint64_t* p, std::size_t count, bool) {
    return _mm512_mask_loadu_epi64(_mm512_set1_epi64(-1), first(count), p);
  }
  static void store(std::uint64_t* p, std::size_t count, __m512i v, bool) {
    _mm512_mask_storeu_epi64(p, first(count), v);
  }
  static __m512i min(__m512i a, __m512i b) { return _mm512_min_epu64(a, b); }
  static __m512i max(__m512i a, __m512i b) { return _mm512_max_epu64(a, b); }
  // max(a, b) in the lanes of kLarger, src elsewhere.
  template <Mask kLarger>
  static __m512i max_into(__m512i src, __m512i a, __m512i b) {
    return _mm512_mask_max_epu64(src, kLarger, a, b);
  }
  // Lane l of the result is lane l ^ X of v.
  template <int X>
  static __m512i xor_lanes(__m512i v) {
    if constexpr (X == 1)
      return _mm512_shuffle_epi32(v, _MM_PERM_BADC);  // within 128 bits: no lane crossing
    else
      return _mm512_permutexvar_epi64(_mm512_set_epi64(7 ^ X, 6 ^ X, 5 ^ X, 4 ^ X, 3 ^ X, 2 ^ X, 1 ^ X, 0 ^ X), v);
  }
};

template <>
struct Lanes<std::uint32_t> {
  static constexpr int kCount = 16;
  using Reg = __m512i;
  using Mask = __mmask16;
  static Mask first(std::size_t count) { return static_cast<Mask>((1u << count) - 1); }
  static __m512i load(const std::uint32_t* p, std::size_t count, bool) {
    return _mm512_mask_loadu_epi32(_mm512_set1_epi32(-1), first(count), p);
  }
  static void store(std::uint32_t* p, std::size_t count, __m512i v, bool) {
    _mm512_mask_storeu_epi32(p, first(count), v);
  }
  static __m512i min(__m512i a, __m512i b) { return _mm512_min_epu32(a, b); }
  static __m512i max(__m512i a, __m512i b) { return _mm512_max_epu32(a, b); }
  template <Mask kLarger>
  static __m512i max_into(__m512i src, __m512i a, __m512i b) {
    return _mm512_mask_max_epu32(src, kLarger, a, b);
  }
  template <int X>
  static __m512i xor_lanes(__m512i v) {
    if constexpr (X == 1)
      return _mm512_shuffle_epi32(v, _MM_PERM_CDAB);  // X < 4: within 128 bits, one cycle
    else if constexpr (X == 2)
      return _mm512_shuffle_epi32(v, _MM_PERM_BADC);
    else if constexpr (X == 3)
      return _mm512_shuffle_epi32(v, _MM_PERM_ABCD);
    else
      return _mm512_permutexvar_epi32(_mm512_set_epi32(15 ^ X, 14 ^ X, 13 ^ X, 12 ^ X, 11 ^ X, 10 ^ X, 9 ^ X, 8 ^ X,
                                                       7 ^ X, 6 ^ X, 5 ^ X, 4 ^ X, 3 ^ X, 2 ^ X, 1 ^ X, 0 ^ X),
                                      v);
  }
};

// 16-bit keys (the register accumulator's where column and position fit 16 bits): 32 lanes a register,
// so that 64 keys take two registers and half the network's instructions.
template <>
struct Lanes<std::uint16_t> {
  static constexpr int kCount = 32;
  using Reg = __m512i;
  using Mask = __mmask32;
  static __m512i min(__m512i a, __m512i b) { return _mm512_min_epu16(a, b); }
  static __m512i max(__m512i a, __m512i b) { return _mm512_max_epu16(a, b); }
  template <Mask kLarger>
  static __m512i max_into(__m512i src, __m512i a, __m512i b) {
    return _mm512_mask_max_epu16(src, kLarger, a, b);
  }
  template <int X>
  static __m512i xor_lanes(__m512i v) {
    if constexpr (X == 1)
      return _mm512_rol_epi32(v, 16);  // a rotate: not on the shuffle port, which the rest keeps busy
    else if constexpr (X == 2)
      return _mm512_shuffle_epi32(v, _MM_PERM_CDAB);
    else if constexpr (X == 4)
      return _mm512_shuffle_epi32(v, _MM_PERM_BADC);
    else if constexpr (X == 8)
      return _mm512_shuffle_i64x2(v, v, _MM_SHUFFLE(2, 3, 0, 1));
    else if constexpr (X == 16)
      return _mm512_shuffle_i64x2(v, v, _MM_SHUFFLE(1, 0, 3, 2));
    else if constexpr (X < 8)  // within 128 bits: a byte shuffle
      return _mm512_shuffle_epi8(v, _mm512_loadu_si512(kXorBytes<X>.data()));
    else
      return _mm512_permutexvar_epi16(_mm512_loadu_si512(kXorWords<X>.data()), v);
  }

 private:
  // Byte b of a 128-bit lane takes byte b of word (b / 2) ^ X of that lane.
  template <int X>
  alignas(64) static constexpr std::array<std::uint8_t, 64> kXorBytes = [] {
    std::array<std::uint8_t, 64> table{};
    for (int b = 0; b < 64; ++b) table[b] = static_cast<std::uint8_t>(2 * (((b % 16) / 2) ^ X) + b % 2);
    return table;
  }();
  template <int X>
  alignas(64) static constexpr std::array<std::uint16_t, 32> kXorWords = [] {
    std::array<std::uint16_t, 32> table{};
    for (int w = 0; w < 32; ++w) table[w] = static_cast<std::uint16_t>(w ^ X);
    return table;
  }();
};

#include "spgemm/bitonic_network.inc"  // the network over these lanes

// The 16 columns of items[16 r, 16 r + 16) as 32-bit lanes: four masked loads of four 16-byte products,
// their first dwords picked by two two-register permutes. The masks cover the products below n (four
// dwords each) without a branch; masked-off lanes are never read, so nothing past items[n) is touched.
static_assert(sizeof(ColumnValue<double>) == 16 && offsetof(ColumnValue<double>, val) == 8,
              "columns_of and the value gather assume 16-byte products with the value at byte 8");
inline __m512i columns_of(const ColumnValue<double>* items, std::size_t n, int r) {
  const __m512i first_dwords = _mm512_set_epi32(28, 24, 20, 16, 12, 8, 4, 0, 28, 24, 20, 16, 12, 8, 4, 0);
  const std::size_t present = lanes_in<16>(n, r);
  const std::uint64_t dwords = present == 0 ? 0 : ~std::uint64_t{0} >> (64 - 4 * present);
  // Addresses as integers: those of absent products may lie past the array, never to be dereferenced.
  const auto address = reinterpret_cast<std::uintptr_t>(items) + static_cast<std::uintptr_t>(256 * r);
  __m512i quarter[4];
  for (int h = 0; h < 4; ++h)
    quarter[h] = _mm512_maskz_loadu_epi32(static_cast<__mmask16>(dwords >> (16 * h)),
                                          reinterpret_cast<const void*>(address + static_cast<std::uintptr_t>(64 * h)));
  const __m512i low = _mm512_permutex2var_epi32(quarter[0], first_dwords, quarter[1]);
  const __m512i high = _mm512_permutex2var_epi32(quarter[2], first_dwords, quarter[3]);
  return _mm512_mask_blend_epi32(0xFF00, low, high);
}

// The values of the products whose positions are in the keys' low bits, lanes 8 Half .. 8 Half + 7 of the
// keys, gathered (masked-off lanes 0): a product is two doubles long, so its value is double 2 position
// from items[0].val.
template <int Half>
inline __m512d gather_values(__m512i keys, __mmask8 lanes, const ColumnValue<double>* items) {
  const __m512i index = _mm512_slli_epi32(_mm512_and_si512(keys, _mm512_set1_epi32(kPositionMask)), 1);
  const __m256i half = Half == 0 ? _mm512_castsi512_si256(index) : _mm512_extracti64x4_epi64(index, 1);
  return _mm512_mask_i32gather_pd(_mm512_setzero_pd(), lanes, half, &items[0].val, 8);
}

// Step K of sum_runs_in_registers: every lane adds the value K lanes on when that lane has its column.
// Returns the lanes that did (none: every run is shorter than K + 1).
template <int K, int V>
[[gnu::always_inline]] inline __mmask8 add_run_step(const __mmask8 (&valid)[V], const __m512i (&col)[V],
                                                    const __m512d (&x)[V], __m512d (&sum)[V]) {
  __mmask8 any = 0;
  for (int j = 0; j < V; ++j) {
    const __m512i later_col = j + 1 < V ? col[j + 1] : _mm512_set1_epi64(-1);
    const __m512i later_x = j + 1 < V ? _mm512_castpd_si512(x[j + 1]) : _mm512_setzero_si512();
    const __mmask8 same = _mm512_mask_cmpeq_epi64_mask(valid[j], _mm512_alignr_epi64(later_col, col[j], K), col[j]);
    sum[j] = _mm512_mask_add_pd(sum[j], same, sum[j],
                                _mm512_castsi512_pd(_mm512_alignr_epi64(later_x, _mm512_castpd_si512(x[j]), K)));
    any = static_cast<__mmask8>(any | same);
  }
  return any;
}

// Steps K, K + 1, ..., 7 while some run is still longer; false when a run is longer than 8 lanes.
// Only valid lanes are compared (the padding lanes share a column).
template <int K, int V>
[[gnu::always_inline]] inline bool add_runs_from(const __mmask8 (&valid)[V], const __m512i (&col)[V],
                                                 const __m512d (&x)[V], __m512d (&sum)[V]) {
  if constexpr (K == 8) {  // a ninth lane of the same column: beyond these steps
    for (int j = 0; j + 1 < V; ++j)
      if (_mm512_mask_cmpeq_epi64_mask(valid[j], col[j + 1], col[j]) != 0) return false;
    return true;
  } else {
    if (add_run_step<K>(valid, col, x, sum) == 0) return true;
    return add_runs_from<K + 1>(valid, col, x, sum);
  }
}

// The values of the products of the sorted keys v, in key order, 8 to a register (lanes past n: 0).
template <int R>
[[gnu::always_inline]] inline void gather_in_key_order(const __m512i (&v)[R], std::size_t n,
                                                       const ColumnValue<double>* items, __m512d (&x)[2 * R]) {
  for (int r = 0; r < R; ++r) {
    const auto valid = Lanes<std::uint32_t>::first(lanes_in<16>(n, r));
    x[2 * r] = gather_values<0>(v[r], static_cast<__mmask8>(valid), items);
    x[2 * r + 1] = gather_values<1>(v[r], static_cast<__mmask8>(valid >> 8), items);
  }
}

// The first n key lanes, a bit each.
inline std::uint64_t lanes_below(std::size_t n) { return n == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << n) - 1; }

// Writes the head lanes of the sorted keys v (`heads`, a bit per key lane: the first lane of each
// column): their columns + base to out_col and their columns' sums (from `sum`, 8 lanes a register) to
// out_val, compressed; returns how many.
template <int R>
[[gnu::always_inline]] inline std::int32_t write_heads(const __m512i (&v)[R], std::uint64_t heads,
                                                       const __m512d (&sum)[2 * R], std::int32_t base,
                                                       std::int32_t* out_col, double* out_val) {
  std::int32_t written = 0;
  for (int r = 0; r < R; ++r) {
    const auto first_of_column = static_cast<__mmask16>(heads >> (16 * r));
    const int count = std::popcount(static_cast<unsigned>(first_of_column));
    const __m512i c_columns = _mm512_add_epi32(_mm512_srli_epi32(v[r], kPositionBits), _mm512_set1_epi32(base));
    _mm512_mask_storeu_epi32(out_col + written, static_cast<__mmask16>((1u << count) - 1),
                             _mm512_maskz_compress_epi32(first_of_column, c_columns));
    std::int32_t values_written = written;
    for (int j = 2 * r; j < 2 * r + 2; ++j) {
      const auto lanes = static_cast<__mmask8>(heads >> (8 * j));
      const int lane_count = std::popcount(static_cast<unsigned>(lanes));
      _mm512_mask_storeu_pd(out_val + values_written, static_cast<__mmask8>((1u << lane_count) - 1),
                            _mm512_maskz_compress_pd(lanes, sum[j]));
      values_written += lane_count;
    }
    written += count;
  }
  return written;
}

// Sorted keys with repeated columns, summed without leaving the registers: the values are gathered in
// key order and each lane adds those of the next k = 1, 2, ... lanes of its column, so that a column's
// first lane ends with ((x0 + x1) + x2) + ... in position order, as Gustavson sums; the first lanes are
// then compressed into C (same_as_next: bit l where key lane l's column is lane l + 1's). Returns the
// entries written, or -1 where a column has more than 8 products.
// Out of line: it is the rare path of the chunks with few repeats, and inlined it crowded the common one.
template <int R>
[[gnu::noinline]] std::int32_t sum_runs_in_registers(const __m512i (&v)[R], std::size_t n, std::uint64_t same_as_next,
                                                     const ColumnValue<double>* items, std::int32_t base,
                                                     std::int32_t* out_col, double* out_val) {
  using L = Lanes<std::uint32_t>;
  constexpr int V = 2 * R;  // registers of 8 values (and their columns widened to 64 bits)
  __m512d x[V], sum[V];
  __m512i col[V];
  __mmask8 valid_values[V];
  gather_in_key_order<R>(v, n, items, x);
  for (int r = 0; r < R; ++r) {
    const __mmask16 valid = L::first(lanes_in<16>(n, r));
    valid_values[2 * r] = static_cast<__mmask8>(valid);
    valid_values[2 * r + 1] = static_cast<__mmask8>(valid >> 8);
    const __m512i columns = _mm512_srli_epi32(v[r], kPositionBits);  // padding: 2^26 - 1, no product's
    col[2 * r] = _mm512_cvtepu32_epi64(_mm512_castsi512_si256(columns));
    col[2 * r + 1] = _mm512_cvtepu32_epi64(_mm512_extracti64x4_epi64(columns, 1));
    sum[2 * r] = x[2 * r];
    sum[2 * r + 1] = x[2 * r + 1];
  }
  if (!add_runs_from<1>(valid_values, col, x, sum)) return -1;
  return write_heads<R>(v, lanes_below(n) & ~(same_as_next << 1), sum, base, out_col, out_val);
}

// Sorted keys whose repeated columns come in pairs at most (same_as_next: bit l where lane l's column
// is lane l + 1's; no two adjacent bits), the common case of few repeats: each pair's first lane adds its
// second's value, and the lanes that do not continue a column are compressed into C. Returns the entries
// written. Beside sum_runs_in_registers it skips widening the columns and comparing them per value
// register and a second step (at 2^20 columns most fine chunks repeat a column, nearly always as one pair).
// Inlined, unlike sum_runs_in_registers: at such sizes it is the common path, not the rare one. It
// writes each register's heads as it sums them: all sums first and then write_heads (as
// sum_runs_in_registers) would hold twice the registers (docs/BENCHMARKS.md, "Gustavson and the shared kernels: design choices measured").
template <int R>
[[gnu::always_inline]] inline std::int32_t sum_pairs_in_registers(const __m512i (&v)[R], std::size_t n,
                                                                  std::uint64_t same_as_next,
                                                                  const ColumnValue<double>* items, std::int32_t base,
                                                                  std::int32_t* out_col, double* out_val) {
  constexpr int V = 2 * R;
  __m512d x[V];
  gather_in_key_order<R>(v, n, items, x);
  const std::uint64_t heads = lanes_below(n) & ~(same_as_next << 1);  // lanes that start a column
  std::int32_t written = 0;
  for (int r = 0; r < R; ++r) {
    const auto first_of_column = static_cast<__mmask16>(heads >> (16 * r));
    const int count = std::popcount(static_cast<unsigned>(first_of_column));
    const __m512i c_columns = _mm512_add_epi32(_mm512_srli_epi32(v[r], kPositionBits), _mm512_set1_epi32(base));
    _mm512_mask_storeu_epi32(out_col + written, static_cast<__mmask16>((1u << count) - 1),
                             _mm512_maskz_compress_epi32(first_of_column, c_columns));
    for (int h = 0; h < 2; ++h) {
      const int j = 2 * r + h;
      const __m512d next = _mm512_castsi512_pd(_mm512_alignr_epi64(
          j + 1 < V ? _mm512_castpd_si512(x[j + 1]) : _mm512_setzero_si512(), _mm512_castpd_si512(x[j]), 1));
      const __m512d sum = _mm512_mask_add_pd(x[j], static_cast<__mmask8>(same_as_next >> (8 * j)), x[j], next);
      const auto lanes = static_cast<__mmask8>(heads >> (8 * j));
      const int lane_count = std::popcount(static_cast<unsigned>(lanes));
      _mm512_mask_storeu_pd(out_val + written, static_cast<__mmask8>((1u << lane_count) - 1),
                            _mm512_maskz_compress_pd(lanes, sum));
      written += lane_count;
    }
  }
  return written;
}

// Word 2 w of a pair of registers: the low halves of their 32 dwords.
alignas(64) constexpr std::array<std::uint16_t, 32> kLowWords = [] {
  std::array<std::uint16_t, 32> table{};
  for (int w = 0; w < 32; ++w) table[w] = static_cast<std::uint16_t>(2 * w);
  return table;
}();

// Sorts the keys of n products, below 2^16 in 32-bit lanes (lanes past n: all ones), as 16-bit keys:
// each pair of registers narrowed to one, sorted, and widened back with the padding lanes all ones
// again. Half the registers, so half the network's instructions (the same stages): measurements in
// bitonic_sort.hpp (accumulate_in_registers).
template <int R>
[[gnu::always_inline]] inline void sort_narrow_keys(__m512i (&v)[R], std::size_t n) {
  static_assert(R % 2 == 0, "two 32-bit registers narrow into one");
  constexpr int Q = R / 2;
  const __m512i low_words = _mm512_loadu_si512(kLowWords.data());
  __m512i w[Q];
  for (int q = 0; q < Q; ++q) w[q] = _mm512_permutex2var_epi16(v[2 * q], low_words, v[2 * q + 1]);
  sort_registers<std::uint16_t, Q>(w);
  const __m512i padding = _mm512_set1_epi32(-1);
  for (int q = 0; q < Q; ++q) {
    v[2 * q] = _mm512_mask_cvtepu16_epi32(padding, Lanes<std::uint32_t>::first(lanes_in<16>(n, 2 * q)),
                                          _mm512_castsi512_si256(w[q]));
    v[2 * q + 1] = _mm512_mask_cvtepu16_epi32(padding, Lanes<std::uint32_t>::first(lanes_in<16>(n, 2 * q + 1)),
                                              _mm512_extracti64x4_epi64(w[q], 1));
  }
}

// The keys (column << kPositionBits | position) of items[0, n) in R registers, lanes past n all ones
// (the largest key: sorts after every product).
template <int R>
[[gnu::always_inline]] inline void product_keys(const ColumnValue<double>* items, std::size_t n, __m512i (&v)[R]) {
  const __m512i padding = _mm512_set1_epi32(-1);
  const __m512i lane = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
  for (int r = 0; r < R; ++r) {
    const __m512i position = _mm512_add_epi32(lane, _mm512_set1_epi32(16 * r));
    v[r] = _mm512_mask_or_epi32(padding, Lanes<std::uint32_t>::first(lanes_in<16>(n, r)),
                                _mm512_slli_epi32(columns_of(items, n, r), kPositionBits), position);
  }
}

template <int R, bool kNarrow>
[[gnu::always_inline]] inline void sort_product_keys(__m512i (&v)[R], std::size_t n) {
  if constexpr (kNarrow)
    sort_narrow_keys<R>(v, n);
  else
    sort_registers<std::uint32_t, R>(v);
}

// The sorted keys v of items[0, n) summed by column into C: writes the distinct columns + base and
// their sums, returns how many.
template <int R>
[[gnu::always_inline]] inline std::int32_t sum_sorted_registers(const __m512i (&v)[R], std::size_t n,
                                                                const ColumnValue<double>* items, std::int32_t base,
                                                                std::int32_t* out_col, double* out_val) {
  using L = Lanes<std::uint32_t>;
  const __m512i padding = _mm512_set1_epi32(-1);
  // A column appears twice when a key's column equals the next key's (lanes past n hold padding, whose
  // column no product has, and are not compared).
  std::uint64_t same_as_next = 0;
  for (int r = 0; r < R; ++r) {
    const __m512i next = _mm512_alignr_epi32(r + 1 < R ? v[r + 1] : padding, v[r], 1);
    same_as_next |= std::uint64_t{_mm512_mask_cmpeq_epi32_mask(L::first(lanes_in<16>(n, r)),
                                                                _mm512_srli_epi32(v[r], kPositionBits),
                                                                _mm512_srli_epi32(next, kPositionBits))}
                    << (16 * r);
  }
  if (same_as_next != 0) {
    if ((same_as_next & (same_as_next >> 1)) == 0)
      return sum_pairs_in_registers<R>(v, n, same_as_next, items, base, out_col, out_val);
    const std::int32_t written = sum_runs_in_registers<R>(v, n, same_as_next, items, base, out_col, out_val);
    if (written >= 0) return written;
    // A column with more than 8 products: sum the sorted keys one by one.
    alignas(64) std::uint32_t keys[16 * R];
    for (int r = 0; r < R; ++r) _mm512_store_si512(keys + 16 * r, v[r]);
    return sum_sorted_keys(keys, n, items, base, out_col, out_val);
  }
  // All distinct: each key is one entry of C, its value fetched by position (a gather of 8 doubles).
  for (int r = 0; r < R; ++r) {
    const __mmask16 valid = L::first(lanes_in<16>(n, r));
    _mm512_mask_storeu_epi32(out_col + 16 * r, valid,
                             _mm512_add_epi32(_mm512_srli_epi32(v[r], kPositionBits), _mm512_set1_epi32(base)));
    const auto low = static_cast<__mmask8>(valid), high = static_cast<__mmask8>(valid >> 8);
    if (low) _mm512_mask_storeu_pd(out_val + 16 * r, low, gather_values<0>(v[r], low, items));
    if (high) _mm512_mask_storeu_pd(out_val + 16 * r + 8, high, gather_values<1>(v[r], high, items));
  }
  return static_cast<std::int32_t>(n);
}

template <int R, bool kNarrow>
std::int32_t accumulate_registers(const ColumnValue<double>* items, std::size_t n, std::int32_t base,
                                  std::int32_t* out_col, double* out_val) {
  __m512i v[R];
  product_keys<R>(items, n, v);
  sort_product_keys<R, kNarrow>(v, n);
  return sum_sorted_registers<R>(v, n, items, base, out_col, out_val);
}

// Two chunks at once: one network's stages depend on each other (latency-bound), two independent
// ones overlap.
template <int RA, int RB, bool kNarrow>
std::int32_t accumulate_two_registers(const ColumnValue<double>* items_a, std::size_t n_a, std::int32_t base_a,
                                      const ColumnValue<double>* items_b, std::size_t n_b, std::int32_t base_b,
                                      std::int32_t* out_col, double* out_val) {
  __m512i a[RA], b[RB];
  product_keys<RA>(items_a, n_a, a);
  product_keys<RB>(items_b, n_b, b);
  sort_product_keys<RA, kNarrow>(a, n_a);
  sort_product_keys<RB, kNarrow>(b, n_b);
  const std::int32_t written = sum_sorted_registers<RA>(a, n_a, items_a, base_a, out_col, out_val);
  return written + sum_sorted_registers<RB>(b, n_b, items_b, base_b, out_col + written, out_val + written);
}

// accumulate_two_registers with 2 or 4 registers for each chunk (17 to 32 products, or 33 to 64).
template <bool kNarrow>
std::int32_t two_by_size(const ColumnValue<double>* items_a, std::size_t n_a, std::int32_t base_a,
                         const ColumnValue<double>* items_b, std::size_t n_b, std::int32_t base_b,
                         std::int32_t* out_col, double* out_val) {
  if (n_a > 32 && n_b > 32)
    return accumulate_two_registers<4, 4, kNarrow>(items_a, n_a, base_a, items_b, n_b, base_b, out_col, out_val);
  if (n_a > 32)
    return accumulate_two_registers<4, 2, kNarrow>(items_a, n_a, base_a, items_b, n_b, base_b, out_col, out_val);
  if (n_b > 32)
    return accumulate_two_registers<2, 4, kNarrow>(items_a, n_a, base_a, items_b, n_b, base_b, out_col, out_val);
  return accumulate_two_registers<2, 2, kNarrow>(items_a, n_a, base_a, items_b, n_b, base_b, out_col, out_val);
}

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

// The same network for 32-bit columns where AVX-512 is missing but AVX2 is there (AMD before Zen 4, Intel's
// client cores): 8 lanes a register, so 64 columns take 8 registers; a stage's lanes that keep the larger key
// are a blend's immediate instead of a mask register.
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2")
#endif
namespace avx2_network {

template <class Key>
struct Lanes;

template <>
struct Lanes<std::uint32_t> {
  static constexpr int kCount = 8;
  using Reg = __m256i;
  using Mask = int;  // bit l: lane l
  // Lanes past count hold the largest key. AVX2 has no masked access that pays (AMD's vpmaskmovd was slower
  // than scalar copies, BM_SortColumns), so a partial register after a full one is reached by the full
  // register's width that ends with its last key, rotated into place (the store rewrites some of the keys
  // before it, which the register before, stored after it, puts back); a partial first register goes
  // through the stack.
  static __m256i lane_index() { return _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7); }
  // Lane l of the result is lane (l + by) mod kCount of v (vpermd reads an index's low three bits).
  static __m256i rotated(__m256i v, std::size_t by) {
    return _mm256_permutevar8x32_epi32(v, _mm256_add_epi32(lane_index(), _mm256_set1_epi32(static_cast<int>(by))));
  }
  static __m256i load(const std::uint32_t* p, std::size_t count, bool after_full_register) {
    if (count == kCount) return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    if (after_full_register && count > 0) {
      const __m256i last_width = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + count - kCount));
      const __m256i past_count = _mm256_cmpgt_epi32(lane_index(), _mm256_set1_epi32(static_cast<int>(count) - 1));
      return _mm256_or_si256(rotated(last_width, kCount - count), past_count);
    }
    alignas(32) std::uint32_t lanes[kCount] = {~0u, ~0u, ~0u, ~0u, ~0u, ~0u, ~0u, ~0u};
    for (std::size_t l = 0; l < count; ++l) lanes[l] = p[l];
    return _mm256_load_si256(reinterpret_cast<const __m256i*>(lanes));
  }
  static void store(std::uint32_t* p, std::size_t count, __m256i v, bool after_full_register) {
    if (count == kCount) return _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v);
    if (after_full_register && count > 0)
      return _mm256_storeu_si256(reinterpret_cast<__m256i*>(p + count - kCount), rotated(v, count));
    alignas(32) std::uint32_t lanes[kCount];
    _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), v);
    for (std::size_t l = 0; l < count; ++l) p[l] = lanes[l];
  }
  static __m256i min(__m256i a, __m256i b) { return _mm256_min_epu32(a, b); }
  static __m256i max(__m256i a, __m256i b) { return _mm256_max_epu32(a, b); }
  // max(a, b) in the lanes of kLarger, src elsewhere.
  template <Mask kLarger>
  static __m256i max_into(__m256i src, __m256i a, __m256i b) {
    return _mm256_blend_epi32(src, _mm256_max_epu32(a, b), kLarger);
  }
  // Lane l of the result is lane l ^ X of v.
  template <int X>
  static __m256i xor_lanes(__m256i v) {
    if constexpr (X < 4)  // within 128 bits
      return _mm256_shuffle_epi32(v, (0 ^ X) | (1 ^ X) << 2 | (2 ^ X) << 4 | (3 ^ X) << 6);
    else if constexpr (X == 4)
      return _mm256_permute2x128_si256(v, v, 1);
    else
      return _mm256_permutevar8x32_epi32(v, _mm256_setr_epi32(0 ^ X, 1 ^ X, 2 ^ X, 3 ^ X, 4 ^ X, 5 ^ X, 6 ^ X, 7 ^ X));
  }
};

#include "spgemm/bitonic_network.inc"  // the network over these lanes

}  // namespace avx2_network
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#endif

// Up to this many keys std::sort (an insertion sort there) beats the smallest network.
constexpr std::size_t kStdSortMax = 3;
// From this many columns the AVX2 network beats std::sort.
constexpr std::size_t kAvx2SortMinColumns = 16;

}  // namespace

bool vector_sort_available() {
  static const bool available = cpu_has_avx512f() && cpu_has_avx512bw();
  return available;
}

void sort_keys(std::uint64_t* keys, std::size_t n, bool allow_vector) {
#if defined(__x86_64__)
  if (allow_vector && n > kStdSortMax && n <= kVectorSortMaxKeys && vector_sort_available()) {
    vector_sort(keys, n);
    return;
  }
#endif
  (void)allow_vector;
  std::sort(keys, keys + n);
}

std::int32_t accumulate_in_registers(const ColumnValue<double>* items, std::size_t n, std::int32_t base,
                                     std::int32_t* out_col, double* out_val, bool allow_vector, int column_bits) {
  assert(n >= 1 && n <= kRegisterAccumulatorMax && column_bits <= kRegisterAccumulatorColumnBits);
#if defined(__x86_64__)
  if (allow_vector && vector_sort_available()) {
    // Up to 32 keys, 16-bit keys do not pay alone: one register instead of two, but the same 15 stages,
    // each a chain of dependent instructions, plus the narrowing (BM_RegisterAccumulator).
    if (n <= 16) return accumulate_registers<1, false>(items, n, base, out_col, out_val);
    if (n <= 32) return accumulate_registers<2, false>(items, n, base, out_col, out_val);
    return column_bits <= kNarrowKeyColumnBits ? accumulate_registers<4, true>(items, n, base, out_col, out_val)
                                               : accumulate_registers<4, false>(items, n, base, out_col, out_val);
  }
#endif
  (void)allow_vector, (void)column_bits;
  std::array<std::uint32_t, kRegisterAccumulatorMax> keys;
  for (std::size_t t = 0; t < n; ++t) keys[t] = product_key(items[t].col, t);
  std::sort(keys.begin(), keys.begin() + static_cast<std::ptrdiff_t>(n));
  return sum_sorted_keys(keys.data(), n, items, base, out_col, out_val);
}

std::int32_t accumulate_two_in_registers(const ColumnValue<double>* items_a, std::size_t n_a, std::int32_t base_a,
                                         const ColumnValue<double>* items_b, std::size_t n_b, std::int32_t base_b,
                                         std::int32_t* out_col, double* out_val, bool allow_vector, int column_bits) {
  assert(n_a >= 1 && n_b >= 1 && std::max(n_a, n_b) <= kRegisterAccumulatorMax &&
         column_bits <= kRegisterAccumulatorColumnBits);
#if defined(__x86_64__)
  if (allow_vector && vector_sort_available() && std::min(n_a, n_b) > 16 &&
      std::max(n_a, n_b) <= kRegisterAccumulatorMax) {
    if (column_bits <= kNarrowKeyColumnBits)
      return two_by_size<true>(items_a, n_a, base_a, items_b, n_b, base_b, out_col, out_val);
    return two_by_size<false>(items_a, n_a, base_a, items_b, n_b, base_b, out_col, out_val);
  }
#endif
  const std::int32_t written =
      accumulate_in_registers(items_a, n_a, base_a, out_col, out_val, allow_vector, column_bits);
  return written +
         accumulate_in_registers(items_b, n_b, base_b, out_col + written, out_val + written, allow_vector, column_bits);
}

void sort_columns(std::int32_t* cols, std::size_t n, bool allow_vector) {
#if defined(__x86_64__)
  // Columns are non-negative, so their unsigned order is their order.
  if (allow_vector && n > kStdSortMax && n <= kVectorSortMaxColumns && vector_sort_available()) {
    vector_sort(reinterpret_cast<std::uint32_t*>(cols), n);
    return;
  }
  // Below 16 columns the AVX2 network has not shown that it pays in a product, though BM_SortColumns has it
  // ahead there (docs/BENCHMARKS.md, "Sorting a row's columns without AVX-512").
  if (allow_vector && n >= kAvx2SortMinColumns && sort_columns_avx2(cols, n)) return;
#endif
  (void)allow_vector;
  std::sort(cols, cols + n);
}

bool sort_columns_avx2(std::int32_t* cols, std::size_t n) {
#if defined(__x86_64__)
  if (n > kAvx2SortMaxColumns || !cpu_has_avx2()) return false;
  avx2_network::vector_sort(reinterpret_cast<std::uint32_t*>(cols), n);
  return true;
#else
  (void)cols, (void)n;
  return false;
#endif
}

}  // namespace amgsolve

#if defined(__x86_64__)
#pragma GCC diagnostic pop
#endif
