// See sliced_ellpack.hpp.
#include "sparse/sliced_ellpack.hpp"

#include <algorithm>
#include <atomic>
#include <limits>
#include <string>
#include <vector>

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

// A chunk's rows as the layout reads them: where each begins in A, its length (0 past the matrix's rows), the
// longest, and a column of theirs that its padding repeats (0 if they are all empty).
struct ChunkRows {
  Offset begin[kChunk];
  Index length[kChunk];
  Index width = 0;
  Index padding = 0;
  bool unpadded = true;  // 8 rows of the matrix, all of length `width` (a stencil's interior chunks)

  template <class Value>
  ChunkRows(const CsrMatrix<Value>& A, Index chunk) {
    for (Index r = 0; r < kChunk; ++r) {
      const Offset row = Offset{chunk} * kChunk + r;
      begin[r] = row < A.rows ? A.row_ptr[static_cast<std::size_t>(row)] : 0;
      length[r] = row < A.rows ? A.row_length(static_cast<Index>(row)) : 0;
      width = std::max(width, length[r]);
      if (length[r] > 0) padding = A.col[static_cast<std::size_t>(begin[r])];
    }
    for (Index r = 0; r < kChunk; ++r) unpadded = unpadded && length[r] == width;
  }
  // The 8 columns of entry j.
  template <class Value>
  void columns(const CsrMatrix<Value>& A, Index j, Index* out) const {
    entry(A.col, j, padding, out);
  }
  // The 8 values of entry j.
  template <class Value>
  void values(const CsrMatrix<Value>& A, Index j, Value* out) const {
    entry(A.val, j, Value(0), out);
  }

 private:
  // Entry j of the 8 rows from one of A's arrays, `fill` where a row is shorter.
  template <class Array, class T>
  void entry(const Array& from, Index j, T fill, T* out) const {
    if (unpadded) {
      for (Index r = 0; r < kChunk; ++r) out[r] = from[static_cast<std::size_t>(begin[r] + j)];
      return;
    }
    for (Index r = 0; r < kChunk; ++r) out[r] = j < length[r] ? from[static_cast<std::size_t>(begin[r] + j)] : fill;
  }
};

bool consecutive(const Index* columns) {
  bool all = true;
  for (Index r = 1; r < kChunk; ++r) all = all && columns[r] == columns[0] + r;
  return all;
}

// The entries of the chunk's first `width` whose columns are not consecutive (each keeps its 8 columns).
template <class Value>
Offset scattered_entries(const CsrMatrix<Value>& A, const ChunkRows& rows, Index width) {
  Offset count = 0;
  Index columns[kChunk];
  for (Index j = 0; j < width; ++j) {
    rows.columns(A, j, columns);
    count += consecutive(columns) ? 0 : 1;
  }
  return count;
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
      const Value product = S.val[start + static_cast<Offset>(kChunk) * j + r] * x[S.column(c, j, r)];
      s[r] = kResidual ? s[r] - product : s[r] + product;
    }
}

#if defined(__x86_64__)
// The chunk's first columns of its entries (SlicedEllpack::entry_column), and an entry's 8 columns where
// they are not consecutive.
template <class Value>
const Index* first_columns_of_chunk(const SlicedEllpack<Value>& S, Index c) {
  return S.entry_column.data() + S.chunk_start[c] / kChunk;
}
template <class Value>
const Index* scattered_columns(const SlicedEllpack<Value>& S, Index first_column) {
  return S.scattered.data() + static_cast<std::size_t>(kChunk) * static_cast<std::size_t>(-1 - first_column);
}

