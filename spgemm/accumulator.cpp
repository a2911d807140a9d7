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
// 16 markers per compare; the matching column numbers are compressed into a register and stored whole
// (ListRoom::padded: cols[n, n + kListPadding) may be overwritten) or with a mask (nothing past cols[n)).
template <ListRoom kRoom>
__attribute__((target("avx512f,popcnt"))) Index list_marked_columns_avx512(const Index* marker, Index stamp,
                                                                              Index first, Index window, Index* cols) {
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
    const __m512i hits = _mm512_maskz_compress_epi32(hit, columns);
    if constexpr (kRoom == ListRoom::padded)
      _mm512_storeu_si512(cols + n, hits);
    else
      _mm512_mask_storeu_epi32(cols + n, static_cast<__mmask16>((1u << count) - 1), hits);
    n += count;
    columns = _mm512_add_epi32(columns, sixteen);
  }
  return n;
}
#endif

}  // namespace

Index list_marked_columns(const Index* marker, Index stamp, Index first, Index window, Index* cols,
                          bool allow_vector, ListRoom room) {
#if defined(__x86_64__)
  if (allow_vector && vector_sort_available())
    return room == ListRoom::padded ? list_marked_columns_avx512<ListRoom::padded>(marker, stamp, first, window, cols)
                                    : list_marked_columns_avx512<ListRoom::exact>(marker, stamp, first, window, cols);
#endif
  (void)allow_vector;
  return list_marked_columns_scalar(marker, stamp, first, window, cols);
}

}  // namespace amgsolve
