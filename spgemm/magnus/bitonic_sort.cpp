#include "spgemm/magnus/bitonic_sort.hpp"

#include <algorithm>
#include <array>

#if defined(__x86_64__)
// GCC 12's AVX-512 min/max/permute intrinsics start from _mm512_undefined_epi32(), which it then
// reports as "may be used uninitialized" (GCC bug 105593, fixed in GCC 13): silence that false positive.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#endif

namespace amgsolve::magnus {
namespace {

#if defined(__x86_64__)

constexpr int kLanes = 8;                            // 64-bit keys per 512-bit register
constexpr int kMaxRegisters = kVectorSortMax / kLanes;  // 8

// Bitonic sort of N = 8 R keys, element e = 8 r + lane. Stage (k, j) compare-exchanges e with e ^ j;
// the pair is ascending when e & k == 0. Within a register (j < 8) a lane keeps the larger key when
// it is the upper element of its pair (lane & j) xor the pair is descending. These lane masks depend
// only on (k, j, r) and are tabulated once.
struct LaneMasks {
  // [log2 k][log2 j][r]
  std::array<std::array<std::array<std::uint8_t, kMaxRegisters>, 3>, 7> keep_larger{};
  constexpr LaneMasks() {
    for (int lk = 1; lk <= 6; ++lk)
      for (int lj = 0; lj < 3; ++lj)
        for (int r = 0; r < kMaxRegisters; ++r) {
          std::uint8_t mask = 0;
          for (int lane = 0; lane < kLanes; ++lane) {
            const bool upper = (lane & (1 << lj)) != 0;
            const bool descending = ((kLanes * r + lane) & (1 << lk)) != 0;
            if (upper != descending) mask = static_cast<std::uint8_t>(mask | (1u << lane));
          }
          keep_larger[lk][lj][r] = mask;
        }
  }
};
constexpr LaneMasks kLaneMasks;

__attribute__((target("avx512f"))) void bitonic_sort_avx512(std::uint64_t* keys, std::size_t n) {
  const int registers = n <= 8 ? 1 : n <= 16 ? 2 : n <= 32 ? 4 : 8;
  // Missing keys are padded with the largest key, which sorts to the end.
  const __m512i padding = _mm512_set1_epi64(-1);
  __m512i v[kMaxRegisters];
  for (int r = 0; r < registers; ++r) {
    const std::size_t start = static_cast<std::size_t>(kLanes * r);
    const std::size_t count = n > start ? std::min<std::size_t>(n - start, kLanes) : 0;
    v[r] = _mm512_mask_loadu_epi64(padding, static_cast<__mmask8>((1u << count) - 1), keys + start);
  }
  const __m512i lane_index = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
  const int size = kLanes * registers;
  for (int lk = 1; (1 << lk) <= size; ++lk) {
    const int k = 1 << lk;
    for (int j = k >> 1, lj = lk - 1; j > 0; j >>= 1, --lj) {
      if (j >= kLanes) {  // between registers r and r ^ (j / 8)
        for (int r = 0; r < registers; ++r) {
          const int partner = r ^ (j / kLanes);
          if (partner < r) continue;
          const __m512i lo = _mm512_min_epu64(v[r], v[partner]), hi = _mm512_max_epu64(v[r], v[partner]);
          const bool ascending = ((kLanes * r) & k) == 0;
          v[r] = ascending ? lo : hi;
          v[partner] = ascending ? hi : lo;
        }
        continue;
      }
      const __m512i partner_lane = _mm512_xor_si512(lane_index, _mm512_set1_epi64(j));
      for (int r = 0; r < registers; ++r) {
        const __m512i other = _mm512_permutexvar_epi64(partner_lane, v[r]);
        const __m512i lo = _mm512_min_epu64(v[r], other), hi = _mm512_max_epu64(v[r], other);
        v[r] = _mm512_mask_blend_epi64(kLaneMasks.keep_larger[lk][lj][r], lo, hi);
      }
    }
  }
  for (int r = 0; r < registers; ++r) {
    const std::size_t start = static_cast<std::size_t>(kLanes * r);
    const std::size_t count = n > start ? std::min<std::size_t>(n - start, kLanes) : 0;
    _mm512_mask_storeu_epi64(keys + start, static_cast<__mmask8>((1u << count) - 1), v[r]);
  }
}

#endif

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
  if (allow_vector && n > 1 && n <= kVectorSortMax && vector_sort_available()) {
    bitonic_sort_avx512(keys, n);
    return;
  }
#endif
  (void)allow_vector;
  std::sort(keys, keys + n);
}

}  // namespace amgsolve::magnus

#if defined(__x86_64__)
#pragma GCC diagnostic pop
#endif
