#include "spgemm/magnus/parameters.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

namespace amgsolve::magnus {
namespace {

// Nearest power of two (in the log sense), at least 1.
std::uint64_t round_to_power_of_two(double x) {
  if (x <= 1.0) return 1;
  return std::uint64_t{1} << static_cast<int>(std::lround(std::log2(x)));
}

std::uint64_t floor_to_power_of_two(double x) {
  if (x <= 1.0) return 1;
  return std::bit_floor(static_cast<std::uint64_t>(std::min(x, 9.2e18)));
}

}  // namespace

ChunkParameters chunk_parameters(std::uint64_t columns_of_c, double dense_bytes, const CacheGeometry& cache) {
  constexpr double histogram_bytes = 4, prefix_sum_bytes = 4;
  const double s_chunk = histogram_bytes + prefix_sum_bytes + 2.0 * static_cast<double>(cache.line_bytes);
  const double s_dense = dense_bytes;
  const double s_l2 = static_cast<double>(cache.l2_bytes);
  ChunkParameters p;
  p.columns = std::bit_ceil(std::max<std::uint64_t>(columns_of_c, 1));
  const double m_c = static_cast<double>(p.columns);
  const double fine_alone = 2.0 * std::sqrt(m_c * s_dense * s_chunk);  // eq. (4)
  double m_fine = m_c;  // columns one fine-level pass covers
  if (fine_alone > s_l2) {
    p.coarse = true;
    const std::uint64_t max_l2 = std::min(floor_to_power_of_two(s_l2 * s_l2 / (4.0 * s_dense * s_chunk)), p.columns);
    p.coarse_shift = std::countr_zero(max_l2);               // eq. (5)
    p.coarse_chunks = p.columns / max_l2;                    // eq. (7)
    m_fine = static_cast<double>(max_l2);
  } else {
    p.coarse_shift = std::countr_zero(p.columns);
  }
  p.fine_chunks = std::min<std::uint64_t>(round_to_power_of_two(std::sqrt(m_fine * s_dense / s_chunk)),  // eq. (3)/(6)
                                          static_cast<std::uint64_t>(m_fine));
  p.fine_shift = std::countr_zero(static_cast<std::uint64_t>(m_fine)) - std::countr_zero(p.fine_chunks);
  p.fine_level_bytes = m_fine * s_dense / static_cast<double>(p.fine_chunks) +
                       static_cast<double>(p.fine_chunks) * s_chunk;  // eq. (2)
  return p;
}

}  // namespace amgsolve::magnus
