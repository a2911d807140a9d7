// See sliced_ellpack.hpp.
#include "sparse/sliced_ellpack.hpp"

#include <algorithm>
#include <atomic>
#include <string>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "common/cpu_info.hpp"
#include "common/error.hpp"

namespace amgsolve {
namespace {

constexpr Index kChunk = SlicedEllpack<double>::kChunk;

Index chunk_count(Index rows) { return static_cast<Index>((Offset{rows} + kChunk - 1) / kChunk); }

template <class Value>
Index longest_row_of_chunk(const CsrMatrix<Value>& A, Index chunk) {
  Index longest = 0;
  for (Index i = chunk * kChunk; i < std::min<Offset>(A.rows, (Offset{chunk} + 1) * kChunk); ++i)
    longest = std::max(longest, A.row_length(i));
  return longest;
}

// The widest kernels a test allows (SlicedEllpackKernelsForTests); the program always uses the widest.
std::atomic<int> kernels_allowed{static_cast<int>(SlicedEllpackKernels::avx512)};

bool allowed(SlicedEllpackKernels kernels) {
  return kernels_allowed.load(std::memory_order_relaxed) >= static_cast<int>(kernels);
}

// ---- one chunk's sums: the scalar loop and the vector ones compute the same products and add them in the
// same order (no fused multiply-add: the CSR kernels round the product before the sum)

template <bool kResidual, class Value>
void chunk_sums_scalar(const SlicedEllpack<Value>& S, Index c, const Value* x, const Value* b, Value* s) {
  const Index first = c * kChunk;
  for (Index r = 0; r < kChunk; ++r) s[r] = kResidual && first + r < S.rows ? b[first + r] : Value(0);
  const Offset start = S.chunk_start[c];
  for (Index j = 0; j < S.width(c); ++j)
    for (Index r = 0; r < kChunk; ++r) {
      const Offset e = start + static_cast<Offset>(kChunk) * j + r;
      const Value product = S.val[e] * x[S.col[e]];
      s[r] = kResidual ? s[r] - product : s[r] + product;
    }
}

#if defined(__x86_64__)
// Whether an entry's 8 columns (one per row of the chunk) are consecutive: then x is read by a plain load.
__attribute__((target("avx2"))) inline bool consecutive_columns(const Index* columns_of_entry) {
  const __m256i columns = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(columns_of_entry));
  const __m256i consecutive =
      _mm256_add_epi32(_mm256_set1_epi32(columns_of_entry[0]), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  return _mm256_movemask_epi8(_mm256_cmpeq_epi32(columns, consecutive)) == -1;
}

template <bool kResidual>
__attribute__((target("avx512f"))) void chunk_sums_vector(const SlicedEllpack<double>& S, Index c, const double* x,
                                                          const double* b, double* s) {
  __m512d sum = kResidual ? _mm512_loadu_pd(b + static_cast<std::size_t>(c) * kChunk) : _mm512_setzero_pd();
  const Index* col = S.col.data() + S.chunk_start[c];
  const double* val = S.val.data() + S.chunk_start[c];
  for (std::ptrdiff_t j = 0; j < S.width(c); ++j) {
    const Index* columns = col + kChunk * j;
    const __m512d xs =
        consecutive_columns(columns)
            ? _mm512_loadu_pd(x + columns[0])
            : _mm512_mask_i32gather_pd(_mm512_setzero_pd(), 0xff,
                                       _mm256_loadu_si256(reinterpret_cast<const __m256i*>(columns)), x, 8);
    const __m512d product = _mm512_mul_pd(_mm512_loadu_pd(val + kChunk * j), xs);
    sum = kResidual ? _mm512_sub_pd(sum, product) : _mm512_add_pd(sum, product);
  }
  _mm512_storeu_pd(s, sum);
}

// Where AVX-512 is missing (AMD before Zen 4, Intel's client cores): the chunk's 8 rows as two halves of 4,
// x's scattered entries loaded one by one (AVX2's gather was the slower of the two on an AMD EPYC; see
// docs/BENCHMARKS.md).
template <bool kResidual>
__attribute__((target("avx2"))) void chunk_sums_avx2(const SlicedEllpack<double>& S, Index c, const double* x,
                                                     const double* b, double* s) {
  const double* b_chunk = b + static_cast<std::size_t>(c) * kChunk;
  __m256d low = kResidual ? _mm256_loadu_pd(b_chunk) : _mm256_setzero_pd();
  __m256d high = kResidual ? _mm256_loadu_pd(b_chunk + 4) : _mm256_setzero_pd();
  const Index* col = S.col.data() + S.chunk_start[c];
  const double* val = S.val.data() + S.chunk_start[c];
  for (std::ptrdiff_t j = 0; j < S.width(c); ++j) {
    const Index* columns = col + kChunk * j;
    __m256d x_low, x_high;
    if (consecutive_columns(columns)) {
      x_low = _mm256_loadu_pd(x + columns[0]);
      x_high = _mm256_loadu_pd(x + columns[0] + 4);
    } else {
      x_low = _mm256_setr_pd(x[columns[0]], x[columns[1]], x[columns[2]], x[columns[3]]);
      x_high = _mm256_setr_pd(x[columns[4]], x[columns[5]], x[columns[6]], x[columns[7]]);
    }
    const __m256d product_low = _mm256_mul_pd(_mm256_loadu_pd(val + kChunk * j), x_low);
    const __m256d product_high = _mm256_mul_pd(_mm256_loadu_pd(val + kChunk * j + 4), x_high);
    low = kResidual ? _mm256_sub_pd(low, product_low) : _mm256_add_pd(low, product_low);
    high = kResidual ? _mm256_sub_pd(high, product_high) : _mm256_add_pd(high, product_high);
  }
  _mm256_storeu_pd(s, low);
  _mm256_storeu_pd(s + 4, high);
}

// float: the chunk's 8 rows in one register; scattered entries of x loaded one by one, as in the double kernel
// (the gather was the slower here too: docs/BENCHMARKS.md).
template <bool kResidual>
__attribute__((target("avx2"))) void chunk_sums_vector(const SlicedEllpack<float>& S, Index c, const float* x,
                                                       const float* b, float* s) {
  __m256 sum = kResidual ? _mm256_loadu_ps(b + static_cast<std::size_t>(c) * kChunk) : _mm256_setzero_ps();
  const Index* col = S.col.data() + S.chunk_start[c];
  const float* val = S.val.data() + S.chunk_start[c];
  for (std::ptrdiff_t j = 0; j < S.width(c); ++j) {
    const Index* columns = col + kChunk * j;
    const __m256 xs = consecutive_columns(columns)
                          ? _mm256_loadu_ps(x + columns[0])
                          : _mm256_setr_ps(x[columns[0]], x[columns[1]], x[columns[2]], x[columns[3]], x[columns[4]],
                                           x[columns[5]], x[columns[6]], x[columns[7]]);
    const __m256 product = _mm256_mul_ps(_mm256_loadu_ps(val + kChunk * j), xs);
    sum = kResidual ? _mm256_sub_ps(sum, product) : _mm256_add_ps(sum, product);
  }
  _mm256_storeu_ps(s, sum);
}
#endif

// One thread's chunks by the widest kernel this CPU has and the tests allow.
template <bool kResidual>
void chunks_by_widest_kernel(const SlicedEllpack<double>& S, Index first_chunk, Index count, const double* x,
                             const double* b, double* sums) {
#if defined(__x86_64__)
  const bool avx512 = cpu_has_avx512f() && allowed(SlicedEllpackKernels::avx512);
  const bool avx2 = cpu_has_avx2() && allowed(SlicedEllpackKernels::avx2);
#else
  [[maybe_unused]] constexpr bool avx512 = false, avx2 = false;
#endif
  // The last chunk may be partly past the rows: the scalar loop sums it, which reads b only for rows.
  [[maybe_unused]] const Index full_chunks = S.rows / kChunk;
  for (Index c = first_chunk; c < first_chunk + count; ++c) {
    double* s = sums + static_cast<std::size_t>(c - first_chunk) * kChunk;
#if defined(__x86_64__)
    if (c < full_chunks && avx512) {
      chunk_sums_vector<kResidual>(S, c, x, b, s);
      continue;
    }
    if (c < full_chunks && avx2) {
      chunk_sums_avx2<kResidual>(S, c, x, b, s);
      continue;
    }
#endif
    chunk_sums_scalar<kResidual>(S, c, x, b, s);
  }
}

template <bool kResidual>
void chunks_by_widest_kernel(const SlicedEllpack<float>& S, Index first_chunk, Index count, const float* x,
                             const float* b, float* sums) {
#if defined(__x86_64__)
  const bool avx2 = cpu_has_avx2() && allowed(SlicedEllpackKernels::avx2);
#else
  [[maybe_unused]] constexpr bool avx2 = false;
#endif
  [[maybe_unused]] const Index full_chunks = S.rows / kChunk;
  for (Index c = first_chunk; c < first_chunk + count; ++c) {
    float* s = sums + static_cast<std::size_t>(c - first_chunk) * kChunk;
#if defined(__x86_64__)
    if (c < full_chunks && avx2) {
      chunk_sums_vector<kResidual>(S, c, x, b, s);
      continue;
    }
#endif
    chunk_sums_scalar<kResidual>(S, c, x, b, s);
  }
}

}  // namespace

template <class Value>
SlicedEllpack<Value> sliced_ellpack_from_csr(const CsrMatrix<Value>& A) {
  return sliced_ellpack_from_csr(A, std::vector<std::uint8_t>(static_cast<std::size_t>(chunk_count(A.rows)), 1));
}

template <class Value>
SlicedEllpack<Value> sliced_ellpack_from_csr(const CsrMatrix<Value>& A, const std::vector<std::uint8_t>& kept_chunks) {
  if (kept_chunks.size() != static_cast<std::size_t>(chunk_count(A.rows)))
    throw Error("sliced_ellpack_from_csr: " + std::to_string(kept_chunks.size()) + " chunks marked of " +
                std::to_string(chunk_count(A.rows)));
  SlicedEllpack<Value> S;
  S.rows = A.rows;
  S.cols = A.cols;
  const Index chunks = chunk_count(A.rows);
  S.chunk_start.resize(static_cast<std::size_t>(chunks) + 1);
  S.chunk_start[0] = 0;
#pragma omp parallel for schedule(static)
  for (Index c = 0; c < chunks; ++c)
    S.chunk_start[c + 1] = kept_chunks[static_cast<std::size_t>(c)] ? static_cast<Offset>(kChunk) * longest_row_of_chunk(A, c) : 0;
  for (Index c = 0; c < chunks; ++c) S.chunk_start[c + 1] += S.chunk_start[c];
  S.col.resize(static_cast<std::size_t>(S.chunk_start.back()));
  S.val.resize(static_cast<std::size_t>(S.chunk_start.back()));
#pragma omp parallel for schedule(static)
  for (Index c = 0; c < chunks; ++c) {
    const Index width = S.width(c);
    if (width == 0) continue;
    Index filler = 0;  // a column of the chunk, for the padding
    for (Index i = c * kChunk; i < std::min<Offset>(A.rows, (Offset{c} + 1) * kChunk); ++i)
      if (A.row_length(i) > 0) filler = A.col[A.row_begin(i)];
    for (Index r = 0; r < kChunk; ++r) {
      const Offset row = static_cast<Offset>(c) * kChunk + r;  // past the rows in the last chunk
      const auto i = static_cast<Index>(std::min<Offset>(row, A.rows - 1));
      const Index length = row < A.rows ? A.row_length(i) : 0;
      for (Index j = 0; j < width; ++j) {
        const std::size_t e = static_cast<std::size_t>(S.chunk_start[c] + static_cast<Offset>(kChunk) * j + r);
        S.col[e] = j < length ? A.col[A.row_begin(i) + j] : filler;
        S.val[e] = j < length ? A.val[A.row_begin(i) + j] : Value(0);
      }
    }
  }
  return S;
}

template <class Value>
double sliced_ellpack_padding(const CsrMatrix<Value>& A) {
  if (A.nnz() == 0) return 0.0;
  Offset slots = 0;
#pragma omp parallel for schedule(static) reduction(+ : slots)
  for (Index c = 0; c < chunk_count(A.rows); ++c) slots += static_cast<Offset>(kChunk) * longest_row_of_chunk(A, c);
  return static_cast<double>(slots) / static_cast<double>(A.nnz()) - 1.0;
}

bool sliced_ellpack_vector_units() { return cpu_has_avx2(); }

bool sliced_ellpack_avx512() { return cpu_has_avx512f(); }

const char* to_string(SlicedEllpackKernels kernels) {
  switch (kernels) {
    case SlicedEllpackKernels::scalar: return "scalar";
    case SlicedEllpackKernels::avx2: return "avx2";
    case SlicedEllpackKernels::avx512: return "avx512";
  }
  return "?";
}

SlicedEllpackKernelsForTests::SlicedEllpackKernelsForTests(SlicedEllpackKernels widest)
    : before_(kernels_allowed.exchange(static_cast<int>(widest))) {}
SlicedEllpackKernelsForTests::~SlicedEllpackKernelsForTests() { kernels_allowed.store(before_); }

template <bool kResidual, class Value>
void sliced_ellpack_sums(const SlicedEllpack<Value>& S, Index first_chunk, Index count, const Value* x,
                         const Value* b, Value* sums) {
  chunks_by_widest_kernel<kResidual>(S, first_chunk, count, x, b, sums);
}

#define AMGSOLVE_SLICED_ELLPACK(V)                                                                      \
  template SlicedEllpack<V> sliced_ellpack_from_csr(const CsrMatrix<V>&);                              \
  template SlicedEllpack<V> sliced_ellpack_from_csr(const CsrMatrix<V>&, const std::vector<std::uint8_t>&); \
  template double sliced_ellpack_padding(const CsrMatrix<V>&);                                         \
  template void sliced_ellpack_sums<true, V>(const SlicedEllpack<V>&, Index, Index, const V*, const V*, V*); \
  template void sliced_ellpack_sums<false, V>(const SlicedEllpack<V>&, Index, Index, const V*, const V*, V*);
AMGSOLVE_SLICED_ELLPACK(double)
AMGSOLVE_SLICED_ELLPACK(float)
#undef AMGSOLVE_SLICED_ELLPACK

}  // namespace amgsolve
