#include "spgemm/bitonic_sort.hpp"

#include <algorithm>
#include <array>
#include <cassert>
#include <cstddef>

#if defined(__x86_64__)
// GCC 12's AVX-512 min/max/permute intrinsics start from _mm512_undefined_epi32(), which it then
// reports as "(may be) used uninitialized" (GCC bug 105593, fixed in GCC 13): silence that false positive.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
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

std::uint32_t product_key(std::int32_t col, std::size_t position) {
  return static_cast<std::uint32_t>(col) << kPositionBits | static_cast<std::uint32_t>(position);
}

// Keys sorted ascending: sums each column's values in position order and writes the distinct columns
// (+ base) and sums; returns their count.
std::int32_t sum_sorted_keys(const std::uint32_t* keys, std::size_t n, const ColumnValue<double>* items,
                             std::int32_t base, std::int32_t* out_col, double* out_val) {
  std::int32_t written = 0;
  for (std::size_t t = 0; t < n;) {
    const std::uint32_t col = keys[t] >> kPositionBits;
    double sum = items[keys[t] & kPositionMask].val;
    for (++t; t < n && keys[t] >> kPositionBits == col; ++t) sum += items[keys[t] & kPositionMask].val;
    out_col[written] = base + static_cast<std::int32_t>(col);
    out_val[written++] = sum;
  }
  return written;
}

#if defined(__x86_64__)
// Everything up to the matching pop_options is compiled for AVX-512F and only called when the CPU has it.
#pragma GCC push_options
#pragma GCC target("avx512f")

// The AVX-512 operations of one key width: 8 lanes of 64 bits or 16 lanes of 32 bits per register.
template <class Key>
struct Lanes;

template <>
struct Lanes<std::uint64_t> {
  static constexpr int kCount = 8;
  static __mmask8 first(std::size_t count) { return static_cast<__mmask8>((1u << count) - 1); }
  static __m512i load(const std::uint64_t* p, std::size_t count) {
    return _mm512_mask_loadu_epi64(_mm512_set1_epi64(-1), first(count), p);
  }
  static void store(std::uint64_t* p, std::size_t count, __m512i v) { _mm512_mask_storeu_epi64(p, first(count), v); }
  static __m512i min(__m512i a, __m512i b) { return _mm512_min_epu64(a, b); }
  static __m512i max(__m512i a, __m512i b) { return _mm512_max_epu64(a, b); }
  static __m512i partner_lanes(int j) {
    return _mm512_xor_si512(_mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0), _mm512_set1_epi64(j));
  }
  static __m512i permute(__m512i index, __m512i v) { return _mm512_permutexvar_epi64(index, v); }
  static __m512i blend(std::uint16_t take_b, __m512i a, __m512i b) {
    return _mm512_mask_blend_epi64(static_cast<__mmask8>(take_b), a, b);
  }
};

template <>
struct Lanes<std::uint32_t> {
  static constexpr int kCount = 16;
  static __mmask16 first(std::size_t count) { return static_cast<__mmask16>((1u << count) - 1); }
  static __m512i load(const std::uint32_t* p, std::size_t count) {
    return _mm512_mask_loadu_epi32(_mm512_set1_epi32(-1), first(count), p);
  }
  static void store(std::uint32_t* p, std::size_t count, __m512i v) { _mm512_mask_storeu_epi32(p, first(count), v); }
  static __m512i min(__m512i a, __m512i b) { return _mm512_min_epu32(a, b); }
  static __m512i max(__m512i a, __m512i b) { return _mm512_max_epu32(a, b); }
  static __m512i partner_lanes(int j) {
    return _mm512_xor_si512(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                            _mm512_set1_epi32(j));
  }
  static __m512i permute(__m512i index, __m512i v) { return _mm512_permutexvar_epi32(index, v); }
  static __m512i blend(std::uint16_t take_b, __m512i a, __m512i b) {
    return _mm512_mask_blend_epi32(static_cast<__mmask16>(take_b), a, b);
  }
};

constexpr int kMaxRegisters = 8;

// Bitonic sort of N = W R keys (W lanes per register), element e = W r + lane. Stage (k, j)
// compare-exchanges e with e ^ j; the pair is ascending when e & k == 0. Within a register (j < W) a
// lane keeps the larger key when it is the upper element of its pair (lane & j) xor the pair is
// descending. These lane masks depend only on (k, j, r) and are tabulated once per W.
template <int W>
struct LaneMasks {
  // [log2 k][log2 j][r]
  std::array<std::array<std::array<std::uint16_t, kMaxRegisters>, 4>, 8> keep_larger{};
  constexpr LaneMasks() {
    for (int lk = 1; lk < 8; ++lk)
      for (int lj = 0; (1 << lj) < W; ++lj)
        for (int r = 0; r < kMaxRegisters; ++r) {
          std::uint16_t mask = 0;
          for (int lane = 0; lane < W; ++lane) {
            const bool upper = (lane & (1 << lj)) != 0;
            const bool descending = ((W * r + lane) & (1 << lk)) != 0;
            if (upper != descending) mask = static_cast<std::uint16_t>(mask | (1u << lane));
          }
          keep_larger[lk][lj][r] = mask;
        }
  }
};