template <bool kResidual>
__attribute__((target("avx512f"))) void chunk_sums_vector(const SlicedEllpack<double>& S, Index c, const double* x,
                                                          const double* b, double* s) {
  __m512d sum = kResidual ? _mm512_loadu_pd(b + static_cast<std::size_t>(c) * kChunk) : _mm512_setzero_pd();
  const Index* first_columns = first_columns_of_chunk(S, c);
  const double* val = S.val.data() + S.chunk_start[c];
  for (std::ptrdiff_t j = 0; j < S.width(c); ++j) {
    const Index first = first_columns[j];
    const __m512d xs =
        first >= 0 ? _mm512_loadu_pd(x + first)
                   : _mm512_mask_i32gather_pd(
                         _mm512_setzero_pd(), 0xff,
                         _mm256_loadu_si256(reinterpret_cast<const __m256i*>(scattered_columns(S, first))), x, 8);
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
  const Index* first_columns = first_columns_of_chunk(S, c);
  const double* val = S.val.data() + S.chunk_start[c];
  for (std::ptrdiff_t j = 0; j < S.width(c); ++j) {
    const Index first = first_columns[j];
    __m256d x_low, x_high;
    if (first >= 0) {
      x_low = _mm256_loadu_pd(x + first);
      x_high = _mm256_loadu_pd(x + first + 4);
    } else {
      const Index* columns = scattered_columns(S, first);
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
  const Index* first_columns = first_columns_of_chunk(S, c);
  const float* val = S.val.data() + S.chunk_start[c];
  for (std::ptrdiff_t j = 0; j < S.width(c); ++j) {
    const Index first = first_columns[j];
    const Index* columns = first >= 0 ? nullptr : scattered_columns(S, first);
    const __m256 xs = first >= 0 ? _mm256_loadu_ps(x + first)
                                 : _mm256_setr_ps(x[columns[0]], x[columns[1]], x[columns[2]], x[columns[3]],
                                                  x[columns[4]], x[columns[5]], x[columns[6]], x[columns[7]]);
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
  std::vector<Offset> scattered_start(static_cast<std::size_t>(chunks) + 1, 0);  // in entries of 8 columns
#pragma omp parallel for schedule(static)
  for (Index c = 0; c < chunks; ++c) {
    const ChunkRows rows(A, c);
    const Index width = kept_chunks[static_cast<std::size_t>(c)] ? rows.width : 0;
    S.chunk_start[c + 1] = static_cast<Offset>(kChunk) * width;
    scattered_start[static_cast<std::size_t>(c) + 1] = scattered_entries(A, rows, width);
  }
  for (Index c = 0; c < chunks; ++c) {
    S.chunk_start[c + 1] += S.chunk_start[c];
    scattered_start[static_cast<std::size_t>(c) + 1] += scattered_start[static_cast<std::size_t>(c)];
  }
  if (scattered_start.back() > std::numeric_limits<Index>::max())
    throw Error("sliced_ellpack_from_csr: " + std::to_string(scattered_start.back()) +
                " entries of scattered columns, more than 32-bit indices number");
  S.entry_column.resize(static_cast<std::size_t>(S.chunk_start.back() / kChunk));
  S.scattered.resize(static_cast<std::size_t>(scattered_start.back() * kChunk));
  S.val.resize(static_cast<std::size_t>(S.chunk_start.back()));
#pragma omp parallel for schedule(static)
  for (Index c = 0; c < chunks; ++c) {
    const Index width = S.width(c);
    if (width == 0) continue;
    const ChunkRows rows(A, c);
    auto group = static_cast<Index>(scattered_start[static_cast<std::size_t>(c)]);
    for (Index j = 0; j < width; ++j) {
      const auto entry = static_cast<std::size_t>(S.chunk_start[c] / kChunk + j);
      rows.values(A, j, S.val.data() + kChunk * entry);
      Index columns[kChunk];
      rows.columns(A, j, columns);
      if (consecutive(columns)) {
        S.entry_column[entry] = columns[0];
        continue;
      }
      S.entry_column[entry] = -1 - group;
      std::copy(columns, columns + kChunk, S.scattered.begin() + static_cast<std::ptrdiff_t>(kChunk) * group);
      ++group;
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
