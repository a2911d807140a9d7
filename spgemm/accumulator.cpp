#include "spgemm/accumulator.hpp"

#include <algorithm>
#include <bit>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace amgsolve {
namespace {

Index list_marked_columns_scalar(const Index* marker, Index stamp, Index first, Index window, Index* cols) {
  Index n = 0;
  for (Index j = first; j < first + window; ++j)
    if (marker[j] == stamp) cols[n++] = j;
  return n;
}

#if defined(__x86_64__)
// The list_marked_entries kernel moves a block of 16 columns' sums: the hit ones compressed into vals,
// kEmptySum stored over all of them. 8 doubles per register (a block takes two) or 16 floats. Returns the
// number of hits.
template <class Value>
struct SumLanes;

template <>
struct SumLanes<double> {
  __attribute__((target("avx512f,popcnt"))) static int move(const __mmask16 hit, const __mmask16 in_window,
                                                               double* block, double* vals, bool padded) {
    const auto hit_low = static_cast<__mmask8>(hit), hit_high = static_cast<__mmask8>(hit >> 8);
    const auto window_low = static_cast<__mmask8>(in_window), window_high = static_cast<__mmask8>(in_window >> 8);
    const int low = std::popcount(static_cast<unsigned>(hit_low));
    const int high = std::popcount(static_cast<unsigned>(hit_high));
    const __m512d sums_low = _mm512_maskz_loadu_pd(window_low, block);
    const __m512d sums_high = _mm512_maskz_loadu_pd(window_high, block + 8);
    const __m512d listed_low = _mm512_maskz_compress_pd(hit_low, sums_low);
    const __m512d listed_high = _mm512_maskz_compress_pd(hit_high, sums_high);
    const __m512d empty = _mm512_set1_pd(kEmptySum<double>);
    if (padded && in_window == 0xffff) {
      _mm512_storeu_pd(vals, listed_low);
      _mm512_storeu_pd(vals + low, listed_high);
      _mm512_storeu_pd(block, empty);
      _mm512_storeu_pd(block + 8, empty);
    } else {
      _mm512_mask_storeu_pd(vals, static_cast<__mmask8>((1u << low) - 1), listed_low);
      _mm512_mask_storeu_pd(vals + low, static_cast<__mmask8>((1u << high) - 1), listed_high);
      _mm512_mask_storeu_pd(block, window_low, empty);
      _mm512_mask_storeu_pd(block + 8, window_high, empty);
    }
    return low + high;
  }
};

template <>
struct SumLanes<float> {
  __attribute__((target("avx512f,popcnt"))) static int move(const __mmask16 hit, const __mmask16 in_window,
                                                               float* block, float* vals, bool padded) {
    const int count = std::popcount(static_cast<unsigned>(hit));
    const __m512 listed = _mm512_maskz_compress_ps(hit, _mm512_maskz_loadu_ps(in_window, block));
    if (padded && in_window == 0xffff) {
      _mm512_storeu_ps(vals, listed);
      _mm512_storeu_ps(block, _mm512_set1_ps(kEmptySum<float>));
    } else {
      _mm512_mask_storeu_ps(vals, static_cast<__mmask16>((1u << count) - 1), listed);
      _mm512_mask_storeu_ps(block, in_window, _mm512_set1_ps(kEmptySum<float>));
    }
    return count;
  }
};

// The scan of both listing kernels: 16 markers per compare; the stamped column numbers are compressed
// into a register and stored whole (ListRoom::padded: cols[n, n + kListPadding) may be overwritten) or
// with a mask (nothing past cols[n)). kMoveSums: each block's sums are moved out as well (SumLanes),
// and blocks without hits are skipped, so their empty sums stay clean lines; the columns-only scan stays
// branch-free (sparse windows mispredict the skip).
template <ListRoom kRoom, bool kMoveSums, class Value>
__attribute__((target("avx512f,popcnt"))) Index scan_marked_avx512(const Index* marker, Index stamp, Index first,
                                                                      Index window, Index* cols, Value* sums,
                                                                      Value* vals) {
  const __m512i wanted = _mm512_set1_epi32(stamp);
  const __m512i sixteen = _mm512_set1_epi32(16);
  __m512i columns = _mm512_add_epi32(_mm512_set1_epi32(first),
                                     _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0));
  Index n = 0;
  for (std::int64_t offset = 0; offset < window; offset += 16, columns = _mm512_add_epi32(columns, sixteen)) {
    const std::int64_t remaining = window - offset;  // 64 bits: a window of almost 2^31 columns steps past it
    const __mmask16 in_window = remaining >= 16 ? __mmask16(0xffff) : static_cast<__mmask16>((1u << remaining) - 1);
    const __m512i markers = _mm512_maskz_loadu_epi32(in_window, marker + first + offset);
    const __mmask16 hit = _mm512_mask_cmpeq_epi32_mask(in_window, markers, wanted);
    int count = 0;
    if constexpr (kMoveSums) {
      if (hit == 0) continue;
      count = SumLanes<Value>::move(hit, in_window, sums + first + offset, vals + n, kRoom == ListRoom::padded);
    } else {
      count = std::popcount(static_cast<unsigned>(hit));
    }
    const __m512i hits = _mm512_maskz_compress_epi32(hit, columns);
    if constexpr (kRoom == ListRoom::padded)
      _mm512_storeu_si512(cols + n, hits);
    else
      _mm512_mask_storeu_epi32(cols + n, static_cast<__mmask16>((1u << count) - 1), hits);
    n += count;
  }
  return n;
}
#endif

}  // namespace

