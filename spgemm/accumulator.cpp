#include "spgemm/accumulator.hpp"

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
// 16 markers per compare; the matching column numbers are compressed into a register and stored with a
// mask, so nothing is written past cols[n).
__attribute__((target("avx512f"))) Index list_marked_columns_avx512(const Index* marker, Index stamp, Index first,
                                                                       Index window, Index* cols) {
  const __m512i wanted = _mm512_set1_epi32(stamp);
  const __m512i sixteen = _mm512_set1_epi32(16);
  __m512i columns = _mm512_add_epi32(_mm512_set1_epi32(first),
                                     _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0));
  Index n = 0;
  for (Index offset = 0; offset < window; offset += 16) {
    const Index remaining = window - offset;
    const __mmask16 in_window = remaining >= 16 ? __mmask16(0xffff) : static_cast<__mmask16>((1u << remaining) - 1);
    const __m512i markers = _mm512_maskz_loadu_epi32(in_window, marker + first + offset);
    const __mmask16 hit = _mm512_mask_cmpeq_epi32_mask(in_window, markers, wanted);
    const int count = std::popcount(static_cast<unsigned>(hit));
    _mm512_mask_storeu_epi32(cols + n, static_cast<__mmask16>((1u << count) - 1),
                             _mm512_maskz_compress_epi32(hit, columns));
    n += count;
    columns = _mm512_add_epi32(columns, sixteen);
  }
  return n;
}
#endif

}  // namespace

Index list_marked_columns(const Index* marker, Index stamp, Index first, Index window, Index* cols,
                          bool allow_vector) {
#if defined(__x86_64__)
  if (allow_vector && vector_sort_available()) return list_marked_columns_avx512(marker, stamp, first, window, cols);
#endif
  (void)allow_vector;
  return list_marked_columns_scalar(marker, stamp, first, window, cols);
}

}  // namespace amgsolve