// How many of n keys register r of W lanes holds.
template <int W>
std::size_t lanes_in(std::size_t n, int r) {
  const std::size_t start = static_cast<std::size_t>(W * r);
  return n > start ? std::min<std::size_t>(n - start, W) : 0;
}

// The network on keys held in R registers, ascending across v[0], v[1], ...
template <class Key, int R>
[[gnu::always_inline]] inline void sort_registers(__m512i (&v)[R]) {
  using L = Lanes<Key>;
  constexpr int W = L::kCount;
  static constexpr LaneMasks<W> masks;
  for (int lk = 1; (1 << lk) <= W * R; ++lk) {
    const int k = 1 << lk;
    for (int j = k >> 1, lj = lk - 1; j > 0; j >>= 1, --lj) {
      if (j >= W) {  // between registers r and r ^ (j / W)
        for (int r = 0; r < R; ++r) {
          const int partner = r ^ (j / W);
          if (partner < r || partner >= R) continue;  // (never >= R: says so to the compiler)
          const __m512i lo = L::min(v[r], v[partner]), hi = L::max(v[r], v[partner]);
          const bool ascending = ((W * r) & k) == 0;
          v[r] = ascending ? lo : hi;
          v[partner] = ascending ? hi : lo;
        }
        continue;
      }
      const __m512i partner_lane = L::partner_lanes(j);
      for (int r = 0; r < R; ++r) {
        const __m512i other = L::permute(partner_lane, v[r]);
        v[r] = L::blend(masks.keep_larger[lk][lj][r], L::min(v[r], other), L::max(v[r], other));
      }
    }
  }
}

template <class Key, int R>
void bitonic_sort(Key* keys, std::size_t n) {
  using L = Lanes<Key>;
  constexpr int W = L::kCount;
  // Missing keys are padded with the largest key, which sorts to the end.
  __m512i v[R];
  for (int r = 0; r < R; ++r) v[r] = L::load(keys + W * r, lanes_in<W>(n, r));
  sort_registers<Key, R>(v);
  for (int r = 0; r < R; ++r) L::store(keys + W * r, lanes_in<W>(n, r), v[r]);
}

// The smallest network (1, 2, 4 or 8 registers) that holds n keys.
template <class Key>
void vector_sort(Key* keys, std::size_t n) {
  constexpr std::size_t W = Lanes<Key>::kCount;
  if (n <= W)
    bitonic_sort<Key, 1>(keys, n);
  else if (n <= 2 * W)
    bitonic_sort<Key, 2>(keys, n);
  else if (n <= 4 * W)
    bitonic_sort<Key, 4>(keys, n);
  else
    bitonic_sort<Key, 8>(keys, n);
}

// The 16 columns of items[16 r, 16 r + 16) as 32-bit lanes: four masked loads of four 16-byte products,
// their first dwords picked by two two-register permutes.
static_assert(sizeof(ColumnValue<double>) == 16 && offsetof(ColumnValue<double>, val) == 8,
              "columns_of and the value gather assume 16-byte products with the value at byte 8");
inline __m512i columns_of(const ColumnValue<double>* items, std::size_t n, int r) {
  const __m512i first_dwords = _mm512_set_epi32(28, 24, 20, 16, 12, 8, 4, 0, 28, 24, 20, 16, 12, 8, 4, 0);
  __m512i quarter[4];
  for (int h = 0; h < 4; ++h) {
    const std::size_t first = static_cast<std::size_t>(16 * r + 4 * h);
    const std::size_t count = n > first ? std::min<std::size_t>(n - first, 4) : 0;
    quarter[h] = count == 0 ? _mm512_setzero_si512()
                            : _mm512_maskz_loadu_epi32(static_cast<__mmask16>((1u << (4 * count)) - 1), items + first);
  }
  const __m512i low = _mm512_permutex2var_epi32(quarter[0], first_dwords, quarter[1]);
  const __m512i high = _mm512_permutex2var_epi32(quarter[2], first_dwords, quarter[3]);
  return _mm512_mask_blend_epi32(0xFF00, low, high);
}