Index list_marked_columns(const Index* marker, Index stamp, Index first, Index window, Index* cols,
                          bool allow_vector, ListRoom room) {
#if defined(__x86_64__)
  constexpr double* kNoSums = nullptr;  // the columns-only scan moves no sums
  if (allow_vector && vector_sort_available())
    return room == ListRoom::padded
               ? scan_marked_avx512<ListRoom::padded, false>(marker, stamp, first, window, cols, kNoSums, kNoSums)
               : scan_marked_avx512<ListRoom::exact, false>(marker, stamp, first, window, cols, kNoSums, kNoSums);
#endif
  (void)allow_vector;
  return list_marked_columns_scalar(marker, stamp, first, window, cols);
}

namespace {

Index list_set_bits_scalar(std::uint64_t* words, Index count, Index* cols) {
  Index n = 0;
  for (Index q = 0; q < count; ++q) {
    for (std::uint64_t word = words[q]; word != 0; word &= word - 1) cols[n++] = 64 * q + std::countr_zero(word);
    words[q] = 0;
  }
  return n;
}

#if defined(__x86_64__)
// Branch-free where the scalar loop mispredicts (a sparse bitmap's words are zero or not at random):
// first the nonzero words and their numbers are compressed out of 8 words at a time into a list (and
// the words cleared), then each listed word with at most four bits writes four positions
// unconditionally and advances by its popcount (D. Lemire's and G. Langdale's bit "flattening" in
// simdjson); a denser word compresses its positions out of 16 lanes at a time. Up to 16 entries past
// the list are overwritten.
__attribute__((target("avx512f,avx512vl,bmi,bmi2,popcnt"))) Index list_set_bits_avx512(std::uint64_t* words,
                                                                                          Index count, Index* cols) {
  constexpr Index kSegment = 512;  // words listed per round (their values and numbers stay in L1)
  alignas(64) std::uint64_t values[kSegment + 8];
  alignas(64) std::uint32_t numbers[kSegment + 8];
  const __m256i iota = _mm256_set_epi32(7, 6, 5, 4, 3, 2, 1, 0);
  const __m512i lane_numbers = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
  Index n = 0;
  for (Index segment = 0; segment < count; segment += kSegment) {
    const Index end = std::min(segment + kSegment, count);
    Index listed = 0;
    for (Index q = segment; q < end; q += 8) {
      const __mmask8 in_range = end - q >= 8 ? __mmask8(0xff) : static_cast<__mmask8>((1u << (end - q)) - 1);
      const __m512i block = _mm512_maskz_loadu_epi64(in_range, words + q);
      const __mmask8 nonzero = _mm512_test_epi64_mask(block, block);
      _mm512_storeu_si512(values + listed, _mm512_maskz_compress_epi64(nonzero, block));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(numbers + listed),
                         _mm256_maskz_compress_epi32(nonzero, _mm256_add_epi32(_mm256_set1_epi32(q), iota)));
      _mm512_mask_storeu_epi64(words + q, in_range, _mm512_setzero_si512());
      listed += std::popcount(static_cast<unsigned>(nonzero));
    }
    for (Index k = 0; k < listed; ++k) {
      std::uint64_t word = values[k];
      const Index base = 64 * static_cast<Index>(numbers[k]);
      const int bits = std::popcount(word);
      if (bits <= 4) {
        for (int t = 0; t < 4; ++t) {
          cols[n + t] = base + std::countr_zero(word);
          word &= word - 1;
        }
        n += bits;
      } else {  // a dense word: its positions compressed out of 16 lanes at a time
        for (int part = 0; part < 4; ++part) {
          const auto lanes = static_cast<__mmask16>(word >> (16 * part));
          const __m512i columns = _mm512_add_epi32(_mm512_set1_epi32(base + 16 * part), lane_numbers);
          _mm512_storeu_si512(cols + n, _mm512_maskz_compress_epi32(lanes, columns));
          n += std::popcount(static_cast<unsigned>(lanes));
        }
      }
    }
  }
  return n;
}
#endif

}  // namespace

