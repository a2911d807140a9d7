#pragma once
// Shared policy and kernels of the dense accumulators (gustavson, magnus): how to list a row's touched
// columns in order once its products are accumulated.
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "sparse/csr.hpp"
#include "spgemm/bitonic_sort.hpp"

// Marks a function to be compiled twice, the loader picking the clone for the CPU: where the build's
// baseline has no POPCNT instruction, std::popcount is a library call costing about ten times the
// instruction.
#if defined(__x86_64__) && defined(__GNUC__)
#define AMGSOLVE_POPCNT_CLONES __attribute__((target_clones("popcnt", "default")))
#else
#define AMGSOLVE_POPCNT_CLONES
#endif

namespace amgsolve {

// The dense accumulator's empty value: -0.0, the identity of IEEE addition (-0 + x is x for every x, +0 and
// -0 included). A sum added into it therefore equals one that stores its first product, as the checked
// accumulation, hash, magnus and the numeric-only phase do, down to the sign of a zero entry.
template <class Value>
inline constexpr Value kEmptySum = Value(-0.0);

// Two ways to list the `touched` distinct columns of a row whose columns all lie in a window of
// `window` columns: sort them, or scan the accumulator's markers across the window. Rows of banded
// matrices (finite elements, stencils) touch a good part of their window, uniform random products a good
// part of all columns: both are listed faster by the scan. `vectorised`: both have the AVX-512 kernels
// (bitonic_sort.hpp, list_marked_columns below), whose costs below (ns: the scan's per call and per column,
// the network's per call and per key up to 128 keys, std::sort's per n log2 n on random columns) are
// measured ones (docs/BENCHMARKS.md, "Gustavson and the shared kernels"). Without them: the scalar scan
// costs about one comparison per column against n log2 n for std::sort.
inline bool scan_beats_sort(Index touched, Index window, bool vectorised) {
  if (touched <= 1) return false;
  const double n = static_cast<double>(touched), w = static_cast<double>(window);
  if (vectorised) {
    const double sort_ns = touched <= static_cast<Index>(kVectorSortMaxColumns) ? 20.0 + 2.2 * n : 3.5 * n * std::log2(n);
    return 15.0 + 0.1 * w < sort_ns;
  }
  return touched > 64 && n * std::log2(n) > w;
}

// The same choice for a bitmap accumulator (one bit per column, magnus), by the costs bench_kernels measured
// (BM_ListTouchedByBitScan / BySort, which time the marking too; docs/BENCHMARKS.md, "Gustavson and the
// shared kernels"): with AVX-512 the bit scan per call, per 512 columns and per touched column, the network
// per call and per column up to 128, std::sort beyond that per n log2 n; without it the scalar scan per 64
// columns and per column against std::sort's.
// `vectorised`: both AVX-512 kernels run (bit_listing_kernel_available below, which implies the network).
inline bool bit_scan_beats_sort(Index touched, Index window, bool vectorised) {
  if (touched <= 1) return false;
  const double n = static_cast<double>(touched), w = static_cast<double>(window);
  const double std_sort_ns = 0.75 * n * std::log2(n);
  if (!vectorised) return w / 64 + 3 * n < std_sort_ns;
  const double sort_ns = touched <= static_cast<Index>(kVectorSortMaxColumns) ? 10 + 2.6 * n : std_sort_ns;
  return 25 + 1.9 * w / 512 + 2 * n < sort_ns;
}

// The 64-bit words of a bitmap of a bit per column.
inline std::size_t bitmap_words(Index columns) { return (static_cast<std::size_t>(columns) + 63) / 64; }

// Writes the positions (64 * word + bit) of the set bits of words[0, count) to cols, ascending, clears
// the words and returns how many positions there were. cols needs kListPadding entries of room past
// them (the AVX-512 kernel writes whole groups). allow_vector = false takes the scalar loop.
Index list_set_bits(std::uint64_t* words, Index count, Index* cols, bool allow_vector = true);

// The number of set bits in words[0, count); clears the words.
Offset count_set_bits(std::uint64_t* words, std::size_t count);

// True when this CPU runs list_set_bits's AVX-512 kernel (AVX512F, VL, BMI and BMI2).
bool bit_listing_kernel_available();

// How much room the caller's buffer has past the n columns list_marked_columns writes: none, or
// kListPadding entries, which lets the AVX-512 kernel store whole registers. Loads of the list that
// follow (the accumulator's gather) are then forwarded from those stores; after masked stores they wait
// until the stores reach the cache (docs/BENCHMARKS.md, "Gustavson and the shared kernels: design choices measured").
enum class ListRoom { exact, padded };
inline constexpr std::size_t kListPadding = 16;

// Writes the columns j in [first, first + window) with marker[j] == stamp to cols, ascending, and
// returns how many there are. Uses AVX-512 compress stores where the CPU has them and allow_vector
// is set (tests and magnus's vector_sort = false take the scalar loop). With ListRoom::padded,
// cols[n, n + kListPadding) may be overwritten.
Index list_marked_columns(const Index* marker, Index stamp, Index first, Index window, Index* cols,
                          bool allow_vector = true, ListRoom room = ListRoom::exact);

// The scan above with the gather fused in: also moves each listed column's sum out of the dense
// accumulator into vals (vals[p] = sums[cols[p]]) and leaves the window's sums empty (kEmptySum). Every column with a
// nonzero sum must be stamped. The AVX-512 kernel reads the 16 sums of a block with hits at once,
// compresses the listed ones into vals and stores kEmptySum over the block, so no sum is loaded through a
// listed column (those loads waited on the scan's stores). ListRoom::padded: cols and vals both have
// kListPadding entries of room.
template <class Value>
Index list_marked_entries(const Index* marker, Index stamp, Index first, Index window, Value* sums, Index* cols,
                          Value* vals, bool allow_vector = true, ListRoom room = ListRoom::exact);

}  // namespace amgsolve
