#pragma once
// The sort accumulator's kernel: sorting a short list of keys held in AVX-512 registers by a bitonic
// network (K. E. Batcher, "Sorting networks and their applications", AFIPS 1968), as MAGNUS does for
// small chunks (Wolfson-Pou et al. 2025, sections 3.4 and 4.1.1, after B. Bramas, "A novel hybrid
// quicksort algorithm vectorized using AVX-512 on Intel Skylake", IJACSA 8(10), 2017).
// Two key widths: 64-bit keys (column << 32 | position, MAGNUS's sort accumulator), at most 64 of them,
// and 32-bit column indices (the touched columns of a dense accumulator, gustavson and MAGNUS's dense
// rows), at most 128. The network is chosen at run time: CPUs without AVX-512F, and longer inputs, use
// std::sort, so the result never depends on the CPU.
#include <cstddef>
#include <cstdint>

namespace amgsolve {

// Longest inputs the vector network sorts; longer ones go to std::sort.
inline constexpr std::size_t kVectorSortMaxKeys = 64;      // 64-bit keys
inline constexpr std::size_t kVectorSortMaxColumns = 128;  // 32-bit keys

// True when this CPU runs the AVX-512 network.
bool vector_sort_available();

// Sorts keys[0, n) ascending. With allow_vector, inputs of at most kVectorSortMaxKeys keys use the
// AVX-512 network where the CPU has it; otherwise (and always with allow_vector = false) std::sort.
void sort_keys(std::uint64_t* keys, std::size_t n, bool allow_vector = true);

// Sorts column indices cols[0, n) (non-negative) ascending; the same rules with kVectorSortMaxColumns.
void sort_columns(std::int32_t* cols, std::size_t n, bool allow_vector = true);

}  // namespace amgsolve
