#pragma once
// The 38 bins of Liu & Vinter 2015 (section 4.1, "the second stage", Algorithm 3): every row i of C goes to
// one bin by its upper bound u_i (the number of products a_ik * b_kj, Algorithm 2), and the bin decides both
// the method that computes the row (stage 3) and the space C~ pre-allocates for it (the hybrid method):
//
//   group  bins     u_i          method (stage 3)                       C~ space for the row
//   1      0        0            none                                   0
//   2      1        1            the single product (one thread)        1
//   3      2..32    u            heap method (one thread), heap of u    u (upper bound)
//   4      33..36   33..64,      bitonic ESC in shared memory           u (upper bound)
//                   ..., 257..512  (one thread block, 64..512 slots)
//   5      37       > 512        merge path, progressive 2x space       256, then 2x per overflow
//
// The bin limits are the paper's (32 = a warp, 512 = what a bitonic sort in 48 kB of shared memory holds
// comfortably); they are the architecture-dependent parameters the paper mentions at the end of 4.1.
#include "spgemm/cuda/bhsparse/device_views.cuh"

namespace amgsolve::bhsparse {

using BinId = std::uint8_t;

constexpr int kBinCount = 38;
constexpr int kSingleProductBin = 1;
constexpr int kFirstHeapBin = 2;
constexpr int kLastHeapBin = 32;  // bins 2..32 hold the rows with exactly u_i = bin products
constexpr int kFirstEscBin = 33;
constexpr int kLastEscBin = 36;
constexpr int kLongRowBin = 37;
constexpr int kBinBits = 6;  // bin ids < 2^6: the radix sort of the rows by bin looks at 6 bits

// Bin group 4: bin 33 + e holds the rows with 32 * 2^e < u_i <= 64 * 2^e, sorted in 64 * 2^e slots.
__host__ __device__ constexpr int esc_slots(int bin) { return 64 << (bin - kFirstEscBin); }

// Bin group 5: C~ reserves this much per long row, "an efficient working size for the scratchpad memory".
constexpr Offset kLongRowInitialCapacity = 256;

// Algorithm 3, lines 2-25.
__host__ __device__ constexpr int bin_of(Offset upper_bound) {
  if (upper_bound <= kLastHeapBin) return static_cast<int>(upper_bound);  // groups 1-3: one bin per size
  for (int bin = kFirstEscBin; bin <= kLastEscBin; ++bin)
    if (upper_bound <= esc_slots(bin)) return bin;
  return kLongRowBin;
}

// nnz(C~_i) of Algorithm 3: the upper bound, except for long rows, which start from a fixed size.
__host__ __device__ constexpr Offset preallocated_size(Offset upper_bound) {
  return bin_of(upper_bound) == kLongRowBin ? kLongRowInitialCapacity : upper_bound;
}

static_assert(bin_of(0) == 0 && bin_of(1) == 1 && bin_of(32) == 32, "groups 1-3 bin by exact size");
static_assert(bin_of(33) == 33 && bin_of(64) == 33 && bin_of(65) == 34 && bin_of(512) == 36, "group 4");
static_assert(bin_of(513) == kLongRowBin && kLongRowBin < (1 << kBinBits), "group 5");

struct BinOfRow {
  __host__ __device__ BinId operator()(Offset upper_bound) const { return static_cast<BinId>(bin_of(upper_bound)); }
};

struct PreallocatedSize {
  __host__ __device__ Offset operator()(Offset upper_bound) const { return preallocated_size(upper_bound); }
};

}  // namespace amgsolve::bhsparse
