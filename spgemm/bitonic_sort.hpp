#pragma once
// The sort accumulator's kernel: sorting a short list of keys held in AVX-512 registers by a bitonic
// network (K. E. Batcher, "Sorting networks and their applications", AFIPS 1968), as MAGNUS does for
// small chunks (Wolfson-Pou et al. 2025, sections 3.4 and 4.1.1, after B. Bramas, "A novel hybrid
// quicksort algorithm vectorized using AVX-512 on Intel Skylake", IJACSA 8(10), 2017).
// Two key widths: 64-bit keys (column << 32 | position, MAGNUS's sort accumulator), at most 64 of them,
// and 32-bit column indices (the touched columns of a dense accumulator, gustavson and MAGNUS's dense
// rows), at most 128; and the register accumulator below, which sorts 32-bit (column, position) keys
// of up to 64 products without leaving the registers (16-bit keys where the columns are below 2^10).
// Every stage of the network is unrolled at compile time (permutes, masks and their order are
// constants). The network is chosen at run time: CPUs without AVX-512F and BW, and longer inputs, use
// std::sort (column indices, up to 64 of them, an AVX2 network of the same stages), so the result never
// depends on the CPU.
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

// Sorts column indices cols[0, n) (non-negative) ascending; the same rules with kVectorSortMaxColumns, and
// where the CPU lacks AVX-512 but has AVX2, the AVX2 network up to kAvx2SortMaxColumns.
void sort_columns(std::int32_t* cols, std::size_t n, bool allow_vector = true);

// The AVX2 network alone (what sort_columns runs on CPUs without AVX-512; tests call it on any CPU): sorts
// cols[0, n) and returns true, or returns false, cols untouched, where the CPU lacks AVX2 or n is too long.
inline constexpr std::size_t kAvx2SortMaxColumns = 64;
bool sort_columns_avx2(std::int32_t* cols, std::size_t n);

// One intermediate product as MAGNUS's reorder stores it: its (chunk-local) column and its value.
template <class Value>
struct ColumnValue {
  std::int32_t col;
  Value val;
};

// Keys (column << position_bits | position) sorted ascending: calls emit(column, sum) for every
// distinct column, ascending, its products' values (items[position].val) summed in position order (stream
// order, as Gustavson sums them). The sort accumulators' last pass (magnus, the register accumulator).
template <class Key, class Value, class Emit>
void sum_sorted_runs(const Key* keys, std::size_t n, int position_bits, const ColumnValue<Value>* items, Emit&& emit) {
  const Key position_mask = static_cast<Key>((Key{1} << position_bits) - 1);
  for (std::size_t t = 0; t < n;) {
    const Key col = keys[t] >> position_bits;
    Value sum = items[keys[t] & position_mask].val;
    for (++t; t < n && keys[t] >> position_bits == col; ++t) sum += items[keys[t] & position_mask].val;
    emit(static_cast<std::int32_t>(col), sum);
  }
}

// MAGNUS's sort accumulator (section 3.4) for a chunk of at most kRegisterAccumulatorMax products, kept
// in registers from load to store: their columns are gathered into 32-bit keys (column << 6 | position),
// sorted by the network, and, when no column repeats, written straight to C with their values fetched
// by position. Repeated columns are summed in position order (stream order, as Gustavson sums them):
// in registers, where no column has more than two products (the common case of few repeats) by one
// masked add of each pair's second value to its first, else each lane adding the values of the next
// lanes of its column, for columns of up to 8 products; by a scalar pass over the sorted keys beyond.
// (Memory-held keys cost store-forwarding stalls at both ends of the network: scalar stores into
// vector loads, masked stores into scalar loads.) Where the columns are below 2^10, the keys are
// narrowed to 16 bits for the network (32 to a register: 64 products in two registers, half the
// instructions), and two chunks can be summed at once (accumulate_two_in_registers): a network's stages
// each wait on the last, so one chunk leaves most of the core idle and two overlap (BM_RegisterAccumulator
// and BM_RegisterAccumulatorTwo in bench/bench_kernels.cpp; the numbers in docs/BENCHMARKS.md).
inline constexpr std::size_t kRegisterAccumulatorMax = 64;
inline constexpr int kRegisterAccumulatorColumnBits = 25;  // columns below 2^25 (they share a key with positions)

// Columns below 2^kNarrowKeyColumnBits leave keys of 16 bits (with kRegisterAccumulatorMax's 6 position
// bits), which sort in half the registers.
inline constexpr int kNarrowKeyColumnBits = 10;

// Requires 1 <= n <= kRegisterAccumulatorMax and 0 <= items[t].col < 2^column_bits, column_bits <=
// kRegisterAccumulatorColumnBits. Writes the distinct columns + base ascending to out_col and their
// sums to out_val; returns how many. Without AVX-512F and BW (or allow_vector = false): the same keys
// sorted by std::sort.
std::int32_t accumulate_in_registers(const ColumnValue<double>* items, std::size_t n, std::int32_t base,
                                     std::int32_t* out_col, double* out_val, bool allow_vector = true,
                                     int column_bits = kRegisterAccumulatorColumnBits);

// accumulate_in_registers of two chunks (the same requirements), a's entries then b's: where both hold
// 17 to 64 products, their networks run side by side.
std::int32_t accumulate_two_in_registers(const ColumnValue<double>* items_a, std::size_t n_a, std::int32_t base_a,
                                         const ColumnValue<double>* items_b, std::size_t n_b, std::int32_t base_b,
                                         std::int32_t* out_col, double* out_val, bool allow_vector = true,
                                         int column_bits = kRegisterAccumulatorColumnBits);

}  // namespace amgsolve