bool bit_listing_kernel_available() {
#if defined(__x86_64__)
  // More than the networks' AVX-512F: 256-bit compresses (VL) and BMI's bit scans.
  static const bool available = vector_sort_available() && __builtin_cpu_supports("avx512vl") &&
                                __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2");
  return available;
#else
  return false;
#endif
}

Index list_set_bits(std::uint64_t* words, Index count, Index* cols, bool allow_vector) {
#if defined(__x86_64__)
  if (allow_vector && bit_listing_kernel_available()) return list_set_bits_avx512(words, count, cols);
#endif
  (void)allow_vector;
  return list_set_bits_scalar(words, count, cols);
}

AMGSOLVE_POPCNT_CLONES
Offset count_set_bits(std::uint64_t* words, std::size_t count) {
  Offset set = 0;
  for (std::size_t w = 0; w < count; ++w) {
    set += std::popcount(words[w]);
    words[w] = 0;
  }
  return set;
}

template <class Value>
Index list_marked_entries(const Index* marker, Index stamp, Index first, Index window, Value* sums, Index* cols,
                          Value* vals, bool allow_vector, ListRoom room) {
#if defined(__x86_64__)
  if (allow_vector && vector_sort_available())
    return room == ListRoom::padded
               ? scan_marked_avx512<ListRoom::padded, true>(marker, stamp, first, window, cols, sums, vals)
               : scan_marked_avx512<ListRoom::exact, true>(marker, stamp, first, window, cols, sums, vals);
#endif
  (void)allow_vector;
  const Index n = list_marked_columns_scalar(marker, stamp, first, window, cols);
  for (Index p = 0; p < n; ++p) {
    vals[p] = sums[cols[p]];
    sums[cols[p]] = kEmptySum<Value>;
  }
  return n;
}

template Index list_marked_entries(const Index*, Index, Index, Index, double*, Index*, double*, bool, ListRoom);
template Index list_marked_entries(const Index*, Index, Index, Index, float*, Index*, float*, bool, ListRoom);

}  // namespace amgsolve