template <int R>
std::int32_t accumulate_registers(const ColumnValue<double>* items, std::size_t n, std::int32_t base,
                                  std::int32_t* out_col, double* out_val) {
  using L = Lanes<std::uint32_t>;
  const __m512i padding = _mm512_set1_epi32(-1);  // the largest key: sorts after every product
  const __m512i lane = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
  __m512i v[R];
  for (int r = 0; r < R; ++r) {
    const __m512i position = _mm512_add_epi32(lane, _mm512_set1_epi32(16 * r));
    v[r] = _mm512_mask_or_epi32(padding, L::first(lanes_in<16>(n, r)),
                                _mm512_slli_epi32(columns_of(items, n, r), kPositionBits), position);
  }
  sort_registers<std::uint32_t, R>(v);
  // A column appears twice when a key's column equals the next key's (lanes past n hold padding, whose
  // column no product has, and are not compared).
  __mmask16 repeated = 0;
  for (int r = 0; r < R; ++r) {
    const __m512i next = _mm512_alignr_epi32(r + 1 < R ? v[r + 1] : padding, v[r], 1);
    repeated |= _mm512_mask_cmpeq_epi32_mask(L::first(lanes_in<16>(n, r)), _mm512_srli_epi32(v[r], kPositionBits),
                                             _mm512_srli_epi32(next, kPositionBits));
  }
  if (repeated != 0) {  // rare in the chunks this serves: sum the sorted keys one by one
    alignas(64) std::uint32_t keys[16 * R];
    for (int r = 0; r < R; ++r) _mm512_store_si512(keys + 16 * r, v[r]);
    return sum_sorted_keys(keys, n, items, base, out_col, out_val);
  }
  // All distinct: each key is one entry of C, its value fetched by position (a gather of 8 doubles).
  const __m512i position_mask = _mm512_set1_epi32(kPositionMask);
  const double* values = &items[0].val;
  for (int r = 0; r < R; ++r) {
    const __mmask16 valid = L::first(lanes_in<16>(n, r));
    _mm512_mask_storeu_epi32(out_col + 16 * r, valid,
                             _mm512_add_epi32(_mm512_srli_epi32(v[r], kPositionBits), _mm512_set1_epi32(base)));
    // Index in doubles from items[0].val: a product is two doubles long.
    const __m512i index = _mm512_slli_epi32(_mm512_and_si512(v[r], position_mask), 1);
    const auto low = static_cast<__mmask8>(valid), high = static_cast<__mmask8>(valid >> 8);
    if (low)
      _mm512_mask_storeu_pd(out_val + 16 * r, low,
                            _mm512_mask_i32gather_pd(_mm512_setzero_pd(), low, _mm512_castsi512_si256(index), values, 8));
    if (high)
      _mm512_mask_storeu_pd(
          out_val + 16 * r + 8, high,
          _mm512_mask_i32gather_pd(_mm512_setzero_pd(), high, _mm512_extracti64x4_epi64(index, 1), values, 8));
  }
  return static_cast<std::int32_t>(n);
}

#pragma GCC pop_options
#endif

// Up to this many keys std::sort (an insertion sort there) beats the smallest network.
constexpr std::size_t kStdSortMax = 3;

}  // namespace

bool vector_sort_available() {
#if defined(__x86_64__)
  static const bool available = __builtin_cpu_supports("avx512f");
  return available;
#else
  return false;
#endif
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
                                     std::int32_t* out_col, double* out_val, bool allow_vector) {
  assert(n >= 1 && n <= kRegisterAccumulatorMax);
#if defined(__x86_64__)
  if (allow_vector && vector_sort_available()) {
    if (n <= 16) return accumulate_registers<1>(items, n, base, out_col, out_val);
    if (n <= 32) return accumulate_registers<2>(items, n, base, out_col, out_val);
    return accumulate_registers<4>(items, n, base, out_col, out_val);
  }
#endif
  (void)allow_vector;
  std::array<std::uint32_t, kRegisterAccumulatorMax> keys;
  for (std::size_t t = 0; t < n; ++t) keys[t] = product_key(items[t].col, t);
  std::sort(keys.begin(), keys.begin() + static_cast<std::ptrdiff_t>(n));
  return sum_sorted_keys(keys.data(), n, items, base, out_col, out_val);
}

void sort_columns(std::int32_t* cols, std::size_t n, bool allow_vector) {
#if defined(__x86_64__)
  // Columns are non-negative, so their unsigned order is their order.
  if (allow_vector && n > kStdSortMax && n <= kVectorSortMaxColumns && vector_sort_available()) {
    vector_sort(reinterpret_cast<std::uint32_t*>(cols), n);
    return;
  }
#endif
  (void)allow_vector;
  std::sort(cols, cols + n);
}

}  // namespace amgsolve

#if defined(__x86_64__)
#pragma GCC diagnostic pop
#endif
