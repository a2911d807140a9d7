#include "spgemm/bitonic_sort.hpp"

#include <algorithm>
#include <array>

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

template <class Key, int R>
void bitonic_sort(Key* keys, std::size_t n) {
  using L = Lanes<Key>;
  constexpr int W = L::kCount;
  static constexpr LaneMasks<W> masks;
  // Missing keys are padded with the largest key, which sorts to the end.
  __m512i v[R];
  auto lanes_in = [n](int r) {
    const std::size_t start = static_cast<std::size_t>(W * r);
    return n > start ? std::min<std::size_t>(n - start, W) : 0;
  };
  for (int r = 0; r < R; ++r) v[r] = L::load(keys + W * r, lanes_in(r));
  for (int lk = 1; (1 << lk) <= W * R; ++lk) {
    const int k = 1 << lk;
    for (int j = k >> 1, lj = lk - 1; j > 0; j >>= 1, --lj) {
      if (j >= W) {  // between registers r and r ^ (j / W)
        for (int r = 0; r < R; ++r) {
          const int partner = r ^ (j / W);
          if (partner < r) continue;
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
  for (int r = 0; r < R; ++r) L::store(keys + W * r, lanes_in(r), v[r]);
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
