#pragma once
// The chunk counts of MAGNUS (Wolfson-Pou et al. 2025, ../shared/papers/magnus-wolfson-pou-2025.txt,
// section 3.5), computed from the number of columns of C, the L2 cache size and the cache-line size.
//
// The fine level keeps in L2 the dense accumulator of one chunk (m_C / n_fine elements of s_dense
// bytes) plus, per chunk, a histogram counter, a prefix-sum offset and two active cache lines (the
// reorder's write positions in colFine and valFine): s_fine = m_C s_dense / n + n s_chunk (eq. 2),
// smallest at n = sqrt(m_C s_dense / s_chunk) (eq. 3) where it is 2 sqrt(m_C s_dense s_chunk) (eq. 4).
// When that exceeds L2, the coarse level first splits the columns into m_C / m_CmaxL2 ranges (eq. 7),
// m_CmaxL2 = s_L2^2 / (4 s_dense s_chunk) being the largest column count the fine level handles in L2
// (eq. 5), with eq. 6's fine chunk count inside each.
#include <cstddef>
#include <cstdint>

namespace amgsolve::magnus {

struct CacheGeometry {
  std::size_t l2_bytes = 1 << 20;
  std::size_t line_bytes = 64;
  std::size_t llc_bytes = std::size_t{32} << 20;  // last level, shared (decides streamed output only)
};

struct ChunkParameters {
  std::uint64_t columns = 1;        // m_C rounded up to a power of two
  int fine_shift = 0;               // log2 of the fine chunk length (columns per fine chunk)
  std::uint64_t fine_chunks = 1;    // n_chunksFine
  bool coarse = false;              // the coarse level is needed (s_fineLevel > s_L2)
  int coarse_shift = 0;             // log2 of m_CmaxL2, the coarse chunk length
  std::uint64_t coarse_chunks = 1;  // n_chunksCoarse
  double fine_level_bytes = 0;      // s_fineLevel at the chosen chunk count (eq. 2)
};

// dense_bytes = s_denseAccum: value size + 1/8 (a bitmap's bit) in the numeric phase, 1/8 in the symbolic one.
ChunkParameters chunk_parameters(std::uint64_t columns_of_c, double dense_bytes, const CacheGeometry& cache);

}  // namespace amgsolve::magnus
