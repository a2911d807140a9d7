#pragma once
// Sliced ELLPACK for the CPU's SIMD units: the padded blocks of pJDS (M. Kreutzer et al., "Sparse
// matrix-vector multiplication on GPGPU clusters: a new storage format and a scalable implementation",
// IPDPSW 2012, ../shared/papers/pjds-kreutzer-2011.txt, section II: rows in blocks of b_r, each block
// padded to its longest row and stored column by column) with blocks of kChunk = 8 rows, one AVX-512
// register of doubles (two AVX2 registers where AVX-512 is missing) or one AVX2 register of floats, and
// without pJDS's sort by row length (sigma = 1 in
// the SELL-C-sigma terms of Kreutzer et al., SIAM J. Sci. Comput. 36(5), 2014). Without the sort the rows
// keep their order, and each row's entries keep theirs, so a row's sum is formed exactly as the CSR
// kernels form it (the same products, added in the same order): the results are the same bits.
//
// A CSR kernel forms one row's sum at a time, an instruction chain per row that one core cannot keep
// ahead of memory; here the 8 rows of a chunk are summed side by side, entry j of all 8 in one gather (or
// loads one by one), multiply and add; where the 8 columns of an entry are consecutive (a stencil's rows in
// their natural order) a plain vector load replaces the gather (docs/BENCHMARKS.md has the measurements). The cpu backend
// multiplies in this layout where the padding costs little (sliced_ellpack_padding) and the CPU has the
// vector units.
#include <cstdint>
#include <string>
#include <vector>

#include "sparse/csr.hpp"

namespace amgsolve {

// The most padding, as a fraction of the entries, at which the cpu backend multiplies a matrix in this
// layout: a copy kept beside the hierarchy's CSR, and one that replaces it (measured in docs/BENCHMARKS.md).
inline constexpr double kSlicedPaddingBesideCsr = 0.1;
inline constexpr double kSlicedPaddingReplacingCsr = 0.5;
// "10%" for 0.1: the limits above as the messages and the configuration reference give them.
inline std::string padding_percent(double fraction) {
  return std::to_string(static_cast<int>(fraction * 100 + 0.5)) + "%";
}

//
// The columns are stored once per entry of a chunk where they can be: on a stencil's rows in their natural
// order, entry j of a chunk's 8 rows reads 8 consecutive columns (i + offset_j for rows i, ..., i + 7), and
// then only the first is kept. The kernels read x there by a plain load, and the products move 4 bytes of
// columns per 8 entries instead of 32: they are bound by memory bandwidth, and a CSR column index is a third
// of a double entry's bytes and half of a float one's.
template <class Value>
struct SlicedEllpack {
  static constexpr Index kChunk = 8;
  Index rows = 0, cols = 0;
  // chunks() + 1 offsets into val (slots); entry j of row kChunk c + r is at val[chunk_start[c] + kChunk j + r].
  Array<Offset> chunk_start;
  // One per entry of a chunk (the slot over kChunk): the first of its 8 columns where they are consecutive,
  // else -1 - k, its columns at scattered[kChunk k + r]. Padding entries repeat a column of their chunk
  // (never out of range).
  Array<Index> entry_column;
  Array<Index> scattered;
  Array<Value> val;  // padding entries are 0

  Index chunks() const { return static_cast<Index>(chunk_start.size()) - 1; }
  Index width(Index chunk) const {
    return static_cast<Index>((chunk_start[chunk + 1] - chunk_start[chunk]) / kChunk);
  }
  // The column of entry j of row kChunk c + r.
  Index column(Index chunk, Index j, Index r) const {
    const Index first = entry_column[static_cast<std::size_t>(chunk_start[chunk] / kChunk + j)];
    return first >= 0 ? first + r : scattered[static_cast<std::size_t>(kChunk) * static_cast<std::size_t>(-1 - first) + r];
  }
  std::uint64_t bytes() const {
    return chunk_start.size() * sizeof(Offset) + (entry_column.size() + scattered.size()) * sizeof(Index) +
           val.size() * sizeof(Value);
  }
};

template <class Value>
SlicedEllpack<Value> sliced_ellpack_from_csr(const CsrMatrix<Value>& A);
// The same with only the chunks c where kept_chunks[c] is set (the others of width 0, their rows left to
// another kernel): a distributed matrix's interior chunks.
template <class Value>
SlicedEllpack<Value> sliced_ellpack_from_csr(const CsrMatrix<Value>& A, const std::vector<std::uint8_t>& kept_chunks);

// The stored entries (padding included) over A's nonzeros, minus 1, without building the layout.
template <class Value>
double sliced_ellpack_padding(const CsrMatrix<Value>& A);

// Whether this CPU has the vector units the kernels below use: AVX2 (and for double AVX-512F where it has it);
// without them they run a scalar loop over the same layout (the same results, not faster than CSR).
bool sliced_ellpack_vector_units();
bool sliced_ellpack_avx512();

// For tests: the kernels up to a width while an object lives (every kernel gives the same bits; the program
// always runs the widest the CPU has). Objects nest: each restores the cap it found.
enum class SlicedEllpackKernels { scalar, avx2, avx512 };
const char* to_string(SlicedEllpackKernels kernels);
class SlicedEllpackKernelsForTests {
 public:
  explicit SlicedEllpackKernelsForTests(SlicedEllpackKernels widest);
  ~SlicedEllpackKernelsForTests();
  SlicedEllpackKernelsForTests(const SlicedEllpackKernelsForTests&) = delete;
  SlicedEllpackKernelsForTests& operator=(const SlicedEllpackKernelsForTests&) = delete;

 private:
  int before_;
};

// The row sums of chunks [first_chunk, first_chunk + count) into sums[kChunk * (c - first_chunk) + r]
// (rows past the matrix's end get 0 or b's padding: they are not rows): with kResidual, b_i - sum_j a_ij x_j
// (b read for the matrix's rows only); otherwise sum_j a_ij x_j. One thread; the caller splits the chunks.
template <bool kResidual, class Value>
void sliced_ellpack_sums(const SlicedEllpack<Value>& S, Index first_chunk, Index count, const Value* x,
                         const Value* b, Value* sums);

}  // namespace amgsolve
