#pragma once
// The sort accumulator's kernel: sorting at most 64 64-bit keys (column << 32 | position) held in
// AVX-512 registers by a bitonic network (K. E. Batcher, "Sorting networks and their applications",
// AFIPS 1968), as MAGNUS does for small chunks (Wolfson-Pou et al. 2025, sections 3.4 and 4.1.1, after
// B. Bramas, "A novel hybrid quicksort algorithm vectorized using AVX-512 on Intel Skylake", IJACSA
// 8(10), 2017). The network is chosen at run time: CPUs without AVX-512F, and longer inputs, use
// std::sort, so the result never depends on the CPU.
#include <cstddef>
#include <cstdint>

namespace amgsolve::magnus {

// Largest input the vector network sorts; longer ones go to std::sort.
inline constexpr std::size_t kVectorSortMax = 64;

// True when this CPU runs the AVX-512 network.
bool vector_sort_available();

// Sorts keys[0, n) ascending. With allow_vector, inputs of at most kVectorSortMax keys use the AVX-512
// network where the CPU has it; otherwise (and always with allow_vector = false) std::sort.
void sort_keys(std::uint64_t* keys, std::size_t n, bool allow_vector = true);

}  // namespace amgsolve::magnus
